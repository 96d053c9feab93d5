package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// The variance family: VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP, all from
// three noisy parts of the argument x clamped to its bounds [lo, hi]:
//
//	n  = COUNT(x)
//	S1 = SUM(x − m)          over [−h, h]
//	S2 = SUM(|x − m|·|x − m|) over [0, h²]
//
// with m = (lo + hi)/2 and h = (hi − lo)/2. Centring at m makes the sums'
// ranges (hence their sensitivities) h and h² instead of max(|lo|,|hi|)
// and its square. The parts are expressions of the argument, which the
// planner analyses like any expression argument (total backend SQL, real
// lattice sums). |x − m|·|x − m| rather than (x − m)² so that the range
// analysis infers [0, h²], not [−h², h²].
//
// Value (post-processing of the noisy parts):
//
//	var_pop  = S2/n − (S1/n)²          NULL when n ≤ 0
//	var_samp = (S2 − S1²/n)/(n − 1)     NULL when n ≤ 1
//
// clamped to the feasible range: [0, h²] for var_pop, [0, h²·n/(n−1)] for
// var_samp (n values in [lo, hi] have a sample variance of at most that);
// stddev is the square root.
//
// Spellings: PostgreSQL's variance and stddev are the sample forms;
// MySQL's (and MariaDB's) VARIANCE, STD and STDDEV are the population
// forms (the MySQL grammar already reads them as var_pop and stddev_pop).
// Both dialects also take the T-SQL names that SmartNoise-style queries
// use (VAR and STDEV the sample forms, VARP and STDEVP the population
// ones) and STD for a PostgreSQL client (MySQL's only meaning: population).
var (
	VarPop = varianceUnit("var_pop", true, false,
		[]string{"var_pop", "varp"}, []string{"var_pop", "variance", "varp"})
	VarSamp = varianceUnit("var_samp", false, false,
		[]string{"var_samp", "variance", "var"}, []string{"var_samp", "var"})
	StddevPop = varianceUnit("stddev_pop", true, true,
		[]string{"stddev_pop", "std", "stdevp"}, []string{"stddev_pop", "std", "stddev", "stdevp"})
	StddevSamp = varianceUnit("stddev_samp", false, true,
		[]string{"stddev_samp", "stddev", "stdev"}, []string{"stddev_samp", "stdev"})
)

// VarianceDraws is the number of simulated noise draws behind the 95%
// interval explain states for a variance column.
const VarianceDraws = 4000

func varianceUnit(name string, pop, sqrt bool, pgNames, myNames []string) *Unit {
	v := variance{pop: pop, sqrt: sqrt}
	what := "variance"
	if sqrt {
		what = "standard deviation"
	}
	form := "sample"
	if pop {
		form = "population"
	}
	return &Unit{
		Name:      name,
		Spellings: map[Dialect][]string{PostgreSQL: pgNames, MySQL: myNames},
		Numeric:   true,
		Parts:     varianceParts,
		Type:      func(string) string { return typeReal },
		Double:    func(t string) bool { return t == typeReal },
		Value: func(c Context, p []Noisy) ir.Value {
			r, ok := v.value(c.Arg.Lo, c.Arg.Hi, p[0].Units, p[1].Value(), p[2].Value())
			if !ok {
				return ir.Null()
			}
			return ir.Float(r)
		},
		Summarize: v.summarize,
		Notice:    fmt.Sprintf("%s %s from a noisy count, a noisy sum and a noisy sum of squares of the values centred at the middle of their bounds, clamped to the feasible range", form, what),
	}
}

// varianceParts are n, S1 and S2 of the clamped argument.
func varianceParts(a Arg) []Part {
	mid := (a.Lo + a.Hi) / 2
	m := ir.Literal{Value: ir.Float(mid)}
	d := ir.Arith{Op: ir.OpSub, L: a.Source, R: m}
	abs := ir.Func{Name: "abs", Args: []ir.Expr{d}}
	sum := func(of ir.Expr, label string) Part {
		return Part{Agg: ir.BackendAgg{Kind: ir.SumClamped}, Of: of, Shape: ShapeSum, Label: label}
	}
	centred := fmt.Sprintf("%s - %g", a.Text, mid)
	return []Part{CountPart(a), sum(d, "sum("+centred+")"), sum(ir.Arith{Op: ir.OpMul, L: abs, R: abs}, "sum(("+centred+")^2)")}
}

type variance struct{ pop, sqrt bool }

// value is the released variance (or standard deviation) for noisy n, S1
// and S2 of values in [lo, hi]; ok is false for NULL.
func (v variance) value(lo, hi float64, n int64, s1, s2 float64) (float64, bool) {
	h := (hi - lo) / 2
	nf := float64(n)
	var r, top float64
	if v.pop {
		if n <= 0 {
			return 0, false
		}
		mean := s1 / nf
		r, top = s2/nf-mean*mean, h*h
	} else {
		if n <= 1 {
			return 0, false
		}
		r, top = (s2-s1*s1/nf)/(nf-1), h*h*nf/(nf-1)
	}
	r = min(max(r, 0), top)
	if math.IsNaN(r) {
		r = 0 // unreachable for finite parts; never release a NaN
	}
	if v.sqrt {
		r = math.Sqrt(r)
	}
	return r, true
}

// summarize states the column's ε (the sum of its parts' shares) and its
// 95% interval, which shrinks with the group's row count n, so explain
// gives it as C/n (CI95OverN = C). Derivation (delta method, first order
// in the noise, worst case over the values): with μ = S1/n ∈ [−h, h] and
// E = S2/n ∈ [μ², h²], var_pop = S2/n − μ² has partial derivatives 1/n in
// S2, −2μ/n in S1 and −(E − 2μ²)/n in n, of magnitudes at most 1/n, 2h/n
// and h²/n; so the error is at most (|η2| + 2h|η1| + h²|η0|)/n to first
// order, where η are the parts' noises. For var_samp the same holds over
// n − 1 with the count's weight at most 2h² (n ≥ 2). C is the 95th
// percentile of that weighted sum over VarianceDraws draws of the parts'
// discrete Laplace noise (fixed seed: explain is reproducible and reads no
// row). A standard deviation's error is at most the square root of its
// variance's (|√a − √b| ≤ √|a − b|). The clamp to the feasible range also
// bounds every error by the range's width.
func (v variance) summarize(p []PartNoise) Summary {
	eps := 0.0
	for _, q := range p {
		eps += q.Epsilon
	}
	h := p[1].Hi
	w0 := h * h
	if !v.pop {
		w0 = 2 * h * h
	}
	c := quantile95(VarianceDraws, func(r *rand.Rand) float64 {
		return math.Abs(draw(r, p[2])) + 2*h*math.Abs(draw(r, p[1])) + w0*math.Abs(draw(r, p[0]))
	})
	over, of := "n", "variance"
	if !v.pop {
		over = "(n − 1)"
	}
	interval := "±" + FormatNoise(c) + "/" + over
	if v.sqrt {
		of, interval = "standard deviation", "±sqrt("+FormatNoise(c)+"/"+over+")"
	}
	return Summary{
		Sensitivity: p[2].Sensitivity,
		Mechanism: fmt.Sprintf("%s from a noisy count, sum and sum of squares (discrete Laplace each, ε split evenly), clamped to the feasible range; "+
			"95%% of answers within %s for a group of n rows (delta method, first order, worst case over the values; %d simulated draws of the parts' noise)",
			of, interval, VarianceDraws),
		Scale:     p[2].Scale,
		Epsilon:   eps,
		CI95:      math.NaN(),
		CI95OverN: c,
		Interval:  interval + " for a group of n rows (delta method)",
	}
}

// draw is one draw of a part's discrete Laplace noise in output units:
// the difference of two geometric variables floor(t·Exp(1)) with t the
// scale in lattice units (simulation only; releases use package noise).
func draw(r *rand.Rand, p PartNoise) float64 {
	if p.Scale == 0 || p.Quantum == 0 {
		return 0
	}
	t := p.Scale / p.Quantum
	return p.Quantum * (math.Floor(t*r.ExpFloat64()) - math.Floor(t*r.ExpFloat64()))
}

// quantile95 is the 95th percentile of f over n draws from a fixed seed.
func quantile95(n int, f func(*rand.Rand) float64) float64 {
	r := rand.New(rand.NewPCG(95, 2026))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = f(r)
	}
	slices.Sort(xs)
	return xs[int(math.Ceil(0.95*float64(n)))-1]
}
