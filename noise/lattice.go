package noise

import (
	"math"
	"math/big"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// LatticeRowBits bounds one row on the lattice: |value|/γ ≤ 2^LatticeRowBits.
// Sums of up to 2^32 rows then stay within 2^62 in the backend's BIGINT, and
// adding noise (|noise| < 2^62, see DiscreteLaplace) still fits in int64.
const LatticeRowBits = 30

// Lattice exponent range: γ must be a normal, finite float64 so that the
// backend's x/γ is exact.
const (
	minLatticeExp = -1022
	maxLatticeExp = 1023
)

// LatticeParams describes a real-valued aggregate (SUM over a float column,
// or the numerator of AVG) to be released on a power-of-two lattice.
type LatticeParams struct {
	// Sensitivity is Δ, the L1 sensitivity of the exact real-valued sum of
	// clamped values.
	Sensitivity *big.Rat
	// ChangedRows bounds how many rows' values can differ between
	// neighbouring databases (k, the contribution bound, under dp; the
	// planner must pass a larger bound for models whose neighbours differ in
	// more rows). Each such row's rounding error is at most γ/2 when it is
	// added or removed and at most γ when it changes, so the sensitivity of
	// the quantized sum is at most Δ + ChangedRows·γ. (DESIGN.md says
	// "Δ + γ", which is right only for one row.)
	ChangedRows int
	// Epsilon is the ε this aggregate spends.
	Epsilon float64
	// MaxAbs is the largest |value| of one row after clamping to the policy
	// bounds, max(|lo|, |hi|).
	MaxAbs float64
}

// Lattice is the grid γ = 2^Exp on which a real-valued aggregate is computed
// and released (DESIGN.md "Noise and release"): the backend sums
// round(clamp(x)/γ) as exact integers, the release step adds
// DiscreteLaplace(src, Scale) to that integer and multiplies by γ. Because
// every possible output lies on the lattice and the noise is sampled exactly,
// the gaps of the floating-point grid reveal nothing (Mironov 2012).
type Lattice struct {
	Exp   int   // γ = 2^Exp
	Scale Scale // noise scale in lattice units: (Δ + ChangedRows·γ)/(ε·γ), rounded up
}

// Gamma returns γ = 2^Exp.
func (l Lattice) Gamma() float64 { return math.Ldexp(1, l.Exp) }

// GammaRat returns γ exactly.
func (l Lattice) GammaRat() *big.Rat {
	one := big.NewInt(1)
	if l.Exp >= 0 {
		return new(big.Rat).SetInt(new(big.Int).Lsh(one, uint(l.Exp)))
	}
	return new(big.Rat).SetFrac(one, new(big.Int).Lsh(one, uint(-l.Exp)))
}

// LatticeFor chooses the lattice and the noise scale for a real-valued
// aggregate.
//
// Rule: γ is the smallest power of two with MaxAbs/γ ≤ 2^LatticeRowBits (the
// backend's integer sum cannot overflow), raised only if the noise scale in
// lattice units would exceed 2^MaxScaleLog2. The finest lattice the range
// allows is chosen because γ costs accuracy twice: ChangedRows·γ is added to
// the sensitivity and each row is rounded by up to γ/2. With
// Δ ≥ MaxAbs (any SUM under dp) that makes γ ≤ 2^-29·Δ, far below the noise
// scale Δ/ε/1024 for every ε ≤ 2^19; a smaller γ is impossible without
// risking overflow. Zero sensitivity gives the zero Scale: neighbours then
// agree on every row the aggregate reads, so they agree after rounding too.
func LatticeFor(p LatticeParams) (Lattice, error) {
	if err := checkEpsilon(p.Epsilon); err != nil {
		return Lattice{}, err
	}
	if err := checkSensitivity(p.Sensitivity); err != nil {
		return Lattice{}, err
	}
	if math.IsNaN(p.MaxAbs) || math.IsInf(p.MaxAbs, 0) || p.MaxAbs < 0 {
		return Lattice{}, sqlerr.New(sqlerr.Internal, "internal error: invalid bound for a real-valued aggregate")
	}
	if p.ChangedRows < 1 {
		return Lattice{}, sqlerr.New(sqlerr.Internal, "internal error: changed-row bound must be at least 1")
	}
	exp := minLatticeExp
	if p.MaxAbs > 0 {
		exp = max(exp, ceilLog2(p.MaxAbs)-LatticeRowBits)
	}
	if p.Sensitivity.Sign() == 0 {
		return Lattice{Exp: exp}, nil
	}
	eps := new(big.Rat).SetFloat64(p.Epsilon)
	limit := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), MaxScaleLog2))
	// Start where Δ/(ε·γ) < 2^53: with Δ/ε < 2^(L+1), γ = 2^(L−52) suffices.
	// The ChangedRows/ε term may need a step or two more.
	exp = max(exp, floorLog2(new(big.Rat).Quo(p.Sensitivity, eps))-52)
	for ; exp <= maxLatticeExp; exp++ {
		l := Lattice{Exp: exp}
		gamma := l.GammaRat()
		// t = (Δ + ChangedRows·γ) / (ε·γ)
		num := new(big.Rat).Mul(gamma, new(big.Rat).SetInt64(int64(p.ChangedRows)))
		num.Add(num, p.Sensitivity)
		t := num.Quo(num, new(big.Rat).Mul(eps, gamma))
		if t.Cmp(limit) > 0 {
			continue
		}
		s, err := ScaleOf(t)
		if err != nil {
			return Lattice{}, err
		}
		l.Scale = s
		return l, nil
	}
	return Lattice{}, sqlerr.New(sqlerr.InvalidParameterValue,
		"epsilon is too small for this query: the noise scale would exceed 2^%d", MaxScaleLog2).
		WithHint("raise epsilon or tighten the bounds in the policy")
}

// ceilLog2 returns ⌈log2 x⌉ for finite x > 0.
func ceilLog2(x float64) int {
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [0.5, 1)
	if frac == 0.5 {
		return exp - 1
	}
	return exp
}
