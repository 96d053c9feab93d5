package planner_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// TestExprAggregatesAgainstOracleDDP: under dependent DP the planner's
// DS = m·ΔQ, ΔQ the value-change sensitivity of the expression aggregate
// (its range in place of a column's bounds), is ≥ the brute-force
// dependent neighbours for every drawn query: complete dependence (size:
// 2, ρ = 1: unit i and its dependent change together, i by a value change
// or, unbounded, by presence) and fractional ρ (a household of 3 with ρ =
// 0.5: the oracle's max_i Σ_j ρ_ij ΔQ_j with ΔQ_j brute-forced per unit).
func TestExprAggregatesAgainstOracleDDP(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	u, err := oracle.NewUniverse(oracle.Space{Domain: 8, RowsPerUnit: 1})
	if err != nil {
		t.Fatal(err)
	}
	type ddpCase struct {
		pol  exprPolicy
		self oracle.Change // complete dependence; fractional when rho > 0
		rho  float64
	}
	cases := []ddpCase{
		{pol: exprPolicy{name: "size 2 unbounded", yaml: "    model: ddp\n    dependence: {size: 2}\n"}, self: oracle.PresenceChange},
		{pol: exprPolicy{name: "size 2 bounded", yaml: "    model: ddp\n    neighbors: bounded\n    dependence: {size: 2}\n"}, self: oracle.ValueChange},
		{pol: exprPolicy{name: "household of 3, ρ 0.5", yaml: "    model: ddp\n    dependence:\n      groups: {column: hh, rho: 0.5}\n",
			columns: "          hh: {type: integer}\n", rel: fakeRelations{"t": {iv(1, 1), iv(1, 2), iv(1, 3)}}}, rho: 0.5},
	}
	r := rand.New(rand.NewPCG(43, 14))
	checked, tight := 0, 0
	for _, tc := range cases {
		p := loadExprPolicy(t, tc.pol)
		if p == nil {
			t.Fatalf("%s: policy refused", tc.pol.name)
		}
		var qs []exprQuery
		for _, fn := range []string{"sum", "avg"} {
			for _, arg := range []string{"x - 1.5", "(x - 1.5) * (x - 1.5)", "2 * x - 3", "(2 * x - 3) * (2 * x - 3)"} {
				for _, g := range []string{"", "floor(x / 2)"} {
					qs = append(qs, menuQuery(t, fn, arg, "", g))
				}
			}
		}
		qs = append(qs, menuQuery(t, "countstar", "", "", "floor(x / 2)"))
		for range 25 {
			qs = append(qs, randomExprQuery(r))
		}
		for _, q := range qs {
			pl, err := plan(t, p, q.sql(), planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.pol.name, q.sql(), err)
			}
			for i, a := range pl.Aggs {
				oq := oracleAgg(t, q, pl, i).Query()
				ds := float64(a.Sensitivity) * a.Multiplier
				var got float64
				if tc.rho == 0 {
					w, err := u.FullDependence(2, [][]int{{1}, {0}}, tc.self, oracle.AnyChange, oq)
					if err != nil {
						t.Fatal(err)
					}
					got = float64(w.L1)
				} else {
					const n = 3
					for i := range n {
						s := 0.0
						for j := range n {
							rho := tc.rho
							if j == i {
								rho = 1
							}
							s += rho * float64(u.UnitSensitivity(n, j, oracle.AnyChange, oq))
						}
						got = max(got, s)
					}
				}
				checked++
				if got > ds*(1+1e-12) {
					t.Fatalf("%s: %s: %s DS %g = m %g × ΔQ %d < oracle %g (lattice %g)", tc.pol.name, q.sql(), a.Label, ds, a.Multiplier, a.Sensitivity, got, a.Quantum)
				}
				if got >= ds*(1-1e-12) {
					tight++
				}
			}
		}
	}
	t.Logf("%d aggregates checked, %d tight", checked, tight)
	if checked < 100 || tight < 30 {
		t.Errorf("too few cases: %d checked, %d tight", checked, tight)
	}
}
