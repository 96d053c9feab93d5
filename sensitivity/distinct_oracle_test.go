package sensitivity

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/constraints"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// distinctShapes are the four distinct counts: column or unit, ungrouped
// or grouped.
var distinctShapes = []Distinct{{}, {Grouped: true}, {Units: true}, {Units: true, Grouped: true}}

// distinctSpaces have a domain of 2k+1 values, enough for the worst cases
// (extremalDistinct), and as many units as keeps the test fast.
var distinctSpaces = map[int]oracle.Space{
	1: {Domain: 5, MaxUnits: 4, RowsPerUnit: 1},
	2: {Domain: 5, MaxUnits: 3, RowsPerUnit: 2},
	3: {Domain: 7, MaxUnits: 2, RowsPerUnit: 3},
}

// randomDistinct draws a distinct count of shape d over dom values: a
// random WHERE, for grouped shapes a random grouping, and for a column
// a random x per value (often shared by several values, sometimes NULL).
func randomDistinct(r *rand.Rand, dom int, d Distinct) oracle.Aggregate {
	a := oracle.Aggregate{Where: make([]bool, dom), Units: d.Units}
	for v := range a.Where {
		a.Where[v] = r.IntN(4) > 0
	}
	if d.Grouped {
		a.Groups = 1 + r.IntN(dom)
		a.GroupOf = make([]int, dom)
		for v := range a.GroupOf {
			a.GroupOf[v] = r.IntN(a.Groups)
		}
	}
	if !d.Units {
		a.Distinct = make([]int, dom)
		xs := 1 + r.IntN(dom)
		for v := range a.Distinct {
			a.Distinct[v] = r.IntN(xs+1) - 1 // -1: NULL
		}
	}
	return a
}

// extremalDistinct is the worst case of the proofs in distinct.go over
// values 0..2k: value 0 fails the WHERE clause, x is the value itself;
// a column is grouped into 1..k and k+1..2k, a unit by value.
func extremalDistinct(k int, d Distinct) oracle.Aggregate {
	dom := 2*k + 1
	a := oracle.Aggregate{Where: make([]bool, dom), Units: d.Units}
	for v := 1; v < dom; v++ {
		a.Where[v] = true
	}
	if !d.Units {
		a.Distinct = make([]int, dom)
		for v := range a.Distinct {
			a.Distinct[v] = v
		}
	}
	if d.Grouped {
		a.GroupOf = make([]int, dom)
		for v := range a.GroupOf {
			a.GroupOf[v] = v
			if !d.Units {
				a.GroupOf[v] = min(1, (v-1)/k) // 0 with group 0
			}
		}
		a.Groups = dom
	}
	return a
}

// TestDistinctDPAgainstOracle: for both relations, k = 1..3 and the four
// shapes, DistinctDP is ≥ the brute-force maximum for 40 random distinct
// counts each (fixed seed), and the worst case of its proof attains it.
func TestDistinctDPAgainstOracle(t *testing.T) {
	relations := []struct {
		n  Neighbors
		nb oracle.Neighbours
	}{{Unbounded, oracle.Unbounded}, {Bounded, oracle.Bounded}}
	// By hand (distinct.go): column k, k / 2k; unit 1, k / 2k.
	hand := func(n Neighbors, k int, d Distinct) int64 {
		switch {
		case d.Units && !d.Grouped:
			return 1
		case d.Grouped && n == Bounded:
			return int64(2 * k)
		}
		return int64(k)
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, rel := range relations {
		for k := 1; k <= 3; k++ {
			u, err := oracle.NewUniverse(distinctSpaces[k])
			if err != nil {
				t.Fatal(err)
			}
			pairs := oracle.NewPairs(u, rel.nb)
			for _, d := range distinctShapes {
				t.Run(fmt.Sprintf("%v/k=%d/%v", rel.n, k, d), func(t *testing.T) {
					got, err := DistinctDP(rel.n, k, d)
					if err != nil {
						t.Fatal(err)
					}
					if want := hand(rel.n, k, d); got != want {
						t.Fatalf("DistinctDP = %d, derived by hand %d", got, want)
					}
					for range 40 {
						a := randomDistinct(r, u.Space.Domain, d)
						if w := pairs.MaxL1(a.Query()); w.L1 > got {
							t.Fatalf("closed form %d < oracle %d for %+v (witness %v – %v)", got, w.L1, a, w.D1, w.D2)
						}
					}
					x := extremalDistinct(k, d)
					if w := pairs.MaxL1(x.Query()); w.L1 != got {
						t.Fatalf("closed form %d, worst case %+v gives %d (witness %v – %v)", got, x, w.L1, w.D1, w.D2)
					}
				})
			}
		}
	}
}

// TestDistinctDPRefusesBadInput: the entry point validates first.
func TestDistinctDPRefusesBadInput(t *testing.T) {
	if _, err := DistinctDP(Unbounded, 0, Distinct{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("k = 0: %v, want ErrInvalid", err)
	}
	if _, err := DistinctDP(Neighbors(9), 1, Distinct{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown relation: %v, want ErrInvalid", err)
	}
	if _, err := DistinctDP(Bounded, 1<<62, Distinct{Grouped: true}); !errors.Is(err, ErrOverflow) {
		t.Errorf("2k > MaxInt64: %v, want ErrOverflow", err)
	}
	if _, err := DistinctInduced(InducedBounds{MaxL1: 1, MaxHalf: 2}, Distinct{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("MaxHalf > MaxL1: %v, want ErrInvalid", err)
	}
	if _, err := DistinctPerChange(Distinct{}, Reach{ValueStep: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative step: %v, want ErrInvalid", err)
	}
}

// bfDistinct is a random distinct count over a Blowfish domain: random
// WHERE and GROUP BY columns as randomBFQuery draws them, and the counted
// column c (or the unit: every individual is one tuple, so the unit count
// is the number of passing tuples; the unit is not a column G changes).
func bfDistinct(r *rand.Rand, d bfDomain) (a oracle.Aggregate, shape Distinct, where, group []string, value string) {
	q := randomBFQuery(r, d)
	a = oracle.Aggregate{Where: q.agg.Where, GroupOf: q.agg.GroupOf, Groups: q.agg.Groups}
	shape.Grouped = a.GroupOf != nil
	if r.IntN(4) == 0 {
		shape.Units, a.Units = true, true
		return a, shape, q.where, q.group, ""
	}
	c := r.IntN(len(d))
	a.Distinct = make([]int, d.size())
	for v := range a.Distinct {
		a.Distinct[v] = d.tuple(v)[c]
	}
	return a, shape, q.where, q.group, colName(c)
}

// TestDistinctBlowfishAgainstOracle: without constraints, DistinctPerChange
// with G's reach is ≥ the oracle for random secret graphs and distinct
// counts, and equal to it in most draws (the worst change usually fits in
// two tuples).
func TestDistinctBlowfishAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	zeros, tight, countZero := 0, 0, 0
	const trials = 400
	for trial := range trials {
		d := randomBFDomain(r)
		a, shape, where, group, value := bfDistinct(r, d)
		g, _, edge := randomGraph(r, d, 1, value)
		reach := g.Reach(where, group, value)
		per, err := DistinctPerChange(shape, reach)
		if err != nil {
			t.Fatal(err)
		}
		w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 2, Edge: edge}, a.Query())
		if err != nil {
			t.Fatal(err)
		}
		if w.L1 > per {
			t.Fatalf("trial %d %v %+v %v where %v group %v x %q: oracle %d > %d; witness %v → %v",
				trial, d, g, shape, where, group, value, w.L1, per, w.D1, w.D2)
		}
		if per == 0 {
			zeros++
		}
		if w.L1 == per {
			tight++
		}
		// The trap: COUNT's per-change bound is 0 (G changes neither the
		// WHERE nor the group columns), the distinct count's is not.
		cnt, _ := PerChange(Aggregate{Kind: KindHistogram}, g.Reach(where, group, ""))
		if cnt == 0 && w.L1 > 0 {
			countZero++
		}
	}
	t.Logf("%d trials: %d zero, %d tight, %d where COUNT would be 0 but the distinct count moves", trials, zeros, tight, countZero)
	if zeros < 20 || tight < trials*3/4 || countZero < 20 {
		t.Errorf("too few informative draws: %d zero, %d tight, %d COUNT-zero", zeros, tight, countZero)
	}
}

// TestDistinctBlowfishHandValues: partition secrets by city; salary is
// not fixed. A histogram by city of COUNT(*) is published by nobody's
// secret (0), but COUNT(DISTINCT salary) by city moves when one person's
// salary becomes another's: checked against the oracle on a 2×3 domain
// (city × salary).
func TestDistinctBlowfishHandValues(t *testing.T) {
	d := bfDomain{2, 3}
	g := Secrets{Kind: SecretsPartition, Partition: []string{"c0"}}
	edge := func(x, y int) bool { return d.tuple(x)[0] == d.tuple(y)[0] }
	groupOf := make([]int, d.size())
	salary := make([]int, d.size())
	for v := range groupOf {
		groupOf[v], salary[v] = d.tuple(v)[0], d.tuple(v)[1]
	}
	count, _ := PerChange(Aggregate{Kind: KindHistogram}, g.Reach(nil, []string{"c0"}, ""))
	per, _ := DistinctPerChange(Distinct{Grouped: true}, g.Reach(nil, []string{"c0"}, "c1"))
	units, _ := DistinctPerChange(Distinct{Grouped: true, Units: true}, g.Reach(nil, []string{"c0"}, ""))
	if count != 0 || per != 1 || units != 0 {
		t.Fatalf("per change: histogram %d, distinct salary %d, distinct units %d; want 0, 1, 0 by hand", count, per, units)
	}
	w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 3, Edge: edge},
		oracle.Aggregate{GroupOf: groupOf, Groups: 2, Distinct: salary}.Query())
	if err != nil || w.L1 != 1 {
		t.Fatalf("oracle %d (%v), want 1; witness %v → %v", w.L1, err, w.D1, w.D2)
	}
	// Full secrets: a person moves city and salary: one group loses a
	// salary, the other gains one.
	full, _ := DistinctPerChange(Distinct{Grouped: true}, Secrets{Kind: SecretsFull}.Reach(nil, []string{"c0"}, "c1"))
	w, _ = oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 3, Edge: func(x, y int) bool { return true }},
		oracle.Aggregate{GroupOf: groupOf, Groups: 2, Distinct: salary}.Query())
	if full != 2 || w.L1 != 2 {
		t.Fatalf("full secrets: per change %d, oracle %d; want 2, 2", full, w.L1)
	}
}

// TestDistinctBlowfishConstraintsAgainstOracle: with random published
// counts (as TestBlowfishConstraintsAgainstOracle draws them), maxT ·
// DistinctPerChange bounds random distinct counts under the literal
// reading and under secrets-only.
func TestDistinctBlowfishConstraintsAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	checked := 0
	for trial := range 150 {
		d := randomBFDomain(r)
		a, shape, where, group, value := bfDistinct(r, d)
		g, cg, edge := randomGraph(r, d, 1, value)
		s, preds := randomPublished(r, d)
		for _, secretsOnly := range []bool{false, true} {
			b, err := constraints.BlowfishBound(s, cg, secretsOnly)
			if errors.Is(err, constraints.ErrUnbounded) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			reach := AnyChange(where, group, value)
			if secretsOnly {
				reach = g.Reach(where, group, value)
			}
			per, err := DistinctPerChange(shape, reach)
			if err != nil {
				t.Fatal(err)
			}
			bound, err := Blowfish(b.MaxT, per)
			if err != nil {
				t.Fatal(err)
			}
			w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: d.size(), N: 3, Edge: edge, Counts: preds, SecretsOnly: secretsOnly}, a.Query())
			if err != nil {
				t.Fatal(err)
			}
			checked++
			if w.L1 > bound {
				t.Fatalf("trial %d %v %+v secretsOnly=%v %v where %v group %v x %q: oracle %d > maxT %d × %d; witness %v → %v",
					trial, d, g, secretsOnly, shape, where, group, value, w.L1, b.MaxT, per, w.D1, w.D2)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d cases checked", checked)
	}
}

// randomPublished draws published counts over d the way
// TestBlowfishConstraintsAgainstOracle does: a marginal or one or two
// counts on one column, sometimes a second marginal; with the oracle's
// predicates.
func randomPublished(r *rand.Rand, d bfDomain) (*constraints.System, []func(int) bool) {
	s := &constraints.System{}
	for i, n := range d {
		vals := make([]float64, n)
		for v := range vals {
			vals[v] = float64(v)
		}
		s.Columns = append(s.Columns, constraints.Column{Name: colName(i), Size: n, Values: vals})
	}
	c := r.IntN(len(d))
	if r.IntN(2) == 0 {
		s.Constraints = []constraints.Constraint{{Name: "marginal", Kind: constraints.KindMarginal, Columns: []int{c}}}
	} else {
		for reg := range 1 + r.IntN(2) {
			a := make([]bool, d[c])
			for v := range a {
				a[v] = r.IntN(3) == reg
			}
			p := constraints.Predicate{Allowed: make([][]bool, len(d))}
			p.Allowed[c] = a
			s.Constraints = append(s.Constraints, constraints.Constraint{Name: fmt.Sprint("count ", reg), Kind: constraints.KindCount, Count: p})
		}
	}
	if len(d) > 1 && r.IntN(3) == 0 {
		c2 := (c + 1) % len(d)
		s.Constraints = append(s.Constraints, constraints.Constraint{Name: "marginal 2", Kind: constraints.KindMarginal, Columns: []int{c2}})
	}
	var preds []func(int) bool
	for _, ct := range s.Constraints {
		if ct.Kind == constraints.KindMarginal {
			mc := ct.Columns[0]
			for v := range d[mc] {
				preds = append(preds, func(x int) bool { return d.tuple(x)[mc] == v })
			}
			continue
		}
		preds = append(preds, func(x int) bool { return ct.Count.Allowed[c][d.tuple(x)[c]] })
	}
	return s, preds
}

// TestDistinctInducedAgainstOracle: DistinctInduced is ≥ the
// induced-neighbour oracle for random distinct counts under a published
// total, marginal or count; the unit count (one tuple per unit: the
// number of passing rows) attains it whenever the Graver bound is exact
// and fits the space.
func TestDistinctInducedAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	const n = 4
	tight := 0
	for trial := range 80 {
		d := randomBFDomain(r)
		a, shape, _, _, _ := bfDistinct(r, d)
		s := &constraints.System{}
		for i, size := range d {
			s.Columns = append(s.Columns, constraints.Column{Name: colName(i), Size: size})
		}
		var preds []func(int) bool
		switch c := r.IntN(len(d)); r.IntN(3) {
		case 0:
			s.Constraints = []constraints.Constraint{{Name: "total", Kind: constraints.KindTotal}}
			preds = []func(int) bool{func(int) bool { return true }}
		case 1:
			s.Constraints = []constraints.Constraint{{Name: "marginal", Kind: constraints.KindMarginal, Columns: []int{c}}}
			for v := range d[c] {
				preds = append(preds, func(x int) bool { return d.tuple(x)[c] == v })
			}
		default:
			allowed := make([]bool, d[c])
			for v := range allowed {
				allowed[v] = r.IntN(2) == 0
			}
			p := constraints.Predicate{Allowed: make([][]bool, len(d))}
			p.Allowed[c] = allowed
			s.Constraints = []constraints.Constraint{{Name: "count", Kind: constraints.KindCount, Count: p}}
			preds = []func(int) bool{func(x int) bool { return allowed[d.tuple(x)[c]] }}
		}
		ib, err := constraints.InducedBound(s)
		if err != nil {
			t.Fatal(err)
		}
		bound, err := DistinctInduced(InducedBounds{MaxL1: ib.MaxL1, MaxHalf: ib.MaxHalf}, shape)
		if err != nil {
			t.Fatal(err)
		}
		pairs := oracleInducedPairs(t, d.size(), n, preds)
		if w := pairs.MaxL1(a.Query()); w.L1 > bound {
			t.Fatalf("trial %d %v %s %v: oracle %d > %d; witness %v → %v", trial, d, s.Constraints[0].Name, shape, w.L1, bound, w.D1, w.D2)
		}
		if ib.Exact && ib.MaxHalf <= n {
			// With every row passing, the unit count is COUNT(*) (or the
			// full histogram), whose induced sensitivity is the bound.
			x := oracle.Aggregate{Units: true}
			if shape.Grouped {
				x.GroupOf, x.Groups = make([]int, d.size()), d.size()
				for v := range x.GroupOf {
					x.GroupOf[v] = v
				}
			}
			if w := pairs.MaxL1(x.Query()); w.L1 != bound && shape.Grouped {
				t.Fatalf("trial %d %v %s: grouped unit count attains %d, bound %d claimed exact", trial, d, s.Constraints[0].Name, w.L1, bound)
			} else if w.L1 == bound {
				tight++
			}
		}
	}
	t.Logf("%d tight", tight)
	if tight < 15 {
		t.Errorf("only %d tight comparisons", tight)
	}
}

func oracleInducedPairs(t *testing.T, dom, n int, preds []func(int) bool) *oracle.Pairs {
	t.Helper()
	u, err := oracle.NewUniverse(oracle.Space{Domain: dom, MaxUnits: n, RowsPerUnit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return oracle.NewPairs(u, oracle.Induced(preds))
}

// TestDistinctKinds: each shape has its own Kind, and DP, PerChange and
// Induced reach the distinct closed forms through it (a caller that
// passes an Aggregate gets the same bound as one that calls them).
func TestDistinctKinds(t *testing.T) {
	seen := map[Kind]bool{KindCount: true, KindHistogram: true, KindSum: true, KindGroupedSum: true}
	for _, d := range distinctShapes {
		k := d.Kind()
		if seen[k] {
			t.Fatalf("%v: kind %v used twice", d, k)
		}
		seen[k] = true
		if back, ok := k.Distinct(); !ok || back != d {
			t.Fatalf("%v: kind %v reads back as %v, %v", d, k, back, ok)
		}
		for _, n := range []Neighbors{Unbounded, Bounded} {
			want, _ := DistinctDP(n, 3, d)
			if got, err := DP(n, 3, Aggregate{Kind: k}); err != nil || got != want {
				t.Errorf("DP(%v, 3, %v) = %d, %v; want %d", n, k, got, err, want)
			}
		}
		r := Reach{Value: true, Group: true}
		want, _ := DistinctPerChange(d, r)
		if got, err := PerChange(Aggregate{Kind: k}, r); err != nil || got != want {
			t.Errorf("PerChange(%v) = %d, %v; want %d", k, got, err, want)
		}
		b := InducedBounds{MaxL1: 6, MaxHalf: 4}
		want, _ = DistinctInduced(b, d)
		if got, err := Induced(b, Aggregate{Kind: k}); err != nil || got != want {
			t.Errorf("Induced(%v) = %d, %v; want %d", k, got, err, want)
		}
	}
	if _, ok := KindHistogram.Distinct(); ok {
		t.Error("the histogram reads as a distinct count")
	}
}
