// Package synopsis releases range-count synopses of one ordinal column
// under Blowfish distance-θ secrets (He, Machanavajjhala, Ding, "Blowfish
// Privacy", SIGMOD 2014, §7): the ordered mechanism (θ = 1), the ordered
// hierarchical mechanism (any θ, fan-out f) and, as the plain-DP baseline,
// the hierarchical mechanism of Hay et al. A synopsis is released once,
// post-processed (constrained inference), stored in a compact binary form
// and then answers every range count [a, b], <, <=, >, >= on the column
// without further privacy cost.
//
// # Structure
//
// The column's declared domain lo..hi is mapped to indices 0..N−1. It is
// cut into K = ⌈N/w⌉ blocks of width w = min(θ, N) (the last one may be
// narrower). There are two kinds of released counts (nodes):
//
//   - S nodes: s_b = #rows with index ≤ end(b), the cumulative count up to
//     the end of block b, for b = 0..K−1. s_{K−1} is the number of rows n.
//   - H nodes: inside every block, the f-ary tree of Hay et al.: the block
//     is split into ≤ f intervals of width ⌈w/f⌉, recursively, down to
//     single values. The block itself (the tree's root) is NOT an H node:
//     its count is s_b − s_{b−1}, already carried by the S nodes.
//
// A prefix count #[0, j] is s_{b−1} plus the H nodes that tile
// [start(b), j] (b the block of j); a range is a difference of two prefixes.
//
// # Sensitivity under distance-θ neighbours (derived here, brute-forced in tests)
//
// Neighbours (Blowfish without constraints, DESIGN.md model 2) differ in
// one unit whose ≤ k rows each change their value of the column by at most
// θ; no row appears or disappears (rows whose value is NULL stay NULL: a
// NULL is at no distance from a number). Values outside lo..hi are clamped
// into it before counting; clamping is 1-Lipschitz (|clamp(x)−clamp(y)| ≤
// |x−y|), so clamped neighbours are still distance-θ neighbours. The node
// vector is linear in the histogram, so a unit's change is the sum of ≤ k
// single-row moves x → y with 0 < |x−y| ≤ θ (x < y without loss of
// generality), and its L1 change is at most k times that of one move.
//
// One move x → y changes s_b by −1 exactly when x ≤ end(b) < y, i.e. when
// a block end lies in [x, y−1]. When K ≥ 2 the width is w = θ, block ends
// other than the last are θ−1, 2θ−1, … (θ apart), and [x, y−1] holds
// y−x ≤ θ consecutive integers, so at most one of them. The last end, N−1, is
// never in [x, y−1] because y ≤ N−1. So
//
//	ΔS = 1 if K ≥ 2 (a move from end(0) to end(0)+1 achieves it), else 0,
//
// and s_{K−1} = n never changes: the total is invariant under distance
// secrets (as any count no secret pair can change, DESIGN.md model 2) and is
// released exactly. When K = 1 (θ ≥ N) there is no noisy S node at all.
//
// For H nodes: the H nodes containing x are the ancestors of leaf x below
// its block root, at most D of them, where D is the largest leaf depth
// (block root at depth 0); likewise for y. A move only changes the nodes
// that contain exactly one of x, y: at most D on x's side and D on y's,
// whether x and y share a block (common ancestors cancel) or lie in
// adjacent blocks (then no H node contains both). So
//
//	ΔH = 2·D,  D = max over blocks of ⌈log_f width⌉ (= the tree height).
//
// This is the paper's "at most 2h H nodes" with h the height below the
// root; if the block roots were H nodes too (the paper's Fig. 2(a) draws
// them), a move between adjacent blocks would change 2h+2 nodes — the
// brute-force test pins this down. The bounds are tight for the layouts the
// tests enumerate (a witness move is found for each).
//
// # Budget and noise
//
// ε = ε_S + ε_H (sequential composition). The noisy S nodes get discrete
// Laplace noise of scale k·ΔS/ε_S, every H node k·ΔH/ε_H (noise.ScaleFor,
// which rounds scales up, never down). Unlike the paper we do not give the
// first H tree the combined budget ε_S + ε_H: S and H are two separate
// releases with their own sensitivities, which is simpler to verify. The
// split minimises the mean variance of a prefix count: with A and B the
// mean number of noisy S and H nodes in a prefix's decomposition,
// Var ≈ 2k²(A·ΔS²/ε_S² + B·ΔH²/ε_H²), minimised at ε_S ∝ (A·ΔS²)^(1/3)
// (the paper's Eq. 15 with its c1, c2 replaced by the exact A, B of our
// layout). θ = 1 gives w = 1, no H nodes and ε_S = ε: the ordered
// mechanism. θ ≥ N gives K = 1, no noisy S node and ε_H = ε: Hay et al.'s
// hierarchical mechanism with uniform budgeting under bounded DP (the row
// count is public), which is the paper's DP baseline (θ = full).
//
// # Constrained inference (post-processing, free)
//
//  1. Generalised least squares over the whole structure (Hay et al.'s
//     consistency, weighted by the node variances): a bottom-up pass in
//     every H tree gives the best within-block estimate of each subtree
//     total and its variance; the block totals then meet the S chain in a
//     tridiagonal system for the cumulative counts C_b (C_{K−1} = n fixed);
//     a top-down pass splits each block total among its subtrees in
//     proportion to their variances.
//  2. Monotonicity: the cumulative histogram F(j) = #[0, j] must be
//     non-decreasing with 0 ≤ F ≤ n. Isotonic regression (pool adjacent
//     violators, least squares) on F, clipped to [0, n], then rounded.
//     Projecting onto a convex set that contains the truth never increases
//     the L2 error of F.
//
// The stored synopsis is the rounded monotone F: N integers, delta- and
// run-length-encoded (Synopsis.MarshalBinary).
//
// synopsis imports noise and sqlerr only; it knows nothing of SQL, the
// planner or the ledger.
package synopsis
