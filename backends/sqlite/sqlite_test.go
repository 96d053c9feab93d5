package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

var _ backends.Backend = (*Backend)(nil)

// newDB creates a database file with setup run on it, and opens the backend.
func newDB(t *testing.T, opts backends.Options, setup func(*sql.DB) error) *Backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := setup(raw); err != nil {
		t.Fatal(err)
	}
	b, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func exec(stmts ...string) func(*sql.DB) error {
	return func(db *sql.DB) error {
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestRandomAgainstReference compares 400 random BackendQueries (fixed
// seed) with the brute-force Go evaluation over the same rows.
func TestRandomAgainstReference(t *testing.T) {
	d := backendtest.Generate(rand.New(rand.NewPCG(1, 2)), 40, "x")
	b := newDB(t, backends.Options{StatementTimeout: 10 * time.Second}, func(db *sql.DB) error {
		return d.Load(context.Background(), db, "sqlite")
	})
	backendtest.CheckRandom(t, d, 42, 400, map[string]backendtest.Aggregator{"sqlite": b})
}

// TestRandomDistinctAgainstReference compares 300 random BackendQueries
// with a distinct count (fixed seed) with the brute-force Go evaluation:
// COUNT(DISTINCT x) over the rows each unit keeps after the bound k.
func TestRandomDistinctAgainstReference(t *testing.T) {
	d := backendtest.Generate(rand.New(rand.NewPCG(3, 5)), 40, "x")
	b := newDB(t, backends.Options{StatementTimeout: 10 * time.Second}, func(db *sql.DB) error {
		return d.Load(context.Background(), db, "sqlite")
	})
	backendtest.CheckRandomDistinct(t, d, 43, 300, map[string]backendtest.Aggregator{"sqlite": b})
}

func TestLikeIsCaseSensitive(t *testing.T) {
	b := newDB(t, backends.Options{MaxOpenConns: 3}, exec(
		`CREATE TABLE t (u INTEGER, s TEXT)`,
		`INSERT INTO t VALUES (1, 'Abc'), (2, 'abc'), (3, 'ABC'), (4, 'a_c'), (5, 'x%')`))
	s := ir.ColumnRef{Qualifier: "t", Name: "s"}
	tests := []struct {
		name string
		like ir.Like
		want int64
	}{
		{"exact case", ir.Like{X: s, Pattern: ir.Literal{Value: ir.String("a%")}}, 2},
		{"upper pattern", ir.Like{X: s, Pattern: ir.Literal{Value: ir.String("A%")}}, 2},
		{"case-insensitive", ir.Like{X: s, Pattern: ir.Literal{Value: ir.String("a%")}, CaseInsensitive: true}, 4},
		{"escaped underscore", ir.Like{X: s, Pattern: ir.Literal{Value: ir.String(`a\_c`)}}, 1},
		{"escaped percent", ir.Like{X: s, Pattern: ir.Literal{Value: ir.String(`x\%`)}}, 1},
		{"not like", ir.Like{X: s, Pattern: ir.Literal{Value: ir.String("abc")}, Not: true}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Several queries so more than one pooled connection is used.
			for range 3 {
				q := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Where: tt.like, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
				rows, err := backendtest.Collect(context.Background(), b, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != 1 || rows[0].Aggs[0] != tt.want {
					t.Fatalf("got %v, want count %d", rows, tt.want)
				}
			}
		})
	}
}

// TestKeyDecoding: group keys come back with the kind of their column,
// BOOLEAN columns as booleans even through the bounded subquery.
func TestKeyDecoding(t *testing.T) {
	b := newDB(t, backends.Options{}, exec(
		`CREATE TABLE t (u INTEGER, i INTEGER, f REAL, s TEXT, b BOOLEAN)`,
		`INSERT INTO t VALUES (1, 7, 2.0, 'x', TRUE), (2, NULL, NULL, NULL, NULL)`))
	col := func(n string) ir.ColumnRef { return ir.ColumnRef{Qualifier: "t", Name: n} }
	for _, k := range []int{0, 1} {
		q := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Unit: col("u"), MaxRowsPerUnit: k,
			GroupBy: []ir.Expr{col("i"), col("f"), col("s"), col("b")},
			Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}}}
		got, err := backendtest.Collect(context.Background(), b, q)
		if err != nil {
			t.Fatal(err)
		}
		want := []ir.BackendRow{
			{Keys: []ir.Value{ir.Null(), ir.Null(), ir.Null(), ir.Null()}, Aggs: []int64{1}},
			{Keys: []ir.Value{ir.Int(7), ir.Float(2), ir.String("x"), ir.Bool(true)}, Aggs: []int64{1}},
		}
		if diff := backendtest.Diff(want, got); diff != "" {
			t.Errorf("k=%d: %s", k, diff)
		}
	}
}

// TestSumSaturates: 2000 rows at the bound 9e15 sum to 1.8e19, beyond
// int64. SQLite's SUM would raise "integer overflow" — a failure that
// depends on how many rows sit near the bounds, which the totality rule
// forbids — so the backend sums exactly and saturates at 2^63-1 (and at
// -2^63 below), and a total that fits stays exact.
func TestSumSaturates(t *testing.T) {
	b := newDB(t, backends.Options{}, exec(
		`CREATE TABLE t (u INTEGER, f REAL, g INTEGER)`,
		`INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) SELECT x, 9e15, CASE WHEN x % 2 = 0 THEN 9007199254740992 ELSE -9007199254740992 END FROM c`))
	f := ir.ColumnRef{Qualifier: "t", Name: "f"}
	g := ir.ColumnRef{Qualifier: "t", Name: "g"}
	q := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{
		{Kind: ir.SumClamped, Column: &f, Lo: 0, Hi: 9e15, Quantum: 1},
		{Kind: ir.SumClamped, Column: &f, Lo: -9e15, Hi: -9e15, Quantum: 1},
		// ±2^53 alternating: the exact total is 0, though a running
		// total that saturated on the way would not be.
		{Kind: ir.SumClamped, Column: &g, Lo: -(1 << 53), Hi: 1 << 53},
	}}
	rows, err := backendtest.Collect(context.Background(), b, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[0].Aggs; got[0] != math.MaxInt64 || got[1] != math.MinInt64 || got[2] != 0 {
		t.Fatalf("sums %v, want [2^63-1, -2^63, 0]", got)
	}
}

// slowQuery counts to a billion: seconds of work, interruptible.
const slowQuery = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c`

func TestErrors(t *testing.T) {
	b := newDB(t, backends.Options{StatementTimeout: 50 * time.Millisecond}, exec(`CREATE TABLE t (u INTEGER)`))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	soon, cancelSoon := context.WithCancel(context.Background())
	defer cancelSoon()
	rows := func(ctx context.Context, q string) error {
		return b.Rows(ctx, q, nil, func([]string, []ir.Value) error { return nil })
	}
	tests := []struct {
		name string
		run  func() error
		want sqlerr.Code
	}{
		{"statement timeout", func() error { return rows(context.Background(), slowQuery) }, sqlerr.StatementTimeout},
		{"cancelled before", func() error { return rows(cancelled, `SELECT 1`) }, sqlerr.QueryCanceled},
		{"cancelled during", func() error {
			time.AfterFunc(10*time.Millisecond, cancelSoon)
			return rows(soon, slowQuery)
		}, sqlerr.QueryCanceled},
		{"missing table", func() error {
			_, err := backendtest.Collect(context.Background(), b, &ir.BackendQuery{
				From: ir.TableRef{Name: "secret_missing_table"}, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}})
			return err
		}, sqlerr.BackendFailed},
		{"callback error is returned as is", func() error {
			err := b.Rows(context.Background(), `SELECT 1`, nil, func([]string, []ir.Value) error { return errSentinel })
			if !errors.Is(err, errSentinel) {
				return err
			}
			return sqlerr.New(sqlerr.Internal, "ok")
		}, sqlerr.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := tt.run()
			if !sqlerr.HasCode(err, tt.want) {
				t.Fatalf("got %v, want code %s", err, tt.want.Name)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v: the interrupt did not stop the statement", time.Since(start))
			}
			if msg := sqlerr.As(err).Error(); strings.Contains(msg, "secret_missing_table") || strings.Contains(msg, "no such") {
				t.Errorf("client message leaks backend text: %q", msg)
			}
		})
	}
	// The pool still works after interrupts.
	if err := rows(context.Background(), `SELECT 1`); err != nil {
		t.Fatalf("pool unusable after errors: %v", err)
	}
}

var errSentinel = errors.New("sentinel")

func TestOpenMissingFile(t *testing.T) {
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "nope.db"), backends.Options{})
	if !sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("got %v, want BackendUnavailable", err)
	}
}

func TestColumnsAndRows(t *testing.T) {
	b := newDB(t, backends.Options{}, exec(`CREATE TABLE "we""ird" (id INTEGER, name TEXT, score REAL, ok BOOLEAN)`,
		`INSERT INTO "we""ird" VALUES (1, 'a', 1.5, TRUE), (2, NULL, -2, FALSE)`))
	cols, err := b.Columns(context.Background(), "", `we"ird`)
	if err != nil {
		t.Fatal(err)
	}
	want := []backends.ColumnInfo{{Name: "id", Type: "INTEGER"}, {Name: "name", Type: "TEXT"}, {Name: "score", Type: "REAL"}, {Name: "ok", Type: "BOOLEAN"}}
	if len(cols) != len(want) {
		t.Fatalf("got %v, want %v", cols, want)
	}
	for i := range want {
		if cols[i] != want[i] {
			t.Errorf("column %d: got %v, want %v", i, cols[i], want[i])
		}
	}
	if _, err := b.Columns(context.Background(), "", "missing"); !sqlerr.HasCode(err, sqlerr.UndefinedTable) {
		t.Errorf("missing table: got %v, want UndefinedTable", err)
	}
	var got [][]ir.Value
	var names []string
	err = b.Rows(context.Background(), `SELECT id, name, score, ok FROM "we""ird" WHERE id >= ? AND ok IN (?, ?) ORDER BY id`,
		[]ir.Value{ir.Int(1), ir.Bool(true), ir.Bool(false)}, func(c []string, r []ir.Value) error {
			names, got = c, append(got, r)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]ir.Value{
		{ir.Int(1), ir.String("a"), ir.Float(1.5), ir.Bool(true)},
		{ir.Int(2), ir.Null(), ir.Float(-2), ir.Bool(false)},
	}
	if strings.Join(names, ",") != "id,name,score,ok" || len(got) != 2 {
		t.Fatalf("got %v %v", names, got)
	}
	for i := range wantRows {
		for j := range wantRows[i] {
			if got[i][j] != wantRows[i][j] {
				t.Errorf("row %d col %d: got %v, want %v", i, j, got[i][j], wantRows[i][j])
			}
		}
	}
}

func TestResultReportsColumnsOfEmptyResults(t *testing.T) {
	b := newDB(t, backends.Options{}, exec(`CREATE TABLE zips (zip TEXT, pop INTEGER)`, `INSERT INTO zips VALUES ('a', 3)`))
	cols, rows, err := b.Result(context.Background(), `SELECT zip, pop FROM zips WHERE pop > ?`, []ir.Value{ir.Int(5)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 || len(cols) != 2 || cols[0].Name != "zip" || cols[1].Name != "pop" || cols[1].Type != "INTEGER" {
		t.Fatalf("cols %v rows %v", cols, rows)
	}
	_, rows, err = b.Result(context.Background(), `SELECT zip, pop FROM zips`, nil)
	if err != nil || len(rows) != 1 || rows[0][0] != ir.String("a") || rows[0][1] != ir.Int(3) {
		t.Fatalf("rows %v, %v", rows, err)
	}
}

func TestUniqueNotNull(t *testing.T) {
	b := newDB(t, backends.Options{}, exec(
		`CREATE TABLE a (id INTEGER PRIMARY KEY, x INTEGER)`,
		`CREATE TABLE b (id TEXT NOT NULL UNIQUE, nn TEXT UNIQUE, y INTEGER NOT NULL)`,
		`CREATE TABLE c (id INTEGER NOT NULL, z INTEGER NOT NULL)`,
		`CREATE UNIQUE INDEX c_pair ON c (id, z)`,
		`CREATE UNIQUE INDEX c_partial ON c (z) WHERE z > 0`,
	))
	tests := []struct {
		table, col string
		want       bool
	}{
		{"a", "id", true},  // rowid alias
		{"a", "ID", true},  // case-insensitive
		{"a", "x", false},  // no index
		{"b", "id", true},  // NOT NULL UNIQUE
		{"b", "nn", false}, // UNIQUE but NULLs may repeat
		{"b", "y", false},  // NOT NULL, not unique
		{"c", "id", false}, // only in a two-column index
		{"c", "z", false},  // partial index
	}
	for _, tt := range tests {
		got, err := b.UniqueNotNull(context.Background(), "", tt.table, tt.col)
		if err != nil || got != tt.want {
			t.Errorf("%s.%s: got %v (%v), want %v", tt.table, tt.col, got, err, tt.want)
		}
	}
}
