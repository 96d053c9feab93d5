package noise

import (
	"fmt"
	"math"
	"math/big"
	"testing"
)

// mustScale builds the Scale of the rational r.
func mustScale(t *testing.T, r *big.Rat) Scale {
	t.Helper()
	s, err := ScaleOf(r)
	if err != nil {
		t.Fatalf("ScaleOf(%v): %v", r, err)
	}
	return s
}

// ratOf parses "a/b" or a decimal into an exact rational.
func ratOf(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad rational %q", s)
	}
	return r
}

// TestDiscreteLaplaceMoments draws dlSamples values per scale and checks
// the mean, the variance, P(X=0) and P(|X| ≥ m) for three m against the
// exact distribution of the (exact, possibly rounded-up) scale the sampler
// uses. Each of the 6 checks per scale is a 6σ CLT/binomial bound (false
// rejection 2e-9 each, about 7e-8 for the whole test).
func TestDiscreteLaplaceMoments(t *testing.T) {
	const dlSamples = 1_000_000
	eps03, err := ScaleFor(big.NewRat(1, 1), 0.3) // 1/0.3 rounded up to a dyadic rational
	if err != nil {
		t.Fatal(err)
	}
	if eps03.den == 1 || eps03.den&(eps03.den-1) != 0 {
		t.Fatalf("scale for eps=0.3 is %v, want a dyadic non-integer", eps03)
	}
	scales := []struct {
		name  string
		scale Scale
	}{
		{"t=1/2", mustScale(t, ratOf(t, "1/2"))},
		{"t=1", mustScale(t, ratOf(t, "1"))},
		{"t=37/10", mustScale(t, ratOf(t, "37/10"))},
		{"t=10", mustScale(t, ratOf(t, "10"))},
		{"t=1e6+1/3", mustScale(t, ratOf(t, "3000001/3"))},
		{"t=1/0.3 (SetFloat64)", eps03},
	}
	for i, sc := range scales {
		t.Run(sc.name, func(t *testing.T) {
			src := SeededSource(uint64(1000 + i))
			tf := sc.scale.Float64()
			k2, k4 := dlCumulants(tf)
			ms := []int64{max(1, int64(tf/2)), max(2, int64(tf)), max(3, int64(3*tf))}
			var sum, sumSq float64
			zeros := 0
			tails := make([]int, len(ms))
			for range dlSamples {
				x := DiscreteLaplace(src, sc.scale)
				fx := float64(x)
				sum += fx
				sumSq += fx * fx
				if x == 0 {
					zeros++
				}
				for j, m := range ms {
					if x >= m || x <= -m {
						tails[j]++
					}
				}
			}
			n := float64(dlSamples)
			mean := sum / n
			if tol := zBound * math.Sqrt(k2/n); math.Abs(mean) > tol {
				t.Errorf("mean %v, want 0 ± %v", mean, tol)
			}
			// E[X] = 0 is known, so Σx²/n estimates the variance with
			// standard error sqrt((μ4 − σ⁴)/n) = sqrt((κ4 + 2κ2²)/n).
			variance := sumSq / n
			if tol := zBound * math.Sqrt((k4+2*k2*k2)/n); math.Abs(variance-k2) > tol {
				t.Errorf("variance %v, want %v ± %v", variance, k2, tol)
			}
			checkProportion(t, "P(X=0)", zeros, dlSamples, dlPMF(0, tf))
			for j, m := range ms {
				checkProportion(t, fmt.Sprintf("P(|X|>=%d)", m), tails[j], dlSamples, dlTailAbs(m, tf))
			}
		})
	}
}

// TestDiscreteLaplaceChiSquare checks the whole pmf at t = 37/10 with a
// chi-square goodness-of-fit test over the 31 values −15…15 and the two
// tails (33 cells, 32 degrees of freedom, every expected count ≥ 2000).
// 1,000,000 samples; critical value at z = 5 (false rejection ≈ 3e-7).
func TestDiscreteLaplaceChiSquare(t *testing.T) {
	const samples = 1_000_000
	const lim = 15
	scale := mustScale(t, ratOf(t, "37/10"))
	tf := scale.Float64()
	src := SeededSource(42)
	observed := make([]int, 2*lim+3) // [0] x < −lim, [1..2lim+1] x = −lim…lim, [last] x > lim
	for range samples {
		x := DiscreteLaplace(src, scale)
		switch {
		case x < -lim:
			observed[0]++
		case x > lim:
			observed[len(observed)-1]++
		default:
			observed[x+lim+1]++
		}
	}
	expected := make([]float64, len(observed))
	tail := dlTailAbs(lim+1, tf) / 2
	expected[0], expected[len(expected)-1] = tail*samples, tail*samples
	for x := int64(-lim); x <= lim; x++ {
		expected[x+lim+1] = dlPMF(x, tf) * samples
	}
	stat := chiSquare(observed, expected)
	if crit := chiSquareCritical(len(observed)-1, 5); stat > crit {
		t.Errorf("chi-square %v exceeds critical value %v (df=%d)", stat, crit, len(observed)-1)
	}
}

// TestDiscreteLaplaceTinyScale checks a scale far below
// 1 (t = 2^-40, denominator 2^40): P(X ≠ 0) = 2p/(1+p) ≈ 2·exp(−2^40), so
// every one of 10,000 samples must be 0 (false rejection < 1e-300).
func TestDiscreteLaplaceTinyScale(t *testing.T) {
	scale := mustScale(t, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 40)))
	src := SeededSource(7)
	for i := range 10_000 {
		if x := DiscreteLaplace(src, scale); x != 0 {
			t.Fatalf("sample %d = %d, want 0", i, x)
		}
	}
}

// countingSource counts draws, to show the zero Scale consumes no randomness.
type countingSource struct {
	Source
	n int
}

func (c *countingSource) Uint64() uint64 { c.n++; return c.Source.Uint64() }

func TestDiscreteLaplaceZeroScale(t *testing.T) {
	src := &countingSource{Source: SeededSource(1)}
	for range 100 {
		if x := DiscreteLaplace(src, Scale{}); x != 0 {
			t.Fatalf("zero scale gave %d", x)
		}
	}
	if src.n != 0 {
		t.Errorf("zero scale drew %d words, want 0", src.n)
	}
}

// TestHalfWidth compares HalfWidth with the smallest m found by summing the
// pmf outwards from 0.
func TestHalfWidth(t *testing.T) {
	tests := []struct {
		name       string
		scale      string
		confidence float64
		wantErr    bool
	}{
		{name: "t=1 95%", scale: "1", confidence: 0.95},
		{name: "t=37/10 95%", scale: "37/10", confidence: 0.95},
		{name: "t=10 99%", scale: "10", confidence: 0.99},
		{name: "t=1/2 50%", scale: "1/2", confidence: 0.5},
		{name: "t=1000 95%", scale: "1000", confidence: 0.95},
		{name: "confidence 1", scale: "1", confidence: 1, wantErr: true},
		{name: "confidence 0", scale: "1", confidence: 0, wantErr: true},
		{name: "confidence NaN", scale: "1", confidence: math.NaN(), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustScale(t, ratOf(t, tt.scale))
			got, err := s.HalfWidth(tt.confidence)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			tf := s.Float64()
			mass := dlPMF(0, tf)
			var want int64
			for mass < tt.confidence {
				want++
				mass += 2 * dlPMF(want, tf)
			}
			if got != want {
				t.Errorf("HalfWidth(%v) = %d, want %d", tt.confidence, got, want)
			}
		})
	}
	if w, err := (Scale{}).HalfWidth(0.95); err != nil || w != 0 {
		t.Errorf("zero scale HalfWidth = %d, %v; want 0, nil", w, err)
	}
}
