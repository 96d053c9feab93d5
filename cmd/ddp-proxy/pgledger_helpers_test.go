package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
)

// ledgerTestDSN returns DDP_TEST_POSTGRES_DSN or skips.
func ledgerTestDSN(t *testing.T) string {
	t.Helper()
	return pgtest.DSN(t, "the PostgreSQL ledger tests")
}

// ledgerTestSchema returns a fresh schema name (pgledger_ prefix), dropped
// when the test ends.
func ledgerTestSchema(t *testing.T, dsn string) string {
	t.Helper()
	return pgtest.Schema(t, dsn, "pgledger_c_")
}

var demoLedgerRE = regexp.MustCompile(`(?m)^ledger:\n(?:  .*\n|\n)*?  path: .*\n`)

// pgLedgerPolicy writes, next to the demo policy, a copy whose ledger is
// the PostgreSQL schema given, listening on the given addresses.
func pgLedgerPolicy(t *testing.T, files demo.Files, dsn, schema, pgAddr, myAddr string) string {
	t.Helper()
	return pgLedgerPolicyNamed(t, files, dsn, schema, pgAddr, myAddr, "pg-"+schema+".yaml")
}

func pgLedgerPolicyNamed(t *testing.T, files demo.Files, dsn, schema, pgAddr, myAddr, name string) string {
	t.Helper()
	return demoPolicyCopy(t, files, pgAddr, myAddr, name, func(s string) string {
		if !demoLedgerRE.MatchString(s) {
			t.Fatal("the demo policy has no ledger: path: section to replace")
		}
		s = demoLedgerRE.ReplaceAllLiteralString(s, "ledger:\n  driver: postgres\n  dsn: \""+dsn+"\"\n  schema: "+schema+"\n")
		// Room for DDP_TEST_CLIENTS clients per replica.
		return strings.Replace(s, "  auth: trust\n", "  auth: trust\n  max_connections: 1000\n", 1)
	})
}

// demoPolicyCopy writes, next to the demo policy, a copy named name that
// listens on pgAddr and myAddr ("off": not at all), after edit (nil: none).
func demoPolicyCopy(t *testing.T, files demo.Files, pgAddr, myAddr, name string, edit func(string) string) string {
	t.Helper()
	src, err := os.ReadFile(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	if edit != nil {
		s = edit(s)
	}
	s = strings.Replace(s, "postgres: 127.0.0.1:15432", "postgres: "+pgAddr, 1)
	s = strings.Replace(s, "mysql: 127.0.0.1:13306", "mysql: "+myAddr, 1)
	path := filepath.Join(filepath.Dir(files.Policy), name)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runMainIO runs ddp-proxy with args in a child process, with stdin, and
// returns stdout, stderr and the exit status.
func runMainIO(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), envMainArgs+"="+strings.Join(args, "\x1f"))
	var outb, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &outb, &errb
	dieWithParent(cmd)
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return outb.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return outb.String(), errb.String(), 0
}
