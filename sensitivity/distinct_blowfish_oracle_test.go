package sensitivity

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/constraints"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

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
		s, preds := randomInducedPublished(r, d)
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
