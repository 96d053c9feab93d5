package parser

import (
	"reflect"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestAggregateFilter: agg(...) FILTER (WHERE c) is the aggregate of
// CASE WHEN c THEN arg END (1 for COUNT(*)), in the select list, HAVING,
// ORDER BY and through a subquery.
func TestAggregateFilter(t *testing.T) {
	female := ir.Compare{Op: ir.OpEq, L: col("", "sex"), R: lit(ir.String("F"))}
	when := func(c, v ir.Expr) ir.Expr { return ir.Case{Whens: []ir.When{{Cond: c, Then: v}}} }
	one := lit(ir.Int(1))
	people := tbl("", "people", "")
	tests := []struct {
		name, sql string
		want      ir.Query
	}{
		{"count star", "SELECT count(*) FILTER (WHERE sex = 'F') AS f FROM people",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount, ArgExpr: when(female, one), Alias: "f"}}}},
		{"count one", "SELECT count(1) FILTER (WHERE sex = 'F') FROM people",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount, ArgExpr: when(female, one)}}}},
		{"sum and avg of a column", "SELECT sum(age) FILTER (WHERE sex = 'F'), avg(age) FILTER (WHERE sex = 'F') FROM people",
			ir.Query{From: people, Select: []ir.SelectItem{
				{Agg: ir.AggSum, ArgExpr: when(female, col("", "age"))},
				{Agg: ir.AggAvg, ArgExpr: when(female, col("", "age"))}}}},
		{"count of an expression", "SELECT count(age + 1) FILTER (WHERE sex = 'F') FROM people",
			ir.Query{From: people, Select: []ir.SelectItem{
				{Agg: ir.AggCount, ArgExpr: when(female, ir.Arith{Op: ir.OpAdd, L: col("", "age"), R: one})}}}},
		{"having and order by", "SELECT sex, count(*) FROM people GROUP BY sex HAVING count(*) FILTER (WHERE age > 1) > 5 ORDER BY sum(age) FILTER (WHERE age > 1)",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: colp("", "sex")}, {Agg: ir.AggCount}},
				GroupBy: []ir.Expr{col("", "sex")},
				Having: ir.Compare{Op: ir.OpGt, L: ir.Aggregate{Func: ir.AggCount,
					ArgExpr: when(ir.Compare{Op: ir.OpGt, L: col("", "age"), R: one}, one)}, R: lit(ir.Int(5))},
				OrderBy: []ir.OrderItem{{Expr: ir.Aggregate{Func: ir.AggSum,
					ArgExpr: when(ir.Compare{Op: ir.OpGt, L: col("", "age"), R: one}, col("", "age"))}}}}},
		{"through a subquery", "SELECT count(*) FILTER (WHERE s.g = 'F') FROM (SELECT sex AS g FROM people) s",
			ir.Query{From: people, Select: []ir.SelectItem{{Agg: ir.AggCount,
				ArgExpr: when(ir.Compare{Op: ir.OpEq, L: col("people", "sex"), R: lit(ir.String("F"))}, one)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, Postgres, tt.sql)
			if st.Query == nil {
				t.Fatalf("not an aggregate: %s", st.NotAggregate)
			}
			if !reflect.DeepEqual(*st.Query, tt.want) {
				t.Errorf("Query =\n%#v\nwant\n%#v", *st.Query, tt.want)
			}
		})
	}
}
