package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

const unitPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {hr: {epsilon: 5}}
    max_epsilon: 1
datasets:
  hr:
    tables:
      dba_people:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 100]}
`

// TestUnitRefusedBeforeCharge: the DBA's report. Every reference to the
// unit column, the query the "not in GROUP BY" refusal used to answer
// and the one its advice led to, is refused as the privacy unit, with
// 42501 (MySQL 1142), on both front ends, at plan time: the ledger
// shows nothing spent, and the session goes on to answer (and charge)
// the one supported use, COUNT(DISTINCT person_id).
func TestUnitRefusedBeforeCharge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	stmts := []string{"CREATE TABLE dba_people (person_id INTEGER, age INTEGER)", "BEGIN"}
	for i := range 50 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO dba_people VALUES (%d, %d)", i, 20+i%40))
	}
	be := sqliteBackend(t, path, append(stmts, "COMMIT")...)
	p, pol, led := seededProxy(t, dir, fmt.Sprintf(unitPolicy, path, filepath.Join(dir, "ledger.db")), be, Config{})
	const msg = "column dba_people.person_id is the privacy unit: it cannot be used in queries"
	ctx := context.Background()
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		s := p.Open(pol.User("alice"), d, nil)
		for _, sql := range []string{
			"SELECT person_id FROM dba_people",
			"SELECT person_id FROM dba_people GROUP BY person_id",
			"SELECT age FROM dba_people WHERE person_id = 7",
			"SELECT COUNT(*) FROM dba_people GROUP BY age ORDER BY person_id",
		} {
			_, err := query(s, ctx, sql)
			e := sqlerr.As(err)
			if err == nil || e.Code != sqlerr.InsufficientPrivilege || e.Message != msg {
				t.Errorf("%v %s: %v, want 42501 %q", d, sql, err, msg)
			}
			if e != nil && (e.Code.SQLState != "42501" || e.Code.MySQLErrno != 1142) {
				t.Errorf("%v %s: SQLSTATE %s, MySQL %d; want 42501 and 1142", d, sql, e.Code.SQLState, e.Code.MySQLErrno)
			}
			if spent, _ := led.Spent("alice", "hr"); spent.Epsilon != 0 {
				t.Fatalf("%v %s: spent %+v on a refusal", d, sql, spent)
			}
		}
		// EXPLAIN answers with the refusal it would meet.
		rs, err := query(s, ctx, "EXPLAIN SELECT person_id FROM dba_people")
		if err != nil || len(rs) != 1 || len(rs[0].Rows) == 0 || !strings.Contains(rs[0].Rows[0][0].Str, msg) {
			t.Errorf("%v EXPLAIN: %v %+v, want the refusal %q", d, err, rs, msg)
		}
	}
	// The ledger is the one the session charges: the supported use costs.
	s := p.Open(pol.User("alice"), parser.Postgres, nil)
	rs := mustQuery(t, s, "SELECT COUNT(DISTINCT person_id) FROM dba_people")
	if len(rs) != 1 || len(rs[0].Rows) != 1 {
		t.Fatalf("COUNT(DISTINCT person_id): %+v", rs)
	}
	if spent, _ := led.Spent("alice", "hr"); spent.Epsilon != 0.1 {
		t.Errorf("spent %+v after one answer at the default ε 0.1", spent)
	}
}
