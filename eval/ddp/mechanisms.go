package main

import (
	"fmt"
	"math"
	"math/big"

	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/noise"
)

// multiplier is the DPM noise multiplier the proxy itself would use: the
// core's fixed point m ≥ f(m) = 1 + maxDeg·ρ(ΔD·m/ε) (dependence.ModelSolver,
// which checks the inequality for the m it returns), with the ρ at that m.
func multiplier(c *dependence.Coefficients, method string, eps float64, maxDeg int) (m, rho float64, err error) {
	s, err := dependence.NewModelSolver(c, method, maxDeg)
	if err != nil {
		return 0, 0, err
	}
	sol, err := s.Multiplier(eps)
	if err != nil {
		return 0, 0, err
	}
	if sol.Rho == nil || sol.M < sol.F {
		return 0, 0, fmt.Errorf("solver returned m = %v with f(m) = %v", sol.M, sol.F)
	}
	return sol.M, *sol.Rho, nil
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
