package planner_test

import (
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// TestFilterSensitivities: agg(...) FILTER (WHERE c) has exactly the noise
// steps (sensitivity, lattice, scale) of the unfiltered aggregate, under
// each neighbour model and contribution bound of the test policy. The
// expected values are the unfiltered aggregate's, which TestSensitivities
// derives by hand (census: k = 1, age in [0, 120], income in [0, 250000.5];
// checkins: k = 5, duration in [0, 600]; visits: bounded, k = 3, cost in
// [-10, 50]).
func TestFilterSensitivities(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		sql, ref string
		want     []float64 // sensitivities in output units, by hand
	}{
		{"SELECT count(*) FILTER (WHERE sex = 'Female') FROM people", "SELECT count(*) FROM people", []float64{1}},
		{"SELECT sum(age) FILTER (WHERE sex = 'Female') FROM people", "SELECT sum(age) FROM people", []float64{120}},
		{"SELECT avg(age) FILTER (WHERE age > 30) FROM people", "SELECT avg(age) FROM people", []float64{120, 1}},
		{"SELECT sex, count(*) FILTER (WHERE age > 30) FROM people GROUP BY sex", "SELECT sex, count(*) FROM people GROUP BY sex", []float64{1}},
		{"SELECT count(*) FILTER (WHERE venue = 'gym') FROM checkins", "SELECT count(*) FROM checkins", []float64{5}},
		{"SELECT sum(duration) FILTER (WHERE venue = 'gym') FROM checkins", "SELECT sum(duration) FROM checkins", []float64{3000}},
		{"SELECT count(*) FILTER (WHERE ward = 'a') FROM visits", "SELECT count(*) FROM visits", []float64{3}},
		{"SELECT sum(cost) FILTER (WHERE ward = 'a') FROM visits", "SELECT sum(cost) FROM visits", []float64{180}},
		{"SELECT sum(income) FILTER (WHERE sex = 'Male') FROM people", "SELECT sum(income) FROM people", nil},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			got, gotScale, gp := sensOf(t, p, tt.sql, 1, parser.Postgres)
			ref, refScale, rp := sensOf(t, p, tt.ref, 1, parser.Postgres)
			if len(got) != len(ref) {
				t.Fatalf("%d aggregates, want %d", len(got), len(ref))
			}
			for i := range got {
				if got[i] != ref[i] || gotScale[i] != refScale[i] || gp.Aggs[i].Quantum != rp.Aggs[i].Quantum || gp.Aggs[i].Epsilon != rp.Aggs[i].Epsilon {
					t.Errorf("aggregate %d: sensitivity %g scale %g γ %g, want the unfiltered %g, %g, %g", i, got[i], gotScale[i], gp.Aggs[i].Quantum, ref[i], refScale[i], rp.Aggs[i].Quantum)
				}
				if tt.want != nil && got[i] != tt.want[i] {
					t.Errorf("aggregate %d: sensitivity %g, want %g", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestFilterBruteForce: the largest change one added row can make to the
// filtered aggregate, enumerated over ages beyond the bounds and every
// sex, equals the planned sensitivity.
func TestFilterBruteForce(t *testing.T) {
	p := planner.New(loadPolicy(t))
	clamp := func(a int64) int64 { return min(max(a, 0), 120) }
	tests := []struct {
		sql string
		f   func(age int64, sex string) float64 // the row's contribution
	}{
		{"SELECT count(*) FILTER (WHERE age > 40 AND sex = 'Female') FROM people", func(a int64, s string) float64 {
			if a > 40 && s == "Female" {
				return 1
			}
			return 0
		}},
		{"SELECT sum(age) FILTER (WHERE sex <> 'Male') FROM people", func(a int64, s string) float64 {
			if s != "Male" {
				return float64(clamp(a))
			}
			return 0
		}},
		{"SELECT sum(age - 100) FILTER (WHERE age < 50) FROM people", func(a int64, s string) float64 {
			if a < 50 {
				return float64(clamp(a) - 100)
			}
			return 0
		}},
	}
	for _, tt := range tests {
		sens, _, _ := sensOf(t, p, tt.sql, 1, parser.Postgres)
		worst := 0.0
		for a := int64(-50); a <= 200; a++ {
			for _, s := range []string{"Female", "Male", "other"} {
				worst = max(worst, math.Abs(tt.f(a, s)))
			}
		}
		if sens[0] != worst {
			t.Errorf("%s: sensitivity %g, want the largest change %g of one added row", tt.sql, sens[0], worst)
		}
	}
}
