package noise

import (
	"math/big"
	"math/bits"
)

// BernoulliExp returns true with probability exp(−γ), exactly, for a
// rational γ ≥ 0 (Canonne, Kamath and Steinke 2020, Algorithm 1). It uses
// only integer uniforms: no exp, no floating point. It panics if gamma is nil
// or negative.
//
// For γ ∈ [0, 1]: draw A_k ~ Bernoulli(γ/k) for k = 1, 2, … until the first
// failure at K; P(K > j) = γ^j/j!, so P(K odd) = Σ_i (−γ)^i/i! = exp(−γ).
// For γ > 1: exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ−⌊γ⌋)), a conjunction of
// independent trials that stops at the first failure (expected < 2 trials).
func BernoulliExp(src Source, gamma *big.Rat) bool {
	if gamma == nil || gamma.Sign() < 0 {
		panic("noise: BernoulliExp needs gamma >= 0")
	}
	n, d := gamma.Num(), gamma.Denom()
	if n.IsUint64() && d.IsUint64() {
		return bernoulliExpU64(src, n.Uint64(), d.Uint64())
	}
	return bernoulliExpBig(src, n, d)
}

// bernoulliExpU64 is BernoulliExp for γ = n/d with d > 0.
func bernoulliExpU64(src Source, n, d uint64) bool {
	for whole := n / d; whole > 0; whole-- {
		if !bernoulliExpFrac(src, 1, 1) {
			return false
		}
	}
	return bernoulliExpFrac(src, n%d, d)
}

// bernoulliExpFrac is Algorithm 1 of CKS 2020 for γ = n/d ∈ [0, 1].
func bernoulliExpFrac(src Source, n, d uint64) bool {
	if n == 0 {
		return true
	}
	k := uint64(1)
	for bernoulliOverK(src, n, d, k) {
		k++
	}
	return k%2 == 1
}

// bernoulliOverK returns true with probability n/(d·k).
func bernoulliOverK(src Source, n, d, k uint64) bool {
	hi, lo := bits.Mul64(d, k)
	if hi == 0 {
		return Uniform(src, lo) < n
	}
	// d·k does not fit in 64 bits (only for astronomically unlikely k):
	// the conjunction of independent Bernoulli(n/d) and Bernoulli(1/k)
	// trials has the same law.
	return Uniform(src, d) < n && Uniform(src, k) == 0
}

// bernoulliExpBig is BernoulliExp for γ = n/d when n or d exceed 64 bits.
func bernoulliExpBig(src Source, n, d *big.Int) bool {
	whole, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	one := big.NewInt(1)
	for ; whole.Sign() > 0; whole.Sub(whole, one) {
		if !bernoulliExpFrac(src, 1, 1) {
			return false
		}
	}
	if rem.Sign() == 0 {
		return true
	}
	var dk, kb, scratch big.Int
	k := uint64(1)
	for {
		// A ~ Bernoulli(rem/(d·k)).
		dk.Mul(d, kb.SetUint64(k))
		if !bernoulliBig(src, rem, &dk, &scratch) {
			return k%2 == 1
		}
		k++
	}
}
