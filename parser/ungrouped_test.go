package parser

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestUngrouped: a SELECT refused only for its grouping keeps its
// refusal and carries the query as built (flattened, every clause) in
// Statement.Ungrouped, for the planner to look for the privacy unit in;
// any other refusal, including one in a clause after the grouping check,
// carries none, and the grouping refusal still comes first.
func TestUngrouped(t *testing.T) {
	const grouping = "column %s is selected but not in GROUP BY"
	dba := tbl("", "dba_people", "")
	five := int64(5)
	for _, tc := range []struct {
		name, sql string
		refusal   string    // substring of NotAggregate
		want      *ir.Query // Ungrouped, written out by hand
	}{
		{"the DBA's query", "SELECT person_id FROM dba_people", strings.Replace(grouping, "%s", "person_id", 1),
			&ir.Query{From: dba, Select: []ir.SelectItem{{Arg: colp("", "person_id")}}}},
		{"every clause kept", "SELECT name, COUNT(*) FROM dba_people WHERE person_id = 3 GROUP BY age HAVING COUNT(*) > 1 ORDER BY person_id LIMIT 5",
			strings.Replace(grouping, "%s", "name", 1),
			&ir.Query{
				From:    dba,
				Select:  []ir.SelectItem{{Arg: colp("", "name")}, {Agg: ir.AggCount}},
				Where:   ir.Compare{Op: ir.OpEq, L: col("", "person_id"), R: ir.Literal{Value: ir.Int(3)}},
				GroupBy: []ir.Expr{col("", "age")},
				Having:  ir.Compare{Op: ir.OpGt, L: ir.Aggregate{Func: ir.AggCount}, R: ir.Literal{Value: ir.Int(1)}},
				OrderBy: []ir.OrderItem{{Expr: col("", "person_id")}},
				Limit:   &five,
			}},
		{"flattened through a subquery", "SELECT s.pid FROM (SELECT person_id AS pid FROM dba_people) s", strings.Replace(grouping, "%s", "s.pid", 1),
			&ir.Query{From: dba, Select: []ir.SelectItem{{Arg: colp("dba_people", "person_id"), Alias: "pid"}}}},
		// Refused in a later clause too: the grouping refusal, no query.
		{"bad position after", "SELECT name FROM dba_people ORDER BY 7", strings.Replace(grouping, "%s", "name", 1), nil},
		{"star", "SELECT * FROM dba_people", "SELECT *", nil},
	} {
		for _, d := range []Dialect{Postgres, MySQL} {
			t.Run(tc.name+"/"+d.String(), func(t *testing.T) {
				stmts, err := Parse(d, tc.sql)
				if err != nil {
					t.Fatal(err)
				}
				st := stmts[0]
				if st.Query != nil || !strings.Contains(st.NotAggregate, tc.refusal) {
					t.Fatalf("Query %v, NotAggregate %q: want a refusal containing %q", st.Query, st.NotAggregate, tc.refusal)
				}
				want := tc.want
				if want != nil && d == MySQL {
					// MySQL names an item without alias by its text.
					w := *want
					w.Select = slices.Clone(w.Select)
					for i, it := range w.Select {
						if it.Agg == ir.AggCount {
							w.Select[i].Label = "COUNT(*)"
						}
					}
					want = &w
				}
				if !reflect.DeepEqual(st.Ungrouped, want) {
					t.Errorf("Ungrouped\n %s\nwant\n %s", fmtQuery(st.Ungrouped), fmtQuery(want))
				}
			})
		}
	}
	// In the subset: no Ungrouped.
	for _, d := range []Dialect{Postgres, MySQL} {
		stmts, err := Parse(d, "SELECT age, COUNT(*) FROM dba_people GROUP BY age")
		if err != nil {
			t.Fatal(err)
		}
		if stmts[0].Query == nil || stmts[0].Ungrouped != nil {
			t.Errorf("%v: Query %v, Ungrouped %v; want the query only", d, stmts[0].Query, stmts[0].Ungrouped)
		}
	}
}

// fmtQuery shows a query with its select items' columns, which %#v
// prints as pointers.
func fmtQuery(q *ir.Query) string {
	if q == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("%#v", *q)
	for i, it := range q.Select {
		if it.Arg != nil {
			s += fmt.Sprintf("\n  item %d column %#v", i, *it.Arg)
		}
	}
	return s
}
