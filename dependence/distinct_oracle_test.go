package dependence_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// randomDistinctAgg draws a distinct count of shape d over dom values:
// a random WHERE, a random grouping when grouped, and for a column a
// random x per value (-1: NULL).
func randomDistinctAgg(r *rand.Rand, dom int, d sensitivity.Distinct) oracle.Aggregate {
	a := oracle.Aggregate{Where: make([]bool, dom), Units: d.Units}
	for v := range a.Where {
		a.Where[v] = r.IntN(3) > 0
	}
	if d.Grouped {
		a.Groups = 2 + r.IntN(2)
		a.GroupOf = make([]int, dom)
		for v := range a.GroupOf {
			a.GroupOf[v] = r.IntN(a.Groups)
		}
	}
	if !d.Units {
		a.Distinct = make([]int, dom)
		for v := range a.Distinct {
			a.Distinct[v] = r.IntN(dom+1) - 1
		}
	}
	return a
}

// TestDistinctFullDependenceAgainstOracle: with ρ = 1 on every edge, the
// proxy's DS = m·ΔQ of a distinct count (ΔQ = DistinctDP under value
// changes, m from the solver) is ≥ the brute-force group-neighbour
// maximum for random distinct counts of the four shapes (unit i changes by
// value or presence, every unit it reaches arbitrarily), and the worst
// unit count attains it.
func TestDistinctFullDependenceAgainstOracle(t *testing.T) {
	spaces := map[int]oracle.Space{1: {Domain: 4, RowsPerUnit: 1}, 2: {Domain: 2, RowsPerUnit: 2}}
	shapes := []sensitivity.Distinct{{}, {Grouped: true}, {Units: true}, {Units: true, Grouped: true}}
	r := rand.New(rand.NewPCG(51, 52))
	for k, sp := range spaces {
		u, err := oracle.NewUniverse(sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, self := range []oracle.Change{oracle.ValueChange, oracle.PresenceChange} {
			t.Run(fmt.Sprintf("k=%d/self=%d", k, self), func(t *testing.T) {
				for range 4 {
					const n = 3
					rho, deps := randomFullDependence(r, n)
					m := structureOf(t, n, rho)
					for _, d := range shapes {
						dq, err := sensitivity.DistinctDP(sensitivity.Bounded, k, d)
						if err != nil {
							t.Fatal(err)
						}
						for range 5 {
							a := randomDistinctAgg(r, sp.Domain, d)
							w, err := u.FullDependence(n, deps, self, oracle.AnyChange, a.Query())
							if err != nil {
								t.Fatal(err)
							}
							if float64(w.L1) > m*float64(dq) {
								t.Fatalf("%v deps %v: DS %v < oracle %d (unit %d: %v → %v)", d, deps, m*float64(dq), w.L1, w.Unit, w.D1, w.D2)
							}
						}
					}
					// Tightness: the number of units with a row of value ≥ 1
					// changes by one per unit that changes.
					if self != oracle.ValueChange {
						continue
					}
					a := oracle.Aggregate{Units: true, Where: append([]bool{false}, trues(sp.Domain-1)...)}
					w, _ := u.FullDependence(n, deps, self, oracle.AnyChange, a.Query())
					if float64(w.L1) != m {
						t.Errorf("deps %v: DS %v but the worst unit count gives %d", deps, m, w.L1)
					}
				}
			})
		}
	}
}

// TestDistinctFractionalDependenceAgainstOracle: with fractional ρ the
// oracle's max_i Σ_j ρ_ij ΔQ_j (ΔQ_j brute-forced per unit) is ≤ m·ΔQ for
// random distinct counts.
func TestDistinctFractionalDependenceAgainstOracle(t *testing.T) {
	u, err := oracle.NewUniverse(oracle.Space{Domain: 3, RowsPerUnit: 2})
	if err != nil {
		t.Fatal(err)
	}
	shapes := []sensitivity.Distinct{{}, {Grouped: true}, {Units: true}, {Units: true, Grouped: true}}
	r := rand.New(rand.NewPCG(53, 54))
	for range 12 {
		const n = 3
		rho := make([][]float64, n)
		for i := range n {
			rho[i] = make([]float64, n)
			for j := range n {
				if i != j && r.IntN(3) > 0 {
					rho[i][j] = float64(1+r.IntN(100)) / 100
				}
			}
		}
		m := structureOf(t, n, rho)
		for _, d := range shapes {
			q := randomDistinctAgg(r, 3, d).Query()
			dq, _ := sensitivity.DistinctDP(sensitivity.Bounded, 2, d)
			var oracleDS float64
			for i := range n {
				s := float64(u.UnitSensitivity(n, i, oracle.ValueChange, q))
				for j := range n {
					if j != i {
						s += rho[i][j] * float64(u.UnitSensitivity(n, j, oracle.ValueChange, q))
					}
				}
				oracleDS = max(oracleDS, s)
			}
			if oracleDS > m*float64(dq)*(1+1e-12) {
				t.Fatalf("%v ρ %v: DS %v < oracle %v", d, rho, m*float64(dq), oracleDS)
			}
		}
	}
}
