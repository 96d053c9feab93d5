package sensitivity_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// oracleSpaces are the brute-force spaces per contribution bound k: as
// large as keeps the whole test within a few seconds on one core. The dp
// formulas do not depend on the other units, so a few units suffice; more
// are kept so that a formula that did depend on them would be caught.
var oracleSpaces = map[int]oracle.Space{
	1: {Domain: 8, MaxUnits: 4, RowsPerUnit: 1},
	2: {Domain: 6, MaxUnits: 3, RowsPerUnit: 2},
	3: {Domain: 5, MaxUnits: 2, RowsPerUnit: 3},
}

// drawsPerKind random queries of each kind are drawn per (relation, k).
const drawsPerKind = 60

// TestDPAgainstOracle draws random predicates, groupings, value maps and
// bounds with a fixed seed and requires, for both relations and k = 1..3:
//   - safety: the closed form is ≥ the oracle's maximum for every query;
//   - tightness: some drawn count / histogram attains the closed form, and
//     for every drawn [lo, hi] the explicit worst case (extremal below)
//     attains the sum and grouped-sum closed forms.
func TestDPAgainstOracle(t *testing.T) {
	relations := []struct {
		n  sensitivity.Neighbors
		nb oracle.Neighbours
	}{
		{sensitivity.Unbounded, oracle.Unbounded},
		{sensitivity.Bounded, oracle.Bounded},
	}
	for _, rel := range relations {
		for k := 1; k <= 3; k++ {
			t.Run(fmt.Sprintf("%v/k=%d", rel.n, k), func(t *testing.T) {
				u, err := oracle.NewUniverse(oracleSpaces[k])
				if err != nil {
					t.Fatal(err)
				}
				pairs := oracle.NewPairs(u, rel.nb)
				rng := rand.New(rand.NewPCG(uint64(k), uint64(rel.n)+1))
				dom := u.Space.Domain

				for _, kind := range []sensitivity.Kind{sensitivity.KindCount, sensitivity.KindHistogram} {
					want := closed(t, rel.n, k, sensitivity.Aggregate{Kind: kind})
					var best int64
					for range drawsPerKind {
						a := randomAggregate(rng, dom, kind)
						w := pairs.MaxL1(a.Query())
						if w.L1 > want {
							t.Fatalf("%v: closed form %d < oracle %d for %+v (witness %v – %v)", kind, want, w.L1, a, w.D1, w.D2)
						}
						best = max(best, w.L1)
					}
					if best != want {
						t.Errorf("%v: closed form %d, but no drawn query exceeds %d", kind, want, best)
					}
				}

				for _, kind := range []sensitivity.Kind{sensitivity.KindSum, sensitivity.KindGroupedSum} {
					for range drawsPerKind {
						a := randomAggregate(rng, dom, kind)
						want := closed(t, rel.n, k, sensitivity.Aggregate{Kind: kind, Lo: a.Lo, Hi: a.Hi})
						if w := pairs.MaxL1(a.Query()); w.L1 > want {
							t.Fatalf("%v: closed form %d < oracle %d for %+v (witness %v – %v)", kind, want, w.L1, a, w.D1, w.D2)
						}
						x := extremal(kind, a.Lo, a.Hi)
						if w := pairs.MaxL1(x.Query()); w.L1 != want {
							t.Fatalf("%v over [%d, %d]: closed form %d, worst case %+v gives %d (witness %v – %v)", kind, a.Lo, a.Hi, want, x, w.L1, w.D1, w.D2)
						}
					}
				}
			})
		}
	}
}

func closed(t *testing.T, n sensitivity.Neighbors, k int, agg sensitivity.Aggregate) int64 {
	t.Helper()
	s, err := sensitivity.DP(n, k, agg)
	if err != nil {
		t.Fatalf("DP(%v, %d, %+v): %v", n, k, agg, err)
	}
	return s
}

// randomAggregate draws a WHERE clause (a random subset of the domain), for
// grouped kinds a random grouping (each value in one of 1..dom groups) and
// for sums bounds lo ≤ hi in [−6, 6] (lo often negative) and values in
// [lo−3, hi+3], so that clamping matters.
func randomAggregate(rng *rand.Rand, dom int, kind sensitivity.Kind) oracle.Aggregate {
	var a oracle.Aggregate
	a.Where = make([]bool, dom)
	for v := range a.Where {
		a.Where[v] = rng.IntN(2) == 0
	}
	if kind == sensitivity.KindHistogram || kind == sensitivity.KindGroupedSum {
		a.Groups = 1 + rng.IntN(dom)
		a.GroupOf = make([]int, dom)
		for v := range a.GroupOf {
			a.GroupOf[v] = rng.IntN(a.Groups)
		}
	}
	if kind == sensitivity.KindSum || kind == sensitivity.KindGroupedSum {
		a.Lo = int64(rng.IntN(13)) - 6
		a.Hi = a.Lo + int64(rng.IntN(int(6-a.Lo)+1))
		a.Value = make([]int64, dom)
		for v := range a.Value {
			a.Value[v] = a.Lo - 3 + rng.Int64N(a.Hi-a.Lo+7)
		}
	}
	return a
}

// extremal is a worst-case sum over [lo, hi] on values 0..3, built from the
// tightness arguments in dp.go: value 0 is rejected by WHERE (a row that
// contributes 0), values 1 and 2 sum lo and hi in group 0, and value 3 sums
// the bound of larger magnitude in group 1 (for the grouped kind).
func extremal(kind sensitivity.Kind, lo, hi int64) oracle.Aggregate {
	ext := hi
	if -lo > hi {
		ext = lo
	}
	a := oracle.Aggregate{
		Where: []bool{false, true, true, true},
		Value: []int64{0, lo, hi, ext},
		Lo:    lo, Hi: hi,
	}
	if kind == sensitivity.KindGroupedSum {
		a.GroupOf, a.Groups = []int{0, 0, 0, 1}, 2
	}
	return a
}

// TestBoundedGroupedSumIsNotSum pins the finding that DESIGN.md's bounded SUM
// formula k·max(hi−lo, |lo|, |hi|) does not cover a GROUP BY of sums: with
// values in [0, 10] and k = 1, replacing a row of 10 in group A by a row of
// 10 in group B moves the L1 by 20 (computed by hand; the oracle confirms).
func TestBoundedGroupedSumIsNotSum(t *testing.T) {
	a := oracle.Aggregate{GroupOf: []int{0, 1}, Groups: 2, Value: []int64{10, 10}, Lo: 0, Hi: 10}
	w, err := oracle.MaxL1(oracle.Space{Domain: 2, MaxUnits: 1, RowsPerUnit: 1}, oracle.Bounded, a.Query())
	if err != nil {
		t.Fatal(err)
	}
	if w.L1 != 20 {
		t.Fatalf("oracle = %d (witness %v – %v), want 20 by hand", w.L1, w.D1, w.D2)
	}
	sum := closed(t, sensitivity.Bounded, 1, sensitivity.Aggregate{Kind: sensitivity.KindSum, Lo: 0, Hi: 10})
	grouped := closed(t, sensitivity.Bounded, 1, sensitivity.Aggregate{Kind: sensitivity.KindGroupedSum, Lo: 0, Hi: 10})
	if sum != 10 || grouped != 20 {
		t.Fatalf("bounded sum %d, grouped sum %d; want 10 (ungrouped) and 20", sum, grouped)
	}
}
