package aggregate_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
)

// varianceSpaces are the brute-force spaces per contribution bound k (as
// in the sensitivity package's dp oracle test).
var varianceSpaces = map[int]oracle.Space{
	1: {Domain: 8, MaxUnits: 3, RowsPerUnit: 1},
	2: {Domain: 6, MaxUnits: 3, RowsPerUnit: 2},
	3: {Domain: 5, MaxUnits: 2, RowsPerUnit: 3},
}

// variancePolicy declares one dataset per (neighbours, k), each with an
// integer column x in [-3, 8] (odd width: m = 2.5 is no integer) and a real
// column r in [-1.5, 2.25], grouped by g in {a, b}.
func variancePolicy(t *testing.T) *policies.Policy {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nbackend: {driver: sqlite, dsn: x.db}\nusers:\n  - name: alice\n    password_env: DDP_TEST_VARIANCE_PASSWORD\n    max_epsilon: 10\n    budgets:\n")
	var ds strings.Builder
	for _, nb := range []string{"unbounded", "bounded"} {
		for k := 1; k <= 3; k++ {
			name := fmt.Sprintf("%s%d", nb[:1], k)
			fmt.Fprintf(&b, "      %s: {epsilon: 100}\n", name)
			fmt.Fprintf(&ds, "  %s:\n    neighbors: %s\n    tables:\n      t_%s:\n        unit: u\n        max_rows_per_unit: %d\n        columns:\n"+
				"          x: {type: integer, bounds: [-3, 8]}\n          r: {type: real, bounds: [-1.5, 2.25]}\n          g: {type: text, domain: {values: [a, b]}}\n", name, nb, name, k)
		}
	}
	b.WriteString("datasets:\n" + ds.String())
	t.Setenv("DDP_TEST_VARIANCE_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// TestVariancePartsAgainstOracle plans VAR_POP (and VAR_SAMP, which shares
// its parts) of an integer and a real column, ungrouped and grouped, under
// dp with unbounded and bounded neighbours and k = 1..3, and requires each
// part's planned sensitivity (in lattice units) to equal the brute-force
// oracle's maximum L1 over neighbouring databases, where each row's
// contribution is the part's per-row function computed as the backend
// does: x clamped to its bounds, (x − m) or |x − m|², clamped to the
// part's range, divided by the lattice step and rounded (FLOOR(v/γ + 0.5)).
// The oracle's rows take values on a grid that includes both bounds, the
// values nearest m, values outside the bounds, and NULL.
func TestVariancePartsAgainstOracle(t *testing.T) {
	pol := variancePolicy(t)
	p := planner.New(pol)
	for _, nb := range []struct {
		name string
		rel  oracle.Neighbours
	}{{"unbounded", oracle.Unbounded}, {"bounded", oracle.Bounded}} {
		for k := 1; k <= 3; k++ {
			u, err := oracle.NewUniverse(varianceSpaces[k])
			if err != nil {
				t.Fatal(err)
			}
			pairs := oracle.NewPairs(u, nb.rel)
			dom := varianceSpaces[k].Domain
			table := fmt.Sprintf("t_%s%d", nb.name[:1], k)
			for _, tc := range []struct {
				col    string
				lo, hi float64
				grid   []float64 // ungrouped grid, dom values
			}{
				{"x", -3, 8, []float64{-3, 8, 2, 3, -5, 10, 7}},
				{"r", -1.5, 2.25, []float64{-1.5, 2.25, 0.375, 0.5, -4, 9.75, -1}},
			} {
				for _, grouped := range []bool{false, true} {
					sql := fmt.Sprintf("SELECT var_pop(%s), var_samp(%s) FROM %s", tc.col, tc.col, table)
					if grouped {
						sql = fmt.Sprintf("SELECT g, var_pop(%s), var_samp(%s) FROM %s GROUP BY g", tc.col, tc.col, table)
					}
					pl := planSQL(t, p, pol, sql)
					o := pl.Outputs[btoi(grouped)]
					if o.Unit != aggregate.VarPop || len(o.Parts) != 3 {
						t.Fatalf("%s: output %+v", sql, o)
					}
					if o2 := pl.Outputs[btoi(grouped)+1]; fmt.Sprint(o2.Parts) != fmt.Sprint(o.Parts) {
						t.Errorf("%s: var_samp's parts %v are not var_pop's %v", sql, o2.Parts, o.Parts)
					}
					if len(pl.Aggs) != 3 {
						t.Errorf("%s: %d true aggregates, want the 3 shared parts", sql, len(pl.Aggs))
					}
					// The oracle's domain: grid values, and for the grouped
					// query each of the first values in both groups.
					vals := dom - 1 // and NULL
					xs, groups := append(tc.grid[:vals:vals], 0), []int(nil)
					if grouped {
						half := vals / 2
						xs = append(append(append([]float64(nil), tc.grid[:half]...), tc.grid[:vals-half]...), 0)
						groups = make([]int, dom)
						for i := half; i < vals; i++ {
							groups[i] = 1
						}
					}
					m := (tc.lo + tc.hi) / 2
					for j, pi := range o.Parts {
						ba, ap := pl.Backend.Aggs[pi], pl.Aggs[pi]
						// The last domain value is a NULL: counted by
						// neither COUNT(x) nor the sums.
						where := make([]bool, dom)
						for v := range dom - 1 {
							where[v] = true
						}
						a := oracle.Aggregate{Where: where, GroupOf: groups, Groups: 2}
						if j > 0 {
							a.Lo, a.Hi = quantize(ba.Lo, ap.Quantum), quantize(ba.Hi, ap.Quantum)
							a.Value = make([]int64, dom)
							for v, x := range xs {
								d := min(max(x, tc.lo), tc.hi) - m
								f := d
								if j == 2 {
									f = math.Abs(d) * math.Abs(d)
								}
								a.Value[v] = quantize(min(max(f, ba.Lo), ba.Hi), ap.Quantum)
							}
						}
						w := pairs.MaxL1(a.Query())
						if w.L1 != ap.Sensitivity {
							t.Errorf("%s (%s, k=%d) part %s: planned sensitivity %d, oracle %d (witness %v – %v)", sql, nb.name, k, ap.Label, ap.Sensitivity, w.L1, w.D1, w.D2)
						}
					}
				}
			}
		}
	}
}

func quantize(x, gamma float64) int64 { return int64(math.Floor(x/gamma + 0.5)) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func planSQL(t *testing.T, p *planner.Planner, pol *policies.Policy, sql string) *planner.Plan {
	t.Helper()
	return planDialect(t, p, pol, parser.Postgres, sql)
}

func planDialect(t *testing.T, p *planner.Planner, pol *policies.Policy, d parser.Dialect, sql string) *planner.Plan {
	t.Helper()
	pl, err := tryPlan(p, pol, d, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return pl
}

func tryPlan(p *planner.Planner, pol *policies.Policy, d parser.Dialect, sql string) (*planner.Plan, error) {
	stmts, err := parser.Parse(d, sql)
	if err != nil {
		return nil, err
	}
	return p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]})
}
