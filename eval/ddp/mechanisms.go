package main

import (
	"fmt"
	"math"
	"math/big"

	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/noise"
)

// multiplier is the smallest m in [1, L] (to bisection precision) with
// m ≥ f(m) = 1 + maxDeg·ρ(σ(m)), σ(m) = ΔD·m/ε, for a model whose ρ is the
// same on every edge; the inequality is checked for the m returned. m = L =
// 1 + maxDeg always satisfies it because ρ ≤ 1.
func multiplier(c *dependence.Coefficients, method string, eps float64, maxDeg int) (m, rho float64, err error) {
	f := func(m float64) (float64, float64, error) {
		r, err := c.Rho(method, c.DeltaD()*m/eps)
		return 1 + float64(maxDeg)*r, r, err
	}
	lo, hi := 1.0, float64(1+maxDeg)
	if v, _, err := f(lo); err != nil {
		return 0, 0, err
	} else if v <= lo {
		hi = lo
	}
	for range 60 {
		if hi-lo <= 1e-9*hi {
			break
		}
		mid := (lo + hi) / 2
		v, _, err := f(mid)
		if err != nil {
			return 0, 0, err
		}
		if mid >= v {
			hi = mid
		} else {
			lo = mid
		}
	}
	v, r, err := f(hi)
	if err != nil {
		return 0, 0, err
	}
	if hi < v {
		return 0, 0, fmt.Errorf("multiplier %v fails m ≥ f(m) = %v", hi, v)
	}
	return hi, r, nil
}

// mechanism is one way of calibrating the noise: its scale is
// ΔQ·mult/ε, where mult is 1 for plain DP (LPM), L for the baseline of
// Theorem 7 and the fixed-point multiplier for DPM (DS = ΔQ·m).
type mechanism struct {
	name string
	mult float64
	rho  float64 // ρ used (DPM only)
}

func mechanisms(c *dependence.Coefficients, eps float64, maxDeg int) ([]mechanism, error) {
	out := []mechanism{{name: "dp (LPM)", mult: 1}, {name: "baseline (L·ΔQ)", mult: float64(1 + maxDeg)}}
	for _, method := range []string{dependence.MethodEq18, dependence.MethodExact} {
		m, r, err := multiplier(c, method, eps, maxDeg)
		if err != nil {
			return nil, fmt.Errorf("ε = %v, %s: %w", eps, method, err)
		}
		out = append(out, mechanism{name: "ddp (DPM, " + method + ")", mult: m, rho: r})
	}
	return out, nil
}

// scaleFor is the exact discrete Laplace scale for sensitivity Δ at ε.
func scaleFor(delta, eps float64) (noise.Scale, error) {
	return noise.ScaleFor(new(big.Rat).SetFloat64(delta), eps)
}

// meanAbsLaplace is E|X| for the discrete Laplace of scale t:
// 2q/((1−q)(1+q)) with q = e^(−1/t).
func meanAbsLaplace(t float64) float64 {
	q := math.Exp(-1 / t)
	return 2 * q / ((1 - q) * (1 + q))
}
