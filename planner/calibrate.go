package planner

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

// Scale is a discrete Laplace scale, exact (noise.Scale).
type Scale = noise.Scale

// Noise draws this aggregate's noise in units (0 when the sensitivity is 0).
func (a AggPlan) Noise(src noise.Source) (int64, error) {
	if a.Scale.IsZero() {
		return 0, nil
	}
	return noise.DiscreteLaplace(src, a.Scale), nil
}

// CI95 is the half-width of the 95% interval of the noise, in output units.
func (a AggPlan) CI95() float64 {
	if a.Quantile != nil {
		return 0 // no additive noise: see RankError
	}
	hw, err := a.Scale.HalfWidth(0.95)
	if err != nil {
		return math.Inf(1)
	}
	return float64(hw) * a.Quantum
}

// scaleFor is the discrete Laplace scale of one of m aggregates sharing ε:
// t = sens / (ε/m) = sens·m/ε, computed exactly so that the m shares never
// add up to more than ε through float rounding.
//
// ε is read as the shortest decimal that converts back to the float64 (0.1
// is 1/10), exactly as the ledger charges it (budget.ExactDecimal): the
// noise must be calibrated to the ε charged, not to the binary float, which
// can be slightly larger.
func scaleFor(sens int64, eps float64, m int) (Scale, error) {
	dec := strconv.FormatFloat(eps, 'g', -1, 64)
	// Fast path, the usual case (ε = 1, 0.5, 0.1 …): sens·m·den/num in
	// uint64, where num/den is the decimal. It is the same fraction the
	// big.Rat path below computes, so the same Scale; anything that does
	// not fit falls through.
	if num, den, ok := decimalFrac(dec); ok && sens > 0 && m > 0 && num > 0 {
		if hi, lo := bits.Mul64(uint64(sens), uint64(m)); hi == 0 {
			if hi, n := bits.Mul64(lo, den); hi == 0 {
				return noise.ScaleOfFrac(n, num)
			}
		}
	}
	e, ok := new(big.Rat).SetString(dec)
	if !ok || e.Sign() <= 0 {
		return Scale{}, fmt.Errorf("invalid ε %g", eps)
	}
	t := new(big.Rat).SetInt64(sens)
	t.Mul(t, new(big.Rat).SetInt64(int64(m)))
	return noise.ScaleOf(t.Quo(t, e))
}

// decimalFrac reads a decimal as strconv.FormatFloat(x, 'g', -1, 64)
// writes it for a positive x ("0.1", "25", "1.5e-07", "1e+21") as the
// fraction num/den it denotes, when both fit in a uint64.
func decimalFrac(s string) (num, den uint64, ok bool) {
	mant, exp := s, 0
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		x, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return 0, 0, false
		}
		mant, exp = s[:i], x
	}
	digits := 0
	for i := 0; i < len(mant); i++ {
		c := mant[i]
		switch {
		case c == '.':
			exp -= len(mant) - i - 1
		case c >= '0' && c <= '9':
			if digits++; digits > 19 {
				return 0, 0, false
			}
			num = num*10 + uint64(c-'0') // < 10^19 < 2^64
		default:
			return 0, 0, false
		}
	}
	den = 1
	for ; exp > 0; exp-- {
		hi, lo := bits.Mul64(num, 10)
		if hi != 0 {
			return 0, 0, false
		}
		num = lo
	}
	for ; exp < 0; exp++ {
		hi, lo := bits.Mul64(den, 10)
		if hi != 0 {
			return 0, 0, false
		}
		den = lo
	}
	return num, den, true
}

// threshold calibrates threshold key selection. δ is nudged down one ulp
// so that float rounding can never make the tail bound exceed the δ the
// ledger charges.
func threshold(k int, t Scale, delta float64) (int64, error) {
	return noise.ThresholdFor(k, t, math.Nextafter(delta, 0))
}

func neighbours(ds *policies.Dataset) sensitivity.Neighbors {
	if ds.Neighbors == policies.NeighborsBounded {
		return sensitivity.Bounded
	}
	return sensitivity.Unbounded
}

// lattice picks the power-of-two step γ of a real-valued sum (the rule of
// noise.LatticeFor). The sensitivity itself is then computed exactly on the
// quantized bounds, so rounding needs no extra margin: every row's lattice
// value FLOOR(clamp(x)/γ + 0.5) lies in [quantize(lo), quantize(hi)].
func lattice(sens, eps, maxAbs float64, k int) (float64, error) {
	l, err := noise.LatticeFor(noise.LatticeParams{
		Sensitivity: new(big.Rat).SetFloat64(sens),
		ChangedRows: k,
		Epsilon:     eps,
		MaxAbs:      maxAbs,
	})
	if err != nil {
		return 0, err
	}
	return l.Gamma(), nil
}
