package session

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

const domainExtentPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {d: {epsilon: 100000}}
    max_epsilon: 10000
datasets:
  d:
    tables:
      t:
        unit: id
        columns:
          cell: {type: integer, domain: {range: [0, 99]}}
          w: {type: real, domain: {values: [0.5, 1.5, 2.5]}}
          raw: {type: integer}
`

// TestSumOfDomainOnlyColumn: SUM and AVG of a column declared with a
// static domain and no bounds are answered through the session and the
// release engine on SQLite, clamped to the domain's extent: stored values
// outside it (1000 and -50 in a [0, 99] column, 100 in a {0.5, 1.5, 2.5}
// one) count as the nearest end. At ε = 10000 the noise (scale 99/10000
// for the integer sum) is far below the 1752 between the clamped and the
// raw sum.
func TestSumOfDomainOnlyColumn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	stmts := []string{"CREATE TABLE t (id INTEGER, cell INTEGER, w REAL, raw INTEGER)", "BEGIN"}
	for i := range 200 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 1.5, 7)", i, i%10))
	}
	stmts = append(stmts, "INSERT INTO t VALUES (200, 1000, 1.5, 7)", "INSERT INTO t VALUES (201, 1000, 1.5, 7)",
		"INSERT INTO t VALUES (202, -50, 100.0, 7)", "COMMIT")
	be := sqliteBackend(t, path, stmts...)
	p, pol, led := seededProxy(t, dir, fmt.Sprintf(domainExtentPolicy, path, filepath.Join(dir, "ledger.db")), be, Config{})
	s := p.Open(pol.User("alice"), parser.Postgres, nil)

	// Clamped: 200 rows of i % 10 (900), two of 1000 → 99, one of -50 → 0.
	const clampedSum, rows = 900 + 2*99 + 0, 203
	rs := mustQuery(t, s, "SET ddp.epsilon = 10000; SELECT SUM(cell), AVG(cell), SUM(w) FROM t")
	r := rs[1]
	if len(r.Rows) != 1 || len(r.Rows[0]) != 3 {
		t.Fatalf("result %+v", r)
	}
	sum, avg, wsum := r.Rows[0][0], r.Rows[0][1], r.Rows[0][2]
	if d := sum.Int - clampedSum; d < -5 || d > 5 {
		t.Errorf("SUM(cell) = %d; want %d (clamped to [0, 99]) within 5, raw sum 2850", sum.Int, clampedSum)
	}
	if got, want := avg.Float, float64(clampedSum)/rows; math.Abs(got-want) > 0.1 {
		t.Errorf("AVG(cell) = %g; want %g within 0.1", got, want)
	}
	// 202 rows of 1.5 and one of 100 → 2.5.
	if got, want := wsum.Float, 202*1.5+2.5; math.Abs(got-want) > 1 {
		t.Errorf("SUM(w) = %g; want %g (clamped to [0.5, 2.5]) within 1", got, want)
	}
	if len(r.Notices) != 1 || !strings.Contains(r.Notices[0], "spent ε = 10000") {
		t.Errorf("notice %q", r.Notices)
	}
	if spent, _ := led.Spent("alice", "d"); spent.Epsilon != 10000 {
		t.Errorf("spent %+v", spent)
	}

	// A column without bounds or a static domain is still refused, before
	// any charge.
	if _, err := query(s, context.Background(), "SELECT SUM(raw) FROM t"); err == nil || !strings.Contains(err.Error(), "needs declared bounds") {
		t.Errorf("SUM of an undeclared column: %v", err)
	}
	if spent, _ := led.Spent("alice", "d"); spent.Epsilon != 10000 {
		t.Errorf("spent after a refusal %+v", spent)
	}
}
