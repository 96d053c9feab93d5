package noise

import (
	"math"
	"testing"
)

// Statistical tests in this package compare empirical frequencies with exact
// reference values computed from closed forms in this file (derived by hand,
// cross-checked by direct summation in TestReferenceMoments), never with the
// samplers' own output. Seeds are fixed, so a given build either passes or
// fails deterministically; the stated false-rejection probabilities say how
// likely a correct sampler is to fail for a random seed.

// zBound is the width, in standard errors, of every binomial/CLT check: a
// two-sided normal tail of 6σ has probability 2.0e-9 per check.
const zBound = 6

// checkProportion fails if count/n is farther than zBound standard errors
// (plus one count, for continuity) from p.
func checkProportion(t *testing.T, what string, count, n int, p float64) {
	t.Helper()
	got := float64(count) / float64(n)
	tol := zBound*math.Sqrt(p*(1-p)/float64(n)) + 1/float64(n)
	if math.Abs(got-p) > tol {
		t.Errorf("%s: frequency %.6g, want %.6g ± %.2g (n=%d)", what, got, p, tol, n)
	}
}

// chiSquareCritical approximates the upper quantile of the chi-square
// distribution with df degrees of freedom at the standard normal quantile z
// (Wilson–Hilferty; z = 5 gives a tail of about 2.9e-7).
func chiSquareCritical(df int, z float64) float64 {
	k := float64(df)
	c := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * c * c * c
}

// chiSquare returns Σ (obs−exp)²/exp.
func chiSquare(observed []int, expected []float64) float64 {
	var s float64
	for i, o := range observed {
		d := float64(o) - expected[i]
		s += d * d / expected[i]
	}
	return s
}

// dlParams returns p = exp(−1/t) and 1−p computed without cancellation.
func dlParams(t float64) (p, q float64) {
	return math.Exp(-1 / t), -math.Expm1(-1 / t)
}

// dlPMF is the discrete Laplace pmf (1−p)/(1+p)·p^|x|.
func dlPMF(x int64, t float64) float64 {
	p, q := dlParams(t)
	return q / (1 + p) * math.Exp(-math.Abs(float64(x))/t)
}

// dlTailAbs is P(|X| ≥ m) = 2p^m/(1+p) for m ≥ 1.
func dlTailAbs(m int64, t float64) float64 {
	p, _ := dlParams(t)
	return 2 * math.Exp(-float64(m)/t) / (1 + p)
}

// dlCumulants returns the variance κ2 = 2p/(1−p)² and fourth cumulant
// κ4 = 2p(1+4p+p²)/(1−p)⁴ of the discrete Laplace distribution: X is the
// difference of two independent geometric variables on {0, 1, …} with
// failure probability p, whose cumulants are p/(1−p)² and
// p(1+4p+p²)/(1−p)⁴; odd cumulants cancel and even ones double.
func dlCumulants(t float64) (k2, k4 float64) {
	p, q := dlParams(t)
	return 2 * p / (q * q), 2 * p * (1 + 4*p + p*p) / (q * q * q * q)
}

// TestReferenceMoments cross-checks the closed forms above by summing the pmf
// directly, so that the statistical tests rest on independently verified
// reference values.
func TestReferenceMoments(t *testing.T) {
	for _, scale := range []float64{0.5, 1, 3.7, 10} {
		var total, m2, m4, tail3 float64
		for x := int64(-4000); x <= 4000; x++ {
			f := dlPMF(x, scale)
			fx := float64(x)
			total += f
			m2 += f * fx * fx
			m4 += f * fx * fx * fx * fx
			if x >= 3 || x <= -3 {
				tail3 += f
			}
		}
		k2, k4 := dlCumulants(scale)
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("t=%v: pmf sums to %v", scale, total)
		}
		if math.Abs(m2-k2) > 1e-9*k2 {
			t.Errorf("t=%v: variance %v by summation, closed form %v", scale, m2, k2)
		}
		if want := k4 + 3*k2*k2; math.Abs(m4-want) > 1e-9*want {
			t.Errorf("t=%v: fourth moment %v by summation, closed form %v", scale, m4, want)
		}
		if want := dlTailAbs(3, scale); math.Abs(tail3-want) > 1e-12 {
			t.Errorf("t=%v: P(|X|>=3) %v by summation, closed form %v", scale, tail3, want)
		}
	}
}
