package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestWindowPlans: a window function becomes a hidden OutWindow output
// over the outputs, never part of the backend query, and costs nothing:
// the true aggregates (and so the ε split) are those of the query without
// the window. Both dialects.
func TestWindowPlans(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		for _, tt := range []struct {
			sql     string
			windows []string // the windows' text, over outputs (#i)
			types   []string // visible output types
			aggs    int
		}{
			{"SELECT sex, COUNT(*), COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () AS share FROM people GROUP BY sex",
				[]string{"sum(#2) OVER ()"}, []string{policies.TypeText, policies.TypeInteger, policies.TypeReal}, 1},
			{"SELECT sex, SUM(SUM(age)) OVER (ORDER BY sex) AS running FROM people GROUP BY sex",
				[]string{"sum(#3) OVER (ORDER BY #1)"}, []string{policies.TypeText, policies.TypeInteger}, 1},
			{"SELECT sex, RANK() OVER (ORDER BY COUNT(*) DESC) AS r, DENSE_RANK() OVER (PARTITION BY sex ORDER BY AVG(age)) AS d FROM people GROUP BY sex ORDER BY r LIMIT 2",
				[]string{"rank() OVER (ORDER BY #4 DESC)", "dense_rank() OVER (PARTITION BY #1 ORDER BY #6)"},
				[]string{policies.TypeText, policies.TypeInteger, policies.TypeInteger}, 3},
			{"SELECT sex, ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC) FROM people GROUP BY sex",
				[]string{"row_number() OVER (ORDER BY #3 DESC)"}, []string{policies.TypeText, policies.TypeInteger}, 1},
		} {
			pl, err := plan(t, p, tt.sql, planArgs{dialect: d})
			if err != nil {
				t.Errorf("%v %s: %v", d, tt.sql, err)
				continue
			}
			var got []string
			for _, o := range pl.Outputs {
				if o.Kind == planner.OutWindow {
					if !o.Hidden {
						t.Errorf("%v %s: window output visible", d, tt.sql)
					}
					got = append(got, ir.FormatExpr(o.Window))
				}
			}
			if strings.Join(got, "; ") != strings.Join(tt.windows, "; ") {
				t.Errorf("%v %s: windows %q, want %q", d, tt.sql, got, tt.windows)
			}
			for i, typ := range tt.types {
				if pl.Outputs[i].Type != typ {
					t.Errorf("%v %s: output %d type %s, want %s", d, tt.sql, i, pl.Outputs[i].Type, typ)
				}
			}
			// PostgreSQL names the column after the function, MySQL and
			// MariaDB after the item's text.
			wantName := "row_number"
			if d == parser.MySQL {
				wantName = "ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC)"
			}
			if strings.Contains(tt.sql, "ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC) FROM") && pl.Outputs[1].Name != wantName {
				t.Errorf("%v %s: column named %q, want %q", d, tt.sql, pl.Outputs[1].Name, wantName)
			}
			if len(pl.Aggs) != tt.aggs {
				t.Errorf("%v %s: %d true aggregates, want %d", d, tt.sql, len(pl.Aggs), tt.aggs)
			}
			for _, a := range pl.Backend.Aggs {
				ir.Walk(a.Expr, func(n ir.Expr) bool {
					if _, ok := n.(ir.Window); ok {
						t.Errorf("%v %s: the backend query has a window", d, tt.sql)
					}
					return true
				})
			}
		}
	}
}

// TestWindowRefusals: windows over input rows, in HAVING, nested, or with
// a type error are refused at plan time (before any charge), with a reason.
func TestWindowRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tt := range []struct {
		d    parser.Dialect
		sql  string
		code sqlerr.Code
		want string
	}{
		{parser.Postgres, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY SUM(age) OVER ()", sqlerr.GroupingError, `reads the column "age" of the input rows`},
		{parser.MySQL, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY SUM(age) OVER ()", sqlerr.GroupingError, "reads the column `age` of the input rows"},
		{parser.Postgres, "SELECT sex, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*)) AS r FROM people GROUP BY sex HAVING r < 2", sqlerr.WindowingError, "not allowed in HAVING"},
		{parser.Postgres, "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING RANK() OVER (ORDER BY COUNT(*)) < 2", sqlerr.WindowingError, "not allowed in HAVING"},
		{parser.MySQL, "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING RANK() OVER (ORDER BY COUNT(*)) < 2", sqlerr.WindowingError, "not allowed in HAVING"},
		{parser.Postgres, "SELECT sex, SUM(RANK() OVER (ORDER BY COUNT(*))) OVER () FROM people GROUP BY sex", sqlerr.WindowingError, "nested"},
		{parser.Postgres, "SELECT sex, SUM(sex) OVER () FROM people GROUP BY sex", sqlerr.DatatypeMismatch, "needs a number"},
	} {
		_, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
		if err == nil {
			t.Errorf("%v %s: planned, want a refusal", tt.d, tt.sql)
			continue
		}
		if !sqlerr.HasCode(err, tt.code) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %s: %v (code %v), want %v mentioning %q", tt.d, tt.sql, err, sqlerr.As(err).Code, tt.code, tt.want)
		}
	}
}

// TestPostProcessingLanguage: the whole expression language is accepted
// in the select list, HAVING and ORDER BY over aggregates and keys, typed
// from the function table's post-processing rules, in both dialects.
func TestPostProcessingLanguage(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tt := range []struct {
		d   parser.Dialect
		sql string
		typ string
	}{
		{parser.Postgres, "SELECT CASE WHEN COUNT(*) > 10 THEN 'many' ELSE 'few' END FROM people GROUP BY sex", policies.TypeText},
		{parser.MySQL, "SELECT CASE WHEN COUNT(*) > 10 THEN 'many' ELSE 'few' END FROM people GROUP BY sex", policies.TypeText},
		{parser.Postgres, "SELECT CASE sex WHEN 'F' THEN COUNT(*) ELSE 0.5 END FROM people GROUP BY sex", policies.TypeReal},
		{parser.Postgres, "SELECT NULLIF(COUNT(*), 0) FROM people", policies.TypeInteger},
		{parser.Postgres, "SELECT GREATEST(COUNT(*), 0) FROM people", policies.TypeInteger},
		{parser.MySQL, "SELECT LEAST(AVG(age), 50) FROM people", policies.TypeReal},
		{parser.Postgres, "SELECT CAST(AVG(age) AS bigint) FROM people", policies.TypeInteger},
		{parser.MySQL, "SELECT CAST(AVG(age) AS SIGNED) FROM people", policies.TypeInteger},
		{parser.Postgres, "SELECT CAST(COUNT(*) AS text) FROM people", policies.TypeText},
		{parser.Postgres, "SELECT lower(sex) || '!', COUNT(*) FROM people GROUP BY sex", policies.TypeText},
		{parser.MySQL, "SELECT CONCAT(UPPER(sex), ':', CAST(COUNT(*) AS CHAR)) FROM people GROUP BY sex", policies.TypeText},
		{parser.Postgres, "SELECT substr(sex, 1, 1), COUNT(*) FROM people GROUP BY sex", policies.TypeText},
		{parser.Postgres, "SELECT mod(COUNT(*), 7), abs(SUM(age) - 100), floor(AVG(age)) FROM people", policies.TypeInteger},
		{parser.Postgres, "SELECT sex FROM people GROUP BY sex HAVING COUNT(*) > 10 AND NOT (sex = 'F' OR AVG(age) IS NULL)", policies.TypeText},
		{parser.Postgres, "SELECT sex FROM people GROUP BY sex HAVING CASE WHEN COUNT(*) > 0 THEN SUM(age) / COUNT(*) > 30 END", policies.TypeText},
		{parser.Postgres, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY COALESCE(AVG(age), 0) DESC", policies.TypeText},
	} {
		pl, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
		if err != nil {
			t.Errorf("%v %s: %v", tt.d, tt.sql, err)
			continue
		}
		if pl.Outputs[0].Type != tt.typ {
			t.Errorf("%v %s: type %s, want %s", tt.d, tt.sql, pl.Outputs[0].Type, tt.typ)
		}
	}
	for _, tt := range []struct {
		sql  string
		want string
	}{
		{"SELECT CAST(sex AS bigint) FROM people GROUP BY sex", "after the charge"},
		{"SELECT CAST(AVG(age) AS text) FROM people", "spell doubles differently"},
		{"SELECT substr(sex, COUNT(*)) FROM people GROUP BY sex", "integer constants"},
		{"SELECT sex FROM people GROUP BY sex HAVING COUNT(*)", "must be boolean"},
		{"SELECT CASE WHEN COUNT(*) THEN 1 END FROM people", "must be boolean"},
	} {
		if _, err := plan(t, p, tt.sql, planArgs{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a refusal mentioning %q", tt.sql, err, tt.want)
		}
	}
}

// TestExplainWindow: explain shows a window over the names of the outputs
// it reads.
func TestExplainWindow(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT sex, COUNT(*) * 100.0 / SUM(COUNT(*)) OVER (ORDER BY sex) AS share FROM people GROUP BY sex", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	x := pl.Explain(nil)
	got := x.Columns[1].PostProcessing
	if want := `sum("count(*)") OVER (ORDER BY "sex")`; !strings.Contains(got, want) || strings.Count(got, `"count(*)"`) != 2 {
		t.Errorf("post-processing %s, want count(*) twice and %s", got, want)
	}
}

// TestRoundOfDoubles: round of an output the client's database computes in
// double precision (a sum or average of a real column) rounds as a double
// (the lowered call carries the marker), of an exact one (an average of
// integers: numeric/DECIMAL there) as a decimal.
func TestRoundOfDoubles(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		pl, err := plan(t, p, "SELECT ROUND(SUM(income)), ROUND(AVG(income), 1), ROUND(AVG(age)), ROUND(AVG(age) + AVG(income)) FROM people", planArgs{dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, true, false, true} {
			f, ok := pl.Outputs[i].Expr.(ir.Func)
			if !ok || f.Name != "round" {
				t.Fatalf("%v output %d: %s", d, i, ir.FormatExpr(pl.Outputs[i].Expr))
			}
			last, isLit := f.Args[len(f.Args)-1].(ir.Literal)
			if got := isLit && last.Value.Kind == ir.KindBool; got != want {
				t.Errorf("%v output %d %s: rounds as a double %v, want %v", d, i, ir.FormatExpr(f), got, want)
			}
			if pp := pl.Explain(nil).Columns[i].PostProcessing; strings.Contains(pp, "TRUE") {
				t.Errorf("%v output %d: explain shows the marker: %s", d, i, pp)
			}
		}
	}
}
