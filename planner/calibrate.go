package planner

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

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
// is 1/10), exactly as the ledger charges it (ledger.ExactDecimal): the
// noise must be calibrated to the ε charged, not to the binary float, which
// can be slightly larger.
func scaleFor(sens int64, eps float64, m int) (Scale, error) {
	e, ok := new(big.Rat).SetString(strconv.FormatFloat(eps, 'g', -1, 64))
	if !ok || e.Sign() <= 0 {
		return Scale{}, fmt.Errorf("invalid ε %g", eps)
	}
	t := new(big.Rat).SetInt64(sens)
	t.Mul(t, new(big.Rat).SetInt64(int64(m)))
	return noise.ScaleOf(t.Quo(t, e))
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
