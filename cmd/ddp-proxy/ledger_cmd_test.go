package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// ledger compact applies ledger.retention, shrinks the file and keeps
// budgets; it refuses a ledger in use.
func TestLedgerCompactCommand(t *testing.T) {
	pol := copyExample(t, "census.yaml")
	text, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	// Keep at most 1 MB of releases: one of 512 KiB + its key.
	text = []byte(strings.Replace(string(text), "  path: census-ledger.db\n", "  path: census-ledger.db\n  retention: {max_megabytes: 1}\n", 1))
	if err := os.WriteFile(pol, text, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := policies.LoadWith(pol, policies.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(p.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	limit := p.User("alice").Budgets["census"]
	rel := make([]byte, 512<<10)
	for i := range 8 {
		r, err := l.Charge(context.Background(), budget.Charge{User: "alice", Dataset: "census", Cost: budget.Budget{Epsilon: 0.01}}, limit)
		if err != nil {
			t.Fatal(err)
		}
		rel[0] = byte(i)
		if _, err := r.Commit(fmt.Sprint("k", i), rel); err != nil {
			t.Fatal(err)
		}
	}
	err = run(context.Background(), []string{"ledger", "compact", "--policy", pol}, io.Discard, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "stop ddp-proxy serve first") {
		t.Errorf("compact of a ledger in use: %v; want a failure that says to stop serve", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "ledger", "compact", "--policy", pol)
	if code != 0 || !strings.Contains(out, "compacted") || !strings.Contains(out, "7 releases evicted") {
		t.Fatalf("compact: exit %d, %s%s", code, out, errOut)
	}
	l, err = ledger.Open(p.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Check(); err != nil {
		t.Error(err)
	}
	if a, _ := l.Account(context.Background(), "alice", "census"); a.Spent.Epsilon < 0.08-1e-12 || a.Spent.Epsilon > 0.08+1e-12 || a.Queries != 8 {
		t.Errorf("alice after compact: %+v, want 8 charges of 0.01", a)
	}
	if _, ok, _ := l.Lookup("k7"); !ok {
		t.Error("the newest release was evicted")
	}
	if _, ok, _ := l.Lookup("k0"); ok {
		t.Error("the oldest release was kept over the 1 MB bound")
	}
}

// ledger compact on a policy whose ledger is in PostgreSQL refuses, and
// creates no bbolt file at the default ledger path.
func TestLedgerCompactRefusesPostgres(t *testing.T) {
	dir := t.TempDir()
	pol := dir + "/p.yaml"
	src := "version: 1\nbackend: {driver: postgres, dsn: 'postgres://h/db'}\ndatasets: {d: {tables: {t: {unit: id}}}}\n" +
		"ledger: {driver: postgres, dsn: 'postgres://h/ledger'}\n"
	if err := os.WriteFile(pol, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := policies.LoadWith(pol, policies.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "ledger", "compact", "--policy", pol)
	if code == 0 || !strings.Contains(errOut, "PostgreSQL") {
		t.Errorf("compact of a postgres ledger: exit %d, %s%s", code, out, errOut)
	}
	if _, err := os.Stat(p.Ledger.Path); err == nil {
		t.Errorf("compact created a bbolt ledger at %s", p.Ledger.Path)
	}
}
