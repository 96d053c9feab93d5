package sensitivity

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

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
