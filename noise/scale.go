package noise

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MaxScaleLog2 bounds the noise scale: ScaleFor refuses t > 2^MaxScaleLog2.
// Noise of that size already swamps any 64-bit answer, and the bound keeps
// every sample in uint64 arithmetic with |noise| < 2^62 except with
// probability below 2^-730 (see DiscreteLaplace).
const MaxScaleLog2 = 53

// exactLimit: a scale whose reduced numerator and denominator are both below
// 2^32 is kept exactly (0.5, 1, 37/10, Δ/ε for integer ε⁻¹ …).
const exactLimit = 1 << 32

// Scale is the scale t > 0 of a discrete Laplace distribution,
// P(x) ∝ exp(−|x|/t), as an exact rational num/den; the zero value means
// "no noise" (sensitivity 0). Build it with ScaleFor or ScaleOf.
//
// Representation rule (why rounding is safe): a scale whose reduced
// numerator and denominator are below 2^32 is kept exactly. Any other scale
// — e.g. Δ/ε with ε a float64 such as 0.1, whose exact value is
// 3602879701896397/2^55 — is rounded UP to the dyadic rational
// ⌈t·2^k⌉/2^k with k = 30 − ⌊log2 t⌋ clamped to [0, 62], so that
// 2^30 ≤ t·2^k < 2^31 whenever the clamp is inactive. The discrete Laplace mechanism with scale t' ≥ Δ/ε is
// (Δ/t')-DP with Δ/t' ≤ ε, so rounding up only adds noise and never spends
// more than the ε charged. The relative increase is below 2^-30 for every
// t ≥ 2^-32 (for the ε = 0.1 count above it is exactly 0: t' = 10).
type Scale struct {
	num, den uint64 // lowest terms; num == 0 means no noise
}

// ScaleFor returns the discrete Laplace scale for a query of L1 sensitivity
// Δ released with privacy parameter ε: t = Δ/ε computed exactly (ε is
// converted with big.Rat.SetFloat64, no rounding), then represented as
// described on Scale. A zero sensitivity yields the zero Scale (no noise).
func ScaleFor(sensitivity *big.Rat, epsilon float64) (Scale, error) {
	if err := checkEpsilon(epsilon); err != nil {
		return Scale{}, err
	}
	if err := checkSensitivity(sensitivity); err != nil {
		return Scale{}, err
	}
	eps := new(big.Rat).SetFloat64(epsilon) // exact: ε is finite
	return ScaleOf(new(big.Rat).Quo(sensitivity, eps))
}

// ScaleOf represents the scale t ≥ 0 as described on Scale (rounding up
// when needed). It fails if t is negative or larger than 2^MaxScaleLog2.
func ScaleOf(t *big.Rat) (Scale, error) {
	if t == nil || t.Sign() < 0 {
		return Scale{}, sqlerr.New(sqlerr.Internal, "internal error: negative or missing noise scale")
	}
	if t.Sign() == 0 {
		return Scale{}, nil
	}
	if t.Cmp(new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), MaxScaleLog2))) > 0 {
		return Scale{}, sqlerr.New(sqlerr.InvalidParameterValue,
			"epsilon is too small for this query: the noise scale would exceed 2^%d", MaxScaleLog2).
			WithHint("raise epsilon or tighten the bounds in the policy")
	}
	n, d := t.Num(), t.Denom()
	if n.IsUint64() && d.IsUint64() && n.Uint64() < exactLimit && d.Uint64() < exactLimit {
		return Scale{num: n.Uint64(), den: d.Uint64()}, nil
	}
	k := min(max(30-floorLog2(t), 0), 62)
	// num = ⌈n·2^k / d⌉ ≤ 2^53 (t ≤ 2^53 and k = 0 when t ≥ 2^31).
	q, r := new(big.Int).QuoRem(new(big.Int).Lsh(n, uint(k)), d, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	num := q.Uint64()
	for k > 0 && num%2 == 0 {
		num /= 2
		k--
	}
	return Scale{num: num, den: 1 << k}, nil
}

// ScaleOfFrac is ScaleOf(n/d) for integers, which is how planning
// calibrates most scales (Δ·m/ε with ε a short decimal): when the reduced
// fraction is kept exactly it needs no big.Rat arithmetic; otherwise it is
// ScaleOf itself. d must be positive.
func ScaleOfFrac(n, d uint64) (Scale, error) {
	if d == 0 {
		return Scale{}, sqlerr.New(sqlerr.Internal, "internal error: noise scale with a zero denominator")
	}
	if n == 0 {
		return Scale{}, nil
	}
	g := gcd(n, d)
	if n, d := n/g, d/g; n < exactLimit && d < exactLimit {
		return Scale{num: n, den: d}, nil // below 2^32 ≤ 2^MaxScaleLog2
	}
	return ScaleOf(new(big.Rat).SetFrac(new(big.Int).SetUint64(n), new(big.Int).SetUint64(d)))
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// floorLog2 returns ⌊log2 r⌋ for r > 0.
func floorLog2(r *big.Rat) int {
	a, b := r.Num(), r.Denom()
	l := a.BitLen() - b.BitLen()
	// 2^l·b and a have the same bit length; a < 2^l·b means r < 2^l.
	var lhs, rhs big.Int
	if l >= 0 {
		lhs.Set(a)
		rhs.Lsh(b, uint(l))
	} else {
		lhs.Lsh(a, uint(-l))
		rhs.Set(b)
	}
	if lhs.Cmp(&rhs) < 0 {
		l--
	}
	return l
}

// IsZero reports whether the scale means "no noise".
func (s Scale) IsZero() bool { return s.num == 0 }

// Rat returns the exact scale the sampler uses (0 for no noise).
func (s Scale) Rat() *big.Rat {
	if s.num == 0 {
		return new(big.Rat)
	}
	return new(big.Rat).SetFrac(new(big.Int).SetUint64(s.num), new(big.Int).SetUint64(s.den))
}

// Float64 returns the scale rounded to the nearest float64, for display and
// for conservative bounds; never for sampling.
func (s Scale) Float64() float64 {
	if s.num == 0 {
		return 0
	}
	if exactFloat(s.num) && exactFloat(s.den) {
		// Both convert to float64 exactly, so IEEE division rounds the
		// exact quotient to nearest, as big.Rat.Float64 does (no
		// subnormal or overflow: 1 ≤ num, den < 2^64). Planning reads
		// the scale several times per query; this spares a big.Rat each.
		return float64(s.num) / float64(s.den)
	}
	f, _ := s.Rat().Float64()
	return f
}

// exactFloat reports whether x converts to float64 without rounding: its
// significant bits fit the 53-bit mantissa.
func exactFloat(x uint64) bool {
	return x == 0 || bits.Len64(x)-bits.TrailingZeros64(x) <= 53
}

// String returns the exact scale as "num/den" or "num".
func (s Scale) String() string {
	// num/den are in lowest terms (den ≥ 1), exactly as RatString
	// prints them; formatted directly, without a big.Rat.
	if s.den <= 1 {
		return strconv.FormatUint(s.num, 10)
	}
	return strconv.FormatUint(s.num, 10) + "/" + strconv.FormatUint(s.den, 10)
}

func checkEpsilon(epsilon float64) error {
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon <= 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "epsilon must be a positive finite number").
			WithHint("set epsilon to a value such as 0.1")
	}
	return nil
}

func checkSensitivity(sensitivity *big.Rat) error {
	if sensitivity == nil || sensitivity.Sign() < 0 {
		return sqlerr.New(sqlerr.Internal, "internal error: negative or missing sensitivity")
	}
	return nil
}
