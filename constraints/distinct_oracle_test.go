package constraints

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// TestInducedDistinctAgainstOracle: a distinct count moves by at most
// max(‖g⁺‖₁, ‖g⁻‖₁) and a GROUP BY of distinct counts by at most ‖g‖₁
// per Graver element g (sensitivity.DistinctInduced), so MaxHalf and
// MaxL1 must bound the induced-neighbour oracle's distinct counts — a
// random column of the tuple (or NULL) counted per random group — on
// random constraint systems (totals, marginals, row and column sums,
// counts).
func TestInducedDistinctAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	const n = 4
	checked := 0
	for trial := range 60 {
		d := randomDomain(r)
		s := d.system()
		for range 1 + r.IntN(2) {
			s.Constraints = append(s.Constraints, randomConstraint(r, d, s))
		}
		got, err := InducedBound(s)
		if errors.Is(err, ErrUnbounded) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		u, err := oracle.NewUniverse(oracle.Space{Domain: d.size(), MaxUnits: n, RowsPerUnit: 1})
		if err != nil {
			t.Fatal(err)
		}
		pairs := oracle.NewPairs(u, oracle.Induced(predicates(s, d)))
		for range 4 {
			c := r.IntN(len(d.sizes))
			a := oracle.Aggregate{Where: make([]bool, d.size()), Distinct: make([]int, d.size())}
			for v := range a.Where {
				a.Where[v] = r.IntN(4) > 0
				a.Distinct[v] = d.tuple(v)[c]
				if r.IntN(6) == 0 {
					a.Distinct[v] = -1
				}
			}
			bound := got.MaxHalf
			if r.IntN(2) == 0 {
				a.Groups = 1 + r.IntN(3)
				a.GroupOf = make([]int, d.size())
				for v := range a.GroupOf {
					a.GroupOf[v] = r.IntN(a.Groups)
				}
				bound = got.MaxL1
			}
			checked++
			if w := pairs.MaxL1(a.Query()); w.L1 > bound {
				t.Fatalf("trial %d %v %s: distinct %+v: oracle %d > %d; witness %v → %v", trial, d.sizes, s.allNames(), a, w.L1, bound, w.D1, w.D2)
			}
		}
	}
	if checked < 120 {
		t.Errorf("only %d distinct counts checked", checked)
	}
}
