package constraints

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// domain is a random multi-column tuple domain of at most 8 tuples; value v
// of the oracle is the mixed-radix index of a tuple (column 0 most
// significant), exactly as System.tuples enumerates them.
type domain struct {
	sizes []int
}

func (d domain) size() int {
	n := 1
	for _, s := range d.sizes {
		n *= s
	}
	return n
}

func (d domain) tuple(v int) []int {
	t := make([]int, len(d.sizes))
	for i := len(d.sizes) - 1; i >= 0; i-- {
		t[i] = v % d.sizes[i]
		v /= d.sizes[i]
	}
	return t
}

func randomDomain(r *rand.Rand) domain {
	shapes := [][]int{{2}, {3}, {4}, {5}, {6}, {8}, {2, 2}, {2, 3}, {2, 4}, {3, 2}, {2, 2, 2}, {4, 2}}
	return domain{sizes: shapes[r.IntN(len(shapes))]}
}

func (d domain) system() *System {
	s := &System{}
	for i, n := range d.sizes {
		vals := make([]float64, n)
		for v := range vals {
			vals[v] = float64(v)
		}
		s.Columns = append(s.Columns, Column{Name: fmt.Sprintf("c%d", i), Size: n, Values: vals})
	}
	return s
}

// randomConstraint draws one constraint over d.
func randomConstraint(r *rand.Rand, d domain, s *System) Constraint {
	nc := len(d.sizes)
	for {
		switch r.IntN(4) {
		case 0:
			return Constraint{Name: "total", Kind: KindTotal}
		case 1:
			var cols []int
			for c := range nc {
				if r.IntN(2) == 0 {
					cols = append(cols, c)
				}
			}
			if len(cols) == 0 {
				cols = []int{r.IntN(nc)}
			}
			return Constraint{Name: fmt.Sprintf("marginal %v", cols), Kind: KindMarginal, Columns: cols}
		case 2:
			if nc < 2 {
				continue
			}
			a := r.IntN(nc)
			b := (a + 1 + r.IntN(nc-1)) % nc
			return Constraint{Name: fmt.Sprintf("rows_and_columns %d %d", a, b), Kind: KindRowsAndColumns, Columns: []int{a, b}}
		default:
			p := Predicate{Allowed: make([][]bool, nc)}
			for c := range nc {
				if r.IntN(2) == 0 && c != 0 {
					continue
				}
				a := make([]bool, d.sizes[c])
				for v := range a {
					a[v] = r.IntN(2) == 0
				}
				a[r.IntN(len(a))] = true
				p.Allowed[c] = a
			}
			return Constraint{Name: fmt.Sprintf("count %v", p.Allowed), Kind: KindCount, Count: p}
		}
	}
}

// predicates turns s's counts into oracle predicates over values.
func predicates(s *System, d domain) []func(int) bool {
	var out []func(int) bool
	for _, c := range s.counts() {
		out = append(out, func(v int) bool { return c.pred.holds(d.tuple(v)) })
	}
	return out
}

func histogramQuery(n int) oracle.Query {
	g := make([]int, n)
	for v := range g {
		g[v] = v
	}
	return oracle.Aggregate{GroupOf: g, Groups: n}.Query()
}

func randomCountQuery(r *rand.Rand, n int) (oracle.Query, []bool) {
	w := make([]bool, n)
	for v := range w {
		w[v] = r.IntN(2) == 0
	}
	return oracle.Aggregate{Where: w}.Query(), w
}

// TestInducedAgainstOracle: on random small policies, the load-time
// induced bound is ≥ the brute-force induced-neighbour sensitivity of the
// histogram (and MaxHalf ≥ that of a random count), and equal to it when
// every Graver element fits in the enumerated space (MaxHalf ≤ n): the
// bound is exact.
func TestInducedAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	const n = 4
	exact, refused := 0, 0
	for trial := range 120 {
		d := randomDomain(r)
		s := d.system()
		for range 1 + r.IntN(3) {
			s.Constraints = append(s.Constraints, randomConstraint(r, d, s))
		}
		got, err := InducedBound(s)
		if err != nil {
			if !errors.Is(err, ErrUnbounded) {
				t.Fatalf("trial %d: %v", trial, err)
			}
			refused++
			continue
		}
		u, err := oracle.NewUniverse(oracle.Space{Domain: d.size(), MaxUnits: n, RowsPerUnit: 1})
		if err != nil {
			t.Fatal(err)
		}
		pairs := oracle.NewPairs(u, oracle.Induced(predicates(s, d)))
		w := pairs.MaxL1(histogramQuery(d.size()))
		if w.L1 > got.MaxL1 {
			t.Fatalf("trial %d %v %s: oracle %d > bound %d (%s); witness %v → %v", trial, d.sizes, s.allNames(), w.L1, got.MaxL1, got.Method, w.D1, w.D2)
		}
		if got.Exact && got.MaxHalf <= n {
			exact++
			if w.L1 != got.MaxL1 {
				t.Fatalf("trial %d %v %s: oracle %d, bound %d claimed exact (%s)", trial, d.sizes, s.allNames(), w.L1, got.MaxL1, got.Method)
			}
		}
		q, where := randomCountQuery(r, d.size())
		if cw := pairs.MaxL1(q); cw.L1 > got.MaxHalf {
			t.Fatalf("trial %d %v %s: count %v oracle %d > MaxHalf %d", trial, d.sizes, s.allNames(), where, cw.L1, got.MaxHalf)
		}
	}
	t.Logf("%d exact comparisons, %d refused", exact, refused)
	if exact < 40 {
		t.Errorf("only %d exact comparisons", exact)
	}
}

// TestInducedClosedForms: the closed forms agree with the general Graver
// computation where both apply.
func TestInducedClosedForms(t *testing.T) {
	for _, rc := range [][2]int{{2, 2}, {2, 3}, {3, 3}, {2, 5}, {3, 4}} {
		d := domain{sizes: []int{rc[0], rc[1]}}
		s := d.system()
		s.Constraints = []Constraint{{Name: "rc", Kind: KindRowsAndColumns, Columns: []int{0, 1}}}
		closed, err := InducedBound(s)
		if err != nil {
			t.Fatal(err)
		}
		at, _ := s.atoms()
		gs, err := graverBasis(at.A, len(at.Size), graverWork)
		if err != nil {
			t.Fatal(err)
		}
		l1, _ := graverStats(gs)
		if l1 != closed.MaxL1 || closed.MaxL1 != int64(2*min(rc[0], rc[1])) {
			t.Errorf("%v: closed form %d, Graver %d", rc, closed.MaxL1, l1)
		}
	}
	for k := 2; k <= 9; k++ {
		d := domain{sizes: []int{k + 1}} // one value off the chain
		s := d.system()
		for j := range k - 1 {
			a := make([]bool, k+1)
			a[j], a[j+1] = true, true
			s.Constraints = append(s.Constraints, Constraint{Name: fmt.Sprint("pair ", j), Kind: KindCount, Count: Predicate{Allowed: [][]bool{a}}})
		}
		got, err := InducedBound(s)
		if err != nil {
			t.Fatal(err)
		}
		at, _ := s.atoms()
		gs, err := graverBasis(at.A, len(at.Size), graverWork)
		if err != nil {
			t.Fatal(err)
		}
		l1, _ := graverStats(gs)
		atomLevel := int64(k) // for k = 2 the pair is one atom: its swap is not an atom-level element
		if k == 2 {
			atomLevel = 1
		}
		if got.MaxL1 != int64(k) || l1 != atomLevel {
			t.Errorf("chain k=%d: closed form %d, Graver %d", k, got.MaxL1, l1)
		}
	}
}

// TestGraverBruteForce compares the completion procedure with the
// ⊑-minimal kernel elements found by enumeration, on random small integer
// matrices whose Graver elements have small entries.
func TestGraverBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const bound = 3
	for trial := range 60 {
		m := 2 + r.IntN(4)
		p := 1 + r.IntN(3)
		A := make([][]int64, p)
		for i := range A {
			A[i] = make([]int64, m)
			for j := range A[i] {
				A[i][j] = int64(r.IntN(3)) - 0
				if r.IntN(4) == 0 {
					A[i][j] = 2
				}
			}
		}
		gs, err := graverBasis(A, m, graverWork)
		if err != nil {
			t.Fatal(err)
		}
		var kernel []Vector
		v := make(Vector, m)
		var rec func(i int)
		rec = func(i int) {
			if i == m {
				if v.isZero() {
					return
				}
				for _, row := range A {
					var s int64
					for j := range v {
						s += row[j] * v[j]
					}
					if s != 0 {
						return
					}
				}
				kernel = append(kernel, slices.Clone(v))
				return
			}
			for x := int64(-bound); x <= bound; x++ {
				v[i] = x
				rec(i + 1)
			}
		}
		rec(0)
		var want []Vector
		for i, k := range kernel {
			minimal := true
			for j, h := range kernel {
				if i != j && conformal(h, k) && !equal(h, k) {
					minimal = false
					break
				}
			}
			if minimal {
				want = append(want, k)
			}
		}
		for _, w := range want {
			if !containsVec(gs, w) {
				t.Fatalf("trial %d A=%v: Graver element %v missing from %v", trial, A, w, gs)
			}
		}
		for _, g := range gs {
			small := true
			for _, x := range g {
				small = small && abs(x) <= bound
			}
			if small && !containsVec(want, g) {
				t.Fatalf("trial %d A=%v: %v is not a Graver element", trial, A, g)
			}
		}
	}
}

// secretsFor draws a random secret graph over d and returns it with an
// independent edge function written from the definitions in DESIGN.md.
func secretsFor(r *rand.Rand, d domain) (*Secrets, func(x, y int) bool, string) {
	nc := len(d.sizes)
	switch r.IntN(4) {
	case 0:
		return &Secrets{Kind: SecretsFull, Column: -1}, func(x, y int) bool { return true }, "full"
	case 1:
		return &Secrets{Kind: SecretsAttribute, Column: -1}, func(x, y int) bool {
			tx, ty := d.tuple(x), d.tuple(y)
			diff := 0
			for i := range tx {
				if tx[i] != ty[i] {
					diff++
				}
			}
			return diff == 1
		}, "attribute"
	case 2:
		c := r.IntN(nc)
		if nc > 1 && r.IntN(2) == 0 {
			return &Secrets{Kind: SecretsPartition, Columns: []int{c}, Column: -1}, func(x, y int) bool {
				return d.tuple(x)[c] == d.tuple(y)[c]
			}, fmt.Sprintf("partition c%d", c)
		}
		bucket := make([]int, d.sizes[c])
		for v := range bucket {
			bucket[v] = r.IntN(2)
		}
		return &Secrets{Kind: SecretsPartition, Column: c, Bucket: bucket}, func(x, y int) bool {
			return bucket[d.tuple(x)[c]] == bucket[d.tuple(y)[c]]
		}, fmt.Sprintf("buckets c%d %v", c, bucket)
	default:
		c := r.IntN(nc)
		theta := float64(1 + r.IntN(2))
		return &Secrets{Kind: SecretsDistance, Column: c, Theta: theta}, func(x, y int) bool {
			tx, ty := d.tuple(x), d.tuple(y)
			for i := range tx {
				if i != c && tx[i] != ty[i] {
					return false
				}
			}
			diff := tx[c] - ty[c]
			return float64(max(diff, -diff)) <= theta
		}, fmt.Sprintf("distance c%d θ=%g", c, theta)
	}
}

// TestBlowfishLiteralAgainstOracle: under Def. 4.1 as written, the
// disjoint-predicate rule bounds the number of changed tuples and the
// histogram's L1 (≤ 2·maxT) for every secret graph, and is attained with
// full secrets when there are enough individuals.
func TestBlowfishLiteralAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	const n = 4
	exact, checked, overlapping, overlapTight := 0, 0, 0, 0
	for trial := range 180 {
		d := randomDomain(r)
		s := d.system()
		// Disjoint counts (random regions of one column), or random and
		// possibly overlapping constraints (exact search).
		if r.IntN(2) == 0 {
			for range 1 + r.IntN(2) {
				s.Constraints = append(s.Constraints, randomConstraint(r, d, s))
			}
		} else {
			c := r.IntN(len(d.sizes))
			regions := 1 + r.IntN(3)
			assign := make([]int, d.sizes[c])
			for v := range assign {
				assign[v] = r.IntN(regions + 1) // 0: in no count
			}
			for reg := 1; reg <= regions; reg++ {
				a := make([]bool, d.sizes[c])
				for v := range a {
					a[v] = assign[v] == reg
				}
				p := Predicate{Allowed: make([][]bool, len(d.sizes))}
				p.Allowed[c] = a
				s.Constraints = append(s.Constraints, Constraint{Name: fmt.Sprintf("region %d", reg), Kind: KindCount, Count: p})
			}
		}
		g, edge, gname := secretsFor(r, d)
		got, err := BlowfishBound(s, g, false)
		if err != nil {
			if !errors.Is(err, ErrUnbounded) {
				t.Fatal(err)
			}
			continue
		}
		checked++
		pol := oracle.BlowfishPolicy{Domain: d.size(), N: n, Edge: edge, Counts: predicates(withoutTotal(s), d)}
		w, err := oracle.BlowfishMaxL1(pol, histogramQuery(d.size()))
		if err != nil {
			t.Fatal(err)
		}
		if int64(w.MaxT) > got.MaxT || w.L1 > 2*got.MaxT {
			t.Fatalf("trial %d %v %s, %s: oracle maxT %d L1 %d > rule maxT %d (%s); witness %v → %v", trial, d.sizes, gname, s.allNames(), w.MaxT, w.L1, got.MaxT, got.Method, w.D1, w.D2)
		}
		if !got.Exact {
			overlapping++
			if int64(w.MaxT) == got.MaxT {
				overlapTight++
			}
		}
		if g.Kind == SecretsFull && got.MaxT <= n && got.Exact {
			// maxT itself is attained (the histogram reaches 2·maxT only
			// when every region on the cycle has two values).
			exact++
			if int64(w.MaxT) != got.MaxT {
				t.Fatalf("trial %d %v %s: oracle maxT %d, rule claims exactly %d", trial, d.sizes, s.allNames(), w.MaxT, got.MaxT)
			}
		}
	}
	t.Logf("%d checked, %d exact; %d overlapping (exact search), oracle maxT equal to the bound in %d", checked, exact, overlapping, overlapTight)
	if checked < 60 || exact < 10 || overlapping < 10 {
		t.Errorf("too few cases: %d checked, %d exact", checked, exact)
	}
}

// TestBlowfishSecretsOnlyAgainstOracle: under compensation: secrets-only,
// Thm 8.2's max(α, ξ) bounds the changed tuples and 2·max(α, ξ) the
// histogram, for random sparse policies and every secret kind.
func TestBlowfishSecretsOnlyAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 9))
	const n = 4
	checked, exact := 0, 0
	for trial := range 200 {
		d := randomDomain(r)
		s := d.system()
		for range 1 + r.IntN(2) {
			s.Constraints = append(s.Constraints, randomConstraint(r, d, s))
		}
		g, edge, gname := secretsFor(r, d)
		got, err := BlowfishBound(s, g, true)
		if err != nil {
			if !errors.Is(err, ErrUnbounded) {
				t.Fatal(err)
			}
			continue
		}
		checked++
		pol := oracle.BlowfishPolicy{Domain: d.size(), N: n, Edge: edge, Counts: predicates(withoutTotal(s), d), SecretsOnly: true}
		w, err := oracle.BlowfishMaxL1(pol, histogramQuery(d.size()))
		if err != nil {
			t.Fatal(err)
		}
		if int64(w.MaxT) > got.MaxT || w.L1 > 2*got.MaxT {
			t.Fatalf("trial %d %v %s, %s: oracle maxT %d L1 %d > Thm 8.2 maxT %d (α %d ξ %d); witness %v → %v", trial, d.sizes, gname, s.allNames(), w.MaxT, w.L1, got.MaxT, got.Alpha, got.Xi, w.D1, w.D2)
		}
		if w.L1 == 2*got.MaxT {
			exact++
		}
	}
	t.Logf("%d checked, %d attained", checked, exact)
	if checked < 60 {
		t.Errorf("only %d sparse cases checked", checked)
	}
}

// TestDesignWitness: DESIGN.md's trap — attribute secrets, marginals on A1
// and A2 of a 2×2×2 domain. Thm 8.5 (secrets-only) gives 4; Def. 4.1 as
// written reaches 8 (oracle), so the literal reading must refuse rather
// than use 4.
func TestDesignWitness(t *testing.T) {
	d := domain{sizes: []int{2, 2, 2}}
	s := d.system()
	s.Constraints = []Constraint{
		{Name: "marginal: [a1]", Kind: KindMarginal, Columns: []int{0}},
		{Name: "marginal: [a2]", Kind: KindMarginal, Columns: []int{1}},
	}
	g := &Secrets{Kind: SecretsAttribute, Column: -1}
	so, err := BlowfishBound(s, g, true)
	if err != nil || so.MaxT != 2 {
		t.Fatalf("secrets-only: %+v, %v; want maxT 2 (Thm 8.5: 2·max size = 4)", so, err)
	}
	// As written, the oracle reaches L1 8 (4 changed tuples, Example
	// 8.3's pair); the exact search over minimal balanced move sets gives
	// maxT 4, so 2·maxT = 8 is tight here.
	lit, err := BlowfishBound(s, g, false)
	if err != nil || lit.MaxT != 4 {
		t.Fatalf("literal reading: %+v, %v; want maxT 4", lit, err)
	}
}

// TestBlowfishOverlappingAgainstOracle: the exact search over minimal
// balanced move sets bounds Def. 4.1 (as written) for overlapping counts.
func TestBlowfishOverlappingAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2))
	const n = 4
	checked, tight := 0, 0
	for trial := 0; checked < 50 && trial < 400; trial++ {
		d := randomDomain(r)
		s := d.system()
		s.Constraints = []Constraint{randomConstraint(r, d, s), randomConstraint(r, d, s)}
		got, err := BlowfishBound(s, &Secrets{Kind: SecretsFull, Column: -1}, false)
		if errors.Is(err, ErrUnbounded) || (err == nil && got.Exact) {
			continue // refused, or disjoint (tested above)
		} else if err != nil {
			t.Fatal(err)
		}
		checked++
		g, edge, gname := secretsFor(r, d)
		if g.Kind != SecretsFull {
			if got, err = BlowfishBound(s, g, false); err != nil {
				t.Fatal(err)
			}
		}
		w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: n, Edge: edge, Counts: predicates(withoutTotal(s), d)}, histogramQuery(d.size()))
		if err != nil {
			t.Fatal(err)
		}
		if int64(w.MaxT) > got.MaxT || w.L1 > 2*got.MaxT {
			t.Fatalf("trial %d %v %s, %s: oracle maxT %d L1 %d > bound %d (%s); witness %v → %v", trial, d.sizes, gname, s.allNames(), w.MaxT, w.L1, got.MaxT, got.Method, w.D1, w.D2)
		}
		if int64(w.MaxT) == got.MaxT {
			tight++
		}
	}
	t.Logf("%d overlapping policies checked, bound attained by the oracle in %d", checked, tight)
	if checked < 30 {
		t.Errorf("only %d overlapping cases", checked)
	}
}

// randomInducedSystem draws one or two random constraints over d: the
// whole system (full, whose predicates the oracle reads) and the system
// over the columns they use (s, what InducedBound is given) with those
// columns' indexes in d (keep).
func randomInducedSystem(r *rand.Rand, d domain) (full, s *System, keep []int) {
	full = d.system()
	for range 1 + r.IntN(2) {
		full.Constraints = append(full.Constraints, randomConstraint(r, d, full))
	}
	s, keep = subSystem(d, full)
	return full, s, keep
}

// subSystem keeps only the columns the constraints use (as the policy
// loader does) and reports the kept column indices.
func subSystem(d domain, s *System) (*System, []int) {
	used := map[int]bool{}
	for _, c := range s.Constraints {
		for _, col := range c.Columns {
			used[col] = true
		}
		for col, a := range c.Count.Allowed {
			if a != nil {
				used[col] = true
			}
		}
	}
	var keep []int
	pos := map[int]int{}
	for col := range d.sizes {
		if used[col] {
			pos[col] = len(keep)
			keep = append(keep, col)
		}
	}
	out := &System{OtherColumns: len(keep) < len(d.sizes)}
	for _, col := range keep {
		out.Columns = append(out.Columns, s.Columns[col])
	}
	for _, c := range s.Constraints {
		nc := Constraint{Name: c.Name, Kind: c.Kind}
		for _, col := range c.Columns {
			nc.Columns = append(nc.Columns, pos[col])
		}
		if c.Kind == KindCount {
			nc.Count.Allowed = make([][]bool, len(keep))
			for col, a := range c.Count.Allowed {
				if a != nil {
					nc.Count.Allowed[pos[col]] = a
				}
			}
		}
		out.Constraints = append(out.Constraints, nc)
	}
	return out, keep
}

// TestInducedCountAgainstOracle: the per-predicate count bound is ≥ the
// oracle for random conjunctive predicates (also on columns outside the
// constraints), and equal to it when every Graver element fits in n rows.
func TestInducedCountAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 8))
	const n = 4
	checked, tight, looser := 0, 0, 0
	for trial := range 150 {
		d := randomDomain(r)
		full, s, keep := randomInducedSystem(r, d)
		got, err := InducedBound(s)
		if err != nil {
			continue
		}
		// A random conjunction over all columns.
		allowed := make([][]bool, len(d.sizes))
		for c := range d.sizes {
			if r.IntN(2) == 0 {
				a := make([]bool, d.sizes[c])
				for v := range a {
					a[v] = r.IntN(2) == 0
				}
				allowed[c] = a
			}
		}
		// As the planner does: a restriction of another column that admits
		// its whole domain is none; one that admits nothing empties q.
		restrictsOther, empty := false, false
		for c, a := range allowed {
			if a != nil && !slices.Contains(keep, c) {
				restrictsOther = restrictsOther || slices.Contains(a, false)
				empty = empty || !slices.Contains(a, true)
			}
		}
		bound, ok := got.CountBound(func(t []int) bool {
			for i, c := range keep {
				if allowed[c] != nil && !allowed[c][t[i]] {
					return false
				}
			}
			return true
		}, restrictsOther)
		if !ok {
			bound = got.MaxHalf
		}
		if empty {
			bound = 0
		}
		where := make([]bool, d.size())
		for v := range where {
			tv := d.tuple(v)
			where[v] = true
			for c, a := range allowed {
				if a != nil && !a[tv[c]] {
					where[v] = false
				}
			}
		}
		w, err := oracle.MaxL1(oracle.Space{Domain: d.size(), MaxUnits: n, RowsPerUnit: 1}, oracle.Induced(predicates(full, d)), oracle.Aggregate{Where: where}.Query())
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if w.L1 > bound {
			t.Fatalf("trial %d %v %s where %v: oracle %d > count bound %d; witness %v → %v", trial, d.sizes, full.allNames(), allowed, w.L1, bound, w.D1, w.D2)
		}
		if bound > got.MaxHalf {
			t.Fatalf("trial %d: count bound %d above MaxHalf %d", trial, bound, got.MaxHalf)
		}
		if got.MaxHalf <= n {
			if w.L1 == bound {
				tight++
			} else {
				looser++
				t.Errorf("trial %d %v %s where %v: oracle %d, count bound %d (not tight)", trial, d.sizes, full.allNames(), allowed, w.L1, bound)
			}
		}
	}
	t.Logf("%d checked, %d tight, %d looser than the oracle", checked, tight, looser)
	if checked < 80 {
		t.Errorf("only %d checked", checked)
	}
}

// randomSum draws a SUM over d for the oracle: the summed column col,
// value[v] = scale·index + off clamped to [lo, hi], a random conjunction
// as WHERE (nil: none) and, when grouped, a GROUP BY of one random column.
// It returns the oracle's aggregate and, for each full tuple value v, the
// amount a row of v adds (0 when it fails the WHERE clause).
func randomSum(r *rand.Rand, d domain, grouped bool) (oracle.Aggregate, []int64, string) {
	col := r.IntN(len(d.sizes))
	scale, off := int64(1+r.IntN(3)), int64(r.IntN(5))-2
	lo, hi := int64(r.IntN(4))-3+off, int64(r.IntN(6))+off
	allowed := make([][]bool, len(d.sizes))
	for c := range d.sizes {
		if r.IntN(3) == 0 {
			a := make([]bool, d.sizes[c])
			for v := range a {
				a[v] = r.IntN(3) != 0
			}
			allowed[c] = a
		}
	}
	n := d.size()
	agg := oracle.Aggregate{Where: make([]bool, n), Value: make([]int64, n), Lo: lo, Hi: hi}
	adds := make([]int64, n)
	gc := r.IntN(len(d.sizes))
	if grouped {
		agg.GroupOf, agg.Groups = make([]int, n), d.sizes[gc]
	}
	for v := range n {
		t := d.tuple(v)
		agg.Where[v] = true
		for c, a := range allowed {
			agg.Where[v] = agg.Where[v] && (a == nil || a[t[c]])
		}
		agg.Value[v] = scale*int64(t[col]) + off
		if agg.Where[v] {
			adds[v] = min(max(agg.Value[v], lo), hi)
		}
		if grouped {
			agg.GroupOf[v] = t[gc]
		}
	}
	return agg, adds, fmt.Sprintf("sum of %d·c%d%+d in [%d, %d] where %v grouped %v by c%d", scale, col, off, lo, hi, allowed, grouped, gc)
}

// TestInducedSumAgainstOracle: SumBound with the exact per-tuple range of
// a random clamped sum (also over columns outside the constraints, and
// with a random WHERE) is ≥ the induced-neighbour oracle, and equal to it
// for ungrouped sums when every Graver element fits in n rows.
func TestInducedSumAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 12))
	const n = 4
	checked, tight := 0, 0
	for trial := range 160 {
		d := randomDomain(r)
		full, s, keep := randomInducedSystem(r, d)
		got, err := InducedBound(s)
		if err != nil {
			continue
		}
		grouped := r.IntN(3) == 0
		agg, adds, desc := randomSum(r, d, grouped)
		// The exact range of what a row adds, per tuple of the kept
		// columns, over every value of the other columns.
		rng := func(tk []int) (lo, hi int64) {
			first := true
			for v := range d.size() {
				tv := d.tuple(v)
				match := true
				for i, c := range keep {
					match = match && tv[c] == tk[i]
				}
				if !match {
					continue
				}
				if first {
					lo, hi, first = adds[v], adds[v], false
				}
				lo, hi = min(lo, adds[v]), max(hi, adds[v])
			}
			return lo, hi
		}
		bound, exact, ok := got.SumBound(rng, grouped)
		if !ok {
			continue
		}
		w, err := oracle.MaxL1(oracle.Space{Domain: d.size(), MaxUnits: n, RowsPerUnit: 1}, oracle.Induced(predicates(full, d)), agg.Query())
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if w.L1 > bound {
			t.Fatalf("trial %d %v %s, %s: oracle %d > sum bound %d; witness %v → %v", trial, d.sizes, full.allNames(), desc, w.L1, bound, w.D1, w.D2)
		}
		if exact != !grouped {
			t.Fatalf("trial %d: exact = %v for grouped = %v", trial, exact, grouped)
		}
		if exact && got.MaxHalf <= n {
			if w.L1 != bound {
				t.Fatalf("trial %d %v %s, %s: oracle %d, sum bound %d claimed exact", trial, d.sizes, full.allNames(), desc, w.L1, bound)
			}
			tight++
		}
	}
	t.Logf("%d checked, %d exact and equal to the oracle", checked, tight)
	if checked < 80 || tight < 40 {
		t.Errorf("too few cases: %d checked, %d exact", checked, tight)
	}
}

// TestInducedSumChainExample is issue 12's example: the chain of pair
// counts over x ∈ {3..6} with SUM(x) clamped to [4, 6]. The closed form
// MaxHalf·max(hi − lo, |lo|, |hi|) gives 2·6 = 12; the oracle gives 1
// (the only Graver element adds 3 and 5, removes 4 and 6: clamped
// 4 + 5 − 4 − 6), and so does SumBound.
func TestInducedSumChainExample(t *testing.T) {
	d := domain{sizes: []int{4}} // index i is x = 3 + i
	s := d.system()
	for j := range 3 {
		a := make([]bool, 4)
		a[j], a[j+1] = true, true
		s.Constraints = append(s.Constraints, Constraint{Name: fmt.Sprint("pair ", j), Kind: KindCount, Count: Predicate{Allowed: [][]bool{a}}})
	}
	got, err := InducedBound(s)
	if err != nil {
		t.Fatal(err)
	}
	value := func(i int) int64 { return min(max(int64(3+i), 4), 6) }
	bound, exact, ok := got.SumBound(func(t []int) (int64, int64) { return value(t[0]), value(t[0]) }, false)
	vals := []int64{3, 4, 5, 6}
	w, err := oracle.MaxL1(oracle.Space{Domain: 4, MaxUnits: 4, RowsPerUnit: 1}, oracle.Induced(predicates(s, d)), oracle.Aggregate{Value: vals, Lo: 4, Hi: 6}.Query())
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !exact || bound != 1 || w.L1 != 1 {
		t.Fatalf("SumBound %d (exact %v, ok %v), oracle %d; want both 1", bound, exact, ok, w.L1)
	}
	if closed := got.MaxHalf * 6; closed != 12 {
		t.Fatalf("closed form %d, want 12 (MaxHalf %d)", closed, got.MaxHalf)
	}
}

// keepingSecrets draws a secret graph over d that often keeps the counts
// of column c (a partition by c, buckets that are unions of its count
// regions, or distance on another column), or any random graph.
func keepingSecrets(r *rand.Rand, d domain, c int, region []int) (*Secrets, func(x, y int) bool, string) {
	nc := len(d.sizes)
	switch r.IntN(4) {
	case 0:
		cols := []int{c}
		if nc > 1 && r.IntN(2) == 0 {
			cols = append(cols, (c+1)%nc)
		}
		return &Secrets{Kind: SecretsPartition, Columns: cols, Column: -1}, func(x, y int) bool {
			for _, k := range cols {
				if d.tuple(x)[k] != d.tuple(y)[k] {
					return false
				}
			}
			return true
		}, fmt.Sprintf("partition %v", cols)
	case 1:
		// Buckets: the count regions, merged or split at random.
		bucket := make([]int, d.sizes[c])
		for v := range bucket {
			bucket[v] = region[v]
			if r.IntN(4) == 0 {
				bucket[v] = 10 + v
			}
		}
		return &Secrets{Kind: SecretsPartition, Column: c, Bucket: bucket}, func(x, y int) bool {
			return bucket[d.tuple(x)[c]] == bucket[d.tuple(y)[c]]
		}, fmt.Sprintf("buckets c%d %v", c, bucket)
	case 2:
		if nc > 1 {
			dc := (c + 1) % nc
			return &Secrets{Kind: SecretsDistance, Column: dc, Theta: 1}, func(x, y int) bool {
				tx, ty := d.tuple(x), d.tuple(y)
				for i := range tx {
					if i != dc && tx[i] != ty[i] {
						return false
					}
				}
				return max(tx[dc]-ty[dc], ty[dc]-tx[dc]) <= 1
			}, fmt.Sprintf("distance c%d θ=1", dc)
		}
	}
	return secretsFor(r, d)
}

// TestBlowfishEdgesKeepCountsAgainstOracle: when BlowfishBound finds that
// no edge of G changes a published count, the oracle (Def. 4.1 as
// written, compensating changes of any value; and secrets-only) has only
// single secret changes as neighbours: its maxT is 1 and its histogram
// sensitivity equals that of the same graph without constraints. When it
// does not fire, the literal reading has neighbours of two changes.
func TestBlowfishEdgesKeepCountsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 6))
	const n = 4
	fired, notFired := 0, 0
	for trial := 0; fired < 40 && trial < 300; trial++ {
		d := randomDomain(r)
		s := d.system()
		c := r.IntN(len(d.sizes))
		region := make([]int, d.sizes[c])
		var g *Secrets
		var edge func(x, y int) bool
		var gname string
		if r.IntN(4) == 0 {
			s.Constraints = []Constraint{{Name: fmt.Sprintf("marginal [c%d]", c), Kind: KindMarginal, Columns: []int{c}}}
			for v := range region {
				region[v] = v
			}
		} else {
			regions := 1 + r.IntN(3)
			for v := range region {
				region[v] = r.IntN(regions + 1)
			}
			for reg := 1; reg <= regions; reg++ {
				a := make([]bool, d.sizes[c])
				for v := range a {
					a[v] = region[v] == reg
				}
				p := Predicate{Allowed: make([][]bool, len(d.sizes))}
				p.Allowed[c] = a
				s.Constraints = append(s.Constraints, Constraint{Name: fmt.Sprintf("region %d", reg), Kind: KindCount, Count: p})
			}
		}
		g, edge, gname = keepingSecrets(r, d, c, region)
		for _, secretsOnly := range []bool{false, true} {
			got, err := BlowfishBound(s, g, secretsOnly)
			if err != nil {
				if !errors.Is(err, ErrUnbounded) {
					t.Fatal(err)
				}
				continue
			}
			hq := histogramQuery(d.size())
			pol := oracle.BlowfishPolicy{Domain: d.size(), N: n, Edge: edge, Counts: predicates(withoutTotal(s), d), SecretsOnly: secretsOnly}
			w, err := oracle.BlowfishMaxL1(pol, hq)
			if err != nil {
				t.Fatal(err)
			}
			if !got.EdgesKeepCounts {
				// The test is exact: under the literal reading an edge
				// x → y that changes a count can be compensated by
				// another individual moving y → x (secret or not), and
				// every neighbour that contains the edge has ≥ 2 changes.
				if !secretsOnly && w.MaxT < 2 {
					t.Fatalf("trial %d %v %s, %s: not detected, but the oracle's maxT is %d", trial, d.sizes, gname, s.allNames(), w.MaxT)
				}
				notFired++
				continue
			}
			fired++
			if got.MaxT != 1 || !got.SecretsOnly {
				t.Fatalf("trial %d: %+v", trial, got)
			}
			pol.Counts = nil
			free, err := oracle.BlowfishMaxL1(pol, hq)
			if err != nil {
				t.Fatal(err)
			}
			if w.MaxT > 1 || w.L1 != free.L1 || w.Pairs != free.Pairs {
				t.Fatalf("trial %d %v %s, %s secretsOnly=%v: oracle maxT %d L1 %d (%d pairs), without constraints L1 %d (%d pairs); witness %v → %v",
					trial, d.sizes, gname, s.allNames(), secretsOnly, w.MaxT, w.L1, w.Pairs, free.L1, free.Pairs, w.D1, w.D2)
			}
		}
	}
	t.Logf("detection fired %d times (oracle: single secret changes, same relation as without constraints), not %d times", fired, notFired)
	if fired < 40 || notFired < 10 {
		t.Errorf("too few cases: fired %d, not %d", fired, notFired)
	}
}
