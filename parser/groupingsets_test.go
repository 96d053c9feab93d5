package parser

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestGroupingSets: ROLLUP, CUBE, GROUPING SETS (PostgreSQL) and WITH
// ROLLUP (MySQL) expand to the sets SQL defines, written out by hand.
func TestGroupingSets(t *testing.T) {
	a, b, c := col("", "a"), col("", "b"), col("", "c")
	tests := []struct {
		name string
		d    Dialect
		sql  string
		keys []ir.Expr
		sets [][]int
	}{
		{"rollup", Postgres, "SELECT a, b, COUNT(*) FROM t GROUP BY ROLLUP(a, b)",
			[]ir.Expr{a, b}, [][]int{{0, 1}, {0}, {}}},
		{"cube of 3", Postgres, "SELECT COUNT(*) FROM t GROUP BY CUBE(a, b, c)",
			[]ir.Expr{a, b, c}, [][]int{{0, 1, 2}, {0, 1}, {0, 2}, {0}, {1, 2}, {1}, {2}, {}}},
		{"grouping sets with empty set", Postgres, "SELECT COUNT(*) FROM t GROUP BY GROUPING SETS ((a), (b), ())",
			[]ir.Expr{a, b}, [][]int{{0}, {1}, {}}},
		{"nested rollup in grouping sets", Postgres, "SELECT COUNT(*) FROM t GROUP BY GROUPING SETS (ROLLUP(a, b), c)",
			[]ir.Expr{a, b, c}, [][]int{{0, 1}, {0}, {}, {2}}},
		{"key times rollup", Postgres, "SELECT COUNT(*) FROM t GROUP BY a, ROLLUP(b, c)",
			[]ir.Expr{a, b, c}, [][]int{{0, 1, 2}, {0, 1}, {0}}},
		{"duplicates kept", Postgres, "SELECT COUNT(*) FROM t GROUP BY GROUPING SETS ((a), (a), (b, a))",
			[]ir.Expr{a, b}, [][]int{{0}, {0}, {0, 1}}},
		{"group by distinct drops repeats", Postgres, "SELECT COUNT(*) FROM t GROUP BY DISTINCT ROLLUP(a, b), ROLLUP(a)",
			// (a,b)x(a) = (a,b); (a,b)x() = (a,b); (a)x(a) = (a); (a)x() = (a); ()x(a) = (a); ()x() = ().
			[]ir.Expr{a, b}, [][]int{{0, 1}, {0}, {}}},
		{"rollup of a parenthesised list", Postgres, "SELECT COUNT(*) FROM t GROUP BY ROLLUP((a, b), c)",
			[]ir.Expr{a, b, c}, [][]int{{0, 1, 2}, {0, 1}, {}}},
		{"position and column are one key", Postgres, "SELECT a, COUNT(*) FROM t GROUP BY ROLLUP(1, b), a",
			[]ir.Expr{a, b}, [][]int{{0, 1}, {0}, {0}}},
		{"qualified and bare are one key", Postgres, "SELECT COUNT(*) FROM t GROUP BY GROUPING SETS ((t.a), (a, b))",
			[]ir.Expr{col("t", "a"), b}, [][]int{{0}, {0, 1}}},
		{"mysql with rollup", MySQL, "SELECT a, b, COUNT(*) FROM t GROUP BY a, b WITH ROLLUP",
			[]ir.Expr{a, b}, [][]int{{0, 1}, {0}, {}}},
		{"plain group by has no sets", Postgres, "SELECT a, COUNT(*) FROM t GROUP BY a",
			[]ir.Expr{a}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stmts, err := Parse(tt.d, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			q := stmts[0].Query
			if q == nil {
				t.Fatalf("Query is nil: %s", stmts[0].NotAggregate)
			}
			if !reflect.DeepEqual(q.GroupBy, tt.keys) {
				t.Errorf("GroupBy = %v, want %v", q.GroupBy, tt.keys)
			}
			if !reflect.DeepEqual(q.GroupingSets, tt.sets) {
				t.Errorf("GroupingSets = %v, want %v", q.GroupingSets, tt.sets)
			}
		})
	}
}

// TestGroupingFunc: GROUPING(...) binds to GROUP BY entries in the select
// list, HAVING and ORDER BY, in both dialects; other uses are refused.
func TestGroupingFunc(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		stmts, err := Parse(Postgres, "SELECT a, b, GROUPING(b, t.a) AS g, COUNT(*) FROM t GROUP BY ROLLUP(a, b) HAVING GROUPING(a) = 0 ORDER BY GROUPING(b)")
		if err != nil {
			t.Fatal(err)
		}
		q := stmts[0].Query
		if q == nil {
			t.Fatal(stmts[0].NotAggregate)
		}
		g, ok := q.Select[2].Expr.(ir.Grouping)
		if !ok || !reflect.DeepEqual(g.Keys, []int{1, 0}) {
			t.Errorf("select GROUPING = %#v, want keys [1 0]", q.Select[2].Expr)
		}
		h, ok := q.Having.(ir.Compare).L.(ir.Grouping)
		if !ok || !reflect.DeepEqual(h.Keys, []int{0}) {
			t.Errorf("HAVING GROUPING = %#v", q.Having)
		}
		o, ok := q.OrderBy[0].Expr.(ir.Grouping)
		if !ok || !reflect.DeepEqual(o.Keys, []int{1}) {
			t.Errorf("ORDER BY GROUPING = %#v", q.OrderBy[0].Expr)
		}
	})
	t.Run("mysql", func(t *testing.T) {
		stmts, err := Parse(MySQL, "SELECT a, GROUPING(a), COUNT(*) FROM t GROUP BY a WITH ROLLUP")
		if err != nil {
			t.Fatal(err)
		}
		q := stmts[0].Query
		if q == nil {
			t.Fatal(stmts[0].NotAggregate)
		}
		if g, ok := q.Select[1].Expr.(ir.Grouping); !ok || !reflect.DeepEqual(g.Keys, []int{0}) {
			t.Errorf("GROUPING = %#v", q.Select[1].Expr)
		}
	})
	for _, tt := range []struct {
		d         Dialect
		sql, want string
	}{
		{Postgres, "SELECT GROUPING(c), COUNT(*) FROM t GROUP BY ROLLUP(a)", "arguments to GROUPING"},
		{Postgres, "SELECT COUNT(*) FROM t WHERE GROUPING(a) = 0 GROUP BY a", "GROUPING is allowed only"},
		{MySQL, "SELECT GROUPING(c), COUNT(*) FROM t GROUP BY a WITH ROLLUP", "arguments to GROUPING"},
		{Postgres, "SELECT COUNT(*) FROM t GROUP BY DISTINCT a", "GROUP BY DISTINCT"},
	} {
		stmts, err := Parse(tt.d, tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		if stmts[0].Query != nil || !strings.Contains(stmts[0].NotAggregate, tt.want) {
			t.Errorf("%s: Query %v, NotAggregate %q; want a refusal containing %q", tt.sql, stmts[0].Query, stmts[0].NotAggregate, tt.want)
		}
	}
}

// TestGroupingSetsFlatten: a ROLLUP over Metabase's "source" subquery
// keeps its sets and GROUPING keys once the subquery is flattened.
func TestGroupingSetsFlatten(t *testing.T) {
	stmts, err := Parse(Postgres, `SELECT "source"."city" AS "city", "source"."sex" AS "sex", GROUPING("source"."city") AS g, count(*) AS "count" FROM (SELECT "public"."people"."city" AS "city", "public"."people"."sex" AS "sex" FROM "public"."people") AS "source" GROUP BY ROLLUP("source"."city", "source"."sex") ORDER BY "source"."city" ASC`)
	if err != nil {
		t.Fatal(err)
	}
	q := stmts[0].Query
	if q == nil {
		t.Fatal(stmts[0].NotAggregate)
	}
	wantKeys := []ir.Expr{col3("public", "people", "city"), col3("public", "people", "sex")}
	if !reflect.DeepEqual(q.GroupBy, wantKeys) {
		t.Errorf("GroupBy = %#v, want %#v", q.GroupBy, wantKeys)
	}
	if want := [][]int{{0, 1}, {0}, {}}; !reflect.DeepEqual(q.GroupingSets, want) {
		t.Errorf("GroupingSets = %v, want %v", q.GroupingSets, want)
	}
	if g, ok := q.Select[2].Expr.(ir.Grouping); !ok || !reflect.DeepEqual(g.Keys, []int{0}) {
		t.Errorf("GROUPING = %#v", q.Select[2].Expr)
	}
}
