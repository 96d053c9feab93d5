package backends_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// testBackend is one backend with a table loaded into it.
type testBackend struct {
	name    string
	agg     backendtest.Aggregator
	dialect *sqlrender.Dialect
}

// eachBackend creates table (columns given per dialect as "name TYPE, ...")
// in SQLite and, when their DSNs are set, PostgreSQL and MySQL/MariaDB,
// inserts rows (SQL value tuples written for every dialect), and opens
// each backend. Tables are dropped when the test ends.
func eachBackend(t *testing.T, table string, cols map[string]string, rows []string) []testBackend {
	t.Helper()
	return eachBackendRows(t, table, cols, func(string) []string { return rows })
}

// eachBackendRows is eachBackend with rows written per dialect.
func eachBackendRows(t *testing.T, table string, cols map[string]string, rowsFor func(dialect string) []string) []testBackend {
	t.Helper()
	ctx := context.Background()
	opts := backends.Options{StatementTimeout: 20 * time.Second}
	load := func(db *sql.DB, dialect string) {
		t.Helper()
		rows := rowsFor(dialect)
		stmts := []string{"DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (" + cols[dialect] + ")"}
		for i := 0; i < len(rows); i += 500 {
			stmts = append(stmts, "INSERT INTO "+table+" VALUES "+strings.Join(rows[i:min(i+500, len(rows))], ", "))
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %.200s: %v", dialect, s, err)
			}
		}
		t.Cleanup(func() { db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table); db.Close() })
	}
	var out []testBackend

	path := filepath.Join(t.TempDir(), "t.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	load(raw, "sqlite")
	lite, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	out = append(out, testBackend{"sqlite", lite, sqlrender.SQLite()})

	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		raw, err := sql.Open("postgres", dsn)
		if err != nil {
			t.Fatal(err)
		}
		load(raw, "postgres")
		pg, err := postgres.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatalf("DDP_TEST_POSTGRES_DSN is set but unusable: %v", err)
		}
		t.Cleanup(func() { pg.Close() })
		out = append(out, testBackend{"postgres", pg, sqlrender.Postgres()})
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
		raw, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		load(raw, "mysql")
		my, err := mysql.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatalf("DDP_TEST_MYSQL_DSN is set but unusable: %v", err)
		}
		t.Cleanup(func() { my.Close() })
		out = append(out, testBackend{"mysql", my, sqlrender.MySQL()})
	}
	return out
}

func uniqueTable(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1_000_000)
}

// TestSumSaturatesAtTheBounds: 1100 rows sit at the bound 2^53, so the
// clamped sum exceeds int64. Every backend used to fail then (PostgreSQL's
// CAST to bigint, SQLite's "integer overflow", MySQL's DECIMAL that does
// not parse as int64) — a failure that depends on how many rows sit near
// the bounds. Now the total saturates at 2^63-1 (and -2^63), a total that
// fits stays exact even when partial sums pass the limits, and subnormal
// values summed with a large quantum do not underflow.
func TestSumSaturatesAtTheBounds(t *testing.T) {
	table := uniqueTable("ddp_sat")
	cols := map[string]string{
		"sqlite":   "u INTEGER, x INTEGER, g INTEGER, f REAL, tiny REAL",
		"postgres": "u BIGINT, x BIGINT, g BIGINT, f DOUBLE PRECISION, tiny DOUBLE PRECISION",
		"mysql":    "u BIGINT, x BIGINT, g BIGINT, f DOUBLE, tiny DOUBLE",
	}
	var rows []string
	for i := range 1100 {
		g := int64(1 << 53)
		if i%2 == 1 {
			g = -g
		}
		rows = append(rows, fmt.Sprintf("(%d, %d, %d, 9.0e15, 1.0e-310)", i, int64(1<<53), g))
	}
	col := func(n string) *ir.ColumnRef { return &ir.ColumnRef{Qualifier: "t", Name: n} }
	q := &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Aggs: []ir.BackendAgg{
		{Kind: ir.SumClamped, Column: col("x"), Lo: 0, Hi: 1 << 53},
		{Kind: ir.SumClamped, Column: col("x"), Lo: -(1 << 53), Hi: -(1 << 53)},
		{Kind: ir.SumClamped, Column: col("g"), Lo: -(1 << 53), Hi: 1 << 53},
		{Kind: ir.SumClamped, Column: col("f"), Lo: 0, Hi: 9e15, Quantum: 1},
		{Kind: ir.SumClamped, Column: col("tiny"), Lo: 0, Hi: 1e6, Quantum: 4},
	}}
	want := []int64{math.MaxInt64, math.MinInt64, 0, math.MaxInt64, 0}
	for _, b := range eachBackend(t, table, cols, rows) {
		for _, k := range []int{0, 1} {
			q.MaxRowsPerUnit, q.Unit = k, *col("u")
			got, err := backendtest.Collect(context.Background(), b.agg, q)
			if err != nil {
				t.Fatalf("%s k=%d: %v", b.name, k, err)
			}
			if len(got) != 1 || fmt.Sprint(got[0].Aggs) != fmt.Sprint(want) {
				t.Errorf("%s k=%d: sums %v, want %v", b.name, k, got, want)
			}
		}
	}
}

// nested builds one shape of expression nested n levels.
type nested struct {
	name  string
	build func(n int) ir.Expr
}

func depthShapes() []nested {
	c := func(n string) ir.ColumnRef { return ir.ColumnRef{Qualifier: "t", Name: n} }
	x := ir.Clamp{X: c("x"), Lo: ir.Int(0), Hi: ir.Int(100)}
	f := ir.Clamp{X: c("f"), Lo: ir.Float(-10), Hi: ir.Float(10)}
	one := ir.Literal{Value: ir.Int(1)}
	gt0 := func(e ir.Expr) ir.Expr { return ir.Compare{Op: ir.OpGt, L: e, R: ir.Literal{Value: ir.Int(-1)}} }
	return []nested{
		{"plus", func(n int) ir.Expr {
			var e ir.Expr = x
			for range n {
				e = ir.Arith{Op: ir.OpAdd, L: e, R: one}
			}
			return gt0(e)
		}},
		{"real times", func(n int) ir.Expr {
			var e ir.Expr = f
			for range n {
				e = ir.Arith{Op: ir.OpMul, L: e, R: ir.Literal{Value: ir.Float(1)}}
			}
			return gt0(e)
		}},
		{"not", func(n int) ir.Expr {
			var e ir.Expr = ir.Compare{Op: ir.OpGt, L: c("x"), R: one}
			for range n {
				e = ir.Not{X: e}
			}
			return e
		}},
		{"or chain", func(n int) ir.Expr {
			var e ir.Expr = ir.Compare{Op: ir.OpEq, L: c("x"), R: one}
			for i := range n {
				e = ir.Or{L: e, R: ir.Compare{Op: ir.OpEq, L: c("x"), R: ir.Literal{Value: ir.Int(int64(i))}}}
			}
			return e
		}},
		{"abs", func(n int) ir.Expr {
			var e ir.Expr = x
			for range n {
				e = ir.Func{Name: "abs", Args: []ir.Expr{e}}
			}
			return gt0(e)
		}},
		{"round terms", func(n int) ir.Expr {
			// round writes its argument twice, so exprtype never nests it;
			// a sum of rounds is how deep it goes.
			var e ir.Expr = f
			for range n {
				e = ir.Arith{Op: ir.OpAdd, L: e, R: ir.Func{Name: "round", Args: []ir.Expr{f}}}
			}
			return gt0(e)
		}},
		{"coalesce", func(n int) ir.Expr {
			var e ir.Expr = x
			for range n {
				e = ir.Func{Name: "coalesce", Args: []ir.Expr{e, one}}
			}
			return gt0(e)
		}},
		{"lower", func(n int) ir.Expr {
			var e ir.Expr = c("s")
			for range n {
				e = ir.Func{Name: "lower", Args: []ir.Expr{e}}
			}
			return ir.Like{X: e, Pattern: ir.Literal{Value: ir.String("a%")}, CaseInsensitive: true}
		}},
	}
}

// TestDepthLimitsHold: for each shape of nesting, the deepest WHERE the
// planner lets through (Shape.Depth ≤ Dialect.MaxDepth) runs on the real
// server, plain and inside the contribution-bounding subquery. The
// planner refuses anything deeper at plan time (54001), so a depth the
// server cannot evaluate never reaches it. (Deeper probes are not run
// here: on the embedded SQLite they panic inside the driver; the failing
// depths are recorded in sqlrender/limits.go.)
func TestDepthLimitsHold(t *testing.T) {
	table := uniqueTable("ddp_depth")
	cols := map[string]string{
		"sqlite":   "u INTEGER, x INTEGER, f REAL, s TEXT",
		"postgres": "u BIGINT, x BIGINT, f DOUBLE PRECISION, s TEXT",
		"mysql":    "u BIGINT, x BIGINT, f DOUBLE, s TEXT",
	}
	rows := []string{"(1, 5, 2.5, 'abc')", "(2, NULL, NULL, NULL)", "(3, -4, -1.25, 'A')"}
	ctx := context.Background()
	for _, b := range eachBackend(t, table, cols, rows) {
		d := b.dialect
		query := func(w ir.Expr, k int) *ir.BackendQuery {
			return &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Where: w, Unit: ir.ColumnRef{Qualifier: "t", Name: "u"},
				MaxRowsPerUnit: k, GroupBy: []ir.Expr{ir.ColumnRef{Qualifier: "t", Name: "s"}},
				Aggs: []ir.BackendAgg{{Kind: ir.CountRows}, {Kind: ir.SumClamped, Column: &ir.ColumnRef{Qualifier: "t", Name: "f"}, Lo: -1, Hi: 1, Quantum: 0.25}}}
		}
		for _, sh := range depthShapes() {
			for _, k := range []int{0, 2} {
				// The largest n the planner lets through (depth grows
				// with n; the SQL text cap may come first).
				fits := func(n int) bool {
					s, err := d.Measure(query(sh.build(n), k))
					if err != nil && !sqlerr.HasCode(err, sqlerr.ProgramLimitExceeded) {
						t.Fatal(err)
					}
					return err == nil && s.Depth <= d.MaxDepth
				}
				n, hi := 0, d.MaxDepth+1
				for n+1 < hi {
					if m := (n + hi) / 2; fits(m) {
						n = m
					} else {
						hi = m
					}
				}
				if _, err := backendtest.Collect(ctx, b.agg, query(sh.build(n), k)); err != nil {
					t.Errorf("%s %s k=%d: %d levels (depth ≤ %d) fail: %v (cause %v)", b.name, sh.name, k, n, d.MaxDepth, err, causeOf(err))
					continue
				}
			}
		}
	}
}

func causeOf(err error) error {
	type causer interface{ Unwrap() error }
	if c, ok := err.(causer); ok {
		return c.Unwrap()
	}
	return nil
}

// TestParamLimitsHold: a statement with exactly Dialect.MaxParams bind
// parameters runs on the real server, and one more fails there — the
// limit the planner enforces (54000, before any charge) is the backend's
// own, not a guess. The list is an IN list, where 70,000 items used to
// reach the backends and fail after the charge.
func TestParamLimitsHold(t *testing.T) {
	table := uniqueTable("ddp_params")
	cols := map[string]string{
		"sqlite":   "u INTEGER, x INTEGER",
		"postgres": "u BIGINT, x BIGINT",
		"mysql":    "u BIGINT, x BIGINT",
	}
	ctx := context.Background()
	for _, b := range eachBackend(t, table, cols, []string{"(1, 5)", "(2, 70000)"}) {
		d := b.dialect
		query := func(items int) *ir.BackendQuery {
			list := make([]ir.Expr, items)
			for i := range list {
				list[i] = ir.Literal{Value: ir.Int(int64(i))}
			}
			return &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"},
				Where: ir.In{X: ir.ColumnRef{Qualifier: "t", Name: "x"}, List: list},
				Aggs:  []ir.BackendAgg{{Kind: ir.CountRows}}}
		}
		s, err := d.Measure(query(d.MaxParams))
		if err != nil || s.Params != d.MaxParams {
			t.Fatalf("%s: measured %+v, %v", b.name, s, err)
		}
		rows, err := backendtest.Collect(ctx, b.agg, query(d.MaxParams))
		if err != nil || len(rows) != 1 || rows[0].Aggs[0] != 1 {
			t.Errorf("%s: %d parameters: %v %v", b.name, d.MaxParams, rows, err)
		}
		if _, err := backendtest.Collect(ctx, b.agg, query(d.MaxParams+1)); err == nil {
			t.Errorf("%s: %d parameters ran: the limit is not the backend's", b.name, d.MaxParams+1)
		}
	}
}
