package session

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestPolicyTypeMismatchRefusedAndRefunded: a policy that declares a
// column integer where the database has text makes PostgreSQL refuse the
// planner's statement when it is prepared ("operator does not exist"),
// before it runs (with statements prepared per connection, the default):
// the analyst gets BackendRefused with a hint for the
// operator, nothing stays charged (the failure cannot depend on the
// data), and the session goes on answering.
func TestPolicyTypeMismatchRefusedAndRefunded(t *testing.T) {
	dsn := pgtest.DSN(t, "the policy type mismatch test")
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	schema := pgtest.Schema(t, dsn, "ddp_mismatch_")
	for _, q := range []string{
		"CREATE SCHEMA " + schema,
		// age is text here; the test policy declares it integer.
		"CREATE TABLE " + schema + ".people (id serial PRIMARY KEY, age text NOT NULL, sex text)",
		"INSERT INTO " + schema + ".people (age, sex) SELECT (20 + g % 50)::text, CASE WHEN g % 2 = 0 THEN 'F' ELSE 'M' END FROM generate_series(1, 100) g",
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %s: %v", q, err)
		}
	}
	// Statements prepared per connection, as backend.prepared_statements
	// has them by default: the refusal comes from the preparation.
	be, err := postgres.Open(context.Background(), dsn, backends.Options{PreparedStatements: policies.DefaultPreparedStatements})
	if err != nil {
		t.Fatal(err)
	}
	f := setup(t, "postgres", dsn, schema, be)

	for range 2 { // the second time, from a connection that has the session's other statements
		before, _ := f.led.Spent("alice", "census")
		_, err = query(f.s, context.Background(), "SELECT COUNT(*) FROM "+schema+".people WHERE age > 30")
		if !sqlerr.HasCode(err, sqlerr.BackendRefused) {
			t.Fatalf("count over a mistyped column: %v, want %s", err, sqlerr.BackendRefused.Name)
		}
		if se := sqlerr.As(err); !strings.Contains(se.Hint, "check --connect") {
			t.Errorf("hint %q does not tell the operator what to run", se.Hint)
		}
		if spent, _ := f.led.Spent("alice", "census"); spent != before {
			t.Fatalf("spent %v after a refused statement, want %v as before it", spent, before)
		}
		// The session survives and a query the database can run is answered.
		rs := mustQuery(t, f.s, "SELECT sex, COUNT(*) FROM "+schema+".people GROUP BY sex")
		if len(rs[0].Rows) != 2 {
			t.Fatalf("rows %v", rs[0].Rows)
		}
	}
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon <= 0 {
		t.Errorf("spent %v after two answered queries, want > 0", spent.Epsilon)
	}
}
