package parser

import (
	"reflect"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestGroupByExpressions: GROUP BY expressions, positions and output
// aliases of expression items, in both dialects, with the IR written out
// by hand from the SQL.
func TestGroupByExpressions(t *testing.T) {
	count := ir.SelectItem{Agg: ir.AggCount}
	people := tbl("", "people", "")
	age := col("", "age")
	i := func(v int64) ir.Expr { return lit(ir.Int(v)) }
	// PostgreSQL's floor(age / 10) * 10 and MySQL's (where / is real).
	pgBin := ir.Arith{Op: ir.OpMul, L: ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpDiv, L: age, R: i(10)}}}, R: i(10)}
	myBin := ir.Arith{Op: ir.OpMul, L: ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpRealDiv, L: age, R: i(10)}}}, R: i(10)}
	band := ir.Case{Whens: []ir.When{
		{Cond: ir.Compare{Op: ir.OpLt, L: age, R: i(30)}, Then: lit(ir.String("young"))},
	}, Else: lit(ir.String("old"))}
	bucket := ir.Func{Name: "width_bucket", Args: []ir.Expr{age, i(0), i(100), i(10)}}
	tests := []struct {
		name string
		d    Dialect
		sql  string
		want ir.Query
	}{
		{"bin by position", Postgres, "SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM people GROUP BY 1",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: pgBin, Alias: "bin"}, count}, GroupBy: []ir.Expr{pgBin}}},
		{"mysql bin by position", MySQL, "SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM people GROUP BY 1",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: myBin, Alias: "bin"}, count}, GroupBy: []ir.Expr{myBin}}},
		{"bin repeated", Postgres, "SELECT floor(age / 10) * 10, COUNT(*) FROM people GROUP BY floor(age / 10) * 10",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: pgBin}, count}, GroupBy: []ir.Expr{pgBin}}},
		{"mysql bin repeated", MySQL, "SELECT floor(age / 10) * 10, COUNT(*) FROM people GROUP BY floor(age / 10) * 10",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: myBin}, count}, GroupBy: []ir.Expr{myBin}}},
		// The planner decides between a column named bin and the alias.
		{"bin by alias", Postgres, "SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM people GROUP BY bin",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: pgBin, Alias: "bin"}, count}, GroupBy: []ir.Expr{col("", "bin")}}},
		{"mysql bin by alias", MySQL, "SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM people GROUP BY bin",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: myBin, Alias: "bin"}, count}, GroupBy: []ir.Expr{col("", "bin")}}},
		{"case", Postgres, "SELECT CASE WHEN age < 30 THEN 'young' ELSE 'old' END AS band, COUNT(*) FROM people GROUP BY 1",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: band, Alias: "band"}, count}, GroupBy: []ir.Expr{band}}},
		{"mysql case", MySQL, "SELECT CASE WHEN age < 30 THEN 'young' ELSE 'old' END AS band, COUNT(*) FROM people GROUP BY 1",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: band, Alias: "band"}, count}, GroupBy: []ir.Expr{band}}},
		{"case key not selected", Postgres, "SELECT COUNT(*) FROM people GROUP BY CASE WHEN age < 30 THEN 'young' ELSE 'old' END",
			ir.Query{From: people, Select: []ir.SelectItem{count}, GroupBy: []ir.Expr{band}}},
		{"width_bucket", Postgres, "SELECT width_bucket(age, 0, 100, 10), COUNT(*) FROM people GROUP BY 1",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: bucket}, count}, GroupBy: []ir.Expr{bucket}}},
		{"no aggregate", Postgres, "SELECT sex FROM people GROUP BY sex",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: colp("", "sex")}}, GroupBy: []ir.Expr{col("", "sex")}}},
		{"mysql no aggregate", MySQL, "SELECT sex FROM people GROUP BY sex",
			ir.Query{From: people, Select: []ir.SelectItem{{Arg: colp("", "sex")}}, GroupBy: []ir.Expr{col("", "sex")}}},
		{"expression over a key", Postgres, "SELECT (floor(age / 10) * 10) + 5, COUNT(*) FROM people GROUP BY floor(age / 10) * 10",
			ir.Query{From: people, Select: []ir.SelectItem{{Expr: ir.Arith{Op: ir.OpAdd, L: pgBin, R: i(5)}}, count}, GroupBy: []ir.Expr{pgBin}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stmts, err := Parse(tt.d, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			st := stmts[0]
			if st.Query == nil {
				t.Fatalf("Query is nil: %s", st.NotAggregate)
			}
			if !reflect.DeepEqual(unlabeled(*st.Query), tt.want) {
				t.Errorf("Query\n got %#v\nwant %#v", *st.Query, tt.want)
			}
		})
	}
}
