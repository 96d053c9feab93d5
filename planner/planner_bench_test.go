package planner_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// BenchmarkParsePlan measures what the proxy adds per query before the
// backend runs: parsing the text and planning it (sensitivities, scales,
// cache key). Target: well under 100 µs for a typical GROUP BY query.
func BenchmarkParsePlan(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadPolicyB(b)
	p := planner.New(pol)
	user := pol.User("alice")
	queries := map[parser.Dialect]string{
		parser.Postgres: `SELECT sex, COUNT(*), AVG(age) FROM people WHERE age BETWEEN 30 AND 50 AND zip IN ('02139', '10001') GROUP BY sex ORDER BY 2 DESC`,
		parser.MySQL:    "SELECT `sex`, COUNT(*), AVG(age) FROM people WHERE age BETWEEN 30 AND 50 AND zip IN ('02139', '10001') GROUP BY sex ORDER BY 2 DESC",
	}
	for d, sql := range queries {
		b.Run(d.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				stmts, err := parser.Parse(d, sql)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.String()+"/plan-with-limits", func(b *testing.B) {
			// As served: the backend query is rendered once more at plan
			// time to check the dialect's parameter and depth limits.
			sq := sqlrender.SQLite()
			pl := planner.NewWith(pol, planner.Options{Limits: planner.Limits{Dialect: sq.Name, MaxParams: sq.MaxParams, MaxDepth: sq.MaxDepth,
				Measure: func(q *ir.BackendQuery) (planner.Shape, error) {
					s, err := sq.Measure(q)
					return planner.Shape{Params: s.Params, Depth: s.Depth}, err
				}}})
			stmts, err := parser.Parse(d, sql)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pl.Plan(planner.Request{User: user, Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.String()+"/plan-only", func(b *testing.B) {
			stmts, err := parser.Parse(d, sql)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlanCatalogPassthrough measures planning psql's \d people
// column query (pg_attribute filtered, pg_class read through its blanking
// derived table): parse, checks, rewrite and deparse.
func BenchmarkPlanCatalogPassthrough(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadPolicyB(b)
	p := planner.New(pol)
	user := pol.User("alice")
	const sql = `SELECT c.oid, n.nspname, c.relname, c.relkind, c.relpages FROM pg_catalog.pg_class c
LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(people)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3`
	stmts, err := parser.Parse(parser.Postgres, sql)
	if err != nil {
		b.Fatal(err)
	}
	rels := planner.SmallCatalog()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Plan(planner.Request{User: user, Dialect: "postgres", Statement: &stmts[0], Catalog: rels}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsePlanHistogram: a BI histogram (Metabase/Superset bins) —
// parse, plan and derive the 13 keys of floor(age / 10) * 10 over the
// declared ages, with a WHERE that narrows them.
func BenchmarkParsePlanHistogram(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadPolicyB(b)
	p := planner.New(pol)
	user := pol.User("alice")
	queries := map[parser.Dialect]string{
		parser.Postgres: `SELECT floor("people"."age" / 10) * 10 AS "age", count(*) AS "count" FROM "public"."people" WHERE floor("people"."age" / 10) * 10 >= 20 GROUP BY floor("people"."age" / 10) * 10 ORDER BY 1 ASC`,
		parser.MySQL:    "SELECT FLOOR(`people`.`age` / 10) * 10 AS `age`, COUNT(*) AS `count` FROM `people` GROUP BY 1 ORDER BY 1",
	}
	for d, sql := range queries {
		b.Run(d.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				stmts, err := parser.Parse(d, sql)
				if err != nil {
					b.Fatal(err)
				}
				pl, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]})
				if err != nil {
					b.Fatal(err)
				}
				if len(pl.Groups[0].Domain) < 7 {
					b.Fatalf("keys %v", pl.Groups[0].Domain)
				}
			}
		})
		b.Run(d.String()+"/plan-only", func(b *testing.B) {
			stmts, err := parser.Parse(d, sql)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
