package planner_test

import (
	"fmt"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestWrappedQueriesShareTheFlatRelease: a query wrapped in a subquery or
// CTE the way BI tools wrap it plans to exactly the backend query, noise
// steps and release key of the flat query it means, in both dialects, so
// the two share one release and a repeat of either is free.
func TestWrappedQueriesShareTheFlatRelease(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pg, my := planArgs{eps: 1, dialect: parser.Postgres}, planArgs{eps: 1, dialect: parser.MySQL}
	type form struct {
		a   planArgs
		sql string
	}
	groups := []struct {
		name  string
		flat  form
		forms []form
	}{
		{"metabase",
			form{pg, `SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC`},
			[]form{
				{pg, `SELECT "source"."sex" AS "sex", count(*) AS "count" FROM (SELECT "public"."people"."sex" AS "sex", "public"."people"."age" AS "age" FROM "public"."people") AS "source" GROUP BY "source"."sex" ORDER BY "source"."sex" ASC`},
				{my, "SELECT `source`.`sex` AS `sex`, count(*) AS `count` FROM (SELECT `people`.`sex` AS `sex`, `people`.`age` AS `age` FROM `people`) AS `source` GROUP BY `source`.`sex` ORDER BY `source`.`sex` ASC"},
				{pg, `WITH "source" AS (SELECT "people"."sex" AS "sex" FROM "people") SELECT "source"."sex" AS "sex", count(*) AS "count" FROM "source" GROUP BY "source"."sex" ORDER BY "source"."sex" ASC`},
			}},
		{"superset",
			form{pg, "SELECT sex AS sex, COUNT(*) AS count FROM people GROUP BY sex LIMIT 1000"},
			[]form{
				{pg, "SELECT sex AS sex, COUNT(*) AS count FROM (SELECT * FROM people) AS virtual_table GROUP BY sex LIMIT 1000"},
				{my, "SELECT sex AS sex, COUNT(*) AS count FROM (SELECT * FROM people) AS virtual_table GROUP BY sex LIMIT 1000"},
			}},
		{"power bi",
			form{pg, `select "_"."sex", count(1) as "C1" from "public"."people" "_" where "_"."age" > 30 group by "_"."sex"`},
			[]form{
				{pg, `select "_"."sex", count(1) as "C1" from (select "_"."sex" from "public"."people" "_" where "_"."age" > 30) "_" group by "_"."sex"`},
				{my, "select `_`.`sex`, count(1) as `C1` from (select `_`.`sex` from `people` `_` where `_`.`age` > 30) `_` group by `_`.`sex`"},
			}},
		{"cte with an expression argument",
			form{pg, "SELECT sex, sum(age * 2) FROM people WHERE age > 30 AND sex = 'Female' GROUP BY sex"},
			[]form{
				{pg, "WITH t AS (SELECT sex, age * 2 AS a2 FROM people WHERE age > 30) SELECT sex, sum(a2) FROM t WHERE sex = 'Female' GROUP BY sex"},
				{my, "WITH t AS (SELECT sex, age * 2 AS a2 FROM people WHERE age > 30) SELECT sex, sum(a2) FROM t WHERE sex = 'Female' GROUP BY sex"},
			}},
		{"nested levels",
			form{pg, "SELECT sex, count(*), avg(age) FROM people WHERE age > 1 AND age < 90 GROUP BY sex"},
			[]form{
				{pg, "SELECT s2.x AS sex, count(*), avg(s2.a) AS avg FROM (SELECT s1.y AS x, s1.a FROM (SELECT sex AS y, age AS a FROM people WHERE age > 1 ORDER BY age) s1 WHERE s1.a < 90) s2 GROUP BY s2.x"},
				{my, "SELECT x AS sex, count(*), avg(a) AS avg FROM (SELECT * FROM (SELECT sex AS x, age AS a FROM people WHERE age > 1) s1 WHERE a < 90) s2 GROUP BY x"},
			}},
		{"left join of the derived table",
			form{pg, "SELECT count(*), avg(people.age) FROM people LEFT JOIN zips z ON people.zip = z.zip WHERE z.state = 'NY'"},
			[]form{
				{pg, "SELECT count(*), avg(s.age) FROM (SELECT zip AS zz, age FROM people) s LEFT JOIN zips z ON s.zz = z.zip WHERE z.state = 'NY'"},
				{my, "SELECT count(*), avg(s.age) FROM (SELECT zip AS zz, age FROM people) s LEFT JOIN zips z ON s.zz = z.zip WHERE z.state = 'NY'"},
			}},
		{"metabase filter on a summarised column",
			form{pg, `SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" GROUP BY "public"."people"."sex" HAVING count(*) > 10 ORDER BY "public"."people"."sex" ASC LIMIT 2000`},
			[]form{
				{pg, `SELECT "source"."sex" AS "sex", "source"."count" AS "count" FROM (SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC) "source" WHERE "source"."count" > 10 LIMIT 2000`},
				{my, "SELECT `source`.`sex` AS `sex`, `source`.`count` AS `count` FROM (SELECT `people`.`sex` AS `sex`, count(*) AS `count` FROM `people` GROUP BY `people`.`sex` ORDER BY `people`.`sex` ASC) `source` WHERE `source`.`count` > 10 LIMIT 2000"},
				{pg, `SELECT * FROM (SELECT * FROM (SELECT sex, count(*) AS "count" FROM people GROUP BY sex) a WHERE "count" > 10) b ORDER BY sex LIMIT 2000`},
			}},
		{"outer alias named like an inner grouping column",
			form{pg, "SELECT count(*) AS age FROM people GROUP BY age HAVING people.age > 30"},
			[]form{
				{pg, "SELECT s.n AS age FROM (SELECT age, count(*) AS n FROM people GROUP BY age) s WHERE s.age > 30"},
				{my, "SELECT s.n AS age FROM (SELECT age, count(*) AS n FROM people GROUP BY age) s WHERE s.age > 30"},
			}},
		{"join inside",
			form{pg, "SELECT count(*) FROM people p JOIN zips z ON p.zip = z.zip WHERE z.state = 'NY' AND p.age > 3"},
			[]form{
				{pg, "SELECT count(*) FROM (SELECT p.age, z.state AS st FROM people p JOIN zips z ON p.zip = z.zip WHERE z.state = 'NY') s WHERE s.age > 3"},
			}},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			flat, err := plan(t, p, g.flat.sql, g.flat.a)
			if err != nil {
				t.Fatalf("flat query: %v", err)
			}
			for _, f := range g.forms {
				got, err := plan(t, p, f.sql, f.a)
				if err != nil {
					t.Errorf("%s: %v", f.sql, err)
					continue
				}
				if got.Backend.Canonical() != flat.Backend.Canonical() {
					t.Errorf("%s:\nbackend %s\nwant    %s", f.sql, got.Backend.Canonical(), flat.Backend.Canonical())
				}
				if got.CacheKey != flat.CacheKey {
					t.Errorf("%s: release key differs from the flat query's", f.sql)
				}
				if len(got.Outputs) != len(flat.Outputs) {
					t.Fatalf("%s: %d outputs, want %d", f.sql, len(got.Outputs), len(flat.Outputs))
				}
				post := func(pl *planner.Plan) string {
					lim := "none"
					if pl.Limit != nil {
						lim = fmt.Sprint(*pl.Limit)
					}
					// NULLs sort as the client's dialect sorts them.
					var order []string
					for _, o := range pl.OrderBy {
						order = append(order, fmt.Sprint(o.Output, o.Desc))
					}
					return fmt.Sprint(pl.Having, order, lim)
				}
				if post(got) != post(flat) {
					t.Errorf("%s: post-processing %s, want %s", f.sql, post(got), post(flat))
				}
				// MySQL names an item without alias after its text, which
				// differs between the forms: only same-dialect names compare.
				for i := range got.Outputs {
					if f.a.dialect == g.flat.a.dialect && got.Outputs[i].Name != flat.Outputs[i].Name {
						t.Errorf("%s: output %d named %q, want %q", f.sql, i, got.Outputs[i].Name, flat.Outputs[i].Name)
					}
				}
			}
		})
	}
}

// TestWrappedQueriesRefused: what the flattening merges still meets every
// planner rule (two private tables, undeclared columns, private first).
func TestWrappedQueriesRefused(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name string
		sql  string
		code sqlerr.Code
	}{
		{"public table only inside", "SELECT count(*) FROM (SELECT * FROM zips) z JOIN people p ON z.zip = p.zip", sqlerr.FeatureNotSupported},
		{"undeclared column through a star", "SELECT count(*) FROM (SELECT * FROM people) s WHERE s.salary > 3", sqlerr.UndefinedColumn},
		{"unit through a star", "SELECT count(*) FROM (SELECT * FROM people) s WHERE person_id = 3", sqlerr.InsufficientPrivilege},
		{"ungrouped column", "SELECT s.name, count(*) FROM (SELECT name, sex FROM people) s GROUP BY s.sex", sqlerr.InsufficientPrivilege},
		{"nested aggregation", "SELECT avg(n) FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex) s", sqlerr.InsufficientPrivilege},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan(t, p, tt.sql, planArgs{eps: 1, dialect: parser.Postgres})
			if err == nil {
				t.Fatalf("planned, want refusal %s", tt.code.Name)
			}
			if c := sqlerr.As(err).Code; c != tt.code {
				t.Errorf("code %s (%v), want %s", c.Name, err, tt.code.Name)
			}
		})
	}
}
