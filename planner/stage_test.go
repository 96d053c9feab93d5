package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// lookerInner is the aggregate query Looker's pivot wrapper wraps.
const lookerInner = `SELECT people.sex AS "people.sex", people.age AS "people.age", COUNT(*) AS "people.count" FROM people AS people GROUP BY 1,2`

// lookerPivot wraps it as Looker does: rank, min rank per pivot row, dense
// rank of that, filter, order.
const lookerPivot = `SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "people.sex") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY "people.sex" ASC) AS z___rank FROM (` +
	lookerInner + `) ww) bb) zz) aa WHERE z___pivot_row_rank <= 500 ORDER BY z___pivot_row_rank`

func mysqlText(s string) string { return strings.ReplaceAll(s, `"`, "`") }

// TestStackedLevelsAreStages: each SELECT level that computes windows over
// the previous level's windows, or filters on them, is a post-processing
// stage of the one aggregate query, in both dialects: the windows read the
// level below's columns, the last stage's columns are the result's.
func TestStackedLevelsAreStages(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		sql := lookerPivot
		if d == parser.MySQL {
			sql = mysqlText(sql)
		}
		pl, err := plan(t, p, sql, planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		// The first level merges into the aggregate query (its window
		// reads the aggregate's outputs): four visible outputs, one window.
		if pl.NumVisible != 4 || len(pl.Aggs) != 1 || pl.Outputs[3].Kind != planner.OutExpr || pl.Outputs[3].Name != "z___rank" {
			t.Errorf("%v: %d visible outputs and %d aggregates, want 4 (the last z___rank) and 1", d, pl.NumVisible, len(pl.Aggs))
		}
		// bb → zz (min), zz → aa (dense_rank), aa → outer (filter, order).
		want := []struct {
			in      int
			windows []string
			where   string
			cols    []string
			order   []int
		}{
			{4, []string{"min(#4) OVER (PARTITION BY #1)"}, "", []string{"people.sex", "people.age", "people.count", "z___rank", "z___min_rank"}, nil},
			{5, []string{"dense_rank() OVER (ORDER BY #5)"}, "", []string{"people.sex", "people.age", "people.count", "z___rank", "z___min_rank", "z___pivot_row_rank"}, nil},
			{6, nil, "(#6 <= 500)", []string{"people.sex", "people.age", "people.count", "z___rank", "z___min_rank", "z___pivot_row_rank"}, []int{5}},
		}
		if len(pl.Stages) != len(want) {
			t.Fatalf("%v: %d stages, want %d", d, len(pl.Stages), len(want))
		}
		for i, w := range want {
			st := pl.Stages[i]
			if st.In != w.in {
				t.Errorf("%v stage %d: reads %d columns, want %d", d, i, st.In, w.in)
			}
			var wins []string
			for _, o := range st.Outputs {
				if o.Kind == planner.OutWindow {
					wins = append(wins, ir.FormatExpr(o.Window))
				}
			}
			if strings.Join(wins, "; ") != strings.Join(w.windows, "; ") {
				t.Errorf("%v stage %d: windows %q, want %q", d, i, wins, w.windows)
			}
			where := ""
			if st.Where != nil {
				where = ir.FormatExpr(st.Where)
			}
			if where != w.where {
				t.Errorf("%v stage %d: WHERE %q, want %q", d, i, where, w.where)
			}
			var cols []string
			for _, o := range st.Outputs[:st.NumVisible] {
				cols = append(cols, o.Name)
			}
			if strings.Join(cols, ",") != strings.Join(w.cols, ",") {
				t.Errorf("%v stage %d: columns %q, want %q", d, i, cols, w.cols)
			}
			var order []int
			for _, k := range st.OrderBy {
				order = append(order, k.Output)
			}
			if len(order) != len(w.order) || (len(order) > 0 && order[0] != w.order[0]) {
				t.Errorf("%v stage %d: ORDER BY columns %v, want %v", d, i, order, w.order)
			}
		}
		// explain describes the result's columns: a column passed through
		// keeps its noise, a window is post-processing over the names below.
		x := pl.Explain(nil)
		if len(x.Columns) != 6 || x.Columns[2].Aggregate != "count" || x.Columns[2].Scale <= 0 ||
			x.Columns[4].PostProcessing != `min("z___rank") OVER (PARTITION BY "people.sex")` {
			t.Errorf("%v: explain columns %+v", d, x.Columns)
		}
		vis := pl.Visible()
		if len(vis) != 6 || vis[5].Name != "z___pivot_row_rank" || vis[5].Type != "integer" || vis[2].Type != "integer" || vis[0].Type != "text" {
			t.Errorf("%v: result columns %+v", d, vis)
		}
	}
}

// TestStackedLevelsShareTheRelease: the stacked query is post-processing of
// the innermost aggregate query's one release: same backend SQL, same noise
// steps, same release key, so after the plain query it is free.
func TestStackedLevelsShareTheRelease(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		q := func(s string) string {
			if d == parser.MySQL {
				return mysqlText(strings.ReplaceAll(s, " NULLS LAST", ""))
			}
			return s
		}
		flat, err := plan(t, p, q(lookerInner), planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		for _, sql := range []string{
			lookerPivot,
			// Looker's full pivot: a column rank filtered below the row
			// ranks, a CASE over two windows of the level below, ORs of
			// windows in the outermost filter.
			`SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank, RANK() OVER (PARTITION BY z__pivot_col_rank ORDER BY z___min_rank) as z__pivot_col_ordering, CASE WHEN z___min_rank = z___rank THEN 1 ELSE 0 END AS z__is_highest_ranked_cell FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "people.sex") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY "people.sex" ASC, z__pivot_col_rank) AS z___rank FROM (SELECT *, DENSE_RANK() OVER (ORDER BY "people.age" NULLS LAST) AS z__pivot_col_rank FROM (` +
				lookerInner + `) ww) bb WHERE z__pivot_col_rank <= 16384) aa) xx) zz WHERE (z__pivot_col_rank <= 50 OR z__is_highest_ranked_cell = 1) AND (z___pivot_row_rank <= 500 OR z__pivot_col_ordering = 1) ORDER BY z___pivot_row_rank`,
			// A filter over a level with a window filters after it: the
			// total is over every group (merged into HAVING, it would be
			// over the kept ones only).
			`SELECT * FROM (SELECT sex, age, COUNT(*) AS n, SUM(COUNT(*)) OVER () AS total FROM people GROUP BY 1, 2) t WHERE n > 10`,
			// Sorted by a measure of the first pivot column (Looker's rank
			// with DESC NULLS LAST).
			`SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank, RANK() OVER (PARTITION BY z__pivot_col_rank ORDER BY z___min_rank) as z__pivot_col_ordering FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "people.sex") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY CASE WHEN z__pivot_col_rank=1 THEN 1 ELSE 2 END, CASE WHEN z__pivot_col_rank=1 THEN "people.count" ELSE NULL END DESC NULLS LAST, "people.count" DESC, z__pivot_col_rank, "people.sex") AS z___rank FROM (SELECT *, DENSE_RANK() OVER (ORDER BY "people.age" NULLS LAST) AS z__pivot_col_rank FROM (` +
				lookerInner + `) ww) bb WHERE z__pivot_col_rank <= 16384) aa) xx) zz WHERE z___pivot_row_rank <= 500 OR z__pivot_col_ordering = 1 ORDER BY z___pivot_row_rank`,
			// The outer level orders and limits instead of filtering.
			strings.TrimSuffix(strings.Replace(lookerPivot, "WHERE z___pivot_row_rank <= 500 ", "", 1), "z___pivot_row_rank") + "z___pivot_row_rank, \"people.count\" DESC LIMIT 10",
			// A filter on a window of the level below, then a window over
			// the rows it kept (a share of the remaining total).
			`SELECT "people.sex", "people.count", "people.count" * 1.0 / SUM("people.count") OVER () AS share FROM (SELECT *, RANK() OVER (ORDER BY "people.count" DESC) AS r FROM (` + lookerInner + `) ww) t WHERE r <= 5`,
		} {
			st, err := plan(t, p, q(sql), planArgs{eps: 1, dialect: d})
			if err != nil {
				t.Errorf("%v %s: %v", d, sql, err)
				continue
			}
			if len(st.Stages) == 0 {
				t.Errorf("%v %s: no stage", d, sql)
			}
			if st.CacheKey != flat.CacheKey {
				t.Errorf("%v %s: release key differs from the plain query's", d, sql)
			}
			if got, want := st.Backend.Canonical(), flat.Backend.Canonical(); got != want {
				t.Errorf("%v %s: backend query\n%s\nwant\n%s", d, sql, got, want)
			}
			if len(st.Aggs) != len(flat.Aggs) || st.Aggs[0] != flat.Aggs[0] {
				t.Errorf("%v %s: noise steps %+v, want %+v", d, sql, st.Aggs, flat.Aggs)
			}
		}
	}
}

// TestStageRefusals: a stage reads only the rows of the level below;
// aggregating them again, a window in WHERE or inside another window, and
// a column the level below does not have are refused before any charge.
func TestStageRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	ranked := `(SELECT *, RANK() OVER (ORDER BY "people.count") AS r FROM (` + lookerInner + `) ww) t`
	for _, tt := range []struct {
		sql, msg string
	}{
		{`SELECT COUNT(*) FROM ` + ranked, "aggregat"},
		{`SELECT SUM(r) OVER (), MAX(r) FROM ` + ranked, "aggregat"},
		{`SELECT * FROM ` + ranked + ` WHERE RANK() OVER (ORDER BY r) < 3`, "window functions are not allowed in WHERE"},
		{`SELECT SUM(RANK() OVER (ORDER BY r)) OVER () FROM ` + ranked, "nested"},
		{`SELECT age, r FROM ` + ranked + ` WHERE r < 3`, "does not exist"},
		{`SELECT * FROM ` + ranked + ` WHERE r < $1`, "parameter"},
	} {
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			sql := tt.sql
			if d == parser.MySQL {
				sql = strings.ReplaceAll(mysqlText(sql), "$1", "?")
			}
			_, err := plan(t, p, sql, planArgs{eps: 1, dialect: d})
			if err == nil {
				t.Errorf("%v %s: planned, want a refusal", d, sql)
				continue
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%v %s: %v, want %q", d, sql, err, tt.msg)
			}
			if sqlerr.HasCode(err, sqlerr.Internal) {
				t.Errorf("%v %s: internal error %v", d, sql, err)
			}
		}
	}
}
