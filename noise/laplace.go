package noise

import (
	"math"
	"math/bits"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// maxNoise is the largest |noise| DiscreteLaplace returns. 2^62 − 1 leaves
// room to add it to a true value of magnitude ≤ 2^62 in int64.
const maxNoise = 1<<62 - 1

// DiscreteLaplace returns a sample of the discrete Laplace (two-sided
// geometric) distribution with scale t = num/den,
//
//	P(X = x) = (1−p)/(1+p) · p^|x|,  p = exp(−1/t),
//
// exactly, by Algorithm 2 of Canonne, Kamath and Steinke 2020 with their
// (s, t) = (den, num):
//
//	U ~ Uniform{0, …, num−1}; reject unless Bernoulli(exp(−U/num))
//	  → P(U = u) ∝ exp(−u/num)
//	V = number of Bernoulli(exp(−1)) successes before the first failure
//	  → P(V = v) ∝ exp(−v)
//	X = U + num·V → P(X = x) ∝ exp(−x/num) on {0, 1, …}
//	Y = ⌊X/den⌋  → P(Y = y) ∝ Σ_{j<den} exp(−(y·den+j)/num) ∝ exp(−y·den/num)
//	B fair bit; reject if B = 1 and Y = 0 (else 0 would be counted twice);
//	return (1−2B)·Y.
//
// The zero Scale returns 0. Every step uses integers only.
//
// Truncation: a draw is redrawn when X = U + num·V would overflow uint64
// (probability exp(−2^64/num) ≤ exp(−2^11), as num ≤ 2^53) or when
// Y > 2^62 − 1 (for t ≤ 2^MaxScaleLog2, P(|Y| ≥ 2^62) ≤ 2·exp(−2^62/2^53) =
// 2·exp(−512)). The output is the exact distribution conditioned on an event
// of probability 1 − 2^-730 or more, so the mechanism is (ε, 2^-730)-DP
// instead of ε-DP: far below any δ in use and below the probability of a
// hardware fault. |result| ≤ 2^62 − 1 always.
func DiscreteLaplace(src Source, t Scale) int64 {
	if t.num == 0 {
		return 0
	}
	for {
		u := Uniform(src, t.num)
		if !bernoulliExpFrac(src, u, t.num) {
			continue
		}
		var v uint64
		for bernoulliExpFrac(src, 1, 1) {
			v++
		}
		hi, lo := bits.Mul64(t.num, v)
		x, carry := bits.Add64(lo, u, 0)
		if hi != 0 || carry != 0 {
			continue // truncated tail, see above
		}
		y := x / t.den
		if y > maxNoise {
			continue // truncated tail, see above
		}
		if Bit(src) {
			if y == 0 {
				continue
			}
			return -int64(y)
		}
		return int64(y)
	}
}

// HalfWidth returns the smallest m ≥ 0 with P(|X| ≤ m) ≥ confidence for X
// discrete Laplace with scale t, e.g. for the "95% interval" in the cost
// notice. It uses P(|X| > m) = 2p^(m+1)/(1+p) (m ≥ 0, p = exp(−1/t)) in
// float64 and may exceed the exact answer by one when the real solution is
// within 1e-9 (relative) of an integer. It never returns a smaller value.
// The zero Scale has half-width 0.
func (s Scale) HalfWidth(confidence float64) (int64, error) {
	if math.IsNaN(confidence) || confidence <= 0 || confidence >= 1 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "confidence must be strictly between 0 and 1")
	}
	if s.num == 0 {
		return 0, nil
	}
	t := s.Float64()
	p := math.Exp(-1 / t)
	// 2p^(m+1)/(1+p) ≤ 1−c  ⇔  m+1 ≥ t·ln(2/((1−c)(1+p))).
	m := int64(ceilConservative(t*math.Log(2/((1-confidence)*(1+p))))) - 1
	return max(m, 0), nil
}

// ceilConservative returns ⌈x⌉ computed with a relative margin of 1e-9 on
// the high side, so that float64 rounding in x can only make the result
// larger (safer), never smaller.
func ceilConservative(x float64) float64 {
	return math.Ceil(x + 1e-9*math.Abs(x) + 1e-9)
}
