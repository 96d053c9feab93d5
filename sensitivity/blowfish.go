package sensitivity

import (
	"fmt"

	"github.com/ddp-proxy/ddp-proxy/constraints"
)

// Reach says what one tuple change can do to a query's rows: the Blowfish
// calculus (DESIGN.md model 2) works per change. A change is an edge (x, y)
// of the secret graph G (or, under the literal reading of published
// constraints, any change), and it can only affect the query through the
// columns it reads.
type Reach struct {
	// Filter: a column of the WHERE clause (or a COUNT(col) argument, or a
	// private join column) can change, so a row can enter or leave the
	// aggregate.
	Filter bool
	// Group: a GROUP BY column can change, so a row can move between
	// groups.
	Group bool
	// Value: the summed column can change.
	Value bool
	// ValueStep, when positive, bounds the change of the summed value in
	// lattice units (distance secrets: θ); 0 means any value within the
	// bounds.
	ValueStep int64
	// NonNull: the summed column never holds NULL (a constrained column,
	// whose declared domain serve verifies), so a value change stays in
	// [Lo, Hi] instead of possibly reaching NULL (which adds 0).
	NonNull bool
}

// PerChange is c(q): the largest L1 change of agg when one tuple changes
// as r allows. Lo and Hi are the clamping bounds in lattice units.
//
// Proof. A row contributes c(x) = 0 if it fails the WHERE clause, else
// e_group(x) (counts) or v(x)·e_group(x) (sums, v clamped to [lo, hi]);
// the change moves one row from x to y, so the L1 change is ‖c(y) − c(x)‖₁.
// If none of Filter, Group, Value holds, c(y) = c(x): 0. Count: |Δ| ≤ 1,
// and only Filter can change it. Histogram: moving between groups costs 2
// (needs Group), entering or leaving costs 1 (needs Filter). Sum: entering
// or leaving costs |v| ≤ M = max(|lo|, |hi|) (Filter); a value change
// costs ≤ hi − lo, or ≤ min(step, hi − lo) when bounded by a step —
// except that a value change without a step can also be a change to or
// from NULL, which costs ≤ M, so it is max(hi − lo, M) unless the column
// is NonNull. Grouped sum: moving groups costs |v(x)| + |v(y)| ≤ 2M
// (Group); otherwise as the sum.
//
// Lo and Hi need not be the clamping bounds: any interval that holds
// every value a row can add when it passes (the clamped declared domain,
// for instance) makes the same proof hold.
func PerChange(agg Aggregate, r Reach) (int64, error) {
	if agg.Kind == KindSum || agg.Kind == KindGroupedSum {
		if agg.Lo > agg.Hi {
			return 0, fmt.Errorf("sensitivity: per-change bound over [%d, %d]: %w", agg.Lo, agg.Hi, ErrInvalid)
		}
	}
	if r.ValueStep < 0 {
		return 0, fmt.Errorf("sensitivity: negative value step: %w", ErrInvalid)
	}
	if d, ok := agg.Kind.Distinct(); ok {
		return DistinctPerChange(d, r)
	}
	switch agg.Kind {
	case KindCount:
		if r.Filter {
			return 1, nil
		}
		return 0, nil
	case KindHistogram:
		switch {
		case r.Group:
			return 2, nil
		case r.Filter:
			return 1, nil
		}
		return 0, nil
	case KindSum, KindGroupedSum:
		m := maxAbs(agg.Lo, agg.Hi)
		var s uint64
		if r.Filter {
			s = m
		}
		if r.Value {
			w := width(agg.Lo, agg.Hi) // max(hi − lo, M)
			if r.NonNull {
				w = uint64(agg.Hi) - uint64(agg.Lo) // exact for lo ≤ hi
			}
			if r.ValueStep > 0 {
				// uint64 subtraction is exact for lo ≤ hi.
				w = min(uint64(r.ValueStep), uint64(agg.Hi)-uint64(agg.Lo))
			}
			s = max(s, w)
		}
		if agg.Kind == KindGroupedSum && r.Group {
			s2, err := mul(2, m)
			if err != nil {
				return 0, err
			}
			s = max(s, uint64(s2))
		}
		if s > 1<<63-1 {
			return 0, fmt.Errorf("sensitivity: per-change bound: %w", ErrOverflow)
		}
		return int64(s), nil
	}
	return 0, fmt.Errorf("sensitivity: aggregate kind %v: %w", agg.Kind, ErrInvalid)
}

// Blowfish is S(q) ≤ maxT · c(q): neighbours differ in at most maxT tuple
// changes, each changing q by at most perChange (DESIGN.md model 3,
// model: blowfish).
func Blowfish(maxT, perChange int64) (int64, error) {
	if maxT < 1 || perChange < 0 {
		return 0, fmt.Errorf("sensitivity: blowfish maxT %d, per change %d: %w", maxT, perChange, ErrInvalid)
	}
	s, err := mul(uint64(maxT), uint64(perChange))
	if err != nil {
		return 0, fmt.Errorf("sensitivity: blowfish %d × %d: %w", maxT, perChange, err)
	}
	return s, nil
}

// InducedBounds are the load-time numbers of an induced dataset.
type InducedBounds struct {
	// MaxL1 is the largest ‖g‖₁ and MaxHalf the largest max(‖g⁺‖₁, ‖g⁻‖₁)
	// over the Graver basis of the constraints.
	MaxL1, MaxHalf int64
}

// Induced is the sensitivity of agg under neighbours induced by published
// counts: neighbours differ by a Graver element g (g⁺ rows added, g⁻ rows
// removed).
//
// Proof. The change of a histogram is Σ_groups |Σ_{rows in group} ±1| ≤
// ‖g‖₁. A count changes by |#added passing − #removed passing| ≤
// max(‖g⁺‖₁, ‖g⁻‖₁). A sum changes by Σ_added c − Σ_removed c with c ∈ [a,
// b] = [min(lo, 0), max(hi, 0)]: at most max(‖g⁺‖₁, ‖g⁻‖₁)·(b − a), and at
// most ‖g‖₁·M (M = max(|lo|, |hi|)); the smaller one holds. A grouped sum
// changes by at most Σ |c| ≤ ‖g‖₁·M.
func Induced(b InducedBounds, agg Aggregate) (int64, error) {
	// MaxL1 = 0 is legitimate: the constraints publish the whole histogram
	// (no two tables with the same answers differ), so nothing changes.
	if b.MaxL1 < 0 || b.MaxHalf < 0 || b.MaxHalf > b.MaxL1 {
		return 0, fmt.Errorf("sensitivity: induced bounds %+v: %w", b, ErrInvalid)
	}
	if d, ok := agg.Kind.Distinct(); ok {
		return DistinctInduced(b, d)
	}
	switch agg.Kind {
	case KindHistogram:
		return b.MaxL1, nil
	case KindCount:
		return b.MaxHalf, nil
	case KindSum, KindGroupedSum:
		if agg.Lo > agg.Hi {
			return 0, fmt.Errorf("sensitivity: induced sum over [%d, %d]: %w", agg.Lo, agg.Hi, ErrInvalid)
		}
		byL1, err := mul(uint64(b.MaxL1), maxAbs(agg.Lo, agg.Hi))
		if err != nil {
			return 0, fmt.Errorf("sensitivity: induced sum: %w", err)
		}
		if agg.Kind == KindGroupedSum {
			return byL1, nil
		}
		byHalf, err := mul(uint64(b.MaxHalf), width(agg.Lo, agg.Hi))
		if err != nil {
			return byL1, nil
		}
		return min(byL1, byHalf), nil
	}
	return 0, fmt.Errorf("sensitivity: aggregate kind %v: %w", agg.Kind, ErrInvalid)
}

// Secret graph kinds, as in the policy file (constraints owns them).
const (
	SecretsFull      = constraints.SecretsFull
	SecretsAttribute = constraints.SecretsAttribute
	SecretsPartition = constraints.SecretsPartition
	SecretsDistance  = constraints.SecretsDistance
)

// Secrets describes a secret graph G by the columns its edges can change.
type Secrets struct {
	Kind string
	// Partition lists the columns a partition keeps fixed (partition:
	// {columns: [...]}); empty for a bucketed partition, whose column
	// changes within its bucket.
	Partition []string
	// Column is the distance column, or the column of a bucketed
	// partition.
	Column string
	// Step bounds the change of Column's quantized value along an edge, in
	// lattice units: θ for distance secrets, the widest bucket for a
	// bucketed partition (0: unbounded).
	Step int64
}

// Changeable reports whether an edge of G can change column col.
func (g Secrets) Changeable(col string) bool {
	switch g.Kind {
	case SecretsPartition:
		for _, p := range g.Partition {
			if p == col {
				return false
			}
		}
		return true
	case SecretsDistance:
		return col == g.Column
	}
	return true // full, attribute: every column (attribute: one at a time)
}

// Reach says what one edge of G can do to a query that filters on where,
// groups by group and sums value ("" for counts).
func (g Secrets) Reach(where, group []string, value string) Reach {
	var r Reach
	for _, c := range where {
		r.Filter = r.Filter || g.Changeable(c)
	}
	for _, c := range group {
		r.Group = r.Group || g.Changeable(c)
	}
	if value != "" && g.Changeable(value) {
		r.Value = true
		if g.Kind == SecretsDistance || (g.Kind == SecretsPartition && value == g.Column && g.Step > 0) {
			r.ValueStep = max(g.Step, 1)
		}
	}
	return r
}

// ReachExpr is Reach for a sum of an expression reading the columns
// values (of one row): an edge that changes any of them may move the
// summand anywhere in its range, so Value is set without a step. Why no
// step: θ bounds the change of the distance column, not of an arbitrary
// function of it ((x − m)² moves by up to θ·(2·max|x − m|) ); PerChange
// then charges max(hi − lo, |lo|, |hi|), the bound of an arbitrary change,
// which holds for every function whose clamped value lies in [lo, hi]. An
// edge that changes none of them leaves the summand as it was. The same
// argument makes group a set of columns: a grouping key that is a function
// of columns no edge changes never moves a row between groups.
func (g Secrets) ReachExpr(where, group, values []string) Reach {
	r := g.Reach(where, group, "")
	for _, c := range values {
		r.Value = r.Value || g.Changeable(c)
	}
	return r
}

// AnyChange is the reach of an arbitrary change of one tuple (literal
// reading of published constraints: compensating changes take any value).
func AnyChange(where, group []string, value string) Reach {
	return Secrets{Kind: SecretsFull}.Reach(where, group, value)
}

// AnyChangeExpr is AnyChange for a sum of an expression reading values.
func AnyChangeExpr(where, group, values []string) Reach {
	return Secrets{Kind: SecretsFull}.ReachExpr(where, group, values)
}
