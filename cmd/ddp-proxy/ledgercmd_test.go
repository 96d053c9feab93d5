package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestLedgerExportImport moves the demo's bbolt ledger to PostgreSQL with
// `ledger export` and `ledger import`, and back into a new bbolt file:
// spent budgets and releases arrive, a second import is refused.
func TestLedgerExportImport(t *testing.T) {
	dsn := ledgerTestDSN(t)
	schema := ledgerTestSchema(t, dsn)
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bl, err := ledger.Open(files.Ledger, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bl.Reserve(context.Background(), "analyst", "census", policies.Budget{Epsilon: 0.3}, policies.Budget{Epsilon: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("k", []byte("release")); err != nil {
		t.Fatal(err)
	}
	if _, err := bl.Reserve(context.Background(), "analyst", "census", policies.Budget{Epsilon: 0.2}, policies.Budget{Epsilon: 10}); err != nil {
		t.Fatal(err) // pending: a crash left it
	}
	bl.Close()

	dump, stderr, code := runMainIO(t, nil, "ledger", "export", "--policy", files.Policy)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	pgPolicy := pgLedgerPolicy(t, files, dsn, schema, "127.0.0.1:0", "off")
	if _, stderr, code := runMainIO(t, strings.NewReader(dump), "ledger", "import", "--policy", pgPolicy); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runMainIO(t, strings.NewReader(dump), "ledger", "import", "--policy", pgPolicy); code == 0 || !strings.Contains(stderr, "not empty") {
		t.Errorf("a second import: exit %d\n%s", code, stderr)
	}
	pl, err := pgledger.Open(context.Background(), dsn, pgledger.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if s, _ := pl.Spent("analyst", "census"); s.Epsilon != 0.5 {
		t.Errorf("spent in PostgreSQL = %v, want 0.5 (0.3 committed + 0.2 pending)", s)
	}
	if got, ok, _ := pl.Lookup("k"); !ok || string(got) != "release" {
		t.Errorf("release in PostgreSQL: %q %v", got, ok)
	}
	if err := pl.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestLedgerDSNEnvUnset: budget on a postgres ledger whose DSN names an
// unset variable says which one, instead of failing to parse it.
func TestLedgerDSNEnvUnset(t *testing.T) {
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pol := pgLedgerPolicy(t, files, "${DDP_PGLEDGER_UNSET_VAR}", "pgledger_unused", "127.0.0.1:0", "off")
	_, stderr, code := runMainIO(t, nil, "budget", "--policy", pol)
	if code == 0 || !strings.Contains(stderr, "DDP_PGLEDGER_UNSET_VAR") {
		t.Errorf("exit %d\n%s", code, stderr)
	}

	// The backend's DSN and a user's password refer to unset variables
	// too: budget needs neither, so the message names only the ledger's.
	src, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(src)
	for _, e := range []struct{ re, repl string }{
		{`(?m)^  dsn: .*$`, `  dsn: "$${DDP_BACKEND_UNSET_VAR}"`}, // the first dsn: the backend's
		{`(?m)^    scram_sha_256: .*$`, `    password_env: DDP_PASSWORD_UNSET_VAR`},
	} {
		loc := regexp.MustCompile(e.re).FindStringIndex(edited)
		if loc == nil {
			t.Fatalf("no %s in the policy:\n%s", e.re, edited)
		}
		edited = edited[:loc[0]] + regexp.MustCompile(e.re).ReplaceAllString(edited[loc[0]:loc[1]], e.repl) + edited[loc[1]:]
	}
	if err := os.WriteFile(pol, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runMainIO(t, nil, "budget", "--policy", pol)
	if code == 0 || !strings.Contains(stderr, "ledger.dsn refers to environment variables that are not set (DDP_PGLEDGER_UNSET_VAR)") ||
		strings.Contains(stderr, "DDP_BACKEND_UNSET_VAR") || strings.Contains(stderr, "DDP_PASSWORD_UNSET_VAR") {
		t.Errorf("exit %d, want the ledger's variable only:\n%s", code, stderr)
	}
}
