package constraints

import (
	"errors"
	"fmt"
	"slices"
)

// MaxGraverAtoms caps the atoms of a general Graver computation at load.
const MaxGraverAtoms = 24

// graverWork caps the completion procedure's work (normal-form steps).
const graverWork = 20_000_000

// Induced is the load-time analysis of a model: induced dataset. Every
// induced neighbour pair differs by one Graver element g of the constraint
// matrix over the full tuple domain (Def. 4.4: b − a is in ker A and no
// proper conformal part of it is), and every Graver element is realised by
// a pair (a = g⁻, b = g⁺ with the published values they induce).
type Induced struct {
	// MaxL1 is max ‖g‖₁ over the Graver basis: the histogram sensitivity.
	MaxL1 int64
	// MaxHalf is max(‖g⁺‖₁, ‖g⁻‖₁) over the Graver basis: a 0/1 count
	// changes by at most this much.
	MaxHalf int64
	// Method names the rule that produced the numbers.
	Method string
	// Exact is set when MaxL1 is the exact histogram sensitivity (for
	// enough rows), not only an upper bound.
	Exact bool
	// Atoms is the number of atoms the counts cut the domain into.
	Atoms int

	// For CountBound (nil when a closed form was used): the system, its
	// atoms, the atom-level Graver basis, and the atoms whose non-zero
	// column holds two or more tuples (their swaps are Graver elements).
	sys       *System
	at        *Atoms
	basis     []Vector
	swapAtom  []bool
	haveBasis bool
}

// InducedBound analyses s under Kifer–Machanavajjhala induced neighbours.
//
// Over the full domain the matrix has one column per tuple, and tuples of
// one atom have equal columns. Its Graver basis is the atom-level Graver
// basis spread over the tuples of each atom (same signs within an atom, so
// the L1 norm is unchanged), plus the swaps e_x − e_y of two tuples of one
// atom whose column is not zero (norm 2): a kernel element with mixed signs
// inside such an atom has the swap as a conformal part, and an element
// whose signs agree inside every atom projects to an atom-level element that
// is primitive iff it is. So MaxL1 = max(atom-level MaxL1, 2 if some atom
// with a non-zero column holds two tuples).
func InducedBound(s *System) (Induced, error) {
	if len(s.Constraints) == 0 {
		return Induced{MaxL1: 1, MaxHalf: 1, Method: "no constraints: a move adds or removes one row", Exact: true}, nil
	}
	closed, isClosed := rowsAndColumnsOnly(s)
	if isClosed && closed.Atoms > MaxGraverAtoms {
		return closed, nil
	}
	at, err := s.atoms()
	if err != nil {
		return Induced{}, fmt.Errorf("constraints %s: %w", s.allNames(), err)
	}
	m := len(at.Size)
	swap := int64(0)
	swapAtom := make([]bool, m)
	for a := range m {
		if (at.Size[a] > 1 || s.OtherColumns) && !zeroColumn(at.A, a) {
			swap = 2
			swapAtom[a] = true
		}
	}
	if isClosed {
		// Small table: keep its basis for per-predicate counts too.
		if gs, err := graverBasis(dedupRows(at.A), m, graverWork); err == nil {
			closed.sys, closed.at, closed.basis, closed.swapAtom, closed.haveBasis = s, at, gs, swapAtom, true
		}
		return closed, nil
	}
	if r, ok := chain(s, at); ok {
		r.MaxL1 = max(r.MaxL1, swap)
		r.MaxHalf = max(r.MaxHalf, swap/2)
		if m <= MaxGraverAtoms {
			if gs, err := graverBasis(dedupRows(at.A), m, graverWork); err == nil {
				r.sys, r.at, r.basis, r.swapAtom, r.haveBasis = s, at, gs, swapAtom, true
			}
		}
		return r, nil
	}
	if m > MaxGraverAtoms {
		return Induced{}, s.refuse(nil, "constraints %s cut the domain into %d atoms; the proxy computes the Graver basis of at most %d at load and knows no closed form for this combination (closed forms: rows_and_columns alone, a chain of pair counts)",
			s.allNames(), m, MaxGraverAtoms)
	}
	gs, err := graverBasis(dedupRows(at.A), m, graverWork)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return Induced{}, s.refuse(nil, "constraints %s: the Graver basis over %d atoms is too large to compute at load", s.allNames(), m)
		}
		return Induced{}, fmt.Errorf("constraints %s: %w", s.allNames(), err)
	}
	l1, half := graverStats(gs)
	return Induced{
		sys: s, at: at, basis: gs, swapAtom: swapAtom, haveBasis: true,
		MaxL1: max(l1, swap), MaxHalf: max(half, swap/2), Atoms: m, Exact: true,
		Method: fmt.Sprintf("Graver basis of the constraints over %d atoms (%d elements), computed at load", m, len(gs)),
	}, nil
}

func zeroColumn(A [][]int64, a int) bool {
	for _, row := range A {
		if row[a] != 0 {
			return false
		}
	}
	return true
}

func dedupRows(A [][]int64) [][]int64 {
	var out [][]int64
	for _, r := range A {
		if !slices.ContainsFunc(out, func(x []int64) bool { return slices.Equal(x, r) }) {
			out = append(out, r)
		}
	}
	return out
}

// rowsAndColumnsOnly is kifer2011 Lemma 4.1: when the published counts are
// exactly the row and column sums of an r×c table over columns a and b
// (also implied: total, marginal [a], marginal [b]), the histogram
// sensitivity is min(2r, 2c). The Graver basis of a bipartite incidence
// matrix is its set of alternating cycles (it is totally unimodular), the
// longest of which has min(2r, 2c) cells; swaps inside a cell (other
// columns) have norm 2 ≤ min(2r, 2c).
func rowsAndColumnsOnly(s *System) (Induced, bool) {
	var pair []int
	for _, c := range s.Constraints {
		if c.Kind == KindRowsAndColumns {
			if pair != nil && !sameSet(pair, c.Columns) {
				return Induced{}, false
			}
			pair = c.Columns
		}
	}
	if len(pair) != 2 {
		return Induced{}, false
	}
	for _, c := range s.Constraints {
		switch {
		case c.Kind == KindRowsAndColumns, c.Kind == KindTotal:
		case c.Kind == KindMarginal && len(c.Columns) == 1 && slices.Contains(pair, c.Columns[0]):
		default:
			return Induced{}, false
		}
	}
	r, c := int64(s.Columns[pair[0]].Size), int64(s.Columns[pair[1]].Size)
	return Induced{
		MaxL1: 2 * min(r, c), MaxHalf: min(r, c), Exact: true, Atoms: int(r * c),
		Method: fmt.Sprintf("row and column sums of a %d×%d table: min(2r, 2c) (kifer2011 Lemma 4.1)", r, c),
	}, true
}

func sameSet(a, b []int) bool {
	return len(a) == len(b) && slices.Contains(b, a[0]) && slices.Contains(b, a[1])
}

// chain recognises counts that are all two-value counts on one column
// whose pairs form one path v1–v2–…–vk (kifer2011 §4.1): the atom matrix
// restricted to the path is the path's edge-vertex incidence matrix, whose
// integer kernel is spanned by the single alternating vector (±1 on the k
// path values), so the Graver basis is {±(1,−1,1,…)} plus unit vectors of
// the values off the path: max L1 = k.
func chain(s *System, at *Atoms) (Induced, bool) {
	col := -1
	var pairs [][2]int
	for _, c := range s.Constraints {
		if c.Kind != KindCount {
			return Induced{}, false
		}
		var vals []int
		for j, a := range c.Count.Allowed {
			if a == nil {
				continue
			}
			if col >= 0 && j != col {
				return Induced{}, false
			}
			col = j
			for v, ok := range a {
				if ok {
					vals = append(vals, v)
				}
			}
		}
		if len(vals) != 2 {
			return Induced{}, false
		}
		pairs = append(pairs, [2]int{vals[0], vals[1]})
	}
	if col < 0 {
		return Induced{}, false
	}
	// A path: every value has degree ≤ 2, k−1 distinct edges on k
	// values, connected.
	deg := map[int]int{}
	adj := map[int][]int{}
	seen := map[[2]int]bool{}
	for _, p := range pairs {
		if seen[p] {
			return Induced{}, false
		}
		seen[p] = true
		deg[p[0]]++
		deg[p[1]]++
		adj[p[0]] = append(adj[p[0]], p[1])
		adj[p[1]] = append(adj[p[1]], p[0])
	}
	k := len(deg)
	if len(pairs) != k-1 {
		return Induced{}, false
	}
	start := -1
	for v, d := range deg {
		if d > 2 {
			return Induced{}, false
		}
		if d == 1 {
			start = v
		}
	}
	visited := map[int]bool{start: true}
	stack := []int{start}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range adj[v] {
			if !visited[w] {
				visited[w] = true
				stack = append(stack, w)
			}
		}
	}
	if len(visited) != k {
		return Induced{}, false
	}
	return Induced{
		MaxL1: int64(k), MaxHalf: int64((k + 1) / 2), Exact: true, Atoms: len(at.Size),
		Method: fmt.Sprintf("chain of %d published pair counts over %d values of %s: k (kifer2011 §4.1)", k-1, k, s.Columns[col].Name),
	}, true
}

// CountBound is the sensitivity of one count whose predicate is q on the
// System's columns (t indexes each column's domain) and, when
// restrictsOther, also restricts columns outside the System. ok is false
// when no Graver basis was kept (a closed form was used): use MaxHalf.
//
// Proof. The full-domain Graver basis is the atom-level basis spread over
// each atom's tuples with one sign per atom, plus swaps inside atoms (see
// InducedBound). For a spread g the count changes by Σ_{t∈q} g_t; the
// largest value puts an atom's positive mass on tuples in q whenever the
// atom meets q, and its negative mass outside q unless the atom lies
// inside q: Σ_{g_a>0, a∩q≠∅} g_a − Σ_{g_a<0, a⊆q} |g_a| (and the same for
// −g, also in the basis). A swap changes the count by 1 only when q splits
// its atom. With columns outside the System restricted, no atom lies
// inside q (the other column can fail) and every swap atom meeting q is
// split.
func (r Induced) CountBound(q func(t []int) bool, restrictsOther bool) (int64, bool) {
	// A row of tuple t adds 1 when it passes; when columns outside the
	// System are restricted too, every row may also fail (add 0).
	sens, _, ok := r.SumBound(func(t []int) (lo, hi int64) {
		if !q(t) {
			return 0, 0
		}
		if restrictsOther {
			return 0, 1
		}
		return 1, 1
	}, false)
	return sens, ok
}
