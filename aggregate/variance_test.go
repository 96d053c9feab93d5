package aggregate

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
)

// TestVarianceSpellings: PostgreSQL's variance and stddev are the sample
// forms, MySQL's VARIANCE, STD and STDDEV the population forms (checked on
// the databases themselves by backends.TestVarianceOnEveryBackend).
func TestVarianceSpellings(t *testing.T) {
	for _, tt := range []struct {
		d    Dialect
		name string
		want *Unit
	}{
		{PostgreSQL, "var_pop", VarPop}, {PostgreSQL, "var_samp", VarSamp}, {PostgreSQL, "variance", VarSamp},
		{PostgreSQL, "stddev_pop", StddevPop}, {PostgreSQL, "stddev_samp", StddevSamp}, {PostgreSQL, "stddev", StddevSamp},
		{PostgreSQL, "std", StddevPop}, {PostgreSQL, "stdev", StddevSamp}, {PostgreSQL, "stdevp", StddevPop},
		{PostgreSQL, "var", VarSamp}, {PostgreSQL, "varp", VarPop}, {PostgreSQL, "stdev_samp", nil},
		{MySQL, "VAR", VarSamp}, {MySQL, "varp", VarPop}, {MySQL, "stdev", StddevSamp}, {MySQL, "stdevp", StddevPop},
		{MySQL, "VAR_POP", VarPop}, {MySQL, "variance", VarPop}, {MySQL, "var_samp", VarSamp},
		{MySQL, "std", StddevPop}, {MySQL, "stddev", StddevPop}, {MySQL, "stddev_pop", StddevPop}, {MySQL, "STDDEV_SAMP", StddevSamp},
	} {
		if got := Lookup(tt.d, tt.name); got != tt.want {
			t.Errorf("Lookup(%d, %q) = %v, want %v", tt.d, tt.name, got, tt.want)
		}
	}
}

func TestVarianceParts(t *testing.T) {
	col := ir.ColumnRef{Name: "x"}
	p := VarPop.Parts(Arg{Column: &col, Source: col, Text: "x", Type: "integer", Lo: 0, Hi: 5})
	if len(p) != 3 || p[0].Agg.Kind != ir.CountValues || p[1].Shape != ShapeSum || p[2].Shape != ShapeSum || p[1].Of == nil || p[2].Of == nil {
		t.Fatalf("parts %+v", p)
	}
	if p[1].Label != "sum(x - 2.5)" || p[2].Label != "sum((x - 2.5)^2)" {
		t.Errorf("labels %q, %q", p[1].Label, p[2].Label)
	}
}

// TestVarianceValue: hand-computed values from exact parts.
func TestVarianceValue(t *testing.T) {
	// 1, 2, 3, 4 in [0, 4]: m = 2, n = 4, S1 = 2, S2 = 6; var_pop 1.25,
	// var_samp 5/3.
	arg := Arg{Lo: 0, Hi: 4}
	exact := func(n int64, s1, s2 float64) []Noisy {
		return []Noisy{{n, 1}, {int64(s1 * 4), 0.25}, {int64(s2 * 4), 0.25}}
	}
	tests := []struct {
		name string
		u    *Unit
		p    []Noisy
		want ir.Value
	}{
		{"var_pop", VarPop, exact(4, 2, 6), ir.Float(1.25)},
		{"var_samp", VarSamp, exact(4, 2, 6), ir.Float(5.0 / 3)},
		{"stddev_pop", StddevPop, exact(4, 2, 6), ir.Float(math.Sqrt(1.25))},
		{"stddev_samp", StddevSamp, exact(4, 2, 6), ir.Float(math.Sqrt(5.0 / 3))},
		{"pop of no rows", VarPop, exact(0, 0, 0), ir.Null()},
		{"pop of a negative count", VarPop, exact(-3, 1, 1), ir.Null()},
		{"pop of one row", VarPop, exact(1, 1, 1), ir.Float(0)},
		{"samp of one row", VarSamp, exact(1, 1, 1), ir.Null()},
		// Noise drove S2 below S1²/n: clamped up to 0.
		{"negative clamps to 0", VarPop, exact(4, 8, 1), ir.Float(0)},
		// Above h² = 4: clamped down to it (pop) or to h²·n/(n−1) (samp).
		{"pop above the range", VarPop, exact(2, 0, 100), ir.Float(4)},
		{"samp above the range", VarSamp, exact(2, 0, 100), ir.Float(8)},
		{"stddev above the range", StddevPop, exact(2, 0, 100), ir.Float(2)},
	}
	for _, tt := range tests {
		if got := tt.u.Value(Context{Arg: arg}, tt.p); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestVarianceFeasibleRange: n values in [lo, hi] have a population
// variance of at most h² and a sample variance of at most h²·n/(n−1), the
// clamps of value (both attained: half the values at each bound, for even
// n). Brute force over every multiset of n ≤ 5 values on a grid of [0, 4].
func TestVarianceFeasibleRange(t *testing.T) {
	h := 2.0
	var rec func(xs []float64, from int)
	worst := map[int][2]float64{}
	rec = func(xs []float64, from int) {
		if n := len(xs); n >= 2 {
			var mean float64
			for _, x := range xs {
				mean += x / float64(n)
			}
			var ss float64
			for _, x := range xs {
				ss += (x - mean) * (x - mean)
			}
			w := worst[n]
			worst[n] = [2]float64{max(w[0], ss/float64(n)), max(w[1], ss/float64(n-1))}
		}
		if len(xs) == 5 {
			return
		}
		for i := from; i <= 8; i++ {
			rec(append(xs, float64(i)/2), i)
		}
	}
	rec(nil, 0)
	for n := 2; n <= 5; n++ {
		pop, samp := worst[n][0], worst[n][1]
		if pop > h*h+1e-12 || samp > h*h*float64(n)/float64(n-1)+1e-12 {
			t.Errorf("n=%d: pop %g samp %g exceed the clamps %g, %g", n, pop, samp, h*h, h*h*float64(n)/float64(n-1))
		}
		if n%2 == 0 && (math.Abs(pop-h*h) > 1e-12 || math.Abs(samp-h*h*float64(n)/float64(n-1)) > 1e-12) {
			t.Errorf("n=%d: the clamps %g, %g are not attained (%g, %g)", n, h*h, h*h*float64(n)/float64(n-1), pop, samp)
		}
	}
}

// TestVarianceNoiseMatchesItsInterval draws the three parts' noise with
// the release's exact sampler (package noise, fixed seed) around fixed true
// parts and compares the error of the released value with what explain
// states:
//   - the empirical 95th percentile of |error| lies within 10% of the
//     delta-method prediction for these data (the same linear combination
//     of the noises, simulated separately), and
//   - it is at most explain's worst-case CI95OverN/n (+5%);
//   - the error's standard deviation is within 5% of the one propagated
//     from the parts' noise scales (the partial derivatives at the true
//     parts times the discrete Laplace standard deviations; about 6
//     standard errors of the estimate from 20000 draws).
//
// 20000 draws per case: the empirical 95th percentile has a relative
// standard error near 1.5%, so a 10% tolerance is over 6 standard errors
// (false rejection below 1e-9 by the normal approximation, per case).
func TestVarianceNoiseMatchesItsInterval(t *testing.T) {
	const draws = 20000
	lo, hi := -10.0, 30.0
	h := (hi - lo) / 2
	n := int64(200000)
	// Two data sets of n values whose variance is inside the feasible
	// range (at its ends the clamp shortens the errors): a quarter at each
	// bound and half at m (μ = 0, variance h²/2), and a quarter at hi, the
	// rest at m (μ = h/4).
	type data struct {
		name   string
		s1, s2 float64
	}
	sets := []data{
		{"a quarter at each bound", 0, float64(n/2) * h * h},
		{"a quarter at hi", float64(n/4) * h, float64(n/4) * h * h},
	}
	// Scales as the planner sets them for ε = 1 split over 3 parts, dp
	// unbounded, k = 1: count 3, S1 3h, S2 3h², on a lattice of 1/64.
	q := 1.0 / 64
	scale := func(units float64) noise.Scale {
		s, err := noise.ScaleOf(new(big.Rat).SetFloat64(units))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tn, t1, t2 := scale(3), scale(3*h/q), scale(3*h*h/q)
	parts := []PartNoise{
		{Scale: 3, Quantum: 1, Epsilon: 1.0 / 3},
		{Scale: 3 * h, Quantum: q, Epsilon: 1.0 / 3, Lo: -h, Hi: h},
		{Scale: 3 * h * h, Quantum: q, Epsilon: 1.0 / 3, Lo: 0, Hi: h * h},
	}
	src := noise.SeededSource(12)
	for _, u := range []*Unit{VarPop, VarSamp} {
		pop := u == VarPop
		sum := u.Summarize(parts)
		if sum.Epsilon != 1 || !(sum.CI95OverN > 0) {
			t.Fatalf("%s: summary %+v", u.Name, sum)
		}
		checkIntervalText(t, u, sum)
		for _, d := range sets {
			nf := float64(n)
			mu, e := d.s1/nf, d.s2/nf
			truth := e - mu*mu
			denom := nf
			if !pop {
				truth *= nf / (nf - 1)
				denom = nf - 1
			}
			dn := -(e - 2*mu*mu) / nf
			if !pop {
				dn = (mu*mu*(2*nf-1) - nf*e) / ((nf - 1) * (nf - 1))
			}
			errs := make([]float64, draws)
			lin := make([]float64, draws)
			var sq float64
			for i := range errs {
				e0 := noise.DiscreteLaplace(src, tn)
				e1 := float64(noise.DiscreteLaplace(src, t1)) * q
				e2 := float64(noise.DiscreteLaplace(src, t2)) * q
				p := []Noisy{{n + e0, 1}, {int64(math.Round(d.s1/q)) + int64(math.Round(e1/q)), q}, {int64(math.Round(d.s2/q)) + int64(math.Round(e2/q)), q}}
				v := u.Value(Context{Arg: Arg{Lo: lo, Hi: hi}}, p)
				errs[i] = math.Abs(v.Float - truth)
				sq += (v.Float - truth) * (v.Float - truth)
				// The first-order error for these data: partial
				// derivatives at the true parts times the noises.
				lin[i] = math.Abs(e2/denom - 2*mu/denom*e1 + dn*float64(e0))
			}
			// The propagated standard deviation: the partial derivatives
			// times the noises' standard deviations (a discrete Laplace
			// of scale t has variance 2e^(−1/t)/(1 − e^(−1/t))²).
			prop := math.Sqrt(sq2(1/denom)*dlVar(3*h*h/q)*q*q + sq2(2*mu/denom)*dlVar(3*h/q)*q*q + sq2(dn)*dlVar(3))
			if sd := math.Sqrt(sq / draws); math.Abs(sd-prop) > 0.05*prop {
				t.Errorf("%s, %s: the error's standard deviation is %.4g, the propagated one %.4g", u.Name, d.name, sd, prop)
			}
			got, want := q95(errs), q95(lin)
			t.Logf("%s, %s: 95%% of errors within %.4g (delta method %.4g, explain bound %.4g); sd %.4g, propagated %.4g", u.Name, d.name, got, want, sum.CI95OverN/denom, math.Sqrt(sq/draws), prop)
			if math.Abs(got-want) > 0.1*want {
				t.Errorf("%s, %s: 95%% of errors within %.4g, the delta method predicts %.4g", u.Name, d.name, got, want)
			}
			if bound := sum.CI95OverN / denom; got > 1.05*bound {
				t.Errorf("%s, %s: 95%% of errors within %.4g, above explain's %.4g", u.Name, d.name, got, bound)
			}
		}
	}
}

func sq2(x float64) float64 { return x * x }

// dlVar is the variance of a discrete Laplace variable of scale t.
func dlVar(t float64) float64 {
	a := math.Exp(-1 / t)
	return 2 * a / ((1 - a) * (1 - a))
}

func q95(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(math.Ceil(0.95*float64(len(s))))-1]
}

// checkIntervalText: the notice's interval states CI95OverN to four
// significant digits without an exponent (these cases' bound is in the
// tens of thousands, which %.4g wrote as 2.7e+04), over n or n − 1.
func checkIntervalText(t *testing.T, u *Unit, sum Summary) {
	t.Helper()
	c := sum.CI95OverN
	if c < 1e4 || c >= 1e15 {
		t.Fatalf("%s: CI95OverN %g is outside the range this check is for", u.Name, c)
	}
	over := "/n for a group of n rows (delta method)"
	if u == VarSamp {
		over = "/(n − 1) for a group of n rows (delta method)"
	}
	num, ok := strings.CutSuffix(strings.TrimPrefix(sum.Interval, "±"), over)
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || strings.ContainsAny(num, "eE") || math.Abs(v-c) > 5e-4*c {
		t.Errorf("%s: interval %q, want ±%.6g (four figures, no exponent)%s", u.Name, sum.Interval, c, over)
	}
}
