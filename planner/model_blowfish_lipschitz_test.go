package planner_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

// TestDistanceRealSummandSampled: for a real distance column (θ = 0.75)
// and an integer one (θ = 2.5, so x moves by 2), the per-change bound of a
// polynomial summand (Lipschitz constant × θ on the lattice) is ≥ the
// change of the backend's computation FLOOR(clamp(f(clamp(z)))/γ + 0.5)
// over sampled pairs z, z' at distance ≤ θ (every clamp included: values
// beyond the bounds, pairs at exactly θ, points on half-lattice ties). A
// sampled check, as the domain is continuous; the integer case is exact
// over every pair.
func TestDistanceRealSummandSampled(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	for _, tc := range []struct {
		secrets, col string
		lo, hi       float64
		theta        float64
		integer      bool
		sql          string
		f            func(z float64) float64
	}{
		{"{distance: {column: z, theta: 0.75}}", "z: {type: real, bounds: [-3, 7]}", -3, 7, 0.75, false, "SELECT SUM(z - 2) FROM t", func(z float64) float64 { return z - 2 }},
		{"{distance: {column: z, theta: 0.75}}", "z: {type: real, bounds: [-3, 7]}", -3, 7, 0.75, false, "SELECT SUM((z - 2) * (z - 2)) FROM t", func(z float64) float64 { return (z - 2) * (z - 2) }},
		{"{distance: {column: z, theta: 0.75}}", "z: {type: real, bounds: [-3, 7]}", -3, 7, 0.75, false, "SELECT SUM(3 * z + 0.1) FROM t", func(z float64) float64 { return 3*z + 0.1 }},
		{"{distance: {column: z, theta: 2.5}}", "z: {type: integer, bounds: [0, 20]}", 0, 20, 2, true, "SELECT SUM((z - 10) * (z - 10)) FROM t", func(z float64) float64 { return (z - 10) * (z - 10) }},
		// A narrow range far from 0: the summand's range (hence γ) is
		// 2^-38 wide while 3·z is rounded at 2^-52 — 2^16 lattice units of
		// floating-point error on each side of a pair.
		{"{distance: {column: z, theta: 2.886579864025407e-14}}", "z: {type: real, bounds: [1, 1.0000000000009095]}", 1, 1.0000000000009095, 2.886579864025407e-14, false, "SELECT SUM(3 * z - 3) FROM t", func(z float64) float64 { return 3*z - 3 }},
		{"{distance: {column: z, theta: 2.5}}", "z: {type: integer, bounds: [0, 20]}", 0, 20, 2, true, "SELECT SUM(z - 10.5) FROM t", func(z float64) float64 { return z - 10.5 }},
	} {
		t.Run(tc.sql+" "+tc.col, func(t *testing.T) {
			p := loadExprPolicy(t, exprPolicy{name: tc.sql, yaml: "    model: blowfish\n    secrets: " + tc.secrets + "\n", columns: "          " + tc.col + "\n"})
			if p == nil {
				t.Fatal("policy refused")
			}
			pl, err := plan(t, p, tc.sql, planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				t.Fatal(err)
			}
			a, ba := pl.Aggs[0], pl.Backend.Aggs[0]
			g := a.Quantum
			quant := func(z float64) int64 {
				z = math.Min(math.Max(z, tc.lo), tc.hi)
				v := math.Min(math.Max(tc.f(z), ba.Lo), ba.Hi)
				return int64(math.Floor(v/g + 0.5))
			}
			r := rand.New(rand.NewPCG(51, 3))
			var worst int64
			check := func(z, z2 float64) {
				worst = max(worst, abs64(quant(z)-quant(z2)))
			}
			if tc.integer {
				for z := tc.lo - 2; z <= tc.hi+2; z++ {
					for d := -tc.theta; d <= tc.theta; d++ {
						check(z, z+d)
					}
				}
			} else {
				margin := math.Min(1, (tc.hi-tc.lo)/4) // beyond the bounds, on the range's scale
				for range 200_000 {
					z := tc.lo - margin + r.Float64()*(tc.hi-tc.lo+2*margin)
					if r.IntN(4) == 0 {
						z = math.Round(z/(g/2)) * (g / 2) // a half-lattice tie
					}
					u := r.Float64()*2 - 1
					if r.IntN(4) == 0 {
						u = float64(1 - 2*r.IntN(2)) // exactly θ
					}
					if z2 := z + u*tc.theta; math.Abs(z2-z) <= tc.theta { // an edge: at distance ≤ θ as stored
						check(z, z2)
					}
				}
			}
			if worst > a.Sensitivity {
				t.Fatalf("sampled change %d lattice units > sensitivity %d (γ %g)", worst, a.Sensitivity, g)
			}
			if width := quant(math.Inf(1)) - quant(math.Inf(-1)); a.Sensitivity >= width && worst < width {
				t.Errorf("sensitivity %d did not use the Lipschitz bound (arbitrary change %d)", a.Sensitivity, width)
			}
			t.Logf("γ %g: sensitivity %d, sampled worst %d", g, a.Sensitivity, worst)
		})
	}
}

func abs64(a int64) int64 { return max(a, -a) }
