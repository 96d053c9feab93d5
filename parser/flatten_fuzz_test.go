package parser

import (
	"reflect"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// flattenSeeds are pairs (inner SELECT, outer WHERE) for FuzzFlatten;
// more live in testdata/fuzz/FuzzFlatten*.
var flattenSeeds = [][2]string{
	{"SELECT sex, age * 2 AS a2 FROM people WHERE age > 3", "s.a2 > 1 AND sex = 'F'"},
	{"SELECT * FROM people p JOIN zips z ON p.zip = z.zip", "state = 'NY'"},
	{"SELECT p.* FROM people p", "s.age IN (1, 2)"},
	{"SELECT s.x AS y FROM (SELECT age AS x FROM people) s", "s.y > 0"},
	{"WITH a AS (SELECT age FROM people) SELECT age AS s FROM a", "s = 1"},
	{"SELECT age FROM people ORDER BY age", "age BETWEEN 1 AND $1"},
	{"SELECT count(*) AS n FROM people", "n > 1"},
	{"SELECT sex, count(*) AS n FROM people GROUP BY sex ORDER BY 2", "s.sex = 'F' AND n > 1"},
	{"SELECT * FROM (SELECT sex, sum(age) AS n FROM people GROUP BY sex) a", "n > 1"},
	{"SELECT age FROM people LIMIT 1", "true"},
	{"SELECT CASE WHEN age > 1 THEN 'a' END AS c FROM people", "c IS NULL"},
	// Levels that become stages: a filter on a window, after a LIMIT.
	{"SELECT sex, count(*) AS n, rank() OVER (ORDER BY count(*)) AS r FROM people GROUP BY sex", "r < 2 AND s.n > 1"},
	{"SELECT sex, count(*) AS n FROM people GROUP BY sex ORDER BY n DESC LIMIT 2", "n > 1"},
}

func FuzzFlattenPostgres(f *testing.F) {
	for _, s := range flattenSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, inner, where string) { checkFlatten(t, Postgres, inner, where) })
}

func FuzzFlattenMySQL(f *testing.F) {
	for _, s := range flattenSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, inner, where string) { checkFlatten(t, MySQL, inner, where) })
}

// checkFlatten wraps inner as the derived table s of an aggregate query
// and checks what the planner relies on: the usual statement invariants
// (every table read is listed in Relations), and that no reference to s
// survives the flattening unless a real table is called s, so nothing
// is left unresolved or silently re-bound.
func checkFlatten(t *testing.T, d Dialect, inner, where string) {
	t.Helper()
	checkFlattened(t, d, "SELECT count(*), sum(s.age) FROM ("+inner+") AS s WHERE "+where+" GROUP BY s.sex HAVING count(*) > 1 ORDER BY s.sex")
	// Over an aggregate subquery: post-processing of its rows.
	checkFlattened(t, d, "SELECT *, s.n FROM ("+inner+") AS s WHERE "+where+" ORDER BY s.n LIMIT 3")
}

func checkFlattened(t *testing.T, d Dialect, sql string) {
	t.Helper()
	stmts, err := Parse(d, sql)
	if err != nil || len(stmts) != 1 {
		return
	}
	st := stmts[0]
	checkStatement(t, st)
	q := st.Query
	if q == nil {
		return
	}
	again, err := Parse(d, sql)
	if err != nil || !reflect.DeepEqual(again[0].Query, q) {
		t.Fatalf("parsing twice gave two queries: %q", sql)
	}
	fold := d == MySQL
	for _, tb := range append([]ir.TableRef{q.From}, joinTables(q.Joins)...) {
		if sameIdent(fold, tb.RefName(), "s") {
			return // a real table named s: its references are real
		}
	}
	check := func(e ir.Expr) {
		ir.Walk(e, func(n ir.Expr) bool {
			switch n := n.(type) {
			case ir.ColumnRef:
				checkNotDerived(t, fold, n, sql)
			case ir.Aggregate:
				if n.Arg != nil {
					checkNotDerived(t, fold, *n.Arg, sql)
				}
				ir.Walk(n.ArgExpr, func(m ir.Expr) bool {
					if c, ok := m.(ir.ColumnRef); ok {
						checkNotDerived(t, fold, c, sql)
					}
					return true
				})
			}
			return true
		})
	}
	for _, it := range q.Select {
		if it.Arg != nil {
			checkNotDerived(t, fold, *it.Arg, sql)
		}
		check(it.ArgExpr)
		check(it.Expr)
	}
	check(q.Where)
	check(q.Having)
	for _, g := range q.GroupBy {
		check(g)
	}
	for _, o := range q.OrderBy {
		check(o.Expr)
	}
	for _, j := range q.Joins {
		checkNotDerived(t, fold, j.Left, sql)
		checkNotDerived(t, fold, j.Right, sql)
	}
	// A stage reads the level below by position only: no column of a
	// table, no aggregate (that would aggregate the released rows again).
	for _, st := range q.Stages {
		exprs := []ir.Expr{st.Where}
		for _, it := range st.Select {
			exprs = append(exprs, it.Expr)
		}
		for _, o := range st.OrderBy {
			exprs = append(exprs, o.Expr)
		}
		for _, e := range exprs {
			ir.Walk(e, func(n ir.Expr) bool {
				switch n.(type) {
				case ir.ColumnRef, ir.Aggregate:
					t.Fatalf("a stage holds %s: %q", ir.FormatExpr(n), sql)
				}
				return true
			})
		}
	}
}

func joinTables(js []ir.Join) []ir.TableRef {
	var out []ir.TableRef
	for _, j := range js {
		out = append(out, j.Table)
	}
	return out
}

func checkNotDerived(t *testing.T, fold bool, c ir.ColumnRef, sql string) {
	t.Helper()
	if c.Schema == "" && sameIdent(fold, c.Qualifier, "s") {
		t.Fatalf("reference %s to the derived table survived flattening: %q", colText(c), sql)
	}
}
