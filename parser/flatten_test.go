package parser

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

func col3(s, q, n string) ir.ColumnRef { return ir.ColumnRef{Schema: s, Qualifier: q, Name: n} }
func ptr(c ir.ColumnRef) *ir.ColumnRef { return &c }

// TestFlattenShapes checks the flat IR of subqueries and CTEs in FROM, in
// the shapes BI tools send, written out by hand: outer references become
// the inner select expressions, inner WHERE comes first, inner joins
// first, output names stay those written outside.
func TestFlattenShapes(t *testing.T) {
	people := tbl("", "people", "")
	count := ir.SelectItem{Agg: ir.AggCount, Alias: "count"}
	sexP := col("people", "sex")
	tests := []struct {
		name string
		d    Dialect
		sql  string
		want ir.Query
	}{
		{"metabase", Postgres,
			`SELECT "source"."sex" AS "sex", count(*) AS "count" FROM (SELECT "public"."people"."sex" AS "sex", "public"."people"."age" AS "age" FROM "public"."people") AS "source" GROUP BY "source"."sex" ORDER BY "source"."sex" ASC`,
			ir.Query{From: tbl("public", "people", ""),
				Select:  []ir.SelectItem{{Arg: ptr(col3("public", "people", "sex")), Alias: "sex"}, count},
				GroupBy: []ir.Expr{col3("public", "people", "sex")},
				OrderBy: []ir.OrderItem{{Expr: col3("public", "people", "sex")}}}},
		// A computed derived column groups by the expression it names.
		{"computed grouping key", Postgres, "SELECT d, count(*) FROM (SELECT age / 10 AS d FROM people) s GROUP BY d",
			ir.Query{From: people,
				Select:  []ir.SelectItem{{Expr: ir.Arith{Op: ir.OpDiv, L: col("people", "age"), R: lit(ir.Int(10))}, Alias: "d"}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{ir.Arith{Op: ir.OpDiv, L: col("people", "age"), R: lit(ir.Int(10))}}}},
		{"mysql computed grouping key by position", MySQL, "SELECT d, count(*) FROM (SELECT age DIV 10 AS d FROM people) s GROUP BY 1",
			ir.Query{From: people,
				Select:  []ir.SelectItem{{Expr: ir.Arith{Op: ir.OpIntDiv, L: col("people", "age"), R: lit(ir.Int(10))}, Alias: "d"}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{ir.Arith{Op: ir.OpIntDiv, L: col("people", "age"), R: lit(ir.Int(10))}}}},
		{"mysql metabase", MySQL,
			"SELECT `source`.`sex` AS `sex`, count(*) AS `count` FROM (SELECT `demo`.`people`.`sex` AS `sex`, `demo`.`people`.`age` AS `age` FROM `demo`.`people`) AS `source` GROUP BY `source`.`sex` ORDER BY `source`.`sex` ASC",
			ir.Query{From: tbl("demo", "people", ""),
				Select:  []ir.SelectItem{{Arg: ptr(col3("demo", "people", "sex")), Alias: "sex"}, count},
				GroupBy: []ir.Expr{col3("demo", "people", "sex")},
				OrderBy: []ir.OrderItem{{Expr: col3("demo", "people", "sex")}}}},
		{"superset", Postgres,
			"SELECT sex AS sex, COUNT(*) AS count FROM (SELECT * FROM people) AS virtual_table GROUP BY sex LIMIT 1000",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: ptr(sexP), Alias: "sex"}, count},
				GroupBy: []ir.Expr{sexP}, Limit: i64(1000)}},
		{"mysql superset", MySQL,
			"SELECT sex AS sex, COUNT(*) AS count FROM (SELECT * FROM people) AS virtual_table GROUP BY sex LIMIT 1000",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: ptr(sexP), Alias: "sex"}, count},
				GroupBy: []ir.Expr{sexP}, Limit: i64(1000)}},
		{"power bi", Postgres,
			`select "_"."sex", count(1) as "C1" from (select "_"."sex" from "public"."people" "_" where "_"."age" > 30) "_" group by "_"."sex"`,
			ir.Query{From: tbl("public", "people", "_"),
				Select:  []ir.SelectItem{{Arg: colp("_", "sex"), Alias: "sex"}, {Agg: ir.AggCount, Alias: "C1"}},
				Where:   ir.Compare{Op: ir.OpGt, L: col("_", "age"), R: lit(ir.Int(30))},
				GroupBy: []ir.Expr{col("_", "sex")}}},
		{"cte with computed aggregate argument", Postgres,
			"WITH t AS (SELECT sex, age * 2 AS a2 FROM people WHERE age > 30 ORDER BY age) SELECT sex, sum(a2) FROM t WHERE sex = 'F' GROUP BY sex",
			ir.Query{From: people,
				Select: []ir.SelectItem{{Arg: ptr(sexP), Alias: "sex"},
					{Agg: ir.AggSum, ArgExpr: ir.Arith{Op: ir.OpMul, L: col("people", "age"), R: lit(ir.Int(2))}}},
				Where: ir.And{L: ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: lit(ir.Int(30))},
					R: ir.Compare{Op: ir.OpEq, L: sexP, R: lit(ir.String("F"))}},
				GroupBy: []ir.Expr{sexP}}},
		{"mysql cte chain", MySQL,
			"WITH a AS (SELECT sex AS s, age FROM people), b AS (SELECT s AS g, age FROM a WHERE age > 3) SELECT g, avg(age) FROM b GROUP BY g",
			ir.Query{From: people,
				Select:  []ir.SelectItem{{Arg: ptr(sexP), Alias: "g"}, {Agg: ir.AggAvg, Arg: colp("people", "age")}},
				Where:   ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: lit(ir.Int(3))},
				GroupBy: []ir.Expr{sexP}}},
		{"nested levels", Postgres,
			"SELECT s2.x, count(*) FROM (SELECT s1.y AS x FROM (SELECT sex AS y FROM people p WHERE age > 1) s1 WHERE s1.y <> 'M') s2 GROUP BY s2.x",
			ir.Query{From: tbl("", "people", "p"),
				Select: []ir.SelectItem{{Arg: colp("p", "sex"), Alias: "x"}, {Agg: ir.AggCount}},
				Where: ir.And{L: ir.Compare{Op: ir.OpGt, L: col("p", "age"), R: lit(ir.Int(1))},
					R: ir.Compare{Op: ir.OpNe, L: col("p", "sex"), R: lit(ir.String("M"))}},
				GroupBy: []ir.Expr{col("p", "sex")}}},
		{"column alias list", Postgres,
			"SELECT a, count(*) FROM (SELECT sex, age FROM people) AS s(a, b) WHERE b > 3 GROUP BY a",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: ptr(sexP), Alias: "a"}, {Agg: ir.AggCount}},
				Where:   ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: lit(ir.Int(3))},
				GroupBy: []ir.Expr{sexP}}},
		{"cte column list", Postgres,
			"WITH t(a) AS (SELECT sex FROM people) SELECT a, count(*) FROM t GROUP BY a",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: ptr(sexP), Alias: "a"}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{sexP}}},
		{"left join of the derived table", Postgres,
			"SELECT c.name, count(*) FROM (SELECT city_id AS cid, age FROM people) s LEFT JOIN cities c ON s.cid = c.id GROUP BY c.name",
			ir.Query{From: people,
				Joins:   []ir.Join{{Table: tbl("", "cities", "c"), Left: col("people", "city_id"), Right: col("c", "id"), Outer: true}},
				Select:  []ir.SelectItem{{Arg: colp("c", "name"), Alias: "name"}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{col("c", "name")}}},
		{"mysql join using the derived table", MySQL,
			"SELECT name, count(*) FROM (SELECT city_id, age FROM people) s JOIN cities USING (city_id) GROUP BY name",
			ir.Query{From: people,
				Joins:   []ir.Join{{Table: tbl("", "cities", ""), Left: col("people", "city_id"), Right: col("cities", "city_id")}},
				Select:  []ir.SelectItem{{Arg: colp("cities", "name"), Alias: "name"}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{col("cities", "name")}}},
		{"inner join inside comes first", Postgres,
			"SELECT s.name, count(*) FROM (SELECT p.age, c.name FROM people p JOIN cities c ON p.city_id = c.id WHERE p.age > 2) s JOIN boroughs b ON s.name = b.name GROUP BY s.name",
			ir.Query{From: tbl("", "people", "p"),
				Joins: []ir.Join{{Table: tbl("", "cities", "c"), Left: col("p", "city_id"), Right: col("c", "id")},
					{Table: tbl("", "boroughs", "b"), Left: col("c", "name"), Right: col("b", "name")}},
				Select:  []ir.SelectItem{{Arg: colp("c", "name"), Alias: "name"}, {Agg: ir.AggCount}},
				Where:   ir.Compare{Op: ir.OpGt, L: col("p", "age"), R: lit(ir.Int(2))},
				GroupBy: []ir.Expr{col("c", "name")}}},
		{"qualified star", MySQL,
			"SELECT v.sex, count(*) FROM (SELECT p.* FROM people p) v GROUP BY v.sex",
			ir.Query{From: tbl("", "people", "p"), Select: []ir.SelectItem{{Arg: colp("p", "sex"), Alias: "sex"}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{col("p", "sex")}}},
		{"star over a join passes names to the planner", Postgres,
			"SELECT count(*) FROM (SELECT * FROM people p JOIN cities c ON p.city_id = c.id) v WHERE name = 'x'",
			ir.Query{From: tbl("", "people", "p"),
				Joins:  []ir.Join{{Table: tbl("", "cities", "c"), Left: col("p", "city_id"), Right: col("c", "id")}},
				Select: []ir.SelectItem{{Agg: ir.AggCount}},
				Where:  ir.Compare{Op: ir.OpEq, L: col("", "name"), R: lit(ir.String("x"))}}},
		{"computed column inside an aggregate, having and order by", Postgres,
			"SELECT sex, sum(y) AS total FROM (SELECT sex, age + 1 AS y FROM people) s GROUP BY sex HAVING avg(s.y) > 2 ORDER BY total DESC, count(y)",
			ir.Query{From: people,
				Select: []ir.SelectItem{{Arg: ptr(sexP), Alias: "sex"},
					{Agg: ir.AggSum, ArgExpr: ir.Arith{Op: ir.OpAdd, L: col("people", "age"), R: lit(ir.Int(1))}, Alias: "total"}},
				GroupBy: []ir.Expr{sexP},
				Having: ir.Compare{Op: ir.OpGt, L: ir.Aggregate{Func: ir.AggAvg, ArgExpr: ir.Arith{Op: ir.OpAdd, L: col("people", "age"), R: lit(ir.Int(1))}},
					R: lit(ir.Int(2))},
				OrderBy: []ir.OrderItem{{Expr: col("", "total"), Desc: true},
					{Expr: ir.Aggregate{Func: ir.AggCount, ArgExpr: ir.Arith{Op: ir.OpAdd, L: col("people", "age"), R: lit(ir.Int(1))}}}}}},
		{"count of a constant column is count(*)", MySQL,
			"SELECT count(one) FROM (SELECT 1 AS one FROM people) s",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount}}}},
		{"parameters inside", Postgres,
			"SELECT count(*) FROM (SELECT age FROM people WHERE age > $1) s WHERE age < $2",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount}},
				Where: ir.And{L: ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: ir.Param{Index: 1}},
					R: ir.Compare{Op: ir.OpLt, L: col("people", "age"), R: ir.Param{Index: 2}}}}},
		{"mysql parameters inside", MySQL,
			"SELECT count(*) FROM (SELECT age FROM people WHERE age > ?) s WHERE age < ?",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount}},
				Where: ir.And{L: ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: ir.Param{Index: 1}},
					R: ir.Compare{Op: ir.OpLt, L: col("people", "age"), R: ir.Param{Index: 2}}}}},
		{"cte shadows a table of the same name", Postgres,
			"WITH people AS (SELECT * FROM people WHERE age > 30) SELECT count(*) FROM people",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount}},
				Where: ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: lit(ir.Int(30))}}},
		{"no alias on the subquery", Postgres,
			"SELECT count(*) FROM (SELECT age FROM people) WHERE age > 3",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount}},
				Where: ir.Compare{Op: ir.OpGt, L: col("people", "age"), R: lit(ir.Int(3))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Query == nil {
				t.Fatalf("not an aggregate: %s", st.NotAggregate)
			}
			if !reflect.DeepEqual(unlabeled(*st.Query), tt.want) {
				t.Errorf("Query =\n%#v\nwant\n%#v", *st.Query, tt.want)
			}
		})
	}
}

// TestOverAggregateShapes: a SELECT over an aggregate subquery is
// post-processing of its rows (Metabase's filter on a summarised column,
// Looker's pivot wrappers without their windows), merged into it by hand.
func TestOverAggregateShapes(t *testing.T) {
	people := tbl("", "people", "")
	gt := func(l ir.Expr, n int64) ir.Expr { return ir.Compare{Op: ir.OpGt, L: l, R: lit(ir.Int(n))} }
	count := ir.Aggregate{Func: ir.AggCount}
	tests := []struct {
		name string
		d    Dialect
		sql  string
		want ir.Query
	}{
		{"metabase filter on a summarised column", Postgres,
			`SELECT "source"."sex" AS "sex", "source"."count" AS "count" FROM (SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC) "source" WHERE "source"."count" > 10 LIMIT 2000`,
			ir.Query{From: tbl("public", "people", ""),
				Select:  []ir.SelectItem{{Arg: ptr(col3("public", "people", "sex")), Alias: "sex"}, {Agg: ir.AggCount, Alias: "count"}},
				GroupBy: []ir.Expr{col3("public", "people", "sex")},
				Having:  gt(count, 10),
				OrderBy: []ir.OrderItem{{Expr: col3("public", "people", "sex")}},
				Limit:   i64(2000)}},
		{"mysql nested stars with order and limit", MySQL,
			"SELECT * FROM (SELECT * FROM (SELECT sex AS `people.sex`, count(*) AS `people.count` FROM people GROUP BY 1) aa) bb WHERE `people.count` > 5 ORDER BY `people.count` DESC LIMIT 500",
			ir.Query{From: people,
				Select:  []ir.SelectItem{{Arg: colp("", "sex"), Alias: "people.sex"}, {Agg: ir.AggCount, Alias: "people.count"}},
				GroupBy: []ir.Expr{col("", "sex")},
				Having:  gt(count, 5),
				OrderBy: []ir.OrderItem{{Expr: col("", "people.count"), Desc: true}},
				Limit:   i64(500)}},
		{"post-processing over the outputs, inner having kept first", Postgres,
			"WITH t AS (SELECT sex, sum(age) AS s, count(*) AS n FROM people GROUP BY sex HAVING count(*) > 2) SELECT sex, s * 2 AS d, n FROM t WHERE sex <> 'M' AND n < 100",
			ir.Query{From: people,
				Select: []ir.SelectItem{{Arg: colp("", "sex"), Alias: "sex"},
					{Expr: ir.Arith{Op: ir.OpMul, L: ir.Aggregate{Func: ir.AggSum, Arg: colp("", "age")}, R: lit(ir.Int(2))}, Alias: "d"},
					{Agg: ir.AggCount, Alias: "n"}},
				GroupBy: []ir.Expr{col("", "sex")},
				// sex is qualified: the planner reads a bare name in HAVING
				// as an output column first.
				Having: ir.And{L: gt(count, 2), R: ir.And{L: ir.Compare{Op: ir.OpNe, L: col("people", "sex"), R: lit(ir.String("M"))},
					R: ir.Compare{Op: ir.OpLt, L: count, R: lit(ir.Int(100))}}}}},
		{"inner order by position kept", Postgres,
			"SELECT n FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex ORDER BY 2 DESC LIMIT 1) s",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount, Alias: "n"}},
				GroupBy: []ir.Expr{col("", "sex")},
				OrderBy: []ir.OrderItem{{Expr: count, Desc: true}}, Limit: i64(1)}},
		{"column alias list over an aggregate", Postgres,
			"SELECT k, c FROM (SELECT sex, count(*) FROM people GROUP BY sex) s(k, c)",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: colp("", "sex"), Alias: "k"}, {Agg: ir.AggCount, Alias: "c"}},
				GroupBy: []ir.Expr{col("", "sex")}}},
		{"unreferenced aggregate cte is never run", MySQL,
			"WITH t AS (SELECT count(*) AS n FROM people) SELECT count(*) FROM people",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Query == nil {
				t.Fatalf("not an aggregate: %s", st.NotAggregate)
			}
			if !reflect.DeepEqual(unlabeled(*st.Query), tt.want) {
				t.Errorf("Query =\n%#v\nwant\n%#v", *st.Query, tt.want)
			}
		})
	}
}

// TestFlattenRefusals: every construct the flattening cannot merge
// exactly is refused with its reason, never dropped.
func TestFlattenRefusals(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		sql  string
		want string
	}{
		{"nested aggregation", Postgres, "SELECT count(*) FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex) s", "aggregating the result of an aggregate query is not supported"},
		{"mysql nested aggregation", MySQL, "SELECT sum(n) FROM (SELECT count(*) AS n FROM people) s", "aggregating the result of an aggregate query is not supported"},
		{"aggregate inside an expression", Postgres, "SELECT count(*) FROM (SELECT coalesce(sum(age), 0) AS n FROM people) s", "aggregating the result"},
		{"having inside", Postgres, "SELECT count(*) FROM (SELECT age FROM people HAVING true) s", "not in GROUP BY"},
		{"limit inside", Postgres, "SELECT count(*) FROM (SELECT age FROM people ORDER BY age LIMIT 10) s", "LIMIT and OFFSET inside"},
		{"offset inside", Postgres, "SELECT count(*) FROM (SELECT age FROM people OFFSET 10) s", "LIMIT and OFFSET inside"},
		{"fetch inside", Postgres, "SELECT count(*) FROM (SELECT age FROM people FETCH FIRST 3 ROWS ONLY) s", "LIMIT and OFFSET inside"},
		{"mysql limit inside a cte", MySQL, "WITH t AS (SELECT age FROM people LIMIT 5) SELECT count(*) FROM t", "LIMIT and OFFSET inside"},
		{"distinct inside", Postgres, "SELECT count(*) FROM (SELECT DISTINCT sex FROM people) s", "DISTINCT inside"},
		{"distinct on inside", Postgres, "SELECT count(*) FROM (SELECT DISTINCT ON (sex) sex FROM people) s", "DISTINCT inside"},
		{"mysql distinct inside", MySQL, "SELECT count(*) FROM (SELECT DISTINCT sex FROM people) s", "DISTINCT inside"},
		{"union inside", Postgres, "SELECT count(*) FROM (SELECT age FROM people UNION ALL SELECT age FROM people) s", "set operations"},
		{"mysql union inside", MySQL, "SELECT count(*) FROM (SELECT age FROM people UNION ALL SELECT age FROM people) s", "set operations"},
		{"window inside", Postgres, "SELECT count(*) FROM (SELECT age, rank() OVER (ORDER BY age) AS r FROM people) s", "window"},
		{"mysql window inside", MySQL, "SELECT count(*) FROM (SELECT age, rank() OVER (ORDER BY age) AS r FROM people) s", "window"},
		{"named window inside", Postgres, "SELECT count(*) FROM (SELECT age FROM people WINDOW w AS (ORDER BY age)) s", "window"},
		{"lateral", Postgres, "SELECT count(*) FROM people p JOIN LATERAL (SELECT age FROM people) s ON true", "LATERAL"},
		{"mysql lateral", MySQL, "SELECT count(*) FROM people p JOIN LATERAL (SELECT age FROM people) s ON true", "LATERAL"},
		{"recursive", Postgres, "WITH RECURSIVE t AS (SELECT age FROM people) SELECT count(*) FROM t", "RECURSIVE"},
		{"mysql recursive", MySQL, "WITH RECURSIVE t AS (SELECT age FROM people) SELECT count(*) FROM t", "RECURSIVE"},
		{"cte referenced twice", Postgres, "WITH t AS (SELECT age, id FROM people) SELECT count(*) FROM t a JOIN t b ON a.id = b.id", "first item"},
		{"subquery joined on the right", Postgres, "SELECT count(*) FROM cities c JOIN (SELECT city_id FROM people) s ON s.city_id = c.id", "first item"},
		{"mysql subquery joined on the right", MySQL, "SELECT count(*) FROM cities c JOIN (SELECT city_id FROM people) s ON s.city_id = c.id", "first item"},
		{"ambiguous derived column", Postgres, "SELECT x, count(*) FROM (SELECT sex AS x, age AS x FROM people) s GROUP BY x", "ambiguous"},
		{"mysql ambiguous derived column", MySQL, "SELECT count(*) FROM (SELECT sex AS x, age AS X FROM people) s WHERE x = 1", "ambiguous"},
		{"unknown derived column", Postgres, "SELECT count(*) FROM (SELECT sex FROM people) s WHERE s.age > 3", "column age does not exist in subquery s"},
		{"unknown bare derived column", MySQL, "SELECT count(*) FROM (SELECT sex FROM people) s WHERE age > 3", "column age does not exist in subquery s"},
		{"inner table not visible outside", Postgres, "SELECT count(*) FROM (SELECT sex FROM people) s WHERE people.age > 3", "missing FROM-clause entry for table people"},
		{"join on a computed column", Postgres, "SELECT count(*) FROM (SELECT city_id + 1 AS c FROM people) s JOIN cities ON s.c = cities.id", "computed column"},
		{"alias list over star", Postgres, "SELECT count(*) FROM (SELECT * FROM people) s(a) WHERE a = 1", "column alias list over SELECT *"},
		{"alias list too long", Postgres, "SELECT count(*) FROM (SELECT age FROM people) s(a, b)", "2 column names"},
		{"alias clash", Postgres, "SELECT count(*) FROM (SELECT city_id FROM people c) s JOIN cities c ON s.city_id = c.id", "give one of them another alias"},
		{"outer table named inside", Postgres, "SELECT count(*) FROM (SELECT city_id FROM people WHERE c.name = 'x') s JOIN cities c ON s.city_id = c.id", "missing FROM-clause entry for table c inside a subquery"},
		{"outer table named in an inner join", MySQL, "SELECT count(*) FROM (SELECT * FROM people p JOIN zips z ON s.zip = z.zip) s", "missing FROM-clause entry for table s inside a subquery"},
		{"derived alias reused by a join", MySQL, "SELECT count(*) FROM (SELECT city_id FROM people) c JOIN cities c ON c.city_id = c.id", "specified more than once"},
		{"star over a subquery and a join", Postgres, "SELECT count(*) FROM (SELECT * FROM (SELECT age FROM people) a JOIN cities c ON a.age = c.id) s", "SELECT * over subquery a joined"},
		{"subquery without from", Postgres, "SELECT count(*) FROM (SELECT 1 AS x) s", "must read a table"},
		{"values inside", Postgres, "SELECT count(*) FROM (VALUES (1)) s(x)", "VALUES"},
		{"mysql subquery in the inner where", MySQL, "SELECT count(*) FROM (SELECT age FROM people) s WHERE age IN (SELECT 1)", "subqueries"},
		{"aggregate over a grouped cte", Postgres, "WITH t AS (SELECT sex, avg(age) AS a FROM people GROUP BY sex) SELECT avg(a) FROM t", "aggregating the result of an aggregate query"},
		{"output name reused for another column over joins", Postgres, "SELECT s.n AS age FROM (SELECT age, count(*) AS n FROM people p JOIN zips z ON p.zip = z.zip GROUP BY age) s WHERE s.age > 30", "has the name of an output column"},
		{"aggregate over an aggregate subquery's output", MySQL, "SELECT sum(n) FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex) s", "aggregating the result"},
		{"group by over an aggregate subquery", Postgres, "SELECT n FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex) s GROUP BY n", "aggregating the result"},
		{"aggregate in the where over an aggregate subquery", Postgres, "SELECT n FROM (SELECT count(*) AS n FROM people) s WHERE count(*) > 1", "aggregates are not allowed in WHERE"},
		{"join of an aggregate subquery", Postgres, "SELECT s.n FROM (SELECT zip, count(*) AS n FROM people GROUP BY zip) s JOIN zips z ON s.zip = z.zip", "joining the result of an aggregate query"},
		{"unknown column of an aggregate subquery", Postgres, "SELECT s.m FROM (SELECT count(*) AS n FROM people) s", "column m does not exist in subquery s"},
		{"distinct over an aggregate subquery", Postgres, "SELECT DISTINCT n FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex) s", "DISTINCT"},
		{"order by position over star", Postgres, "SELECT * FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex) s ORDER BY 2", "position over SELECT *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind != ir.StmtSelect {
				t.Fatalf("kind %v, want select (refused: %v)", st.Kind, st.Refused)
			}
			if st.Query != nil {
				t.Fatalf("Query = %#v, want a refusal", st.Query)
			}
			if !strings.Contains(st.NotAggregate, tt.want) {
				t.Errorf("NotAggregate = %q, want it to mention %q", st.NotAggregate, tt.want)
			}
		})
	}
}

// TestFlattenStatementRefusals: what must never run inside a subquery
// refuses the whole statement.
func TestFlattenStatementRefusals(t *testing.T) {
	for _, tt := range []struct {
		d   Dialect
		sql string
	}{
		{Postgres, "WITH t AS (DELETE FROM people RETURNING age) SELECT count(*) FROM t"},
		{Postgres, "SELECT count(*) FROM (SELECT age FROM people FOR UPDATE) s"},
		{MySQL, "SELECT count(*) FROM (SELECT age FROM people FOR UPDATE) s"},
	} {
		st := parseOne(t, tt.d, tt.sql)
		if st.Kind != ir.StmtRefused {
			t.Errorf("%s: kind %v, want refused (NotAggregate %q)", tt.sql, st.Kind, st.NotAggregate)
		}
	}
}

// TestFlattenRelations: a CTE name is not a relation; the tables inside
// subqueries are.
func TestFlattenRelations(t *testing.T) {
	st := parseOne(t, Postgres, "WITH t AS (SELECT age FROM people) SELECT count(*) FROM (SELECT age FROM t) s")
	want := []ir.TableRef{{Name: "people"}}
	if !reflect.DeepEqual(st.Relations, want) {
		t.Errorf("Relations = %v, want %v", st.Relations, want)
	}
}

// TestFlattenKnowsEveryQueryField fails when a field is added to the IR
// types the flattening rewrites: flattenQuery must then substitute the
// derived table's columns in it too, or a reference to the subquery
// would reach the planner unresolved.
func TestFlattenKnowsEveryQueryField(t *testing.T) {
	known := map[reflect.Type][]string{
		reflect.TypeOf(ir.Query{}):      {"From", "Joins", "Select", "Where", "GroupBy", "GroupingSets", "Having", "OrderBy", "Limit", "Offset", "Stages"},
		reflect.TypeOf(ir.SelectItem{}): {"Agg", "Arg", "ArgExpr", "Distinct", "Fraction", "Name", "Expr", "Alias", "Label"},
		reflect.TypeOf(ir.OrderItem{}):  {"Expr", "Desc", "Nulls"},
		reflect.TypeOf(ir.Join{}):       {"Table", "Left", "Right", "Outer", "NullSafe"},
		reflect.TypeOf(ir.Aggregate{}):  {"Func", "Arg", "ArgExpr", "Distinct", "Fraction", "Name"},
	}
	for typ, want := range known {
		var got []string
		for i := 0; i < typ.NumField(); i++ {
			got = append(got, typ.Field(i).Name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v has fields %v; flatten.go handles %v: teach it the new ones", typ, got, want)
		}
	}
}

// TestFlattenRelationsMySQL: the same for the MySQL walker.
func TestFlattenRelationsMySQL(t *testing.T) {
	st := parseOne(t, MySQL, "WITH t AS (SELECT age FROM people) SELECT count(*) FROM (SELECT age FROM t) s")
	want := []ir.TableRef{{Name: "people"}}
	if !reflect.DeepEqual(st.Relations, want) {
		t.Errorf("Relations = %v, want %v", st.Relations, want)
	}
}
