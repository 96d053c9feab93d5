package pgwire

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runPsql runs the psql binary against ts as alice and returns stdout,
// stderr and the exit code.
func runPsql(t *testing.T, ts *testServer, args ...string) (string, string, int) {
	t.Helper()
	const bin = "/usr/bin/psql"
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("psql not installed at %s under CI (.ci/run installs postgresql-client)", bin)
		}
		t.Skipf("psql not installed at %s; skipping the psql client test", bin)
	}
	host, port, _ := strings.Cut(ts.addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := []string{"-X", "-w", "-h", host, "-p", port, "-U", "alice", "-d", "db", "-A", "-t"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	// sslmode=prefer (libpq's default) makes psql send SSLRequest first,
	// which the server declines.
	cmd.Env = append(os.Environ(), "PGPASSWORD="+alicePassword, "PGSSLMODE=prefer", "PGCONNECT_TIMEOUT=10",
		"PGGSSENCMODE=disable", "PGAPPNAME=psql-test")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("psql: %v", err)
	}
	return stdout.String(), stderr.String(), code
}

func TestPsql(t *testing.T) {
	ts := startServer(t, Config{})
	t.Run("rows", func(t *testing.T) {
		out, errOut, code := runPsql(t, ts, "-c", "rows 2")
		// fakeRow(1), fakeRow(2) in psql's unaligned format.
		want := "1|row 1|0.5|f|10|n1|1001\n2|row 2|1|t|20|n2|1002\n"
		if out != want || code != 0 {
			t.Errorf("psql -c 'rows 2': exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errOut)
		}
	})
	t.Run("error continues without ON_ERROR_STOP", func(t *testing.T) {
		out, errOut, _ := runPsql(t, ts, "-c", "fail 42501", "-c", "rows 1")
		if !strings.Contains(errOut, "ERROR:  fake failure") || !strings.Contains(errOut, "HINT:  fake hint") {
			t.Errorf("stderr %q lacks the error and hint", errOut)
		}
		if out != "1|row 1|0.5|f|10|n1|1001\n" {
			t.Errorf("the command after the error did not run: stdout %q", out)
		}
	})
	t.Run("ON_ERROR_STOP stops -c commands", func(t *testing.T) {
		out, errOut, code := runPsql(t, ts, "-v", "ON_ERROR_STOP=1", "-c", "fail 42501", "-c", "rows 1")
		// A failed -c command exits 1 (psql's EXIT_FAILURE).
		if code != 1 || out != "" || !strings.Contains(errOut, "ERROR:  fake failure") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no output, the error", code, out, errOut)
		}
	})
	t.Run("ON_ERROR_STOP stops a script", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "q.sql")
		if err := os.WriteFile(script, []byte("rows 1;\nfail 42501;\nrows 2;\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runPsql(t, ts, "-v", "ON_ERROR_STOP=1", "-f", script)
		// psql(1): exit status 3 when an error occurred in a script and
		// ON_ERROR_STOP was set; the statement after the error never runs.
		if code != 3 || out != "1|row 1|0.5|f|10|n1|1001\n" || !strings.Contains(errOut, "ERROR:  fake failure") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 3, only the first statement's row, the error", code, out, errOut)
		}
	})
}
