package noise

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// tailTable returns P(X ≥ m) for m ∈ [lo, hi] by summing the pmf from far
// in the upper tail downwards (independent of the closed form used by
// ThresholdFor). Index m − lo.
func tailTable(t float64, lo, hi int64) []float64 {
	top := hi + int64(80*t) + 200 // p^(top−hi) < e^-80: negligible
	tails := make([]float64, hi-lo+1)
	var acc float64
	for x := top; x >= lo; x-- {
		acc += dlPMF(x, t)
		if x <= hi {
			tails[x-lo] = acc
		}
	}
	return tails
}

// partitions calls f with every multiset of positive integers summing to at
// most k (all the ways a unit's ≤ k rows can fall into new groups).
func partitions(k int, f func(parts []int)) {
	var rec func(parts []int, remaining, maxPart int)
	rec = func(parts []int, remaining, maxPart int) {
		if len(parts) > 0 {
			f(parts)
		}
		for c := min(remaining, maxPart); c >= 1; c-- {
			rec(append(parts, c), remaining-c, c)
		}
	}
	rec(nil, k, k)
}

// bruteThreshold is the smallest τ ≥ 1 with max over splits of
// Σ_g P(c_g + X ≥ τ) ≤ δ, and the worst-case sum at that τ and at τ−1.
func bruteThreshold(k int, t, delta float64) (tau int64, worstAt func(int64) float64) {
	const hi = 4000
	lo := -int64(k)
	tails := tailTable(t, lo, hi)
	worstAt = func(tau int64) float64 {
		var worst float64
		partitions(k, func(parts []int) {
			var s float64
			for _, c := range parts {
				s += tails[tau-int64(c)-lo]
			}
			worst = max(worst, s)
		})
		return worst
	}
	for tau = 1; tau < hi; tau++ {
		if worstAt(tau) <= delta {
			return tau, worstAt
		}
	}
	panic("bruteThreshold: no threshold below 4000")
}

// TestThresholdForBruteForce compares ThresholdFor with an exhaustive search
// over every split of k rows into groups, with tails summed from the pmf.
// The scales cover both regimes: for t = 1/2 a single group of k rows is
// the worst case, for t = 10 and k = 8 the spread into k groups is.
func TestThresholdForBruteForce(t *testing.T) {
	for _, scale := range []string{"1/2", "1", "37/10", "10"} {
		for _, k := range []int{1, 2, 3, 5, 8} {
			for _, delta := range []float64{0.3, 1e-3, 1e-6, 1e-9} {
				t.Run(fmt.Sprintf("t=%s/k=%d/delta=%g", scale, k, delta), func(t *testing.T) {
					s := mustScale(t, ratOf(t, scale))
					got, err := ThresholdFor(k, s, delta)
					if err != nil {
						t.Fatal(err)
					}
					want, worstAt := bruteThreshold(k, s.Float64(), delta)
					if got == want {
						return
					}
					// ThresholdFor may be one above when the exact bound is
					// within float rounding of an integer; never below.
					if got == want+1 && math.Abs(worstAt(want)-delta) <= 1e-6*delta {
						return
					}
					t.Errorf("ThresholdFor = %d, brute force %d (worst sum at %d: %.6g, at %d: %.6g)",
						got, want, got, worstAt(got), want, worstAt(want))
				})
			}
		}
	}
}

// TestThresholdForEmpirical simulates the two extreme splits of k = 3 rows
// at t = 1, δ = 0.05 with the real sampler: three new groups of count 1, and
// one new group of count 3. 200,000 trials each; the release frequencies
// must match the exact probabilities within 6σ (false rejection 4e-9) and
// the exact probabilities must be ≤ δ.
func TestThresholdForEmpirical(t *testing.T) {
	const k, trials, delta = 3, 200_000, 0.05
	s := mustScale(t, big.NewRat(1, 1))
	tau, err := ThresholdFor(k, s, delta)
	if err != nil {
		t.Fatal(err)
	}
	tails := tailTable(1, -k, 100)
	tail := func(m int64) float64 { return tails[m+k] }
	exactSpread := 1 - math.Pow(1-tail(tau-1), k) // P(any of 3 groups of 1 released)
	exactSingle := tail(tau - k)
	if exactSpread > delta || exactSingle > delta {
		t.Fatalf("τ = %d: exact release probabilities %v, %v exceed δ", tau, exactSpread, exactSingle)
	}
	src := SeededSource(77)
	spread, single := 0, 0
	for range trials {
		any := false
		for range k {
			if 1+DiscreteLaplace(src, s) >= tau {
				any = true
			}
		}
		if any {
			spread++
		}
		if k+DiscreteLaplace(src, s) >= tau {
			single++
		}
	}
	checkProportion(t, "three groups of 1", spread, trials, exactSpread)
	checkProportion(t, "one group of 3", single, trials, exactSingle)
}

func TestThresholdForErrors(t *testing.T) {
	one := mustScale(t, big.NewRat(1, 1))
	tests := []struct {
		name     string
		k        int
		scale    Scale
		delta    float64
		want     int64
		wantCode *sqlerr.Code
	}{
		{name: "zero scale", k: 4, scale: Scale{}, delta: 1e-6, want: 5},
		{name: "k 0", k: 0, scale: one, delta: 1e-6, wantCode: &sqlerr.Internal},
		{name: "delta 0", k: 1, scale: one, delta: 0, wantCode: &sqlerr.InvalidParameterValue},
		{name: "delta 0.5", k: 1, scale: one, delta: 0.5, wantCode: &sqlerr.InvalidParameterValue},
		{name: "delta NaN", k: 1, scale: one, delta: math.NaN(), wantCode: &sqlerr.InvalidParameterValue},
		{name: "delta negative", k: 1, scale: one, delta: -1e-6, wantCode: &sqlerr.InvalidParameterValue},
		// t = 2^53, δ = 1e-300: τ ≈ 2^53·691 > 2^62.
		{name: "out of range", k: 1, scale: mustScale(t, pow2Rat(MaxScaleLog2)), delta: 1e-300, wantCode: &sqlerr.InvalidParameterValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ThresholdFor(tt.k, tt.scale, tt.delta)
			if tt.wantCode != nil {
				if !sqlerr.HasCode(err, *tt.wantCode) {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode.Name)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ThresholdFor = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
