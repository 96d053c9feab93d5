package release_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestBlowfishZeroSensitivityIsFree: a histogram that no edge of the
// secret graph can change (partition by city, GROUP BY city) is returned
// exactly and charges nothing; a query that can change is charged.
func TestBlowfishZeroSensitivityIsFree(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "homes.db")
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"CREATE TABLE homes (id INTEGER, city TEXT, rooms INTEGER)"}
	cities := []string{"p", "q", "r"}
	for i := range 30 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO homes VALUES (%d, '%s', %d)", i, cities[i%3*i%2], 1+i%5))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	rows, err := db.Query("SELECT city, COUNT(*) FROM homes GROUP BY city")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		var n int64
		rows.Scan(&c, &n)
		want[c] = n
	}
	rows.Close()
	db.Close()
	t.Setenv("DDP_TEST_RELEASE_PASSWORD", "pw")
	ledgerPath := filepath.Join(dir, "ledger.db")
	pol, err := policies.LoadBytes(filepath.Join(dir, "p.yaml"), []byte(fmt.Sprintf(`
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: ann
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {homes: {epsilon: 1}}
datasets:
  homes:
    model: blowfish
    secrets: {partition: {columns: [city]}}
    tables:
      homes:
        unit: id
        columns:
          city: {type: text, domain: {values: [p, q, r]}}
          rooms: {type: integer, bounds: [1, 5], domain: {range: [1, 5]}}
`, dbPath, ledgerPath)))
	if err != nil {
		t.Fatal(err)
	}
	be, err := sqlite.Open(context.Background(), dbPath, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	l, err := ledger.Open(ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eng := release.New(be, l, release.Options{Source: noise.SeededSource(3)})
	p := planner.New(pol)
	run := func(q string) *release.Result {
		stmts, err := parser.Parse(parser.Postgres, q)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Plan(planner.Request{User: pol.User("ann"), Epsilon: 0.4, Dialect: "postgres", Statement: &stmts[0]})
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Run(context.Background(), pol.User("ann"), pl)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run("SELECT city, COUNT(*) FROM homes GROUP BY city")
	if res.Charged.Epsilon != 0 || res.Remaining.Epsilon != 1 {
		t.Errorf("charged %v, remaining %v; want nothing charged", res.Charged, res.Remaining)
	}
	for _, row := range res.Rows {
		n, _ := row[1].AsFloat()
		if int64(n) != want[row[0].Text()] {
			t.Errorf("city %s: %v, want the exact %d", row[0].Text(), n, want[row[0].Text()])
		}
	}
	if res.Columns[1].Scale != 0 {
		t.Errorf("scale %g, want 0 (exact)", res.Columns[1].Scale)
	}
	res = run("SELECT rooms, COUNT(*) FROM homes GROUP BY rooms")
	if res.Charged.Epsilon != 0.4 {
		t.Errorf("histogram of rooms charged %v, want ε 0.4", res.Charged)
	}
}
