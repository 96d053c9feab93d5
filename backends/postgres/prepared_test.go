package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// people creates a 100-row table (age = 18 + i·7919 mod 73, sex F for
// every third person) through a writable pool and returns its name and
// that pool.
func people(t testing.TB) (string, *sql.DB) {
	t.Helper()
	raw, err := sql.Open("postgres", testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	table := "prep_people_" + suffix()
	t.Cleanup(func() {
		_, _ = raw.Exec("DROP TABLE IF EXISTS " + table)
		raw.Close()
	})
	if _, err := raw.Exec(`CREATE TABLE ` + table + ` AS
		SELECT i AS person_id, (18 + (i * 7919) % 73)::int AS age, CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END AS sex
		FROM generate_series(1, 100) AS i`); err != nil {
		t.Fatal(err)
	}
	return table, raw
}

// countBySex is SELECT sex, COUNT(*) ... WHERE age <> lit GROUP BY sex.
func countBySex(table string, lit int64) *ir.BackendQuery {
	return &ir.BackendQuery{
		From:    ir.TableRef{Name: table, Alias: "t"},
		Where:   ir.Compare{Op: ir.OpNe, L: ir.ColumnRef{Qualifier: "t", Name: "age"}, R: ir.Literal{Value: ir.Int(lit)}},
		GroupBy: []ir.Expr{ir.ColumnRef{Qualifier: "t", Name: "sex"}},
		Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
	}
}

// bySex reports whether rows (sorted) are F f, M m.
func bySex(rows []ir.BackendRow, f, m int64) bool {
	return len(rows) == 2 && rows[0].Keys[0] == ir.String("F") && rows[0].Aggs[0] == f &&
		rows[1].Keys[0] == ir.String("M") && rows[1].Aggs[0] == m
}

// prepared returns the number of protocol-level prepared statements of
// b's session and how often they ran (b must have one connection).
func prepared(t *testing.T, b *Backend) (stmts, runs int64) {
	t.Helper()
	err := b.Rows(context.Background(), `SELECT count(*), COALESCE(sum(generic_plans + custom_plans), 0)::bigint
		FROM pg_prepared_statements WHERE NOT from_sql`, nil, func(_ []string, row []ir.Value) error {
		stmts, runs = row[0].Int, row[1].Int
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return stmts, runs
}

// cached turns on b's statement cache (New leaves it off).
func cached(b *Backend) *Backend {
	b.CacheStatements(StatementCacheSize, Replan)
	return b
}

// TestAggregatePreparedOncePerConnection: with the statement cache on
// (Options.PreparedStatements, the policy's backend.prepared_statements),
// a query shape is prepared once per connection and then only bound and
// run, whatever its literals; a new shape adds a statement. The answers
// are those of the data.
func TestAggregatePreparedOncePerConnection(t *testing.T) {
	table, _ := people(t)
	b := open(t, backends.Options{MaxOpenConns: 1, PreparedStatements: StatementCacheSize})
	ctx := context.Background()
	for i := range int64(10) {
		got, err := backendtest.Collect(ctx, b, countBySex(table, -i))
		if err != nil {
			t.Fatal(err)
		}
		if !bySex(got, 33, 67) {
			t.Fatalf("query %d: %v, want F 33 and M 67", i, got)
		}
	}
	if stmts, runs := prepared(t, b); stmts != 1 || runs != 10 {
		t.Fatalf("after 10 queries of one shape: %d prepared statements run %d times, want 1 run 10 times", stmts, runs)
	}
	// 18 + i·7919 mod 73 = 18 for i ≡ 0 (mod 73): persons 73 (M).
	q := countBySex(table, 18)
	q.GroupBy = nil
	got, err := backendtest.Collect(ctx, b, q)
	if err != nil || len(got) != 1 || got[0].Aggs[0] != 99 {
		t.Fatalf("ungrouped: %v, %v; want 99", got, err)
	}
	if stmts, runs := prepared(t, b); stmts != 2 || runs != 11 {
		t.Fatalf("after a second shape: %d prepared statements run %d times, want 2 run 11 times", stmts, runs)
	}
}

// TestStatementCacheBound: a connection keeps at most the configured
// number of statements, closing the least recently used on the server.
func TestStatementCacheBound(t *testing.T) {
	table, _ := people(t)
	b := open(t, backends.Options{MaxOpenConns: 1})
	b.CacheStatements(2, Replan)
	ctx := context.Background()
	shapes := []ir.CmpOp{ir.OpNe, ir.OpLt, ir.OpGt, ir.OpNe}
	for i, op := range shapes {
		q := countBySex(table, 50)
		q.Where = ir.Compare{Op: op, L: ir.ColumnRef{Qualifier: "t", Name: "age"}, R: ir.Literal{Value: ir.Int(50)}}
		if _, err := backendtest.Collect(ctx, b, q); err != nil {
			t.Fatalf("shape %d: %v", i, err)
		}
	}
	if stmts, _ := prepared(t, b); stmts != 2 {
		t.Fatalf("%d prepared statements on the server, want the bound 2", stmts)
	}
}

// TestCachedStatementAfterColumnTypeChange: the table's column changes
// type under a cached statement, so its result type changes and
// PostgreSQL refuses to reuse it (before running it); the engine
// prepares it again and answers with the new type.
func TestCachedStatementAfterColumnTypeChange(t *testing.T) {
	table, raw := people(t)
	b := cached(open(t, backends.Options{MaxOpenConns: 1}))
	ctx := context.Background()
	q := &ir.BackendQuery{
		From:    ir.TableRef{Name: table, Alias: "t"},
		Where:   ir.Compare{Op: ir.OpLt, L: ir.ColumnRef{Qualifier: "t", Name: "person_id"}, R: ir.Literal{Value: ir.Int(4)}},
		GroupBy: []ir.Expr{ir.ColumnRef{Qualifier: "t", Name: "age"}},
		Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
	}
	before, err := backendtest.Collect(ctx, b, q)
	if err != nil || len(before) != 3 || before[0].Keys[0].Kind != ir.KindInt {
		t.Fatalf("before: %v, %v; want 3 integer keys", before, err)
	}
	if _, err := raw.Exec("ALTER TABLE " + table + " ALTER COLUMN age TYPE text"); err != nil {
		t.Fatal(err)
	}
	after, err := backendtest.Collect(ctx, b, q)
	if err != nil {
		t.Fatalf("after the column became text: %v (cause %v)", err, sqlerr.As(err).Cause)
	}
	if len(after) != 3 || after[0].Keys[0].Kind != ir.KindString {
		t.Fatalf("after: %v; want 3 text keys", after)
	}
}

// TestSilentNetworkBeforeAggregate: an aggregate (read directly from the
// driver, prepared or not) written into a silent network ends at the client deadline as abandoned (57014: it was
// sent, so it stays charged); the cut connection goes with its
// statements, and once the network is back the shape is prepared afresh
// on a new connection.
func TestSilentNetworkBeforeAggregate(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(fmt.Sprintf("prepared=%v", prepared), func(t *testing.T) { silentBeforeAggregate(t, prepared) })
	}
}

func silentBeforeAggregate(t *testing.T, prepared bool) {
	table, _ := people(t)
	f, dsn := viaForwarder(t)
	const timeout = time.Second
	b, err := Open(context.Background(), dsn, backends.Options{StatementTimeout: timeout, MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", dsnEnv, err)
	}
	t.Cleanup(func() { b.Close() })
	if prepared {
		cached(b)
	}
	ctx := context.Background()
	if _, err := backendtest.Collect(ctx, b, countBySex(table, -1)); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	f.Freeze()
	limit := backends.ClientTimeout(timeout)
	err, took := blackhole.Timed(t, limit+5*time.Second, func() error {
		_, err := backendtest.Collect(ctx, b, countBySex(table, -2))
		return err
	})
	if !sqlerr.HasCode(err, sqlerr.StatementTimeout) || sqlerr.As(err).Code.SQLState != "57014" {
		t.Fatalf("aggregate into silence: %v, want 57014 (sent, so not refundable)", err)
	}
	if took > limit+time.Second {
		t.Errorf("answered after %v, want within %v", took, limit)
	}
	f.Thaw()
	got, err := backendtest.Collect(ctx, b, countBySex(table, -3))
	if err != nil || !bySex(got, 33, 67) {
		t.Fatalf("after the network came back: %v, %v; want F 33 and M 67", got, err)
	}
}
