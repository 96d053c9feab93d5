package noise

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// maxThreshold keeps τ and the noisy counts compared with it inside int64.
const maxThreshold = 1 << 62

// ThresholdFor returns the release threshold τ of threshold key selection
// (GROUP BY without a declared domain, DESIGN.md "Noise and release"): a
// group is released iff its noisy count (true count + DiscreteLaplace(t))
// is ≥ τ. A unit contributes at most k rows, hence creates at most k groups
// whose true counts c_g ≥ 1 satisfy Σ c_g ≤ k. τ is the smallest integer
// such that, for every such split, the union bound Σ_g P(c_g + X ≥ τ) ≤ δ,
// i.e. the probability that any group existing only because of that unit is
// released is at most δ.
//
// Derivation. With p = exp(−1/t), P(X = x) = (1−p)/(1+p)·p^|x|, so for
// m ≥ 1, P(X ≥ m) = (1−p)/(1+p)·p^m/(1−p) = p^m/(1+p), and P(X ≥ m) ≥
// 1/(1+p) > 1/2 for m ≤ 0. Since δ < 1/2, the split c = k rules out τ ≤ k,
// so τ ≥ k+1 and every tail involved has m = τ − c ≥ 1. There
// f(c) = p^(τ−c)/(1+p) is convex in c, so the sum over a split is maximised
// at a vertex of {c_g ≥ 1, Σ c_g ≤ k}: g groups as (k−g+1, 1, …, 1), and
// f(k−g+1) + (g−1)·f(1) is convex in g, so the worst case is g = 1 or
// g = k: max(p^(τ−k), k·p^(τ−1))/(1+p) ≤ δ, i.e.
//
//	τ ≥ k + t·ln(1/(δ(1+p)))   and   τ ≥ 1 + t·ln(k/(δ(1+p))).
//
// The logarithms are evaluated in float64 with a conservative ceiling, so τ
// may exceed the exact smallest threshold by one when the real bound lies
// within 1e-9 (relative) of an integer, and is never below it. The zero Scale
// (no noise) gives k+1: no group of a single unit reaches it.
func ThresholdFor(k int, t Scale, delta float64) (int64, error) {
	if k < 1 {
		return 0, sqlerr.New(sqlerr.Internal, "internal error: contribution bound must be at least 1")
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 0.5 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue,
			"delta for GROUP BY key selection must be strictly between 0 and 0.5").
			WithHint("set delta_per_query in the policy to a small value such as 1e-6")
	}
	tau := int64(k) + 1
	if t.IsZero() {
		return tau, nil
	}
	tf := t.Float64()
	onePlusP := 1 + math.Exp(-1/tf)
	a := float64(k) + ceilConservative(tf*math.Log(1/(delta*onePlusP)))
	b := 1 + ceilConservative(tf*(math.Log(float64(k))-math.Log(delta*onePlusP)))
	bound := math.Max(a, b)
	if bound >= maxThreshold {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue,
			"the GROUP BY release threshold for this epsilon and delta is out of range").
			WithHint("raise epsilon or delta, or declare the domain of the grouping columns")
	}
	return max(tau, int64(bound)), nil
}
