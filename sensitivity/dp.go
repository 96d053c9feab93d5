package sensitivity

import (
	"errors"
	"fmt"
)

// Errors returned by every entry point, wrapped with context. The planner
// turns them into client-visible errors; they never carry data values.
var (
	// ErrInvalid marks an argument outside the domain of a formula (k < 1,
	// lo > hi, an unknown neighbour relation or aggregate kind).
	ErrInvalid = errors.New("invalid sensitivity argument")
	// ErrOverflow marks a sensitivity that does not fit in an int64. The
	// caller must refuse the query (or ask for tighter bounds); it must
	// never fall back to a smaller number.
	ErrOverflow = errors.New("sensitivity overflows int64")
)

// Kind is the shape of a true aggregate, as far as sensitivity cares.
type Kind uint8

const (
	// KindCount is COUNT(*) or COUNT(col) with any WHERE clause: one
	// number.
	KindCount Kind = iota + 1
	// KindHistogram is the vector of COUNTs of a GROUP BY over all its
	// groups (one release, L1 over all groups), with any WHERE clause.
	KindHistogram
	// KindSum is SUM(col) of col clamped to [Lo, Hi], with any WHERE
	// clause: one number.
	KindSum
	// KindGroupedSum is the vector of clamped SUMs of a GROUP BY over all
	// its groups (L1 over all groups), with any WHERE clause.
	KindGroupedSum
	// KindDistinct, KindGroupedDistinct, KindDistinctUnits and
	// KindGroupedDistinctUnits are COUNT(DISTINCT x) and COUNT(DISTINCT
	// unit), ungrouped and over all groups: see Distinct (distinct.go).
	KindDistinct
	KindGroupedDistinct
	KindDistinctUnits
	KindGroupedDistinctUnits
)

// String names k for error messages and explain output.
func (k Kind) String() string {
	switch k {
	case KindCount:
		return "count"
	case KindHistogram:
		return "histogram"
	case KindSum:
		return "sum"
	case KindGroupedSum:
		return "grouped sum"
	}
	if d, ok := k.Distinct(); ok {
		return d.String()
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Aggregate describes one true aggregate. Lo and Hi (Lo <= Hi, integer
// lattice units) are the clamping bounds of the summed column and are
// ignored by the counting kinds.
type Aggregate struct {
	Kind   Kind
	Lo, Hi int64
}

// DP returns the L1 sensitivity of agg under the dp model with neighbour
// relation n and at most k rows per unit. It dispatches to Count, Histogram,
// Sum, GroupedSum and DistinctDP; see those for the formulas and their
// proofs.
func DP(n Neighbors, k int, agg Aggregate) (int64, error) {
	if d, ok := agg.Kind.Distinct(); ok {
		return DistinctDP(n, k, d)
	}
	switch agg.Kind {
	case KindCount:
		return Count(n, k)
	case KindHistogram:
		return Histogram(n, k)
	case KindSum:
		return Sum(n, k, agg.Lo, agg.Hi)
	case KindGroupedSum:
		return GroupedSum(n, k, agg.Lo, agg.Hi)
	}
	return 0, fmt.Errorf("sensitivity: aggregate kind %v: %w", agg.Kind, ErrInvalid)
}

// The proofs below share one setting. After WHERE and the per-unit bound, a
// unit contributes a multiset R of at most k rows, and every aggregate here
// is a sum over rows of a per-row contribution c(r): q(D) = Σ_units Σ_{r∈R}
// c(r). A row the WHERE clause rejects (or whose column is NULL) has c = 0,
// exactly like an absent row. Neighbours differ in one unit only, whose rows
// go from R to R' (unbounded: one of them is empty; bounded: both have 1..k
// rows), so q(D2) − q(D1) = Σ_{R'} c − Σ_R c, independent of the other
// units. Which rows the bound keeps must depend only on the unit's own rows
// for this to hold.

// Count is the sensitivity of COUNT(*) or COUNT(col) with any WHERE clause:
// k under both relations.
//
// Proof. c(r) ∈ {0, 1}. Unbounded: |Σ_R c| ≤ |R| ≤ k. Bounded: Σ_R c and
// Σ_{R'} c both lie in [0, k], so their difference is at most k. Tight: k
// rows passing the predicate against none (unbounded: remove them; bounded:
// replace them by k rows the predicate rejects).
func Count(n Neighbors, k int) (int64, error) {
	if err := check(n, k); err != nil {
		return 0, fmt.Errorf("sensitivity: count: %w", err)
	}
	return int64(k), nil
}

// Histogram is the L1 sensitivity of the counts of all groups of a GROUP
// BY, with any WHERE clause: k unbounded, 2k bounded.
//
// Proof. c(r) is a unit vector e_g(r) or 0, so ‖c(r)‖₁ ≤ 1. Unbounded:
// ‖Σ_R c‖₁ ≤ Σ_R ‖c‖₁ ≤ k. Bounded: ‖Σ_{R'} c − Σ_R c‖₁ ≤ Σ_R ‖c‖₁ +
// Σ_{R'} ‖c‖₁ ≤ 2k. Tight (with two groups): k rows of group A against k
// rows of group B.
func Histogram(n Neighbors, k int) (int64, error) {
	if err := check(n, k); err != nil {
		return 0, fmt.Errorf("sensitivity: histogram: %w", err)
	}
	var per uint64 = 1
	if n == Bounded {
		per = 2
	}
	s, err := mul(uint64(k), per)
	if err != nil {
		return 0, fmt.Errorf("sensitivity: histogram with k=%d: %w", k, err)
	}
	return s, nil
}

// Sum is the sensitivity of SUM(col) with col clamped to [lo, hi], with any
// WHERE clause: k·max(|lo|, |hi|) unbounded, k·max(hi−lo, |lo|, |hi|)
// bounded.
//
// Proof. c(r) ∈ [lo, hi] ∪ {0} ⊆ [a, b] with a = min(lo, 0) ≤ 0 ≤ b =
// max(hi, 0). Unbounded: |Σ_R c| ≤ k·max(|a|, |b|) = k·max(|lo|, |hi|).
// Bounded: Σ_R c and Σ_{R'} c both lie in [k·a, k·b] (0 ≤ |R| ≤ k and a ≤ 0
// ≤ b), so the difference is at most k·(b − a). And b − a = max(hi−lo, |lo|,
// |hi|): if lo ≥ 0 it is hi (≥ hi−lo, ≥ lo); if hi ≤ 0 it is −lo (≥ hi−lo,
// ≥ −hi); otherwise it is hi−lo (≥ hi, ≥ −lo). Tight: unbounded, k rows at
// the bound of larger magnitude; bounded, k rows at a against k rows at b
// (a row the predicate rejects supplies 0 when lo > 0 or hi < 0).
func Sum(n Neighbors, k int, lo, hi int64) (int64, error) {
	if err := checkBounds(n, k, lo, hi); err != nil {
		return 0, fmt.Errorf("sensitivity: sum: %w", err)
	}
	per := maxAbs(lo, hi)
	if n == Bounded {
		per = width(lo, hi)
	}
	s, err := mul(uint64(k), per)
	if err != nil {
		return 0, fmt.Errorf("sensitivity: sum with k=%d over [%d, %d]: %w", k, lo, hi, err)
	}
	return s, nil
}

// GroupedSum is the L1 sensitivity of the clamped SUMs of all groups of a
// GROUP BY, with any WHERE clause: k·max(|lo|, |hi|) unbounded,
// 2k·max(|lo|, |hi|) bounded.
//
// The bounded value is not Sum's: a replaced unit can leave one group and
// join another, changing both sums (lo = 0, hi = 10, k = 1: a row of 10 in
// group A replaced by a row of 10 in group B moves the L1 by 20, while the
// ungrouped SUM bound is 10). DESIGN.md's bounded SUM formula therefore
// applies to an ungrouped SUM only.
//
// Proof. ‖c(r)‖₁ = |v(r)| ≤ M = max(|lo|, |hi|) or c(r) = 0. Unbounded:
// ‖Σ_R c‖₁ ≤ Σ_R ‖c‖₁ ≤ k·M. Bounded: ‖Σ_{R'} c − Σ_R c‖₁ ≤ Σ_R ‖c‖₁ +
// Σ_{R'} ‖c‖₁ ≤ 2k·M. Tight (with two groups): k rows of magnitude M in
// group A against k rows of the same value in group B.
func GroupedSum(n Neighbors, k int, lo, hi int64) (int64, error) {
	if err := checkBounds(n, k, lo, hi); err != nil {
		return 0, fmt.Errorf("sensitivity: grouped sum: %w", err)
	}
	rows := uint64(k)
	if n == Bounded {
		rows *= 2 // cannot wrap: k ≤ MaxInt64 < 2^63
	}
	s, err := mul(rows, maxAbs(lo, hi))
	if err != nil {
		return 0, fmt.Errorf("sensitivity: grouped sum with k=%d over [%d, %d]: %w", k, lo, hi, err)
	}
	return s, nil
}
