package constraints

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnbounded marks a policy whose constraints (or secrets) have no bound
// this package can prove; the policy must not load.
var ErrUnbounded = errors.New("no proven sensitivity bound")

// MaxTuples caps the enumerated tuple domain (the product of the sizes of
// the constrained columns).
const MaxTuples = 1 << 20

// Column is one attribute of the tuple domain: its values are 0..Size-1
// (the declared domain, in order).
type Column struct {
	Name string
	Size int
	// Values are the numeric values of an ordinal column (distance
	// secrets); nil otherwise.
	Values []float64
}

// Predicate is a conjunction of per-column conditions: Allowed[c] lists
// which values of column c satisfy it (nil: any value).
type Predicate struct {
	Allowed [][]bool
}

func (p Predicate) holds(t []int) bool {
	for c, a := range p.Allowed {
		if a != nil && !a[t[c]] {
			return false
		}
	}
	return true
}

// Constraint kinds (as in the policy file).
const (
	KindTotal          = "total"
	KindMarginal       = "marginal"
	KindRowsAndColumns = "rows_and_columns"
	KindCount          = "count"
)

// Constraint is one declared constraint: one count (count, total) or a
// family of counts (every cell of a marginal, the rows and columns of a
// 2-D table).
type Constraint struct {
	// Name is how messages name it (the policy's own words).
	Name string
	Kind string
	// Columns are the marginal's or rows_and_columns' column indices.
	Columns []int
	// Count is the predicate of a count constraint.
	Count Predicate
}

// System is the constrained part of one table: its constrained (and
// secret) columns and the declared constraints.
type System struct {
	Columns     []Column
	Constraints []Constraint
	// OtherColumns is set when the table has declared columns outside
	// Columns: then every atom holds tuples that differ only there, and a
	// swap inside one atom is a move of L1 norm 2.
	OtherColumns bool
}

// count is one published count with the constraint it came from.
type count struct {
	pred  Predicate
	owner int // index into System.Constraints
}

// counts expands every constraint into its published counts.
func (s *System) counts() []count {
	var out []count
	for i, c := range s.Constraints {
		switch c.Kind {
		case KindTotal:
			out = append(out, count{pred: Predicate{Allowed: make([][]bool, len(s.Columns))}, owner: i})
		case KindCount:
			out = append(out, count{pred: c.Count, owner: i})
		case KindMarginal:
			for _, cell := range s.cells(c.Columns) {
				out = append(out, count{pred: cell, owner: i})
			}
		case KindRowsAndColumns:
			for _, col := range c.Columns {
				for _, cell := range s.cells([]int{col}) {
					out = append(out, count{pred: cell, owner: i})
				}
			}
		}
	}
	return out
}

// cells returns the predicates "cols = v" for every combination v.
func (s *System) cells(cols []int) []Predicate {
	out := []Predicate{{Allowed: make([][]bool, len(s.Columns))}}
	for _, c := range cols {
		var next []Predicate
		for _, p := range out {
			for v := range s.Columns[c].Size {
				a := slices.Clone(p.Allowed)
				a[c] = make([]bool, s.Columns[c].Size)
				a[c][v] = true
				next = append(next, Predicate{Allowed: a})
			}
		}
		out = next
	}
	return out
}

// tuples calls f with every tuple of the domain (reusing the slice).
func (s *System) tuples(f func(t []int)) error {
	n := 1
	for _, c := range s.Columns {
		if c.Size < 1 {
			return fmt.Errorf("column %s has an empty domain", c.Name)
		}
		n *= c.Size
		if n > MaxTuples {
			return fmt.Errorf("the constrained columns span more than %d tuples: %w", MaxTuples, ErrUnbounded)
		}
	}
	t := make([]int, len(s.Columns))
	for {
		f(t)
		i := len(t) - 1
		for ; i >= 0; i-- {
			t[i]++
			if t[i] < s.Columns[i].Size {
				break
			}
			t[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

// Atoms is the domain cut by the published counts: tuples with the same
// membership vector form one atom.
type Atoms struct {
	// A[q][a] is 1 when atom a satisfies count q.
	A [][]int64
	// Size[a] is the number of domain tuples in atom a.
	Size []int
	// Of maps a tuple's mixed-radix index to its atom.
	Of []int
	// Owner[q] is the constraint count q came from.
	Owner []int
}

// atoms computes the atoms of the system's counts.
func (s *System) atoms() (*Atoms, error) {
	cs := s.counts()
	at := &Atoms{A: make([][]int64, len(cs))}
	for i, c := range cs {
		at.Owner = append(at.Owner, c.owner)
		_ = i
	}
	index := map[string]int{}
	key := make([]byte, len(cs))
	err := s.tuples(func(t []int) {
		for q, c := range cs {
			key[q] = 0
			if c.pred.holds(t) {
				key[q] = 1
			}
		}
		a, ok := index[string(key)]
		if !ok {
			a = len(at.Size)
			index[string(key)] = a
			at.Size = append(at.Size, 0)
			for q := range cs {
				at.A[q] = append(at.A[q], int64(key[q]))
			}
		}
		at.Size[a]++
		at.Of = append(at.Of, a)
	})
	return at, err
}

// names lists the constraints with the given indices, for messages.
func (s *System) names(idx []int) string {
	slices.Sort(idx)
	idx = slices.Compact(idx)
	var out []string
	for _, i := range idx {
		out = append(out, s.Constraints[i].Name)
	}
	return strings.Join(out, "; ")
}

func (s *System) allNames() string {
	idx := make([]int, len(s.Constraints))
	for i := range idx {
		idx[i] = i
	}
	return s.names(idx)
}

// BoundError is a refusal that names the constraints (indices into
// System.Constraints) whose combination has no proven bound. It wraps
// ErrUnbounded.
type BoundError struct {
	Constraints []int
	Msg         string
}

func (e *BoundError) Error() string { return e.Msg + ": " + ErrUnbounded.Error() }

func (e *BoundError) Unwrap() error { return ErrUnbounded }

// refuse builds a BoundError; idx nil means every constraint.
func (s *System) refuse(idx []int, format string, args ...any) error {
	if idx == nil {
		for i := range s.Constraints {
			idx = append(idx, i)
		}
	}
	idx = slices.Clone(idx)
	slices.Sort(idx)
	return &BoundError{Constraints: slices.Compact(idx), Msg: fmt.Sprintf(format, args...)}
}

// Tuples calls f with every tuple of the System's domain (value i of a
// column is its i-th declared value), in the mixed-radix order atoms use;
// f must not keep t. It fails when the domain exceeds MaxTuples.
func (s *System) Tuples(f func(t []int)) error { return s.tuples(f) }
