package parser

import (
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Seeds shared by both fuzz targets; more live in testdata/fuzz/.
var fuzzSeeds = []string{
	"SELECT city, count(*) FROM people p JOIN visits v ON p.id = v.pid WHERE age > 1 GROUP BY 1 HAVING count(*) > 2 ORDER BY 2 DESC LIMIT 3",
	"SELECT count(*) FROM t WHERE a IN (SELECT a FROM secret)",
	"WITH x AS (SELECT * FROM secret) SELECT * FROM x; SET a = 1; BEGIN",
	"SELECT k, count(*) * 100.0 / sum(count(*)) OVER (), rank() OVER (PARTITION BY k ORDER BY avg(x) DESC) FROM t GROUP BY k ORDER BY row_number() OVER (ORDER BY k)",
	"SELECT CASE k WHEN 'a' THEN CAST(count(*) AS text) ELSE lower(k) || '!' END FROM t GROUP BY k HAVING NOT (count(*) > 1 OR nullif(sum(x), 0) IS NULL)",
	"",
	";",
	"SELECT floor(age / 10) * 10 AS bin, CASE WHEN age < 30 THEN 'y' END b, count(*) FROM people WHERE age BETWEEN 3 AND 9 GROUP BY 1, b, width_bucket(age, 0, 9, 3)",
	"SELECT count(*) FROM t WHERE d >= DATE '2010-01-01' AND ts < '2010-06-01 12:00'::timestamp AND CAST('2010-02-30' AS DATE) < d",
	"SELECT count(*) FROM t WHERE date_trunc('month', ts) = TIMESTAMP '2010-03-01' OR extract(dow FROM d) IN (0, 6) OR date_part('year', ts) = 2010",
	"SELECT count(*) FROM t WHERE ts + INTERVAL '3 months' > ts - INTERVAL '-1 day' AND d + INTERVAL 1 DAY > DATE_SUB(d, INTERVAL 2 WEEK) AND YEAR(d) = 2010",
	"SELECT a, b, GROUPING(a, b), count(*) FROM t GROUP BY DISTINCT a, ROLLUP(b, (c, 1)), CUBE(a, b), GROUPING SETS ((), (a), ROLLUP(c)) HAVING GROUPING(b) = 0 ORDER BY GROUPING(a)",
	"SELECT a, GROUPING(a), count(*) FROM t GROUP BY a, b WITH ROLLUP",
}

func FuzzParsePostgres(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) { checkInvariants(t, Postgres, sql) })
}

func FuzzParseMySQL(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) { checkInvariants(t, MySQL, sql) })
}

// checkInvariants parses sql and checks what every caller relies on.
func checkInvariants(t *testing.T, d Dialect, sql string) {
	t.Helper()
	stmts, err := Parse(d, sql)
	if err != nil {
		if len(stmts) != 0 {
			t.Fatalf("statements returned with an error")
		}
		return
	}
	if len(stmts) == 0 {
		t.Fatalf("no statements and no error")
	}
	for _, st := range stmts {
		checkStatement(t, st)
	}
}

func checkStatement(t *testing.T, st ir.Statement) {
	t.Helper()
	switch st.Kind {
	case ir.StmtRefused:
		if st.Refused == nil {
			t.Fatalf("refused statement without an error: %q", st.Text)
		}
	case ir.StmtSession:
		if st.Session == nil {
			t.Fatalf("session statement without Session: %q", st.Text)
		}
	case ir.StmtExplain:
		if st.Explain == nil || st.Explain.Kind != ir.StmtSelect {
			t.Fatalf("explain of a non-select: %q", st.Text)
		}
		checkStatement(t, *st.Explain)
	case ir.StmtSelect:
		if st.Query == nil {
			if st.NotAggregate == "" {
				t.Fatalf("select without Query and without a reason: %q", st.Text)
			}
			return
		}
		listed := func(r ir.TableRef) bool {
			return slices.Contains(st.Relations, ir.TableRef{Schema: r.Schema, Name: r.Name})
		}
		if !listed(st.Query.From) {
			t.Fatalf("Relations %v lack FROM table %v: %q", st.Relations, st.Query.From, st.Text)
		}
		for _, j := range st.Query.Joins {
			if !listed(j.Table) {
				t.Fatalf("Relations %v lack joined table %v: %q", st.Relations, j.Table, st.Text)
			}
		}
		for _, g := range st.Query.GroupBy {
			// A grouping key is a row-level expression: no aggregate,
			// no reference to an output.
			ir.Walk(g, func(n ir.Expr) bool {
				switch n.(type) {
				case ir.Aggregate, ir.OutputRef, ir.Clamp:
					t.Fatalf("GROUP BY key %s holds %T: %q", ir.FormatExpr(g), n, st.Text)
				}
				return true
			})
		}
		for _, set := range st.Query.GroupingSets {
			for _, k := range set {
				if k < 0 || k >= len(st.Query.GroupBy) {
					t.Fatalf("grouping set %v indexes past GROUP BY %d: %q", set, len(st.Query.GroupBy), st.Text)
				}
			}
		}
		bound := func(e ir.Expr) {
			ir.Walk(e, func(n ir.Expr) bool {
				if g, ok := n.(ir.Grouping); ok {
					if len(g.Keys) != len(g.Args) {
						t.Fatalf("GROUPING not bound to GROUP BY: %q", st.Text)
					}
					for _, k := range g.Keys {
						if k < 0 || k >= len(st.Query.GroupBy) {
							t.Fatalf("GROUPING key %d past GROUP BY: %q", k, st.Text)
						}
					}
				}
				return true
			})
		}
		for _, it := range st.Query.Select {
			bound(it.Expr)
		}
		bound(st.Query.Having)
		for _, o := range st.Query.OrderBy {
			bound(o.Expr)
		}
		if n := st.Query.NumParams(); n > st.NumParams {
			t.Fatalf("Query uses $%d but NumParams is %d: %q", n, st.NumParams, st.Text)
		}
	case ir.StmtEmpty:
	default:
		t.Fatalf("unknown statement kind %d", st.Kind)
	}
}
