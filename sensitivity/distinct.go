package sensitivity

import "fmt"

// Distinct describes a distinct count: COUNT(DISTINCT x) over the rows
// that pass the WHERE clause and the per-unit bound k (the backend keeps
// each unit's at most k rows first, then counts), one number or one per
// group of a GROUP BY (L1 over all groups, one release).
type Distinct struct {
	// Grouped: the vector of distinct counts of all groups.
	Grouped bool
	// Units: x is the privacy unit column, compared under the equality
	// that defines units, so the count is the number of units with a row
	// (in the group). Otherwise x is any column or expression of the row.
	Units bool
}

// Kind is the sensitivity kind of d, so that DP, PerChange and Induced
// (and every caller that passes an Aggregate) cover distinct counts.
func (d Distinct) Kind() Kind {
	switch {
	case d.Units && d.Grouped:
		return KindGroupedDistinctUnits
	case d.Units:
		return KindDistinctUnits
	case d.Grouped:
		return KindGroupedDistinct
	}
	return KindDistinct
}

// Distinct reports the distinct count k is, if it is one.
func (k Kind) Distinct() (Distinct, bool) {
	switch k {
	case KindDistinct:
		return Distinct{}, true
	case KindGroupedDistinct:
		return Distinct{Grouped: true}, true
	case KindDistinctUnits:
		return Distinct{Units: true}, true
	case KindGroupedDistinctUnits:
		return Distinct{Units: true, Grouped: true}, true
	}
	return Distinct{}, false
}

// String names d for errors and explain output.
func (d Distinct) String() string {
	s := "distinct count"
	if d.Units {
		s = "distinct unit count"
	}
	if d.Grouped {
		s = "grouped " + s
	}
	return s
}

// The proofs below share one fact. For finite sets O, A, B,
//
//	|O ∪ A| − |O ∪ B| ≤ |A \ (O ∪ B)| ≤ |A|,
//
// so adding a set A of values to O raises the number of distinct values
// by at most |A|, never lowers it, and replacing A by B changes it by at
// most max(|A|, |B|). A unit contributes the values of its kept rows that
// pass the WHERE clause (NULLs are not counted); how many distinct values
// the other units hold does not matter, and neither does which k rows the
// bound keeps, as long as that choice depends on the unit's own rows
// (the renderer orders the window by the projected values).

// DistinctDP is the L1 sensitivity of a distinct count under the dp model
// with neighbour relation n and at most k rows per unit:
//
//	                 ungrouped   grouped (unbounded / bounded)
//	column or expr   k           k / 2k
//	unit column      1           k / 2k
//
// Proof. Column, ungrouped: the unit adds a set A of at most k values
// (unbounded: |O ∪ A| − |O| ≤ k) or swaps A for B, each of at most k
// values (bounded: ≤ max(|A|, |B|) ≤ k). Tight: k rows of k values that
// no other unit holds against none (unbounded) or against k rows whose
// values other units hold (bounded). Column, grouped: in group g the
// change is at most |A_g| + |B_g| (A_g, B_g the unit's values in g before
// and after, B empty when unbounded), and Σ_g |A_g| ≤ k, Σ_g |B_g| ≤ k:
// k unbounded, 2k bounded. Tight with two groups: k new values in group 1
// against k new values in group 2.
//
// Unit, ungrouped: the unit's own value is its only contribution: the
// count changes by at most 1 when it is added, removed, or its rows start
// or stop passing the WHERE clause (bounded). Tight: one unit with a
// passing row against none. Unit, grouped: the unit counts once in each
// group where it has a row, at most k groups (its k rows); unbounded it
// enters or leaves at most k groups: k. Bounded it leaves a set S and
// joins a set S' of groups, |S|, |S'| ≤ k: ‖Δ‖₁ = |S Δ S'| ≤ 2k. Tight
// with 2k groups (k rows in k groups against k rows in k others).
func DistinctDP(n Neighbors, k int, d Distinct) (int64, error) {
	if err := check(n, k); err != nil {
		return 0, fmt.Errorf("sensitivity: %v: %w", d, err)
	}
	if d.Units && !d.Grouped {
		return 1, nil
	}
	rows := uint64(k)
	if d.Grouped && n == Bounded {
		rows *= 2 // cannot wrap: k ≤ MaxInt64 < 2^63
	}
	s, err := mul(rows, 1)
	if err != nil {
		return 0, fmt.Errorf("sensitivity: %v with k=%d: %w", d, k, err)
	}
	return s, nil
}

// DistinctPerChange is c(q) of a distinct count for the Blowfish calculus:
// the largest L1 change when one tuple (one unit's only row: blowfish and
// induced datasets have k = 1) changes as r allows. r.Value says whether
// the change can alter x (the counted column; for the unit column,
// whether G can change it at all), r.Filter and r.Group as for counts;
// r.ValueStep does not matter (any change of x can matter).
//
//	ungrouped: 1 if Filter or Value, else 0
//	grouped:   2 if Group; else 1 if Filter or Value; else 0
//
// Proof. The change removes a row of value x from its group g and adds a
// row of value y to group g′ (each only if it passes the WHERE clause).
// By the fact above, removing one row lowers g's distinct count by at
// most 1 and adding one raises g′'s by at most 1; if g = g′ the net change
// of that one count lies in [−1, 1]. So ungrouped (one count) ≤ 1 and
// grouped ≤ 2, and ≤ 1 when the groups cannot change (g = g′). If none of
// the WHERE, distinct and group columns can change, the row before and
// after is the same as far as the query sees: 0. Note that a change of
// the counted column alone moves a distinct count even though COUNT's
// c(q) is then 0 (x = 1 → 2 next to another row of 1: from {1} to {1, 2}).
// Tight (ungrouped): a row that is the only one of its value becomes a
// copy of another row's value.
func DistinctPerChange(d Distinct, r Reach) (int64, error) {
	if r.ValueStep < 0 {
		return 0, fmt.Errorf("sensitivity: negative value step: %w", ErrInvalid)
	}
	switch {
	case d.Grouped && r.Group:
		return 2, nil
	case r.Filter || r.Value:
		return 1, nil
	}
	return 0, nil
}

// DistinctInduced is the sensitivity of a distinct count under neighbours
// induced by published counts (a Graver element g: ‖g⁺‖₁ rows added,
// ‖g⁻‖₁ removed): MaxHalf ungrouped, MaxL1 grouped — the bounds of COUNT
// and of the histogram.
//
// Proof. Removing b rows lowers a distinct count by at most b and adding
// a rows raises it by at most a (the fact above), so one count moves by
// at most max(a, b) ≤ max(‖g⁺‖₁, ‖g⁻‖₁). Per group the change is at most
// a_g + b_g, and Σ_g (a_g + b_g) ≤ ‖g‖₁.
func DistinctInduced(b InducedBounds, d Distinct) (int64, error) {
	if b.MaxL1 < 0 || b.MaxHalf < 0 || b.MaxHalf > b.MaxL1 {
		return 0, fmt.Errorf("sensitivity: induced bounds %+v: %w", b, ErrInvalid)
	}
	if d.Grouped {
		return b.MaxL1, nil
	}
	return b.MaxHalf, nil
}
