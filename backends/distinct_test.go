package backends_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestDistinctCountsUnderCaseInsensitiveCollations: the text column s
// and the text unit u are declared case-insensitive (SQLite NOCASE, a
// PostgreSQL nondeterministic ICU collation, MySQL utf8mb4_general_ci).
//
//   - COUNT(DISTINCT s) as the planner passes it (CAST to text) counts
//     exact spellings, 'F', 'f' and 'F ' three times, on every backend:
//     counted in the column's collation, one person's spelling would
//     decide whether two values count once or twice, and the backends
//     would disagree.
//   - COUNT(DISTINCT u) of the unit column, passed bare, counts under
//     the equality of PARTITION BY u, which defines the units: 'u1' and
//     'U1' are one unit, so they count once. Counted in the exact
//     collation one unit could add two (its sensitivity would not be 1).
//   - With k = 1 the bound is applied before the distinct count: each
//     unit keeps its smallest row (NULLs first), so fewer values remain.
func TestDistinctCountsUnderCaseInsensitiveCollations(t *testing.T) {
	table := uniqueTable("distinct_ci")
	coll := uniqueTable("distinct_coll")
	cols := map[string]string{
		"sqlite":   "u TEXT COLLATE NOCASE, s TEXT COLLATE NOCASE, g INTEGER",
		"postgres": "u TEXT COLLATE " + coll + ", s TEXT COLLATE " + coll + ", g BIGINT",
		"mysql":    "u VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, s VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, g BIGINT",
	}
	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		raw, err := sql.Open("postgres", dsn)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := raw.ExecContext(ctx, "CREATE COLLATION "+coll+" (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"); err != nil {
			t.Fatalf("create a nondeterministic collation: %v", err)
		}
		// Registered before eachBackend's cleanups, so it runs after the
		// table is dropped.
		t.Cleanup(func() { raw.ExecContext(ctx, "DROP COLLATION IF EXISTS "+coll); raw.Close() })
	}
	rows := []string{
		"('u1', 'F', 1)", "('U1', 'f', 1)",
		"('u2', 'F ', 1)", "('u2', 'F', 2)",
		"('u3', NULL, 2)", "('U3', 'M', 2)",
	}
	c := func(n string) ir.ColumnRef { return ir.ColumnRef{Qualifier: "t", Name: n} }
	unit := c("u")
	aggs := []ir.BackendAgg{
		{Kind: ir.CountDistinct, Expr: ir.Cast{X: c("s"), To: ir.CastText}},
		{Kind: ir.CountDistinct, Column: &unit},
	}
	tests := []struct {
		name    string
		k       int
		grouped bool
		want    []ir.BackendRow
	}{
		// Distinct spellings F, f, 'F ', M; units u1, u2, u3.
		{name: "unbounded", k: 0, want: []ir.BackendRow{{Aggs: []int64{4, 3}}}},
		{name: "k=2 keeps every row", k: 2, want: []ir.BackendRow{{Aggs: []int64{4, 3}}}},
		// u1 keeps 'F' ('F' < 'f'), u2 keeps 'F' ('F' < 'F '), u3 keeps NULL.
		{name: "k=1", k: 1, want: []ir.BackendRow{{Aggs: []int64{1, 3}}}},
		// g=1: F, f, 'F ' from u1, u2; g=2: F, M from u2, u3.
		{name: "grouped k=2", k: 2, grouped: true, want: []ir.BackendRow{
			{Keys: []ir.Value{ir.Int(1)}, Aggs: []int64{3, 2}},
			{Keys: []ir.Value{ir.Int(2)}, Aggs: []int64{2, 2}},
		}},
	}
	for _, b := range eachBackend(t, table, cols, rows) {
		for _, tt := range tests {
			q := &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Unit: unit, MaxRowsPerUnit: tt.k, Aggs: aggs}
			if tt.grouped {
				q.GroupBy = []ir.Expr{c("g")}
			}
			got, err := backendtest.Collect(context.Background(), b.agg, q)
			if err != nil {
				t.Fatalf("%s %s: %v", b.name, tt.name, err)
			}
			if diff := backendtest.Diff(tt.want, got); diff != "" {
				t.Errorf("%s %s: %s", b.name, tt.name, diff)
			}
		}
	}
}
