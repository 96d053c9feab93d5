package synopsis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

// randomHist draws a sparse histogram: most values empty, a few heavy.
func randomHist(r *rand.Rand, n int) []int64 {
	h := make([]int64, n)
	for i := range h {
		switch {
		case r.IntN(10) == 0:
			h[i] = int64(r.IntN(500))
		case r.IntN(3) == 0:
			h[i] = int64(r.IntN(5))
		}
	}
	return h
}

func truthRange(hist []int64, a, b int) int64 {
	var s int64
	for _, c := range hist[a : b+1] {
		s += c
	}
	return s
}

func mustLayout(t testing.TB, cfg Config) *Layout {
	t.Helper()
	l, err := NewLayout(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPrefixDecomposition checks, for many layouts, that every prefix and
// range decomposes into nodes whose true values sum to the true count.
func TestPrefixDecomposition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range []Config{
		{Mechanism: Ordered, Theta: 1},
		{Mechanism: OrderedHierarchical, Theta: 3, Fanout: 2},
		{Mechanism: OrderedHierarchical, Theta: 7, Fanout: 3},
		{Mechanism: OrderedHierarchical, Theta: 16, Fanout: 4},
		{Mechanism: OrderedHierarchical, Theta: 1000, Fanout: 16},
		{Mechanism: Hierarchical, Fanout: 5},
	} {
		cfg.Lo, cfg.Hi, cfg.RowsPerUnit = -20, 80, 1
		l := mustLayout(t, cfg)
		hist := randomHist(r, l.Size())
		s, h := l.Nodes(hist)
		val := func(tm term) int64 {
			if tm.h {
				return h[tm.idx]
			}
			return s[tm.idx]
		}
		for a := 0; a < l.Size(); a++ {
			for b := a; b < l.Size(); b++ {
				var got int64
				for _, tm := range l.rangeTerms(a, b) {
					got += int64(tm.coef) * val(tm)
				}
				if want := truthRange(hist, a, b); got != want {
					t.Fatalf("%v: range [%d,%d] decomposes to %d, want %d", l, a, b, got, want)
				}
				// The arithmetic decomposition (answers, explain) names the
				// same noisy nodes as the materialised one.
				var ws, wh int
				for _, tm := range l.rangeTerms(a, b) {
					if tm.coef*tm.coef != 1 {
						t.Fatalf("%v: range [%d,%d] has coefficient %d", l, a, b, tm.coef)
					}
					switch {
					case tm.h:
						wh++
					case tm.idx < l.Blocks()-1:
						ws++
					}
				}
				if ns, nh := l.rangeCounts(a, b); ns != ws || nh != wh {
					t.Fatalf("%v: range [%d,%d]: arithmetic %d S + %d H nodes, materialised %d + %d", l, a, b, ns, nh, ws, wh)
				}
			}
		}
	}
}

// TestInferExactIsExact: inference of noise-free (consistent) node values
// returns the true cumulative counts, whatever the weights.
func TestInferExactIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, cfg := range []Config{
		{Mechanism: Ordered, Theta: 1},
		{Mechanism: OrderedHierarchical, Theta: 5, Fanout: 2},
		{Mechanism: OrderedHierarchical, Theta: 12, Fanout: 3},
		{Mechanism: Hierarchical, Fanout: 4},
	} {
		cfg.Lo, cfg.Hi, cfg.RowsPerUnit = 0, 60, 1
		l := mustLayout(t, cfg)
		hist := randomHist(r, l.Size())
		m := &Measurement{ScaleS: mustScale(t, 3), ScaleH: mustScale(t, 7)}
		m.S, m.H = l.Nodes(hist)
		syn := l.Infer(m, 1)
		for a := 0; a < l.Size(); a++ {
			for b := a; b < l.Size(); b++ {
				if got, want := syn.Count(int64(a), int64(b)), truthRange(hist, a, b); got != want {
					t.Fatalf("%v: [%d,%d] = %d, want %d", l, a, b, got, want)
				}
			}
		}
	}
}

func mustScale(t testing.TB, v float64) noise.Scale {
	t.Helper()
	s, err := noise.ScaleFor(ratOne(), 1/v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRawVariance is the statistical test of the mechanism: the empirical
// mean and variance of raw range answers (no inference) over M releases
// match the truth and the analytic variance Σ coef²·Var(node).
// The variance of a sample variance of M draws is ≈ (κ−1)σ⁴/M with
// kurtosis κ ≤ 6 (Laplace), so its relative standard error is
// ≤ √(5/M) = 3.5% at M = 4000; the 25% tolerance is 7 standard errors
// (false rejection < 1e-9 per check under a normal approximation). The
// mean is checked at 6 standard errors.
func TestRawVariance(t *testing.T) {
	const m = 4000
	r := rand.New(rand.NewPCG(5, 6))
	for _, cfg := range []Config{
		{Mechanism: Ordered, Theta: 1, RowsPerUnit: 1},
		{Mechanism: OrderedHierarchical, Theta: 6, Fanout: 2, RowsPerUnit: 1},
		{Mechanism: OrderedHierarchical, Theta: 9, Fanout: 3, RowsPerUnit: 2},
		{Mechanism: Hierarchical, Fanout: 3, RowsPerUnit: 1},
	} {
		cfg.Lo, cfg.Hi = 100, 139
		l := mustLayout(t, cfg)
		hist := randomHist(r, l.Size())
		ranges := [][2]int{{0, 0}, {0, 39}, {3, 17}, {5, 5}, {12, 30}, {0, 20}, {21, 38}}
		sum := make([]float64, len(ranges))
		sq := make([]float64, len(ranges))
		src := noise.SeededSource(42)
		var meas *Measurement
		for range m {
			var err error
			meas, err = l.Measure(src, hist, 0.7)
			if err != nil {
				t.Fatal(err)
			}
			for i, rg := range ranges {
				e := float64(l.RawRange(meas, rg[0], rg[1]) - truthRange(hist, rg[0], rg[1]))
				sum[i] += e
				sq[i] += e * e
			}
		}
		for i, rg := range ranges {
			want := l.RawVariance(rg[0], rg[1], meas.ScaleS, meas.ScaleH)
			mean := sum[i] / m
			v := sq[i]/m - mean*mean
			if math.Abs(mean) > 6*math.Sqrt(want/m)+1e-9 {
				t.Errorf("%v range %v: mean error %.3f, want 0 ± %.3f", l, rg, mean, 6*math.Sqrt(want/m))
			}
			if want == 0 {
				if v != 0 {
					t.Errorf("%v range %v: variance %.3f, want exactly 0", l, rg, v)
				}
				continue
			}
			if math.Abs(v/want-1) > 0.25 {
				t.Errorf("%v range %v: empirical variance %.2f, analytic %.2f", l, rg, v, want)
			}
		}
	}
}

// TestOrderedVarianceClosedForm: under the ordered mechanism (θ = 1) a
// prefix count not ending at the top is one noisy cumulative count with
// scale k/ε, and a range is the difference of two (Blowfish Thm 7.1: error
// ≤ 4/ε² for the continuous Laplace).
func TestOrderedVarianceClosedForm(t *testing.T) {
	l := mustLayout(t, Config{Mechanism: Ordered, Lo: 0, Hi: 99, Theta: 1, RowsPerUnit: 1})
	m, err := l.Measure(noise.SeededSource(1), l.Histogram(), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if m.ScaleS.Float64() != 2 || !m.ScaleH.IsZero() || m.EpsilonS != 0.5 {
		t.Fatalf("ordered: scale %v/%v, ε_S %g; want 2, none, 0.5", m.ScaleS, m.ScaleH, m.EpsilonS)
	}
	v := Variance(m.ScaleS)
	if got := l.RawVariance(0, 10, m.ScaleS, m.ScaleH); got != v {
		t.Errorf("prefix variance %g, want %g", got, v)
	}
	if got := l.RawVariance(5, 10, m.ScaleS, m.ScaleH); got != 2*v {
		t.Errorf("range variance %g, want %g", got, 2*v)
	}
	if got := l.RawVariance(5, 99, m.ScaleS, m.ScaleH); got != v {
		t.Errorf("suffix variance %g, want %g (the total is exact)", got, v)
	}
	if 2*v > 4/(0.5*0.5) {
		t.Errorf("range variance %g above the paper's 4/ε² = %g", 2*v, 4/(0.5*0.5))
	}
}

// TestInferenceHelps: the post-processed synopsis is monotone, keeps the
// exact total, and its mean squared error over all ranges is below the raw
// estimator's analytic variance (GLS is the best linear unbiased
// estimator and the isotonic projection only removes error).
func TestInferenceHelps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, cfg := range []Config{
		{Mechanism: Ordered, Theta: 1},
		{Mechanism: OrderedHierarchical, Theta: 8, Fanout: 2},
		{Mechanism: OrderedHierarchical, Theta: 20, Fanout: 4},
		{Mechanism: Hierarchical, Fanout: 4},
	} {
		cfg.Lo, cfg.Hi, cfg.RowsPerUnit = 0, 79, 1
		l := mustLayout(t, cfg)
		hist := randomHist(r, l.Size())
		src := noise.SeededSource(9)
		const reps = 200
		var mse, raw float64
		var meas *Measurement
		count := 0
		for range reps {
			var err error
			meas, err = l.Measure(src, hist, 0.3)
			if err != nil {
				t.Fatal(err)
			}
			syn := l.Infer(meas, 0.3)
			for j := 1; j < syn.Size(); j++ {
				if syn.cum[j] < syn.cum[j-1] {
					t.Fatalf("%v: cumulative counts not monotone at %d", l, j)
				}
			}
			if syn.Total() != truthRange(hist, 0, l.Size()-1) {
				t.Fatalf("%v: total %d, want exact %d", l, syn.Total(), truthRange(hist, 0, l.Size()-1))
			}
			for a := 0; a < l.Size(); a += 3 {
				for b := a; b < l.Size(); b += 5 {
					e := float64(syn.Count(int64(a), int64(b)) - truthRange(hist, a, b))
					mse += e * e
					count++
				}
			}
		}
		for a := 0; a < l.Size(); a += 3 {
			for b := a; b < l.Size(); b += 5 {
				raw += l.RawVariance(a, b, meas.ScaleS, meas.ScaleH) * reps
			}
		}
		mse /= float64(count)
		raw /= float64(count)
		t.Logf("%v: MSE after inference %.1f, raw %.1f", l, mse, raw)
		if mse >= raw {
			t.Errorf("%v: inference did not help: MSE %.1f ≥ raw variance %.1f", l, mse, raw)
		}
	}
}

// TestErrorFallsWithTheta: on the same sparse data and ε, range-query MSE
// of the OH synopsis grows with θ, and θ = N equals the DP baseline's
// order of magnitude (Blowfish Fig. 2(b)).
func TestErrorFallsWithTheta(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	const n = 1000
	hist := randomHist(r, n)
	queries := make([][2]int, 2000)
	for i := range queries {
		a, b := r.IntN(n), r.IntN(n)
		queries[i] = [2]int{min(a, b), max(a, b)}
	}
	src := noise.SeededSource(12)
	mse := func(cfg Config) float64 {
		cfg.Lo, cfg.Hi, cfg.RowsPerUnit, cfg.Fanout = 0, n-1, 1, 16
		l := mustLayout(t, cfg)
		var s float64
		const reps = 10
		for range reps {
			syn, err := l.Release(src, hist, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range queries {
				e := float64(syn.Count(int64(q[0]), int64(q[1])) - truthRange(hist, q[0], q[1]))
				s += e * e
			}
		}
		return s / float64(reps*len(queries))
	}
	prev := 0.0
	for _, theta := range []int64{1, 10, 100} {
		mech := OrderedHierarchical
		if theta == 1 {
			mech = Ordered
		}
		e := mse(Config{Mechanism: mech, Theta: theta})
		t.Logf("θ=%d: MSE %.1f", theta, e)
		if e <= prev {
			t.Errorf("MSE at θ=%d is %.1f, not above %.1f at the smaller θ", theta, e, prev)
		}
		prev = e
	}
	base := mse(Config{Mechanism: Hierarchical})
	t.Logf("DP hierarchical: MSE %.1f", base)
	if base <= prev {
		t.Errorf("DP baseline MSE %.1f not above θ=100's %.1f", base, prev)
	}
}

func ratOne() *big.Rat { return big.NewRat(1, 1) }

// TestSplitNeverOverspends: for many ε and layouts, the two shares read as
// exact rationals add up to at most ε's shortest decimal (what the ledger
// charges) and to nearly all of it.
func TestSplitNeverOverspends(t *testing.T) {
	for _, cfg := range []Config{
		{Mechanism: Ordered, Theta: 1},
		{Mechanism: OrderedHierarchical, Theta: 7, Fanout: 3},
		{Mechanism: Hierarchical, Fanout: 16},
	} {
		cfg.Lo, cfg.Hi, cfg.RowsPerUnit = 0, 99, 1
		l := mustLayout(t, cfg)
		for _, eps := range []float64{0.1, 0.3, 0.7, 1, 1.1, 0.01, 2.9, 1e-3, 0.123456789} {
			s, h, err := l.Split(eps)
			if err != nil {
				t.Fatal(err)
			}
			sum := new(big.Rat).Add(new(big.Rat).SetFloat64(s), new(big.Rat).SetFloat64(h))
			dec, _ := new(big.Rat).SetString(strconv.FormatFloat(eps, 'g', -1, 64))
			if sum.Cmp(dec) > 0 {
				t.Errorf("%v ε=%g: shares %v + %v exceed %v", l, eps, s, h, dec)
			}
			if f, _ := sum.Float64(); f < eps*(1-1e-12) {
				t.Errorf("%v ε=%g: shares add up to only %g", l, eps, f)
			}
		}
	}
}
