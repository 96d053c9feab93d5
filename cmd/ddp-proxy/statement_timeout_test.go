package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestClientStatementTimeout: a client's statement timeout — SET
// statement_timeout, statement_timeout in the connection string (a
// startup parameter), MySQL's SET max_execution_time — stops a slow
// private aggregate on a real PostgreSQL backend like a cancel at that
// moment: the client gets the statement-timeout error (57014 "canceling
// statement due to statement timeout"; MySQL's 3024), the backend
// statement ends, the session goes on, and the charge stays (the query
// had reached the backend). Before, SET statement_timeout was accepted
// and ignored: the analyst waited for the backend's own 30 s.
func TestClientStatementTimeout(t *testing.T) {
	dsn := pgtest.DSN(t, "the client statement timeout test")
	ctx := context.Background()
	view, running := slowBackendView(t, dsn, "stmt_timeout_slow_")

	dir := t.TempDir()
	t.Setenv("DDP_TEST_TIMEOUT_PW", "pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: postgres, dsn: %q}
listen: {postgres: "127.0.0.1:0", mysql: "off"}
ledger: {path: ledger.db}
users:
  - name: ana
    password_env: DDP_TEST_TIMEOUT_PW
    budgets: {d: {epsilon: 10}}
datasets:
  d:
    tables:
      %s:
        unit: id
        columns:
          age: {type: integer, bounds: [0, 100]}
`, dsn, view)))
	if err != nil {
		t.Fatal(err)
	}
	pol.Listen.MySQL = "127.0.0.1:0" // both front ends on free ports
	p, stop := servePolicy(t, pol)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	spent := 0.0
	// timesOut runs the slow query through run and checks the outcome.
	timesOut := func(name string, limit time.Duration, run func(q string) error, want func(error) bool) {
		t.Helper()
		start := time.Now()
		err := run(fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE age > %d", view, int(spent*10))) // a fresh query each time
		took := time.Since(start)
		if !want(err) {
			t.Fatalf("%s: %v after %v, want the statement timeout", name, err, took)
		}
		if took < limit || took > limit+3*time.Second {
			t.Errorf("%s: the timeout of %v ended the query after %v", name, limit, took)
		}
		for running() != 0 {
			if time.Since(start) > limit+6*time.Second {
				t.Fatalf("%s: the backend statement kept running after the timeout", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		spent += 0.1
		if a, _ := p.ledger.Account(context.Background(), "ana", "d"); fmt.Sprintf("%.1f", a.Spent.Epsilon) != fmt.Sprintf("%.1f", spent) {
			t.Errorf("%s: spent %+v, want %.1f: a query that reached the backend stays charged", name, a.Spent, spent)
		}
	}
	pgTimeout := func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "57014" && pe.Message == "canceling statement due to statement timeout"
	}

	pgURL := fmt.Sprintf("postgres://ana:pw@%s/d?sslmode=disable", p.pgAddr)
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET statement_timeout = '400ms'"); err != nil {
		t.Fatal(err)
	}
	var shown string
	if err := conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&shown); err != nil || shown != "400ms" {
		t.Fatalf("SHOW statement_timeout: %q, %v", shown, err)
	}
	simple := func(c *pgx.Conn) func(string) error {
		return func(q string) error {
			var n int64
			return c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&n)
		}
	}
	timesOut("SET statement_timeout, simple protocol", 400*time.Millisecond, simple(conn), pgTimeout)
	timesOut("SET statement_timeout, extended protocol", 400*time.Millisecond, func(q string) error {
		var n int64
		return conn.QueryRow(ctx, q).Scan(&n)
	}, pgTimeout)
	var one int64
	if err := conn.QueryRow(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol).Scan(&one); err != nil || one != 1 {
		t.Fatalf("the session after the timeout: %v", err)
	}

	// In the connection string: pgx sends it as a startup parameter.
	dconn, err := pgx.Connect(ctx, pgURL+"&statement_timeout=300")
	if err != nil {
		t.Fatal(err)
	}
	defer dconn.Close(ctx)
	timesOut("statement_timeout in the DSN", 300*time.Millisecond, simple(dconn), pgTimeout)

	// MySQL's max_execution_time, through go-sql-driver on the MySQL
	// front end (the same PostgreSQL backend behind it).
	my, err := sql.Open("mysql", "ana:pw@tcp("+p.myAddr+")/d")
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	my.SetMaxOpenConns(1) // the SET and the query on one session
	if _, err := my.ExecContext(ctx, "SET max_execution_time = 500"); err != nil {
		t.Fatal(err)
	}
	timesOut("MySQL max_execution_time", 500*time.Millisecond, func(q string) error {
		var n int64
		return my.QueryRowContext(ctx, q).Scan(&n)
	}, func(err error) bool {
		var me *gomysql.MySQLError
		return errors.As(err, &me) && me.Number == 3024
	})
}

// TestClientStatementTimeoutPGLedger: on a PostgreSQL ledger a short
// statement timeout can fire inside a ledger call (the release lookup,
// the reservation, the budget left), which then fails on its own
// network round trip. Whatever stage it hits, the client gets the
// statement-timeout error, never "internal error: the budget ledger is
// unreadable" (as it did), the session goes on, and the ledger stays
// consistent: what was charged is what it reports.
func TestClientStatementTimeoutPGLedger(t *testing.T) {
	dsn := pgtest.DSN(t, "the statement timeout test on a PostgreSQL ledger")
	ctx := context.Background()
	db := pgtest.Connect(t, dsn)
	schema := pgtest.CreateSchema(t, db, dsn, "stmt_timeout_")
	pgtest.Exec(t, db, fmt.Sprintf(`CREATE TABLE %s.people AS SELECT i AS id, (i %% 100)::int AS age FROM generate_series(1, 20000) AS i`, schema))
	dir := t.TempDir()
	t.Setenv("DDP_TEST_TIMEOUT_PW", "pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: postgres, dsn: %q}
listen: {postgres: "127.0.0.1:0", mysql: "off"}
ledger: {driver: postgres, dsn: %q, schema: %s}
users:
  - name: ana
    password_env: DDP_TEST_TIMEOUT_PW
    budgets: {d: {epsilon: 1000}}
datasets:
  d:
    tables:
      people:
        schema: %s
        unit: id
        columns:
          age: {type: integer, bounds: [0, 100]}
`, dsn, dsn, schema+"_ledger", schema)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+"_ledger CASCADE") })
	p, stop := servePolicy(t, pol)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://ana:pw@%s/d?sslmode=disable", p.pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	timeouts, answers := 0, 0
	for i := range 40 {
		// 1–40 ms: short enough to land in every stage of a fresh answer
		// (the ledger lookup, the reservation, the backend, the budget
		// left), some long enough to let it finish.
		if _, err := conn.Exec(ctx, fmt.Sprintf("SET statement_timeout = %d", 1+i), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
		var n int64
		err := conn.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s.people WHERE age <> %d", schema, -i), pgx.QueryExecModeSimpleProtocol).Scan(&n)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			answers++
		case errors.As(err, &pe) && pe.Code == "57014" && pe.Message == "canceling statement due to statement timeout":
			timeouts++
		default:
			t.Fatalf("query %d: %v, want an answer or the statement timeout", i, err)
		}
	}
	t.Logf("%d timed out, %d answered", timeouts, answers)
	if timeouts == 0 {
		t.Error("no statement of 1-40 ms timed out: the test did not exercise the timeout")
	}
	if _, err := conn.Exec(ctx, "RESET statement_timeout", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	var left float64
	if err := conn.QueryRow(ctx, "SELECT epsilon_left FROM ddp.budget WHERE dataset = 'd'", pgx.QueryExecModeSimpleProtocol).Scan(&left); err != nil {
		t.Fatalf("the budget after the timeouts: %v", err)
	}
	a, err := p.ledger.Account(ctx, "ana", "d")
	if err != nil {
		t.Fatal(err)
	}
	if got := 1000 - a.Spent.Epsilon; fmt.Sprintf("%.4f", got) != fmt.Sprintf("%.4f", left) {
		t.Errorf("ddp.budget says %v left, the ledger's account %v", left, got)
	}
	if a.Spent.Epsilon < 0.1*float64(answers)-1e-9 {
		t.Errorf("spent %v for %d answers", a.Spent.Epsilon, answers)
	}
}
