package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestStages: a SELECT over an aggregate subquery that computes windows
// over the level below's windows, filters on them, or filters, orders or
// limits after a LIMIT inside, becomes a stage of the aggregate query
// whose expressions read the level below's columns by position; the first
// level, whose windows read the aggregate's outputs, merges into it as
// before. Both dialects (MySQL 8 window syntax through the TiDB parser).
func TestStages(t *testing.T) {
	looker := `SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "people.sex") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY "people.sex" ASC) AS z___rank FROM (SELECT people.sex AS "people.sex", people.income AS "people.income", COUNT(*) AS "people.count" FROM public.people AS people GROUP BY 1,2) ww) bb) zz) aa WHERE z___pivot_row_rank <= 500 ORDER BY z___pivot_row_rank`
	ref := func(i int) ir.Expr { return ir.OutputRef{Index: i} }
	items := func(names ...string) []ir.StageItem {
		var out []ir.StageItem
		for i, n := range names {
			out = append(out, ir.StageItem{Name: n, Expr: ref(i)})
		}
		return out
	}
	five := []string{"people.sex", "people.income", "people.count", "z___rank", "z___min_rank"}
	lit := func(i int64) ir.Expr { return ir.Literal{Value: ir.Int(i)} }
	limit := func(i int64) *int64 { return &i }
	wantLooker := []ir.Stage{
		{Select: append(items(five[:4]...), ir.StageItem{Name: "z___min_rank", Expr: ir.Window{Func: ir.WinMin, Arg: ref(3), PartitionBy: []ir.Expr{ref(0)}}})},
		{Select: append(items(five...), ir.StageItem{Name: "z___pivot_row_rank", Expr: ir.Window{Func: ir.WinDenseRank, OrderBy: []ir.OrderItem{{Expr: ref(4)}}}})},
		{Select: items(append(five, "z___pivot_row_rank")...), Where: ir.Compare{Op: ir.OpLe, L: ref(5), R: lit(500)}, OrderBy: []ir.OrderItem{{Expr: ref(5)}}},
	}
	for _, tt := range []struct {
		name, sql string
		stages    []ir.Stage
	}{
		{"looker pivot", looker, wantLooker},
		{"filter after an inner limit", `SELECT * FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex ORDER BY n LIMIT 1) s WHERE n > 3`,
			[]ir.Stage{{Select: items("sex", "n"), Where: ir.Compare{Op: ir.OpGt, L: ref(1), R: lit(3)}}}},
		{"limit inside and outside", `SELECT n AS m, sex FROM (SELECT sex, count(*) AS n FROM people GROUP BY sex LIMIT 2) s ORDER BY m DESC LIMIT 1`,
			[]ir.Stage{{Select: []ir.StageItem{{Name: "m", Expr: ref(1)}, {Name: "sex", Expr: ref(0)}}, OrderBy: []ir.OrderItem{{Expr: ref(1), Desc: true}}, Limit: limit(1)}}},
	} {
		for _, d := range []Dialect{Postgres, MySQL} {
			sql := tt.sql
			if d == MySQL {
				sql = strings.ReplaceAll(sql, `"`, "`")
			}
			st := parseOne(t, d, sql)
			if st.Query == nil {
				t.Errorf("%s %v: refused: %s", tt.name, d, st.NotAggregate)
				continue
			}
			if got, want := stagesText(st.Query.Stages), stagesText(tt.stages); got != want {
				t.Errorf("%s %v: stages\n%s\nwant\n%s", tt.name, d, got, want)
			}
			if tt.name == "looker pivot" {
				// The first level merged: its window reads the aggregate's
				// outputs; the aggregate query is unchanged otherwise.
				q := st.Query
				if len(q.Select) != 4 || q.Select[3].Alias != "z___rank" || q.Where != nil || q.Having != nil || q.Limit != nil || len(q.GroupBy) != 2 {
					t.Errorf("%s %v: aggregate level %#v", tt.name, d, q)
				}
			}
		}
	}
}

// stagesText writes stages out with their expressions as text (empty and
// nil lists alike).
func stagesText(stages []ir.Stage) string {
	var b strings.Builder
	for _, s := range stages {
		b.WriteString("SELECT")
		for _, it := range s.Select {
			fmt.Fprintf(&b, " %s AS %q,", ir.FormatExpr(it.Expr), it.Name)
		}
		if s.Where != nil {
			fmt.Fprintf(&b, " WHERE %s", ir.FormatExpr(s.Where))
		}
		for _, o := range s.OrderBy {
			fmt.Fprintf(&b, " ORDER %s %t", ir.FormatExpr(o.Expr), o.Desc)
		}
		for _, v := range []*int64{s.Limit, s.Offset} {
			if v != nil {
				fmt.Fprintf(&b, " LIMIT/OFFSET %d", *v)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestWindowNullsOrder: a window's key keeps an explicit NULLS FIRST/LAST
// (Looker's DESC NULLS LAST), and so does a query's ORDER BY.
func TestWindowNullsOrder(t *testing.T) {
	for sql, want := range map[string]ir.NullsOrder{
		"SELECT sex, RANK() OVER (ORDER BY COUNT(*) DESC NULLS LAST) FROM people GROUP BY sex": ir.NullsLast,
		"SELECT sex, RANK() OVER (ORDER BY COUNT(*) NULLS FIRST) FROM people GROUP BY sex":     ir.NullsFirst,
		"SELECT sex, RANK() OVER (ORDER BY COUNT(*) DESC) FROM people GROUP BY sex":            ir.NullsDefault,
	} {
		st := parseOne(t, Postgres, sql)
		if st.Query == nil {
			t.Errorf("%s: refused: %s", sql, st.NotAggregate)
			continue
		}
		w, ok := st.Query.Select[1].Expr.(ir.Window)
		if !ok || len(w.OrderBy) != 1 || w.OrderBy[0].Nulls != want {
			t.Errorf("%s: %#v, want NULL order %d", sql, st.Query.Select[1].Expr, want)
		}
	}
	for sql, want := range map[string]ir.NullsOrder{
		"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY 2 DESC NULLS LAST": ir.NullsLast,
		"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex NULLS FIRST":   ir.NullsFirst,
		"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex DESC":          ir.NullsDefault,
	} {
		st := parseOne(t, Postgres, sql)
		if st.Query == nil || len(st.Query.OrderBy) != 1 || st.Query.OrderBy[0].Nulls != want {
			t.Errorf("%s: %q %+v, want NULL order %d", sql, st.NotAggregate, st.Query, want)
		}
	}
}
