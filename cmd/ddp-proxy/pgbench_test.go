package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// findPgbench returns the pgbench command, or skips (fails under CI, where
// .ci/run installs it). On Debian /usr/bin/pgbench is a wrapper that exists
// without the real binary, so it must also run.
func findPgbench(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("pgbench")
	if err == nil {
		err = exec.Command(path, "--version").Run()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgbench is not usable under CI (.ci/run installs it with the postgresql package): %v", err)
		}
		t.Skipf("pgbench is not installed (Debian: apt-get install postgresql): %v", err)
	}
	return path
}

// TestPgbenchCustomScript drives the proxy with pgbench and a custom
// aggregate script (-f) in the simple, extended and prepared protocols,
// two clients each, against a real PostgreSQL backend. Each client uses
// its own WHERE literal, so each mode releases exactly two distinct
// queries: every transaction must succeed, and the ledger must have
// charged exactly 6 × ε — repeats are answered from the ledger for free.
func TestPgbenchCustomScript(t *testing.T) {
	if os.Getenv("DDP_TEST_POSTGRES_DSN") == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping the pgbench test")
	}
	pgbench := findPgbench(t)
	bt := serveBenchTable(t, 500, false, "100", "")
	p, table, dir := bt.p, bt.name, bt.dir
	defer func() {
		if err := bt.stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	host, port, _ := strings.Cut(p.pgAddr, ":")

	for i, mode := range []string{"simple", "extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			script := filepath.Join(dir, mode+".sql")
			// :client_id is 0 or 1: two distinct literals per mode, and
			// the offset keeps the modes' queries apart.
			body := fmt.Sprintf("\\set a %d + :client_id\nSELECT sex, COUNT(*), AVG(age) FROM %s WHERE age <> :a GROUP BY sex;\n", 1000*(i+1), table)
			if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(pgbench, "-n", "-M", mode, "-f", script, "-c", "2", "-j", "2", "-t", "15",
				"-h", host, "-p", port, "-U", "bencher", "test")
			cmd.Env = append(os.Environ(), "PGPASSWORD=bench-pw", "PGSSLMODE=disable")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pgbench -M %s: %v\n%s", mode, err, out)
			}
			if !regexp.MustCompile(`number of transactions actually processed: 30/30`).Match(out) {
				t.Fatalf("pgbench -M %s did not complete 30 transactions:\n%s", mode, out)
			}
			if m := regexp.MustCompile(`number of failed transactions: (\d+)`).FindSubmatch(out); m != nil && string(m[1]) != "0" {
				t.Fatalf("pgbench -M %s: %s failed transactions:\n%s", mode, m[1], out)
			}
		})
	}
	acct, err := p.ledger.Account(context.Background(), "bencher", "bench")
	if err != nil {
		t.Fatal(err)
	}
	spent := acct.Spent
	// 3 modes × 2 distinct queries × the default ε 0.1.
	if spent.Epsilon < 0.6-1e-9 || spent.Epsilon > 0.6+1e-9 {
		t.Fatalf("spent ε = %v after 90 transactions of 6 distinct queries, want exactly 0.6", spent.Epsilon)
	}
}
