package planner_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// sensOf plans sql and returns its aggregates' sensitivities (in output
// units) and scales.
func sensOf(t *testing.T, p *planner.Planner, sql string, eps float64, d parser.Dialect) (sens, scale []float64, pl *planner.Plan) {
	t.Helper()
	pl, err := plan(t, p, sql, planArgs{eps: eps, dialect: d})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	for _, a := range pl.Aggs {
		sens = append(sens, float64(a.Sensitivity)*a.Quantum)
		scale = append(scale, a.ScaleValue())
	}
	return sens, scale, pl
}

// TestExprAggregateSensitivities compares an aggregate over an expression
// with the column aggregate whose sensitivity it must equal (or be a known
// multiple of): the expression's range plays the part of declared bounds.
func TestExprAggregateSensitivities(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name      string
		sql, ref  string
		factor    float64 // sensitivity(sql) = factor · sensitivity(ref)
		sameScale bool
	}{
		// census: dp unbounded, k = 1.
		{"indicator sum is a count", "SELECT SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM people", "SELECT COUNT(*) FROM people", 1, true},
		{"count of a case", "SELECT COUNT(CASE WHEN sex = 'Female' THEN 1 END) FROM people", "SELECT COUNT(*) FROM people", 1, true},
		{"doubled sum", "SELECT SUM(age * 2) FROM people", "SELECT SUM(age) FROM people", 2, false},
		{"halved sum (integer division)", "SELECT SUM(age / 2) FROM people", "SELECT SUM(age) FROM people", 0.5, false},
		{"grouped indicator", "SELECT sex, SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM people GROUP BY sex", "SELECT sex, COUNT(*) FROM people GROUP BY sex", 1, true},
		// social: unbounded, k = 5.
		{"k indicator", "SELECT SUM(CASE WHEN duration > 60 THEN 1 ELSE 0 END) FROM checkins", "SELECT COUNT(*) FROM checkins", 1, true},
		{"k scaled", "SELECT SUM(duration * 3) FROM checkins", "SELECT SUM(duration) FROM checkins", 3, false},
		// bounded neighbours, k = 3, cost in [-10, 50].
		{"bounded indicator", "SELECT SUM(CASE WHEN cost > 0 THEN 1 ELSE 0 END) FROM visits", "SELECT COUNT(*) FROM visits", 1, true},
		{"bounded doubled", "SELECT SUM(cost * 2) FROM visits", "SELECT SUM(cost) FROM visits", 2, false},
	}
	for _, tt := range tests {
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			t.Run(tt.name+"/"+d.String(), func(t *testing.T) {
				got, gotScale, _ := sensOf(t, p, tt.sql, 1, d)
				ref, refScale, _ := sensOf(t, p, tt.ref, 1, d)
				if len(got) != 1 || len(ref) != 1 {
					t.Fatalf("aggregates %v and %v, want one each", got, ref)
				}
				if want := tt.factor * ref[0]; got[0] != want {
					t.Errorf("sensitivity %g, want %g · %g = %g", got[0], tt.factor, ref[0], want)
				}
				if tt.sameScale && gotScale[0] != refScale[0] {
					t.Errorf("scale %g, want the reference's %g", gotScale[0], refScale[0])
				}
			})
		}
	}
}

// TestExprAggregateBruteForce checks, for dp with unbounded neighbours and
// k = 1 (census), that the advertised sensitivity bounds the change of the
// true answer when one unit (one row) is added or removed: that change is
// f(row) for the added row, enumerated over every value the column can
// hold (below, inside and above its declared bounds [0, 120]; the backend
// clamps to them). f is written here in Go, independently of the planner.
func TestExprAggregateBruteForce(t *testing.T) {
	p := planner.New(loadPolicy(t))
	clampAge := func(a int64) int64 { return min(max(a, 0), 120) }
	tests := []struct {
		sql string
		f   func(age int64) float64
	}{
		{"SELECT SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM people", func(a int64) float64 {
			if a > 40 {
				return 1
			}
			return 0
		}},
		{"SELECT SUM(age * 2) FROM people", func(a int64) float64 { return float64(2 * clampAge(a)) }},
		{"SELECT SUM(age - 100) FROM people", func(a int64) float64 { return float64(clampAge(a) - 100) }},
		{"SELECT SUM(CASE WHEN age < 18 THEN -5 WHEN age > 65 THEN age ELSE 0 END) FROM people", func(a int64) float64 {
			switch {
			case a < 18:
				return -5
			case a > 65:
				return float64(clampAge(a))
			}
			return 0
		}},
	}
	for _, tt := range tests {
		sens, _, _ := sensOf(t, p, tt.sql, 1, parser.Postgres)
		worst := 0.0
		for a := int64(-50); a <= 200; a++ {
			worst = max(worst, math.Abs(tt.f(a)))
		}
		if sens[0] < worst {
			t.Errorf("%s: sensitivity %g below the largest change %g of one added row", tt.sql, sens[0], worst)
		}
		// The range is exact here (interval arithmetic is tight for one
		// occurrence of the column), so the bound is attained.
		if sens[0] != worst {
			t.Errorf("%s: sensitivity %g, want the largest change %g", tt.sql, sens[0], worst)
		}
	}
}

func TestExprAggregateRealLattice(t *testing.T) {
	p := planner.New(loadPolicy(t))
	_, _, pl := sensOf(t, p, "SELECT SUM(income / 1000) FROM people", 1, parser.MySQL)
	a, ba := pl.Aggs[0], pl.Backend.Aggs[0]
	if a.Quantum <= 0 || a.Quantum == 1 || ba.Quantum != a.Quantum || ba.Expr == nil || ba.Column != nil {
		t.Fatalf("real expression sum: plan %+v backend %+v, want the lattice path over the expression", a, ba)
	}
	if s := float64(a.Sensitivity) * a.Quantum; math.Abs(s-250.0005) > a.Quantum {
		t.Fatalf("sensitivity %g, want 250000.5/1000 within γ = %g", s, a.Quantum)
	}
	if pl.Outputs[0].Type != "real" {
		t.Errorf("output type %q, want real", pl.Outputs[0].Type)
	}
	_, _, pl = sensOf(t, p, "SELECT SUM(age * 2) FROM people", 1, parser.Postgres)
	if pl.Outputs[0].Type != "integer" || pl.Aggs[0].Quantum != 1 || pl.Backend.Aggs[0].Quantum != 0 {
		t.Errorf("integer expression sum: output %+v agg %+v, want an exact integer sum", pl.Outputs[0], pl.Aggs[0])
	}
}

func TestExprAggregateRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name, sql string
		code      sqlerr.Code
		msg       string
	}{
		{"overflowing argument", "SELECT SUM(age * 9223372036854775807) FROM people", sqlerr.NumericValueOutOfRange, ""},
		{"range beyond 2^53", "SELECT SUM(age * 1000000000000000) FROM people", sqlerr.NumericValueOutOfRange, "2^53"},
		{"text argument", "SELECT SUM(lower(sex)) FROM people", sqlerr.DatatypeMismatch, "not a number"},
		{"unbounded column computed with", "SELECT SUM(cell + 1) FROM checkins", sqlerr.Code{}, "cell"},
		{"negligible real bound", "SELECT SUM(CASE WHEN age > 40 THEN -3e-308 ELSE 1000.5 END) FROM people", sqlerr.NumericValueOutOfRange, "negligible"},
		{"avg of boolean", "SELECT AVG(age > 3) FROM people", sqlerr.DatatypeMismatch, "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{eps: 1})
			if err == nil {
				t.Fatalf("planned %+v, want a refusal", pl)
			}
			if tt.code != (sqlerr.Code{}) && !sqlerr.HasCode(err, tt.code) {
				t.Fatalf("got %v, want code %v", err, tt.code)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want it to mention %q", err, tt.msg)
			}
		})
	}
}

// TestExprAggregateInduced: under induced neighbours an expression's range
// takes the place of a column's bounds in the Graver bound (a move adds or
// removes whole tuples, each contributing a value of the range), so
// SUM(age * 2) costs twice SUM(age) and an indicator COUNT costs what a
// count does.
func TestExprAggregateInduced(t *testing.T) {
	b := loadBlowfish(t)
	sens := func(sql string) float64 {
		t.Helper()
		pl, err := plan(t, b, sql, planArgs{eps: 1})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return float64(pl.Aggs[0].Sensitivity) * pl.Aggs[0].Quantum
	}
	if col, expr := sens("SELECT SUM(age) FROM persons"), sens("SELECT SUM(age * 2) FROM persons"); expr != 2*col {
		t.Errorf("induced SUM(age * 2) = %g, want twice SUM(age) = %g", expr, 2*col)
	}
	if c, e := sens("SELECT COUNT(*) FROM persons WHERE age > 30"), sens("SELECT COUNT(CASE WHEN age > 30 THEN 1 END) FROM persons"); e != c {
		t.Errorf("induced COUNT(CASE …) = %g, want the count's %g", e, c)
	}
}

// TestExprAggregateCacheKeyAndExplain: different arguments are different
// releases; the same one (also from HAVING) is one aggregate; explain shows
// the argument and its range.
func TestExprAggregateCacheKeyAndExplain(t *testing.T) {
	p := planner.New(loadPolicy(t))
	_, _, a := sensOf(t, p, "SELECT SUM(age * 2) FROM people", 1, parser.Postgres)
	_, _, b := sensOf(t, p, "SELECT SUM(age * 2 + 0) FROM people", 1, parser.Postgres)
	_, _, c := sensOf(t, p, "SELECT SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM people", 1, parser.Postgres)
	_, _, d := sensOf(t, p, "SELECT SUM(CASE WHEN age > 41 THEN 1 ELSE 0 END) FROM people", 1, parser.Postgres)
	_, _, a2 := sensOf(t, p, "SELECT SUM(age * 2) FROM people", 1, parser.MySQL)
	if a.CacheKey == b.CacheKey || c.CacheKey == d.CacheKey || a.CacheKey == c.CacheKey {
		t.Errorf("different arguments share a release key")
	}
	if a.CacheKey != a2.CacheKey {
		t.Errorf("the same query in two dialects has two release keys")
	}
	_, _, h := sensOf(t, p, "SELECT SUM(age * 2) AS s FROM people HAVING SUM(age * 2) > 10 ORDER BY SUM(age * 2)", 1, parser.Postgres)
	if len(h.Aggs) != 1 {
		t.Errorf("HAVING and ORDER BY of the same aggregate added aggregates: %+v", h.Aggs)
	}
	x := a.Explain(nil)
	if x.Aggregates[0].Label != `sum(("age" * 2))` {
		t.Errorf("label %q, want the argument", x.Aggregates[0].Label)
	}
	if !strings.Contains(strings.Join(x.Notes, "\n"), "bigint in [0, 240]") {
		t.Errorf("notes %q do not show the range [0, 240]", x.Notes)
	}
}

// TestExprAggregateDDP: under the dependent model the expression's range
// goes through the same sensitivity calls as a column's bounds.
func TestExprAggregateDDP(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	p := planner.New(loadDDP(t))
	col := explainOf(t, p, "SELECT SUM(age) FROM people", 1).Aggregates[0]
	expr := explainOf(t, p, "SELECT SUM(age * 2) FROM people", 1).Aggregates[0]
	if expr.Sensitivity != 2*col.Sensitivity || expr.Scale != 2*col.Scale {
		t.Errorf("ddp SUM(age * 2): sensitivity %v scale %v, want twice SUM(age)'s %v, %v", expr.Sensitivity, expr.Scale, col.Sensitivity, col.Scale)
	}
}
