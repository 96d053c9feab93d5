package planner_test

import (
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/internal/cpubench"
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
	// Metabase's wrapper around a query (flattened by the parser).
	const metabase = `SELECT "source"."sex" AS "sex", count(*) AS "count", avg("source"."age") AS "avg" FROM (SELECT "public"."people"."sex" AS "sex", "public"."people"."age" AS "age" FROM "public"."people" WHERE "public"."people"."age" BETWEEN 30 AND 50) AS "source" GROUP BY "source"."sex" ORDER BY "source"."sex" ASC`
	b.Run("postgres/metabase-subquery", func(b *testing.B) {
		b.ReportAllocs()
		defer cpubench.Report(b)()
		for b.Loop() {
			stmts, err := parser.Parse(parser.Postgres, metabase)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for d, sql := range queries {
		b.Run(d.String(), func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
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
			defer cpubench.Report(b)()
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
			defer cpubench.Report(b)()
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
	defer cpubench.Report(b)()
	for b.Loop() {
		if _, err := p.Plan(planner.Request{User: user, Dialect: "postgres", Statement: &stmts[0], Catalog: rels}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsePlanWindow measures parse + plan of a BI "share of total
// and top-N" query: post-processing expressions and windows over the
// output rows.
func BenchmarkParsePlanWindow(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadPolicyB(b)
	p := planner.New(pol)
	user := pol.User("alice")
	const sql = `SELECT sex, COUNT(*) AS n, ROUND(COUNT(*) * 100.0 / SUM(COUNT(*)) OVER (), 1) AS share, ` +
		`RANK() OVER (ORDER BY COUNT(*) DESC) AS r, CASE WHEN AVG(age) > 40 THEN 'older' ELSE 'younger' END AS band ` +
		`FROM people WHERE age BETWEEN 30 AND 50 GROUP BY sex ORDER BY r LIMIT 10`
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		b.Run(d.String(), func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
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
			defer cpubench.Report(b)()
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
			defer cpubench.Report(b)()
			for b.Loop() {
				if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParsePlanQuantile: a median over an integer column of 121
// candidates and a percentile over a real column of 1,024 bins, whose
// per-bin backend query places each value by a binary search of CASEs.
func BenchmarkParsePlanQuantile(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadPolicyB(b)
	p := planner.New(pol)
	user := pol.User("alice")
	for name, sql := range map[string]string{
		"median-int":      `SELECT median(age) FROM people WHERE sex = 'Female'`,
		"percentile-real": `SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY income) FROM people`,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
			for b.Loop() {
				stmts, err := parser.Parse(parser.Postgres, sql)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFreshPlan is pgbench's fresh workload as the proxy plans it: a
// GROUP BY count with a new WHERE literal each time, parsed through the
// front ends' Cache (the shape cache builds it from a cached tree) and
// planned with the PostgreSQL dialect's limits (session.PlannerOptions).
// "plan" plans one parsed statement over and over: the planner alone.
func BenchmarkFreshPlan(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadPolicyB(b)
	pg := sqlrender.ByName("postgres")
	p := planner.NewWith(pol, planner.Options{Limits: planner.Limits{Dialect: pg.Name, MaxParams: pg.MaxParams, MaxDepth: pg.MaxDepth,
		Measure: func(q *ir.BackendQuery) (planner.Shape, error) {
			s, err := pg.Measure(q)
			return planner.Shape{Params: s.Params, Depth: s.Depth}, err
		}}})
	user := pol.User("alice")
	text := func(i int) string {
		return "SELECT sex, COUNT(*) FROM people WHERE age <> -" + strconv.Itoa(100000+i) + " GROUP BY sex"
	}
	b.Run("parse+plan", func(b *testing.B) {
		c := parser.NewCache(4096)
		b.ReportAllocs()
		defer cpubench.Report(b)()
		i := 0
		for b.Loop() {
			stmts, err := c.Parse(parser.Postgres, text(i))
			i++
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plan", func(b *testing.B) {
		stmts, err := parser.Parse(parser.Postgres, text(0))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer cpubench.Report(b)()
		for b.Loop() {
			if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
