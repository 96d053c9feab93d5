package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestSelectExpressions checks the outputs of select-list expressions:
// names, types, hidden aggregates and the number of true aggregates (which
// fixes the ε split), in both dialects.
func TestSelectExpressions(t *testing.T) {
	p := planner.New(loadPolicy(t))
	type out struct {
		name string
		typ  string
		kind planner.OutputKind
	}
	tests := []struct {
		name    string
		d       parser.Dialect
		sql     string
		visible []out
		aggs    []string // labels of the true aggregates
		hidden  int
	}{
		{"brief example", parser.Postgres,
			"SELECT sex, ROUND(AVG(age), 2) AS a, COUNT(1) AS n, 3 AS three FROM people GROUP BY sex",
			[]out{{"sex", policies.TypeText, planner.OutGroup}, {"a", policies.TypeReal, planner.OutExpr},
				{"n", policies.TypeInteger, planner.OutAggregate}, {"three", policies.TypeInteger, planner.OutExpr}},
			// AVG(age) needs sum(age) and count(age); COUNT(1) is count(*).
			[]string{"sum(age)", "count(age)", "count(*)"}, 1},
		{"mysql brief example", parser.MySQL,
			"SELECT sex, ROUND(AVG(age), 2) AS a, COUNT(1) AS n, 3 AS three FROM people GROUP BY sex",
			[]out{{"sex", policies.TypeText, planner.OutGroup}, {"a", policies.TypeReal, planner.OutExpr},
				{"n", policies.TypeInteger, planner.OutAggregate}, {"three", policies.TypeInteger, planner.OutExpr}},
			[]string{"sum(age)", "count(age)", "count(*)"}, 1},
		{"repeated aggregate is computed once", parser.Postgres,
			"SELECT COUNT(*), COUNT(*) * 100, COALESCE(SUM(age), 0), SUM(age) + 1 FROM people",
			[]out{{"count", policies.TypeInteger, planner.OutAggregate}, {"?column?", policies.TypeInteger, planner.OutExpr},
				{"coalesce", policies.TypeInteger, planner.OutExpr}, {"?column?", policies.TypeInteger, planner.OutExpr}},
			[]string{"count(*)", "sum(age)"}, 1},
		{"real arithmetic and constants", parser.Postgres,
			`SELECT COUNT(*) * 100.0 AS pct, AVG(income) + 1, 'label' AS kind, TRUE AS "_", NULL AS x, COUNT(*) > 10 AS big FROM people`,
			[]out{{"pct", policies.TypeReal, planner.OutExpr}, {"?column?", policies.TypeReal, planner.OutExpr},
				{"kind", policies.TypeText, planner.OutExpr}, {"_", policies.TypeBoolean, planner.OutExpr},
				{"x", policies.TypeText, planner.OutExpr}, {"big", policies.TypeBoolean, planner.OutExpr}},
			[]string{"count(*)", "sum(income)", "count(income)"}, 2},
		{"PostgreSQL division: integers truncate", parser.Postgres,
			"SELECT SUM(age) / COUNT(*) AS a, SUM(age) / 2.0 AS b, COUNT(*) % 7 AS c FROM people",
			[]out{{"a", policies.TypeInteger, planner.OutExpr}, {"b", policies.TypeReal, planner.OutExpr},
				{"c", policies.TypeInteger, planner.OutExpr}},
			[]string{"sum(age)", "count(*)"}, 2},
		{"MySQL division is real, DIV truncates", parser.MySQL,
			"SELECT SUM(age) / COUNT(*) AS a, SUM(age) DIV COUNT(*) AS b FROM people",
			[]out{{"a", policies.TypeReal, planner.OutExpr}, {"b", policies.TypeInteger, planner.OutExpr}},
			[]string{"sum(age)", "count(*)"}, 2},
		{"grouping column in an expression", parser.Postgres,
			"SELECT lower(sex) AS s, COUNT(*) FROM people GROUP BY sex",
			[]out{{"s", policies.TypeText, planner.OutExpr}, {"count", policies.TypeInteger, planner.OutAggregate}},
			[]string{"count(*)"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
			if err != nil {
				t.Fatal(err)
			}
			if pl.NumVisible != len(tt.visible) {
				t.Fatalf("%d visible outputs, want %d", pl.NumVisible, len(tt.visible))
			}
			for i, w := range tt.visible {
				o := pl.Outputs[i]
				if o.Name != w.name || o.Type != w.typ || o.Kind != w.kind || o.Hidden {
					t.Errorf("output %d = %q %q kind %d hidden %v, want %q %q kind %d", i, o.Name, o.Type, o.Kind, o.Hidden, w.name, w.typ, w.kind)
				}
				if o.Kind == planner.OutExpr && o.Expr == nil {
					t.Errorf("output %d has no expression", i)
				}
			}
			if h := len(pl.Outputs) - pl.NumVisible; h != tt.hidden {
				t.Errorf("%d hidden outputs, want %d", h, tt.hidden)
			}
			var labels []string
			for _, a := range pl.Aggs {
				labels = append(labels, a.Label)
			}
			slices.Sort(labels)
			wantAggs := slices.Sorted(slices.Values(tt.aggs))
			if strings.Join(labels, ",") != strings.Join(wantAggs, ",") {
				t.Errorf("true aggregates %v, want %v", labels, tt.aggs)
			}
			for _, a := range pl.Aggs {
				if want := pl.Budget.Epsilon / float64(len(tt.aggs)); a.Epsilon != want {
					t.Errorf("%s: ε share %g, want %g", a.Label, a.Epsilon, want)
				}
			}
			// Every output reference of an expression is in range and is not
			// itself an expression (release evaluates them in one pass).
			for _, o := range pl.Outputs {
				ir.Walk(o.Expr, func(n ir.Expr) bool {
					if r, ok := n.(ir.OutputRef); ok && (r.Index >= len(pl.Outputs) || pl.Outputs[r.Index].Kind == planner.OutExpr) {
						t.Errorf("%s references output %d", o.Name, r.Index)
					}
					return true
				})
			}
		})
	}
}

// TestSelectExpressionSharesRelease: a post-processing expression changes
// neither the ε split nor the release: COUNT(*) and COUNT(*) * 100 share one
// cached release, which is free and fine (post-processing).
func TestSelectExpressionSharesRelease(t *testing.T) {
	p := planner.New(loadPolicy(t))
	a, err := plan(t, p, "SELECT sex, COUNT(*) FROM people GROUP BY sex", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := plan(t, p, "SELECT sex, COUNT(*) * 100, COUNT(1) AS n, 7 FROM people GROUP BY sex", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if a.CacheKey != b.CacheKey {
		t.Errorf("cache keys differ: post-processing must not change the release")
	}
	if len(b.Aggs) != 1 || b.Aggs[0].Epsilon != a.Aggs[0].Epsilon {
		t.Errorf("aggregates %+v, want the one count(*) at ε %g", b.Aggs, a.Aggs[0].Epsilon)
	}
	c, err := plan(t, p, "SELECT sex, COUNT(*), AVG(age) FROM people GROUP BY sex", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if c.CacheKey == a.CacheKey {
		t.Errorf("a query with more true aggregates shares the release of one with fewer")
	}
}

func TestSelectExpressionRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name string
		sql  string
		code sqlerr.Code
		want string
	}{
		{"text arithmetic", "SELECT sex, COUNT(*) + sex FROM people GROUP BY sex", sqlerr.DatatypeMismatch, "needs numbers"},
		{"round digits not a literal", "SELECT sex, ROUND(AVG(age), COUNT(*)) FROM people GROUP BY sex", sqlerr.DatatypeMismatch, "integer literal"},
		{"private column outside aggregate", "SELECT COUNT(*) + age FROM people GROUP BY sex", sqlerr.InsufficientPrivilege, "GROUP BY"},
		{"constants only", "SELECT 3 AS three FROM people", sqlerr.InsufficientPrivilege, "aggregate"},
		{"unknown column", "SELECT COUNT(*) + nope FROM people GROUP BY nope", sqlerr.UndefinedColumn, "nope"},
		// HAVING is type-checked at plan time too, before any charge.
		{"having text arithmetic", "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) + sex > 1", sqlerr.DatatypeMismatch, "needs numbers"},
		{"order by text arithmetic", "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY upper(sex) * 2", sqlerr.DatatypeMismatch, "needs numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan(t, p, tt.sql, planArgs{})
			if err == nil {
				t.Fatal("planned, want a refusal")
			}
			if !sqlerr.HasCode(err, tt.code) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v (code %v), want %v mentioning %q", err, sqlerr.As(err).Code, tt.code, tt.want)
			}
		})
	}
}

// TestNoRowPlans: a query that provably reads no row is planned with its
// typed outputs, no budget and no backend work.
func TestNoRowPlans(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name  string
		d     parser.Dialect
		sql   string
		names []string
		types []string
	}{
		{"metabase probe", parser.Postgres, `SELECT TRUE AS "_" FROM people WHERE 1 <> 1 LIMIT 0`, []string{"_"}, []string{policies.TypeBoolean}},
		{"mysql metabase probe", parser.MySQL, "SELECT TRUE AS `_` FROM people WHERE 1 <> 1 LIMIT 0", []string{"_"}, []string{policies.TypeBoolean}},
		{"where false", parser.Postgres, "SELECT age, name FROM people WHERE false", []string{"age", "name"}, []string{policies.TypeInteger, policies.TypeText}},
		{"where 1 = 0 with aggregates", parser.Postgres, "SELECT sex, COUNT(*) FROM people WHERE 1 = 0 GROUP BY sex", []string{"sex", "count"}, []string{policies.TypeText, policies.TypeInteger}},
		{"limit 0", parser.Postgres, "SELECT AVG(income) FROM people LIMIT 0", []string{"avg"}, []string{policies.TypeReal}},
		// A BI tool's probe of a table's columns: LIMIT 0 lets it
		// select columns outside GROUP BY, as WHERE false does.
		{"limit 0 columns", parser.Postgres, "SELECT age, name FROM people LIMIT 0", []string{"age", "name"}, []string{policies.TypeInteger, policies.TypeText}},
		{"mysql limit 0 columns", parser.MySQL, "SELECT age, name FROM people LIMIT 0", []string{"age", "name"}, []string{policies.TypeInteger, policies.TypeText}},
		{"mysql where 0", parser.MySQL, "SELECT COUNT(*) FROM people WHERE 0", []string{"COUNT(*)"}, []string{policies.TypeInteger}},
		{"not true and x", parser.Postgres, "SELECT COUNT(*) FROM people WHERE NOT (1 = 1) AND age > 3", []string{"count"}, []string{policies.TypeInteger}},
		// A HAVING that keeps no group: an outer WHERE 1 = 0 over an
		// aggregate subquery (a BI tool's probe of a custom query's
		// columns) is merged into one.
		{"outer where false", parser.Postgres, "SELECT * FROM (SELECT sex, COUNT(*) AS c FROM people GROUP BY sex) q WHERE 1 = 0", []string{"sex", "c"}, []string{policies.TypeText, policies.TypeInteger}},
		{"mysql outer where false", parser.MySQL, "SELECT q.* FROM (SELECT sex, AVG(age) AS a FROM people GROUP BY sex) q WHERE 1 = 0", []string{"sex", "a"}, []string{policies.TypeText, policies.TypeReal}},
		{"having null", parser.Postgres, "SELECT COUNT(*) FROM people HAVING NULL", []string{"count"}, []string{policies.TypeInteger}},
		// SELECT * of a probe: the columns the catalog shows (the declared
		// ones, in the policy's order), tables in FROM order.
		{"star limit 0", parser.Postgres, "SELECT * FROM people LIMIT 0", []string{"age", "sex", "zip", "income", "temp", "name"}, []string{policies.TypeInteger, policies.TypeText, policies.TypeText, policies.TypeReal, policies.TypeInteger, policies.TypeText}},
		{"mysql star where 1 = 0", parser.MySQL, "SELECT * FROM people WHERE 1 = 0", []string{"age", "sex", "zip", "income", "temp", "name"}, []string{policies.TypeInteger, policies.TypeText, policies.TypeText, policies.TypeReal, policies.TypeInteger, policies.TypeText}},
		{"qualified star and a column", parser.Postgres, "SELECT p.*, age AS a2 FROM people AS p WHERE false", []string{"age", "sex", "zip", "income", "temp", "name", "a2"}, []string{policies.TypeInteger, policies.TypeText, policies.TypeText, policies.TypeReal, policies.TypeInteger, policies.TypeText, policies.TypeInteger}},
		{"star over a join", parser.Postgres, "SELECT * FROM people p JOIN zips z ON p.zip = z.zip LIMIT 0", []string{"age", "sex", "zip", "income", "temp", "name", "zip", "state"}, []string{policies.TypeInteger, policies.TypeText, policies.TypeText, policies.TypeReal, policies.TypeInteger, policies.TypeText, policies.TypeText, policies.TypeText}},
		{"one table's star of a join", parser.Postgres, "SELECT z.* FROM people p JOIN zips z ON p.zip = z.zip LIMIT 0", []string{"zip", "state"}, []string{policies.TypeText, policies.TypeText}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
			if err != nil {
				t.Fatal(err)
			}
			if !pl.NoRows {
				t.Fatal("NoRows is false")
			}
			if pl.Budget != (policies.Budget{}) {
				t.Errorf("budget %+v, want none", pl.Budget)
			}
			if pl.NumVisible != len(tt.names) {
				t.Fatalf("%d visible outputs, want %d", pl.NumVisible, len(tt.names))
			}
			for i := range tt.names {
				if o := pl.Outputs[i]; o.Name != tt.names[i] || o.Type != tt.types[i] {
					t.Errorf("output %d = %q %q, want %q %q", i, o.Name, o.Type, tt.names[i], tt.types[i])
				}
			}
			var sb strings.Builder
			pl.Explain(nil).WriteText(&sb)
			if !strings.Contains(sb.String(), "has no row whatever the data") {
				t.Errorf("explain does not say the query reads no row:\n%s", sb.String())
			}
		})
	}
	// Any other LIMIT reads rows: the columns are refused as before.
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		_, err := plan(t, p, "SELECT age FROM people LIMIT 1", planArgs{dialect: d})
		if err == nil || !strings.Contains(err.Error(), "not in GROUP BY") {
			t.Errorf("%s: SELECT age ... LIMIT 1: %v; want the grouping refusal", d, err)
		}
	}
	// A star that reads rows is a row-level read, refused as before.
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		for _, sql := range []string{"SELECT * FROM people", "SELECT * FROM people LIMIT 1", "SELECT * FROM people WHERE age > 3"} {
			_, err := plan(t, p, sql, planArgs{dialect: d})
			if err == nil || !strings.Contains(err.Error(), "SELECT * reads individual rows") {
				t.Errorf("%s: %s: %v; want the star refusal", d, sql, err)
			}
		}
	}
	// A HAVING false lets nothing through that is refused otherwise:
	// unlike LIMIT 0, it does not allow ungrouped columns.
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		_, err := plan(t, p, "SELECT age, COUNT(*) FROM people HAVING 1 = 0", planArgs{dialect: d})
		if err == nil || !strings.Contains(err.Error(), "not in GROUP BY") {
			t.Errorf("%s: an ungrouped column with HAVING false: %v; want the grouping refusal", d, err)
		}
	}
	// A WHERE or HAVING that depends on the data is not a no-row query.
	for _, sql := range []string{
		"SELECT COUNT(*) FROM people WHERE age <> age",
		"SELECT COUNT(*) FROM people WHERE 1 = 1 OR age > 3",
		"SELECT COUNT(*) FROM people LIMIT 1",
		"SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) < 0",
		"SELECT * FROM (SELECT sex, COUNT(*) AS c FROM people GROUP BY sex) q WHERE 1 = 1",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if pl.NoRows || pl.Budget.Epsilon == 0 {
			t.Errorf("%s: NoRows %v, budget %+v; want a charged release", sql, pl.NoRows, pl.Budget)
		}
	}
}

// TestExplainShowsPostProcessing: explain names the expression the proxy
// computes, over the outputs it reads.
func TestExplainShowsPostProcessing(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT sex, ROUND(AVG(age), 2) AS a FROM people GROUP BY sex", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	x := pl.Explain(nil)
	if len(x.Columns) != 2 {
		t.Fatalf("%d columns", len(x.Columns))
	}
	c := x.Columns[1]
	if !strings.Contains(c.PostProcessing, "round") || !strings.Contains(c.PostProcessing, "avg(age)") || !strings.Contains(c.Mechanism, "post-processing") {
		t.Errorf("column a: post_processing %q, mechanism %q", c.PostProcessing, c.Mechanism)
	}
	var sb strings.Builder
	x.WriteText(&sb)
	if !strings.Contains(sb.String(), "round") {
		t.Errorf("explain text does not show the expression:\n%s", sb.String())
	}
}

// TestOrderByExpression: an ORDER BY expression is a hidden post-processing
// output; it adds no true aggregate when its aggregates are computed
// already, and a private column in it must be grouped.
func TestOrderByExpression(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY abs(COUNT(*) - 500) DESC", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Aggs) != 1 || len(pl.OrderBy) != 1 {
		t.Fatalf("aggs %+v, order %+v", pl.Aggs, pl.OrderBy)
	}
	o := pl.Outputs[pl.OrderBy[0].Output]
	if !o.Hidden || o.Kind != planner.OutExpr || o.Type != policies.TypeInteger || !pl.OrderBy[0].Desc {
		t.Errorf("order key output %+v", o)
	}
	_, err = plan(t, p, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY COUNT(*) + age", planArgs{})
	if !sqlerr.HasCode(err, sqlerr.GroupingError) {
		t.Errorf("ungrouped column in ORDER BY: %v, want grouping_error", err)
	}
}
