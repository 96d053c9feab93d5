package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestVariancePlans: the variance family in the select list, HAVING,
// ORDER BY and post-processing expressions, in both dialects, with its
// three parts shared between the forms and with AVG's count.
func TestVariancePlans(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name    string
		d       parser.Dialect
		sql     string
		units   []*aggregate.Unit // the visible aggregate outputs', in order
		aggs    int               // true aggregates
		hasExpr bool
	}{
		{"four forms share three parts", parser.Postgres,
			"SELECT var_pop(age), var_samp(age), stddev_pop(age), stddev_samp(age) FROM people",
			[]*aggregate.Unit{aggregate.VarPop, aggregate.VarSamp, aggregate.StddevPop, aggregate.StddevSamp}, 3, false},
		{"PostgreSQL variance and stddev are the sample forms", parser.Postgres,
			"SELECT variance(age), stddev(age) FROM people",
			[]*aggregate.Unit{aggregate.VarSamp, aggregate.StddevSamp}, 3, false},
		{"MySQL VARIANCE, STD and STDDEV are the population forms", parser.MySQL,
			"SELECT VARIANCE(age), STD(age), STDDEV(age), STDDEV_SAMP(age) FROM people",
			[]*aggregate.Unit{aggregate.VarPop, aggregate.StddevPop, aggregate.StddevPop, aggregate.StddevSamp}, 3, false},
		{"with AVG: the count is shared", parser.Postgres,
			"SELECT AVG(age), var_pop(age) FROM people",
			[]*aggregate.Unit{aggregate.Avg, aggregate.VarPop}, 4, false},
		{"grouped, in HAVING and ORDER BY", parser.Postgres,
			"SELECT sex, stddev(income) FROM people GROUP BY sex HAVING var_samp(income) > 10 ORDER BY stddev_pop(income) DESC",
			[]*aggregate.Unit{aggregate.StddevSamp}, 3, false},
		{"inside a post-processing expression", parser.MySQL,
			"SELECT ROUND(STD(temp), 2) AS s, VAR_POP(temp) / 2 AS h FROM people",
			nil, 3, true},
		{"of an expression", parser.Postgres,
			"SELECT var_pop(age * 2 - 1) FROM people",
			[]*aggregate.Unit{aggregate.VarPop}, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
			if err != nil {
				t.Fatal(err)
			}
			var units []*aggregate.Unit
			for _, o := range pl.Outputs[:pl.NumVisible] {
				if o.Kind == planner.OutAggregate {
					units = append(units, o.Unit)
				}
				if o.Kind == planner.OutAggregate && o.Type != "real" {
					t.Errorf("%s is %s, want real", o.Name, o.Type)
				}
			}
			if len(units) != len(tt.units) {
				t.Fatalf("units %v, want %v", units, tt.units)
			}
			for i := range units {
				if units[i] != tt.units[i] {
					t.Errorf("output %d is %s, want %s", i, units[i].Name, tt.units[i].Name)
				}
			}
			if len(pl.Aggs) != tt.aggs {
				t.Errorf("%d true aggregates, want %d", len(pl.Aggs), tt.aggs)
			}
			x := pl.Explain(nil)
			for _, c := range x.Columns {
				if strings.HasPrefix(c.Aggregate, "var") || strings.HasPrefix(c.Aggregate, "stddev") {
					if len(c.Parts) != 3 || !(c.CI95OverN > 0) || !strings.Contains(c.Mechanism, "95% of answers within") {
						t.Errorf("explain column %+v", c)
					}
					var eps float64
					for _, p := range c.Parts {
						eps += p.Epsilon
					}
					if eps != c.Epsilon {
						t.Errorf("column ε %g is not its parts' sum %g", c.Epsilon, eps)
					}
				}
			}
			if tt.hasExpr {
				for _, c := range x.Columns {
					if c.PostProcessing == "" {
						t.Errorf("column %s is not post-processing", c.Name)
					}
				}
			}
		})
	}
}

// TestVarianceExplainSplit: explain states the even split of ε over the
// three parts and each part's share.
func TestVarianceExplainSplit(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT var_pop(age) FROM people", planArgs{dialect: parser.Postgres, eps: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	x := pl.Explain(nil)
	c := x.Columns[0]
	if len(c.Parts) != 3 {
		t.Fatalf("parts %+v", c.Parts)
	}
	for _, part := range c.Parts {
		if d := part.Epsilon - 0.3; d > 1e-12 || d < -1e-12 {
			t.Errorf("part %s has ε %g, want 0.3", part.Label, part.Epsilon)
		}
	}
	labels := c.Parts[0].Label + ", " + c.Parts[1].Label + ", " + c.Parts[2].Label
	if labels != "count(age), sum(age - 60), sum((age - 60)^2)" {
		t.Errorf("part labels %s", labels)
	}
	// Bounds [0, 120], unbounded dp, k = 1: the centred sum's sensitivity
	// is h = 60, the squares' h² = 3600 (in output units).
	if c.Parts[1].Sensitivity != 60 || c.Parts[2].Sensitivity != 3600 {
		t.Errorf("sensitivities %g, %g, want 60, 3600", c.Parts[1].Sensitivity, c.Parts[2].Sensitivity)
	}
	if !strings.Contains(strings.Join(x.Notes, "\n"), "split evenly over 3 true aggregates") {
		t.Errorf("notes %q lack the split", x.Notes)
	}
}

// TestVarianceRefusals: what the variance family refuses, with the reason.
func TestVarianceRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tt := range []struct {
		d        parser.Dialect
		sql      string
		code     sqlerr.Code
		contains string
	}{
		{parser.Postgres, "SELECT var_pop(name) FROM people", sqlerr.DatatypeMismatch, "not a number"},
		{parser.Postgres, "SELECT stddev(zip) FROM people", sqlerr.DatatypeMismatch, "not a number"},
		{parser.Postgres, "SELECT var_pop(DISTINCT age) FROM people", sqlerr.FeatureNotSupported, "VAR_POP(DISTINCT ...) is not supported"},
		{parser.MySQL, "SELECT STD(DISTINCT age) FROM people", sqlerr.FeatureNotSupported, "STDDEV_POP(DISTINCT ...) is not supported"},
	} {
		_, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
		if e := sqlerr.As(err); err == nil || e.Code != tt.code || !strings.Contains(e.Message, tt.contains) {
			t.Errorf("%s: %v, want %v containing %q", tt.sql, err, tt.code, tt.contains)
		}
	}
	// Under blowfish and induced the centred sums are expression
	// aggregates, bounded by the per-change range of the summand (oracle-
	// checked for these very shapes in TestVarianceAndQuantileShapesAgainstOracle):
	// answered, each part with a positive sensitivity — except where no
	// secret pair changes the column (distance secrets on x leave y
	// fixed: exact and free).
	bp := loadBlowfish(t)
	for _, tc := range []struct {
		sql  string
		zero bool
	}{{"SELECT var_pop(age) FROM persons", false}, {"SELECT stddev(y) FROM visits", true}} {
		sql := tc.sql
		stmts, err := parser.Parse(parser.Postgres, sql)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := bp.Plan(planner.Request{User: bp.Policy().User("alice"), Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]})
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		if len(pl.Aggs) != 3 {
			t.Errorf("%s: %d parts, want 3", sql, len(pl.Aggs))
		}
		for _, a := range pl.Aggs {
			if (a.Sensitivity == 0) != tc.zero {
				t.Errorf("%s: part %s has sensitivity %d", sql, a.Label, a.Sensitivity)
			}
		}
	}
}

// TestVarianceUnderDDP: under dependent DP the centred sums are bounded
// as every aggregate over an expression is there: the bounded-neighbour
// sensitivity of a per-row function clamped to its range, times the
// dependence multiplier (households: ρ = 0.5, largest household 3, m = 2).
func TestVarianceUnderDDP(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	p := planner.New(loadDDP(t))
	pl, err := plan(t, p, "SELECT var_pop(age) FROM people", planArgs{dialect: parser.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	// age in [0, 100]: h = 50; bounded k = 1: count 1, S1 2h = 100, S2 h²
	// = 2500; the dependent sensitivity is m = 2 times that.
	for i, want := range []float64{2, 200, 5000} {
		a := pl.Aggs[i]
		if a.Multiplier != 2 || a.SensitivityValue() != want {
			t.Errorf("%s: multiplier %g, sensitivity %g; want 2, %g", a.Label, a.Multiplier, a.SensitivityValue(), want)
		}
	}
}

// TestAggregateColumnNames: a column without alias is named as the
// client's database names it: PostgreSQL after the function as written
// (stddev(x)'s column is "stddev", not "stddev_samp"), MySQL after the
// item's text.
func TestAggregateColumnNames(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tt := range []struct {
		d    parser.Dialect
		sql  string
		want string
	}{
		{parser.Postgres, "SELECT stddev(age) FROM people", "stddev"},
		{parser.Postgres, "SELECT variance(age) FROM people", "variance"},
		{parser.Postgres, "SELECT var_samp(age) FROM people", "var_samp"},
		{parser.Postgres, "SELECT round(stddev(age)) FROM people", "round"},
		// MySQL and MariaDB name the column after the item's text.
		{parser.MySQL, "SELECT STD(age) FROM people", "STD(age)"},
		{parser.MySQL, "SELECT variance(age) FROM people", "variance(age)"},
		{parser.MySQL, "SELECT COUNT(*) FROM people", "COUNT(*)"},
	} {
		pl, err := plan(t, p, tt.sql, planArgs{dialect: tt.d})
		if err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		if got := pl.Outputs[0].Name; got != tt.want {
			t.Errorf("%s: column %q, want %q", tt.sql, got, tt.want)
		}
	}
}
