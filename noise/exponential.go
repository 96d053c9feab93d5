package noise

import (
	"math/big"
	"math/bits"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// rateExactLimit: a rate whose reduced numerator and denominator are both
// below 2^32 is kept exactly (as for Scale).
const rateExactLimit = 1 << 32

// maxRateLog2 caps the rate at 2^62: at that rate the mechanism already
// returns a best candidate unless another is within 2^-62 of it, and the cap
// keeps the numerator in uint64. Lowering a rate only spends less ε.
const maxRateLog2 = 62

// Rate is the exponent a ≥ 0 of the exponential mechanism, which selects
// candidate j with probability ∝ exp(−a·d_j), as an exact rational num/den.
// The zero Rate selects uniformly. Build it with RateFor.
//
// Representation rule (why rounding is safe): a rate whose reduced
// numerator and denominator are below 2^32 is kept exactly; any other rate
// — e.g. ε/(2Δu) with an ε or a Δu of many digits — is rounded DOWN to ⌊a·2^k⌋/2^k with k = 30 − ⌊log2 a⌋ clamped to
// [0, 62] (relative loss below 2^-30 while a ≥ 2^-32), and rates above 2^62
// are lowered to 2^62. The mechanism with rate a' ≤ ε/(2Δu) is 2a'Δu ≤ ε
// differentially private, so rounding down never spends more than the ε
// charged; it only flattens the distribution a little.
type Rate struct {
	num, den uint64 // lowest terms or dyadic; num == 0 means uniform
}

// RateFor returns the rate a = ε/(2Δu) of the exponential mechanism for a
// utility of sensitivity Δu (the largest change of any candidate's utility,
// summed as the caller's composition argument requires, between neighbours)
// released with privacy parameter ε, represented as described on Rate. ε is
// exact: the caller passes the value the ledger charges (the planner reads
// a float64 ε as its shortest decimal, 0.1 = 1/10, which can be below the
// binary float). A zero sensitivity is refused: the caller must not sample
// when nothing protects the selection.
func RateFor(sensitivity, epsilon *big.Rat) (Rate, error) {
	if epsilon == nil || epsilon.Sign() <= 0 {
		return Rate{}, sqlerr.New(sqlerr.InvalidParameterValue, "epsilon must be a positive finite number").
			WithHint("set epsilon to a value such as 0.1")
	}
	if err := checkSensitivity(sensitivity); err != nil {
		return Rate{}, err
	}
	if sensitivity.Sign() == 0 {
		return Rate{}, sqlerr.New(sqlerr.Internal, "internal error: exponential mechanism with zero sensitivity")
	}
	a := new(big.Rat).Mul(sensitivity, big.NewRat(2, 1))
	return RateOf(a.Quo(epsilon, a)), nil
}

// RateOf represents a rate a > 0 as described on Rate, rounding down (a
// nil or non-positive a gives the zero Rate: a uniform choice).
func RateOf(a *big.Rat) Rate {
	if a == nil || a.Sign() <= 0 {
		return Rate{}
	}
	if a.Cmp(new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), maxRateLog2))) > 0 {
		return Rate{num: 1 << maxRateLog2, den: 1}
	}
	n, d := a.Num(), a.Denom()
	if n.IsUint64() && d.IsUint64() && n.Uint64() < rateExactLimit && d.Uint64() < rateExactLimit {
		return Rate{num: n.Uint64(), den: d.Uint64()}
	}
	k := min(max(30-floorLog2(a), 0), 62)
	// num = ⌊n·2^k / d⌋ ≤ 2^62 (a ≤ 2^62, and k = 0 when a ≥ 2^31).
	num := new(big.Int).Quo(new(big.Int).Lsh(n, uint(k)), d).Uint64()
	if num == 0 {
		return Rate{} // a < 2^-62: uniform, which is 0-DP
	}
	for k > 0 && num%2 == 0 {
		num /= 2
		k--
	}
	return Rate{num: num, den: 1 << k}
}

// IsZero reports whether the rate selects uniformly.
func (r Rate) IsZero() bool { return r.num == 0 }

// Rat returns the exact rate the sampler uses.
func (r Rate) Rat() *big.Rat {
	if r.num == 0 {
		return new(big.Rat)
	}
	return new(big.Rat).SetFrac(new(big.Int).SetUint64(r.num), new(big.Int).SetUint64(r.den))
}

// Float64 returns the rate rounded to the nearest float64, for display and
// error bounds; never for sampling.
func (r Rate) Float64() float64 {
	f, _ := r.Rat().Float64()
	return f
}

// String returns the exact rate as "num/den" or "num".
func (r Rate) String() string { return r.Rat().RatString() }

// Exponential is the exponential mechanism, sampled exactly: given integer
// utility deficits d_j ≥ 0 (d_j = u_max − u_j) it returns j with
// probability exactly
//
//	P(j) = exp(−a·d_j) / Σ_i exp(−a·d_i).
//
// Method (rejection sampling): propose J uniformly on {0, …, m−1} and accept
// it with probability exp(−a·d_J), drawn by BernoulliExp (exact for
// rational exponents, integer arithmetic only); otherwise propose again.
// One round accepts j with probability (1/m)·exp(−a·d_j) and accepts
// something with probability Z/m, Z = Σ_i exp(−a·d_i); the rounds are
// independent, so the accepted index has law (1/m)·exp(−a·d_j)/(Z/m) =
// exp(−a·d_j)/Z, exactly. No floating-point number is computed from the
// deficits at any point.
//
// Running time: the deficits are first shifted so that the smallest is 0
// (which multiplies every weight by the same factor, leaving the law
// unchanged); then Z ≥ 1 and the number of rounds is geometric with mean
// m/Z ≤ m. Each round draws one uniform and a BernoulliExp, which stops at
// its first failed Bernoulli(exp(−1)) factor (fewer than 2 factors in
// expectation). The round
// count depends on the data through Z: a timing channel bounded by m
// rounds in expectation, of the kind DESIGN.md documents for slow
// predicates.
//
// It panics if deficits is empty or holds a nil or negative value.
func Exponential(src Source, a Rate, deficits []*big.Int) int {
	m := len(deficits)
	if m == 0 {
		panic("noise: Exponential with no candidates")
	}
	low := deficits[0]
	for _, d := range deficits {
		if d == nil || d.Sign() < 0 {
			panic("noise: Exponential needs deficits >= 0")
		}
		if d.Cmp(low) < 0 {
			low = d
		}
	}
	if a.num == 0 || m == 1 {
		return int(Uniform(src, uint64(m)))
	}
	if low.Sign() > 0 {
		// Shifting every deficit by the same amount multiplies every
		// weight by exp(a·low): the law is unchanged, and now Z ≥ 1.
		shifted := make([]*big.Int, m)
		for i, d := range deficits {
			shifted[i] = new(big.Int).Sub(d, low)
		}
		deficits = shifted
	}
	var num big.Int
	den := new(big.Int).SetUint64(a.den)
	for {
		j := int(Uniform(src, uint64(m)))
		d := deficits[j]
		// γ = a·d_j = (num·d_j)/den; 64-bit fast path when it fits.
		if d.IsUint64() {
			if hi, lo := bits.Mul64(a.num, d.Uint64()); hi == 0 {
				if bernoulliExpU64(src, lo, a.den) {
					return j
				}
				continue
			}
		}
		num.Mul(num.SetUint64(a.num), d)
		if bernoulliExpBig(src, &num, den) {
			return j
		}
	}
}

// ExponentialUint64 is Exponential for deficits that fit in 64 bits, with
// the same law and method, without allocating per candidate (the common
// case: a group's utilities are counts times a small denominator).
func ExponentialUint64(src Source, a Rate, deficits []uint64) int {
	m := len(deficits)
	if m == 0 {
		panic("noise: Exponential with no candidates")
	}
	low := deficits[0]
	for _, d := range deficits {
		low = min(low, d)
	}
	if a.num == 0 || m == 1 {
		return int(Uniform(src, uint64(m)))
	}
	var num, den big.Int
	for {
		j := int(Uniform(src, uint64(m)))
		d := deficits[j] - low // shifted as in Exponential: Z ≥ 1
		if hi, lo := bits.Mul64(a.num, d); hi == 0 {
			if bernoulliExpU64(src, lo, a.den) {
				return j
			}
			continue
		}
		num.Mul(num.SetUint64(a.num), new(big.Int).SetUint64(d))
		if bernoulliExpBig(src, &num, den.SetUint64(a.den)) {
			return j
		}
	}
}
