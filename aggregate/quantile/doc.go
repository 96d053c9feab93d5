// Package quantile is the arithmetic of the quantile aggregates (MIN, MAX,
// median, percentile_cont, percentile_disc): the candidate grid a column's
// declared bounds or domain give, the rank utility of each candidate over
// per-bin counts, its sensitivity, the exponential-mechanism selection and
// the rank error bound explain states. It is pure: it never talks to a
// backend, and its only randomness is the noise.Source the caller passes.
//
// The mechanism. The backend returns, per group, the number of rows whose
// clamped value falls in each candidate bin (a histogram GROUP BY keys…,
// bin(x)). For the fraction p the utility of candidate j is minus the
// distance, in rows, from the target position h = p·(n−1) (0-based, the
// position percentile_cont interpolates at) to the positions the rows of
// bin j occupy in sorted order. The exponential mechanism picks j with
// probability ∝ exp(−a·deficit_j), a = ε/(2Δu), sampled exactly
// (noise.Exponential).
//
// Sensitivity (utility.go, checked by brute force in utility_test.go): the
// utility of every candidate is max(p, 1−p)-Lipschitz in the L1 norm of
// its group's bin counts, so between neighbouring databases the sum over
// groups of the largest utility change is at most max(p, 1−p) times the L1
// change of the histogram GROUP BY (keys…, bin(x)). Whatever privacy model
// bounds that histogram's L1 sensitivity S therefore bounds the quantile's:
// Δu = max(p, 1−p)·S, and one exponential mechanism per group at rate
// ε/(2Δu) is ε-DP for all groups together (the loss of group g is at most
// 2a·max_j|Δu_gj| and these sum to at most 2a·Δu = ε).
//
// quantile imports noise and the standard library only.
package quantile
