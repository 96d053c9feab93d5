package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	err := run(context.Background(), args, &o, &e, slog.New(slog.DiscardHandler))
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
	default:
		t.Fatalf("%v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// copyExample copies an example policy into a temp dir so that its ledger
// lands there.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "policies", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	out, errOut, code := runCmd(t, "check", copyExample(t, "census.yaml"))
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("good example: code %d\n%s%s", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(`version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: a
    password_env: X
    budgets: {d: {epsilon: -1}}
datasets:
  d:
    tables:
      t:
        unit: id
        columns:
          name: {type: text, bounds: [0, 1]}
          zip: {type: text, domain: {query: "SELECT zip FROM t"}}
`), 0o600)
	_, errOut, code = runCmd(t, "check", bad)
	if code != 1 {
		t.Fatalf("bad policy: exit %d", code)
	}
	for _, want := range []string{"bad.yaml:6:", "epsilon", "bad.yaml:13:", "bounds"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check output lacks %q:\n%s", want, errOut)
		}
	}
	// A domain query over a private table is caught by check too (after
	// the rest of the policy is valid).
	os.WriteFile(bad, []byte(`version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: a
    password_env: X
    budgets: {d: {epsilon: 1}}
datasets:
  d:
    tables:
      t:
        unit: id
        columns:
          zip: {type: text, domain: {query: "SELECT zip FROM t"}}
`), 0o600)
	_, errOut, code = runCmd(t, "check", bad)
	if code != 1 || !strings.Contains(errOut, "bad.yaml:13:") || !strings.Contains(errOut, "not a public table") {
		t.Fatalf("domain over private table: exit %d\n%s", code, errOut)
	}
}

func explainJSON(t *testing.T, args ...string) planner.Explanation {
	t.Helper()
	out, errOut, code := runCmd(t, append([]string{"explain", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("explain %v: exit %d: %s", args, code, errOut)
	}
	var x planner.Explanation
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("explain output is not one JSON object: %v\n%s", err, out)
	}
	return x
}

func TestExplainJSON(t *testing.T) {
	pol := copyExample(t, "census.yaml")
	// COUNT: sensitivity 1 (unbounded, k = 1), scale 1/ε.
	x := explainJSON(t, "--policy", pol, "--epsilon", "0.5", "SELECT COUNT(*) FROM people WHERE age > 30")
	if x.StatementClass != "private_aggregate" || x.Dataset != "census" || x.Model != "dp" || x.Epsilon != 0.5 {
		t.Fatalf("%+v", x)
	}
	if len(x.Columns) != 1 || x.Columns[0].Sensitivity != 1 || x.Columns[0].Scale != 2 ||
		x.Columns[0].Mechanism != "discrete_laplace" || x.Columns[0].Epsilon != 0.5 {
		t.Fatalf("columns %+v", x.Columns)
	}
	// P(|X| > m) = 2p^(m+1)/(1+p) with p = exp(-1/2): m = 6 is the
	// smallest with probability ≤ 5% (0.0376; m = 5 gives 0.0620).
	if x.Columns[0].CI95 != 6 {
		t.Fatalf("ci95 %g, want 6", x.Columns[0].CI95)
	}
	if !strings.Contains(x.BackendSQL, "ROW_NUMBER() OVER (PARTITION BY") {
		t.Fatalf("backend SQL does not bound contributions: %s", x.BackendSQL)
	}
	// SUM(age), bounds [17, 90]: sensitivity 90.
	x = explainJSON(t, "--policy", pol, "--epsilon", "0.5", "SELECT SUM(age) FROM people")
	if x.Refused || x.Columns[0].Sensitivity != 90 || x.Columns[0].Scale != 180 {
		t.Fatalf("sum columns %+v", x.Columns)
	}
	// MySQL dialect, same plan.
	x = explainJSON(t, "--policy", pol, "--dialect", "mysql", "--epsilon", "0.5", "SELECT `sex`, COUNT(*) FROM people GROUP BY `sex`")
	if x.KeySelection != "declared_domain" || len(x.Columns) != 2 || x.Columns[1].Sensitivity != 1 {
		t.Fatalf("mysql: %+v", x)
	}
	refusals := map[string]string{
		"SELECT * FROM people":                "42501",
		"DELETE FROM people":                  "25006",
		"SELECT COUNT(* FROM people":          "42601",
		"SELECT COUNT(*) FROM people_secrets": "42P01",
		"COPY people TO STDOUT":               "",
	}
	for sql, state := range refusals {
		x := explainJSON(t, "--policy", pol, sql)
		if !x.Refused || (state != "" && x.SQLState != state) || x.Reason == "" {
			t.Errorf("%s: %+v, want refused with SQLSTATE %s", sql, x, state)
		}
	}
	// An --epsilon above the user's max_epsilon: refused, with a hint
	// about the flag, not the session's ε.
	x = explainJSON(t, "--policy", pol, "--epsilon", "1000", "SELECT COUNT(*) FROM people")
	if !x.Refused || x.SQLState != "22023" || !strings.Contains(x.Hint, "--epsilon up to") {
		t.Errorf("--epsilon 1000: %+v, want refused (22023) with a hint about --epsilon", x)
	}
	// Explain never opens the ledger, let alone charges it.
	p, err := policies.LoadWith(pol, policies.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Ledger.Path); !os.IsNotExist(err) {
		t.Fatalf("explain touched the ledger %s: %v", p.Ledger.Path, err)
	}
}

// TestBudget: ddp-proxy budget prints, per user and dataset, the total,
// spent and left of ε and of δ. Left is the ledger's exact remainder (δ
// 1e-6 − 3.3e-7 reads 6.7e-07, where float64 subtraction gives
// 6.699999999999999e-07), the same whether the command opens the file or
// reads through the socket of a proxy that holds it, and 0, not negative,
// once the policy lowers a limit below what was spent.
func TestBudget(t *testing.T) {
	pol := copyExample(t, "census.yaml")
	p, err := policies.LoadWith(pol, policies.LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	alice := p.User("alice")
	if got := alice.Budgets["census"]; got != (policies.Budget{Epsilon: 2, Delta: 1e-6}) {
		t.Fatalf("census.yaml gives alice %+v on census; this test expects ε 2, δ 1e-6", got)
	}
	l, err := ledger.Open(p.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(context.Background(), "alice", "census", policies.Budget{Epsilon: 0.25, Delta: 3.3e-7}, alice.Budgets["census"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// row runs the command on policy for alice and returns her one row,
	// its fields joined by single spaces.
	row := func(t *testing.T, policy string) string {
		t.Helper()
		out, errOut, code := runCmd(t, "budget", "--policy", policy, "--user", "alice")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("want a header and one row for alice:\n%s", out)
		}
		if h, want := strings.Join(strings.Fields(lines[0]), " "), "USER DATASET ε TOTAL ε SPENT ε LEFT δ TOTAL δ SPENT δ LEFT"; h != want {
			t.Fatalf("header %q, want %q", h, want)
		}
		return strings.Join(strings.Fields(lines[1]), " ")
	}
	const want = "alice census 2 0.25 1.75 1e-06 3.3e-07 6.7e-07"
	t.Run("file", func(t *testing.T) {
		if got := row(t, pol); got != want {
			t.Errorf("row %q, want %q", got, want)
		}
	})
	t.Run("socket", func(t *testing.T) {
		// Held open as serve holds it: the command reads through the
		// socket, and the serving ledger computes what is left.
		l, err := ledger.Open(p.Ledger.Path, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		stop := serveLedgerSocket(p.Ledger.Path, l, slog.New(slog.DiscardHandler))
		defer stop()
		if _, err := os.Stat(ledgerSocketPath(p.Ledger.Path)); err != nil {
			t.Fatalf("no ledger socket: %v", err)
		}
		if got := row(t, pol); got != want {
			t.Errorf("row %q, want %q", got, want)
		}
	})
	t.Run("lowered limit", func(t *testing.T) {
		data, err := os.ReadFile(pol)
		if err != nil {
			t.Fatal(err)
		}
		const before = "census: {epsilon: 2.0, delta: 1.0e-6}"
		if !strings.Contains(string(data), before) {
			t.Fatalf("census.yaml no longer holds %q", before)
		}
		// Next to the original, so that it names the same ledger file.
		lowered := filepath.Join(filepath.Dir(pol), "lowered.yaml")
		text := strings.Replace(string(data), before, "census: {epsilon: 0.2, delta: 1.0e-7}", 1)
		if err := os.WriteFile(lowered, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, want := row(t, lowered), "alice census 0.2 0.25 0 1e-07 3.3e-07 0"; got != want {
			t.Errorf("row %q, want %q", got, want)
		}
	})
}

func TestCheckConnect(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE people (id INTEGER, age INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	pol := filepath.Join(dir, "p.yaml")
	write := func(cols string) {
		os.WriteFile(pol, []byte(`version: 1
backend: {driver: sqlite, dsn: d.db}
users: [{name: a, password_env: DDP_TEST_CHECK_PW, budgets: {d: {epsilon: 1}}}]
datasets:
  d:
    tables:
      people:
        unit: id
        columns:
`+cols), 0o600)
	}
	write("          age: {type: integer}\n")
	if out, errOut, code := runCmd(t, "check", "--connect", pol); code != 0 {
		t.Fatalf("matching schema: exit %d\n%s%s", code, out, errOut)
	}
	write("          age: {type: integer}\n          ssn: {type: text}\n")
	_, errOut, code := runCmd(t, "check", "--connect", pol)
	if code != 1 || !strings.Contains(errOut, "p.yaml:11:") || !strings.Contains(errOut, "column ssn does not exist") {
		t.Fatalf("missing column: exit %d\n%s", code, errOut)
	}
}

// TestCheckNewOptions: check accepts listen.min_response_ms and a
// dataset's share_releases, and reports a value of the wrong type (or out
// of range) under its own key, also when several keys share a line.
func TestCheckNewOptions(t *testing.T) {
	const tmpl = `version: 1
backend: {driver: sqlite, dsn: x.db}
listen: {min_response_ms: %s}
users:
  - {name: a, password_env: X, budgets: {d: {epsilon: %s, delta: 1.0e-6}}}
datasets:
  d:
    share_releases: %s
    tables:
      t: {unit: id, columns: {x: {type: integer}}}
`
	p := filepath.Join(t.TempDir(), "p.yaml")
	write := func(ms, eps, share string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(fmt.Sprintf(tmpl, ms, eps, share)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("250", "1", "false")
	if out, errOut, code := runCmd(t, "check", p); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("good options: exit %d\n%s%s", code, out, errOut)
	}
	write("soon", `"lots"`, "sometimes")
	_, errOut, code := runCmd(t, "check", p)
	if code != 1 {
		t.Fatalf("wrong types: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		`p.yaml:3: listen.min_response_ms: expected an integer, not "soon"`,
		`p.yaml:5: users.a.budgets.d.epsilon: expected a number, not "lots"`,
		`p.yaml:8: datasets.d.share_releases: expected true or false, not "sometimes"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check output lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "budgets.d.delta") {
		t.Errorf("the wrong epsilon is reported under delta:\n%s", errOut)
	}
	write("-5", "1", "true")
	if _, errOut, code := runCmd(t, "check", p); code != 1 || !strings.Contains(errOut, "p.yaml:3: listen.min_response_ms: min_response_ms must be between 0") {
		t.Errorf("negative min_response_ms: exit %d\n%s", code, errOut)
	}
}
