package constraints

import (
	"fmt"
	"math"
	"slices"
)

// Secret graph kinds (as in the policy file). They are defined here
// only: sensitivity and policies re-export them.
const (
	SecretsFull      = "full"
	SecretsAttribute = "attribute"
	SecretsPartition = "partition"
	SecretsDistance  = "distance"
)

// Secrets is a Blowfish secret graph G, restricted to the System's columns.
type Secrets struct {
	Kind string
	// Columns are the partition columns (indices into System.Columns; a
	// partition column that is not constrained is left out: it cannot
	// change any published count).
	Columns []int
	// Column is the distance or bucketed-partition column (-1: it is not
	// among the System's columns).
	Column int
	// Bucket[v] is the cell of value v of Column (bucketed partition).
	Bucket []int
	// Theta is the distance threshold over Column's Values.
	Theta float64
}

// edge reports whether tuples x ≠ y (over the System's columns) can be
// the projections of a secret pair. Columns outside the System are free
// unless the kind pins them (attribute: an edge changes one attribute, so
// a change visible here pins everything else).
func (g *Secrets) edge(s *System, x, y []int) bool {
	switch g.Kind {
	case SecretsFull:
		return true
	case SecretsAttribute:
		diff := 0
		for i := range x {
			if x[i] != y[i] {
				diff++
			}
		}
		return diff <= 1
	case SecretsPartition:
		if g.Bucket != nil {
			return g.Column < 0 || g.Bucket[x[g.Column]] == g.Bucket[y[g.Column]]
		}
		for _, c := range g.Columns {
			if x[c] != y[c] {
				return false
			}
		}
		return true
	case SecretsDistance:
		for i := range x {
			if i != g.Column && x[i] != y[i] {
				return false
			}
		}
		if g.Column < 0 {
			return true
		}
		vals := s.Columns[g.Column].Values
		return g.near(vals[x[g.Column]], vals[y[g.Column]])
	}
	return false
}

// Blowfish is the load-time analysis of a model: blowfish dataset with
// constraints.
type Blowfish struct {
	// MaxT bounds the number of tuples that differ between neighbours.
	MaxT int64
	// SecretsOnly is set when MaxT holds only under compensation:
	// secrets-only (every change between neighbours is a secret pair), so
	// a per-change contribution may use G's edges.
	SecretsOnly bool
	// Alpha and Xi are the policy graph's longest simple cycle and longest
	// simple v⁺→v⁻ path (secrets-only; -1 when not computed).
	Alpha, Xi int64
	// Method names the rule or theorem.
	Method string
	// Exact is set when MaxT is attained (with enough rows).
	Exact bool
	// EdgesKeepCounts is set when no edge of G changes a published count:
	// neighbours are single secret changes under either reading
	// (edgesKeepCounts), so MaxT = 1 and SecretsOnly is set.
	EdgesKeepCounts bool
}

// BlowfishBound analyses s under Blowfish neighbours (He et al. Def. 4.1)
// with secret graph g. secretsOnly selects the opt-in reading in which every
// change between neighbours is a secret pair.
//
// total is dropped first: Blowfish neighbours always have the same number
// of rows, so publishing it changes nothing.
func BlowfishBound(s *System, g *Secrets, secretsOnly bool) (Blowfish, error) {
	s = withoutTotal(s)
	if len(s.Constraints) == 0 {
		return Blowfish{MaxT: 1, Alpha: -1, Xi: -1, Exact: true, SecretsOnly: true,
			Method: "no constraints: a neighbour changes one tuple along an edge of G"}, nil
	}
	at, err := s.atoms()
	if err != nil {
		return Blowfish{}, fmt.Errorf("constraints %s: %w", s.allNames(), err)
	}
	if edgesKeepCounts(s, g, at) {
		return Blowfish{MaxT: 1, Alpha: -1, Xi: -1, Exact: true, SecretsOnly: true, EdgesKeepCounts: true,
			Method: "no edge of the secret graph changes any published count (every secret pair keeps each count's predicate value): neighbours are single secret changes, maxT = 1, as without constraints"}, nil
	}
	if secretsOnly {
		return policyGraphBound(s, g, at)
	}
	return disjointRule(s, at)
}

func withoutTotal(s *System) *System {
	out := *s
	out.Constraints = slices.DeleteFunc(slices.Clone(s.Constraints), func(c Constraint) bool { return c.Kind == KindTotal })
	return &out
}

// disjointRule is the literal reading (compensating changes of any value).
// Let the p published counts have pairwise disjoint predicates, and region
// 0 the tuples satisfying none. A change moves a tuple between regions; a
// set of changes keeps Q iff every region 1..p loses as many tuples as it
// gains. If the changes between neighbours contained a proper non-empty
// balanced subset, dropping it (if it has no secret change: Def. 4.1 3b,
// same T and smaller Δ) or keeping only it (3a, smaller non-empty T) or
// dropping its complement would give a D3 that Def. 4.1 forbids; so the
// changes form one simple cycle in the complete digraph on the non-empty
// regions: maxT = p + 1 if region 0 is non-empty, else p (one marginal:
// size(C), Thm 8.4). Overlapping predicates are refused: the policy graph
// assumes sparsity, and no exact bound is implemented for them.
func disjointRule(s *System, at *Atoms) (Blowfish, error) {
	p := len(at.A)
	none := false
	for a := range at.Size {
		k := 0
		var first int
		for q := range p {
			if at.A[q][a] == 1 {
				if k == 1 {
					return balancedBound(s, at, []int{at.Owner[first], at.Owner[q]})
				}
				first = q
				k++
			}
		}
		if k == 0 {
			none = true
		}
	}
	// Counts that no tuple satisfies publish 0 and constrain nothing.
	regions := 0
	for q := range p {
		if slices.Contains(at.A[q], 1) {
			regions++
		}
	}
	maxT := int64(regions)
	if none {
		maxT++
	}
	maxT = max(maxT, 1)
	return Blowfish{MaxT: maxT, Alpha: -1, Xi: -1, Exact: true,
		Method: fmt.Sprintf("%d pairwise-disjoint published counts%s: maxT = %d (disjoint-predicate rule; He et al. Thm 8.2 on the complete policy graph, Thm 8.4 for one marginal)",
			regions, map[bool]string{true: " and tuples outside all of them", false: " covering the domain"}[none], maxT)}, nil
}

// MaxMoveVectors caps the distinct move vectors of the exact search for
// overlapping counts.
const MaxMoveVectors = 40

// balancedBound handles overlapping counts under the literal reading. A
// change moves one tuple from atom a to atom b and shifts the published
// counts by v = A_b − A_a. The changes between neighbours form a multiset
// whose shifts sum to 0 (both satisfy Q) and, by the argument of
// disjointRule, that has no proper non-empty sub-multiset summing to 0.
// Such minimal zero-sum multisets are exactly the non-negative elements of
// the Graver basis of the matrix whose columns are the distinct non-zero
// shift vectors (for z ≥ 0, conformal means componentwise ≤), so maxT is at
// most their largest size (and at least 1: a change inside one atom). This
// is an upper bound: Def. 4.1 may forbid some of these sets (its D3 may
// also change tuples outside them).
func balancedBound(s *System, at *Atoms, overlapping []int) (Blowfish, error) {
	p, m := len(at.A), len(at.Size)
	var vecs [][]int64
	for a := range m {
		for b := range m {
			if a == b {
				continue
			}
			v := make([]int64, p)
			zero := true
			for q := range p {
				v[q] = at.A[q][b] - at.A[q][a]
				zero = zero && v[q] == 0
			}
			if zero || slicesContains(vecs, v) {
				continue
			}
			vecs = append(vecs, v)
		}
	}
	refuse := func(why string) (Blowfish, error) {
		return Blowfish{}, s.refuse(overlapping, "constraints %s overlap (some tuple satisfies counts of both) and %s: under model blowfish as written (compensating changes of any value) the proxy cannot bound them; use model: induced, or compensation: secrets-only for the weaker reading",
			s.names(overlapping), why)
	}
	if len(vecs) > MaxMoveVectors {
		return refuse(fmt.Sprintf("the exact search over their %d move vectors exceeds the %d it handles at load", len(vecs), MaxMoveVectors))
	}
	V := make([][]int64, p)
	for q := range p {
		for _, v := range vecs {
			V[q] = append(V[q], v[q])
		}
	}
	gs, err := graverBasis(dedupRows(V), len(vecs), graverWork)
	if err != nil {
		return refuse("their move-set Graver basis is too large to compute at load")
	}
	maxT := int64(1)
	for _, g := range gs {
		nonneg, size := true, int64(0)
		for _, x := range g {
			nonneg = nonneg && x >= 0
			size += x
		}
		if nonneg {
			maxT = max(maxT, size)
		}
	}
	return Blowfish{MaxT: maxT, Alpha: -1, Xi: -1,
		Method: fmt.Sprintf("overlapping published counts: exact search over minimal balanced move sets (%d move vectors between %d atoms): maxT ≤ %d (upper bound)", len(vecs), m, maxT)}, nil
}

func slicesContains(vs [][]int64, v []int64) bool {
	return slices.ContainsFunc(vs, func(x []int64) bool { return slices.Equal(x, v) })
}

// near reports whether two values of the distance column are at most θ
// apart as the policy writes them. The values are doubles rounded from
// the policy's decimals (0.8 − 0.6 is 0.20000000000000007), so the
// difference is compared with θ plus its possible rounding, (|a| + |b| +
// θ)·2^-51: a pair the policy puts at exactly θ stays an edge. More edges
// only make the analysis more conservative.
func (g *Secrets) near(a, b float64) bool {
	return math.Abs(a-b) <= g.Theta+(math.Abs(a)+math.Abs(b)+g.Theta)*0x1p-51
}
