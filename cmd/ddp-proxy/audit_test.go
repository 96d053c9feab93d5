package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func auditJSON(t *testing.T, args ...string) []budget.AuditEntry {
	t.Helper()
	out, errOut, code := runCmd(t, append([]string{"audit", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("audit %v: exit %d: %s", args, code, errOut)
	}
	var es []budget.AuditEntry
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e budget.AuditEntry
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("audit output: %v\n%s", err, out)
		}
		es = append(es, e)
	}
	return es
}

// While serve holds the ledger, budget and audit read it through the
// ledger socket; the history has one entry per charge (a cached repeat
// adds none), with the statement as sent and a fingerprint shared by
// statements that differ only in literals.
func TestAuditWhileServing(t *testing.T) {
	files, pol := demoPolicy(t)
	pol.Listen.Postgres = "127.0.0.1:0"
	pol.Listen.MySQL = policies.ListenOff
	pol.Ledger.Replica = "replica-test"
	p, stop := servePolicy(t, pol)
	conn := connectPgx(t, p.pgAddr, pgx.QueryExecModeSimpleProtocol)
	start := time.Now()
	queries := []string{
		"SELECT COUNT(*) FROM people WHERE age > 30",
		"SELECT COUNT(*) FROM people WHERE age > 30", // cached: no charge
		"SELECT COUNT(*) FROM people WHERE age > 31",
	}
	for _, q := range queries {
		var n int64
		if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	check := func(t *testing.T, es []budget.AuditEntry) {
		t.Helper()
		if len(es) != 2 {
			t.Fatalf("audit = %+v, want 2 charges (the repeat was cached)", es)
		}
		for i, e := range es {
			want := queries[2*i]
			if e.User != "analyst" || e.Dataset != "census" || e.Query != want || e.Replica != "replica-test" ||
				e.Cost.Epsilon <= 0 || e.Release == "" || len(e.Fingerprint) != 16 || e.Time.Before(start.Add(-time.Second)) {
				t.Errorf("entry %d = %+v, want analyst's charge for %q", i, e, want)
			}
			if strings.Contains(e.Fingerprint, "30") || strings.Contains(e.Release, "age") {
				t.Errorf("entry %d: fingerprint or release id holds the query: %+v", i, e)
			}
		}
		if es[0].Fingerprint != es[1].Fingerprint || es[0].Release == es[1].Release {
			t.Errorf("fingerprints %s, %s (want equal: only a literal differs); releases %s, %s (want different)",
				es[0].Fingerprint, es[1].Fingerprint, es[0].Release, es[1].Release)
		}
	}

	// The first read must not wait for the file lock serve holds.
	type result struct {
		out bytes.Buffer
		err error
	}
	done := make(chan *result, 1)
	go func() {
		r := &result{}
		r.err = run(context.Background(), []string{"audit", "--json", "--policy", files.Policy}, &r.out, io.Discard, slog.New(slog.DiscardHandler))
		done <- r
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("audit while serving: %v", r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("audit blocked while serving")
	}
	check(t, auditJSON(t, "--policy", files.Policy))
	if es := auditJSON(t, "--policy", files.Policy, "--since", "1h"); len(es) != 2 {
		t.Errorf("--since 1h: %d entries, want 2", len(es))
	}
	if es := auditJSON(t, "--policy", files.Policy, "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); len(es) != 0 {
		t.Errorf("--since in an hour: %+v, want none", es)
	}
	if es := auditJSON(t, "--policy", files.Policy, "--user", "analyst", "--dataset", "census"); len(es) != 2 {
		t.Errorf("--user analyst --dataset census: %d entries, want 2", len(es))
	}
	if _, _, code := runCmd(t, "audit", "--policy", files.Policy, "--user", "nobody-else"); code != 2 {
		t.Errorf("audit --user of a user not in the policy: exit %d, want 2", code)
	}
	if _, errOut, code := runCmd(t, "audit", "--policy", files.Policy, "--dataset", "censsu"); code != 2 || !strings.Contains(errOut, `no dataset "censsu"`) {
		t.Errorf("audit --dataset of a dataset not in the policy: exit %d, %q; want 2 and the name", code, errOut)
	}
	out, errOut, code := runCmd(t, "budget", "--policy", files.Policy, "--user", "analyst")
	if code != 0 {
		t.Fatalf("budget while serving: exit %d: %s", code, errOut)
	}
	// Every amount as the serving ledger has it, left included (the
	// socket's /ledger/remaining).
	limit := pol.User("analyst").Budgets["census"]
	acct, err := p.ledger.Account(context.Background(), "analyst", "census")
	if err != nil {
		t.Fatal(err)
	}
	left, err := p.ledger.Remaining(context.Background(), "analyst", "census", limit)
	if err != nil {
		t.Fatal(err)
	}
	wantRow := fmt.Sprintf("analyst census %g %g %g %g %g %g", limit.Epsilon, acct.Spent.Epsilon, left.Epsilon, limit.Delta, acct.Spent.Delta, left.Delta)
	var gotRow string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "analyst" && f[1] == "census" {
			gotRow = strings.Join(f, " ")
		}
	}
	if acct.Spent.Epsilon <= 0 || gotRow != wantRow {
		t.Errorf("budget while serving: analyst's census row %q, want %q (the ledger's):\n%s", gotRow, wantRow, out)
	}
	text, errOut, code := runCmd(t, "audit", "--policy", files.Policy)
	if code != 0 || !strings.Contains(text, queries[0]) || !strings.Contains(text, "replica-test") {
		t.Errorf("audit table (exit %d, %s):\n%s", code, errOut, text)
	}

	sock := ledgerSocketPath(pol.Ledger.Path)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != fs.ModeSocket {
		t.Errorf("ledger socket %s: %v, %v; want a socket of mode 0600", sock, fi, err)
	}

	// Stopped: the commands open the file itself, which is consistent.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ledger socket left after shutdown: %v", err)
	}
	check(t, auditJSON(t, "--policy", files.Policy))
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Check(); err != nil {
		t.Error(err)
	}
}
