package dependence_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// edgeRows answers the relationship SELECT with fixed rows.
type edgeRows [][]ir.Value

func (edgeRows) Dialect() string { return "sqlite" }
func (e edgeRows) Rows(_ context.Context, _ string, _ []ir.Value, fn func([]string, []ir.Value) error) error {
	for _, r := range e {
		if err := fn(nil, r); err != nil {
			return err
		}
	}
	return nil
}

// structureOf loads a directed edge structure through dependence.Read and
// returns its multiplier at ε = 1 (declared ρ: independent of ε).
func structureOf(t *testing.T, n int, rho [][]float64) float64 {
	t.Helper()
	var rows edgeRows
	for i := range n {
		for j := range n {
			if i != j && rho[i][j] > 0 {
				rows = append(rows, []ir.Value{ir.Int(int64(i)), ir.Int(int64(j)), ir.Float(rho[i][j])})
			}
		}
	}
	ds := &policies.Dataset{Name: "d", Model: policies.ModelDDP, Dependence: &policies.Dependence{
		Edges: &policies.DependenceEdges{Table: "e", Columns: []string{"a", "b"}, RhoColumn: "w", Directed: true}}}
	s, err := dependence.Read(context.Background(), ds, rows)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Solver.Multiplier(1)
	if err != nil {
		t.Fatal(err)
	}
	if m.M < m.F {
		t.Fatalf("m %v < f(m) %v", m.M, m.F)
	}
	return m.M
}

func randomAgg(r *rand.Rand, dom int, kind sensitivity.Kind) oracle.Aggregate {
	a := oracle.Aggregate{Where: make([]bool, dom)}
	for v := range a.Where {
		a.Where[v] = r.IntN(3) > 0
	}
	if kind == sensitivity.KindHistogram || kind == sensitivity.KindGroupedSum {
		a.Groups = 2 + r.IntN(2)
		a.GroupOf = make([]int, dom)
		for v := range a.GroupOf {
			a.GroupOf[v] = r.IntN(a.Groups)
		}
	}
	if kind == sensitivity.KindSum || kind == sensitivity.KindGroupedSum {
		a.Lo = int64(r.IntN(7)) - 3
		a.Hi = a.Lo + int64(r.IntN(4))
		a.Value = make([]int64, dom)
		for v := range a.Value {
			a.Value[v] = a.Lo - 1 + r.Int64N(a.Hi-a.Lo+3)
		}
	}
	return a
}

// With ρ = 1 on every edge, dependent neighbours are group neighbours:
// unit i changes (value change, or presence under unbounded neighbours) and
// every unit it reaches changes arbitrarily. The proxy's DS = m·ΔQ (ΔQ the
// value-change sensitivity, m = 1 + out-degree) must be ≥ the brute-force
// maximum for every drawn query, and some drawn count/histogram must attain
// it (tightness).
func TestFullDependenceAgainstOracle(t *testing.T) {
	spaces := map[int]oracle.Space{1: {Domain: 4, MaxUnits: 0, RowsPerUnit: 1}, 2: {Domain: 2, MaxUnits: 0, RowsPerUnit: 2}}
	r := rand.New(rand.NewPCG(7, 8))
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
					for _, kind := range []sensitivity.Kind{sensitivity.KindCount, sensitivity.KindHistogram, sensitivity.KindSum, sensitivity.KindGroupedSum} {
						for range 6 {
							a := randomAgg(r, sp.Domain, kind)
							dq, err := sensitivity.DP(sensitivity.Bounded, k, sensitivity.Aggregate{Kind: kind, Lo: a.Lo, Hi: a.Hi})
							if err != nil {
								t.Fatal(err)
							}
							ds := m * float64(dq)
							w, err := u.FullDependence(n, deps, self, oracle.AnyChange, a.Query())
							if err != nil {
								t.Fatal(err)
							}
							if float64(w.L1) > ds {
								t.Fatalf("%v deps %v: DS %v < oracle %d (unit %d: %v → %v)", kind, deps, ds, w.L1, w.Unit, w.D1, w.D2)
							}
						}
					}
					// Tightness under value changes: the worst count (one
					// value outside WHERE) and histogram (two groups) attain DS.
					if self != oracle.ValueChange {
						continue
					}
					for _, tc := range []struct {
						kind sensitivity.Kind
						a    oracle.Aggregate
					}{
						{sensitivity.KindCount, oracle.Aggregate{Where: append([]bool{false}, trues(sp.Domain-1)...)}},
						{sensitivity.KindHistogram, oracle.Aggregate{GroupOf: halves(sp.Domain), Groups: 2}},
					} {
						dq, _ := sensitivity.DP(sensitivity.Bounded, k, sensitivity.Aggregate{Kind: tc.kind})
						w, _ := u.FullDependence(n, deps, self, oracle.AnyChange, tc.a.Query())
						if float64(w.L1) != m*float64(dq) {
							t.Errorf("%v deps %v: DS %v but the worst query gives %d", tc.kind, deps, m*float64(dq), w.L1)
						}
					}
				}
			})
		}
	}
}

func trues(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

func halves(n int) []int {
	g := make([]int, n)
	for i := range g {
		g[i] = i % 2
	}
	return g
}

// Fractional ρ: the oracle's dependent sensitivity max_i Σ_j ρ_ij ΔQ_j
// (ρ_ii = 1, ΔQ_j brute-forced per unit under value changes) is ≤ the
// proxy's m·ΔQ, and equal up to rounding (ΔQ_j is the same for every unit).
func TestFractionalDependenceAgainstOracle(t *testing.T) {
	u, err := oracle.NewUniverse(oracle.Space{Domain: 3, RowsPerUnit: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		n := 3
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
		for _, kind := range []sensitivity.Kind{sensitivity.KindCount, sensitivity.KindHistogram, sensitivity.KindSum} {
			a := randomAgg(r, 3, kind)
			q := a.Query()
			dq, _ := sensitivity.DP(sensitivity.Bounded, 2, sensitivity.Aggregate{Kind: kind, Lo: a.Lo, Hi: a.Hi})
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
				t.Fatalf("%v ρ %v: DS %v < oracle %v", kind, rho, m*float64(dq), oracleDS)
			}
		}
	}
}

// randomFullDependence draws which of n tuples depend fully (ρ = 1) on
// which others, each ordered pair with probability 1/2: ρ and, per
// tuple, the list of those it depends on.
func randomFullDependence(r *rand.Rand, n int) (rho [][]float64, deps [][]int) {
	rho = make([][]float64, n)
	deps = make([][]int, n)
	for i := range n {
		rho[i] = make([]float64, n)
		for j := range n {
			if i != j && r.IntN(2) == 0 {
				rho[i][j] = 1
				deps[i] = append(deps[i], j)
			}
		}
	}
	return rho, deps
}
