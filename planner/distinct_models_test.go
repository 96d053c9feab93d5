package planner_test

import (
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// TestDistinctOtherModels: hand-derived values under blowfish, induced and
// ddp (sensitivity/distinct.go, oracle-checked there): a change of the
// counted column alone moves a distinct count where COUNT stays put.
func TestDistinctOtherModels(t *testing.T) {
	bf := loadBlowfish(t)
	ddp := planner.New(loadDDP(t))
	for _, tc := range []struct {
		p    *planner.Planner
		name string
		sql  string
		sens float64 // the noise's sensitivity, output units
	}{
		// geo: distance θ = 5 on x, no constraints (maxT = 1).
		{bf, "x changes", "SELECT COUNT(DISTINCT x) FROM visits", 1},
		{bf, "nothing changes", "SELECT COUNT(DISTINCT kind) FROM visits", 0},
		{bf, "counted column changes, groups fixed", "SELECT kind, COUNT(DISTINCT x) FROM visits GROUP BY kind", 1},
		{bf, "groups change", "SELECT x, COUNT(DISTINCT kind) FROM visits GROUP BY x", 2},
		{bf, "units: n is public", "SELECT COUNT(DISTINCT id) FROM visits", 0},
		{bf, "units filtered on x", "SELECT COUNT(DISTINCT id) FROM visits WHERE x < 50", 1},
		// cities: partition by city, marginal on city: no secret pair
		// changes the marginal, so neighbours are single secret changes
		// (maxT = 1): rooms changes (1), the groups by city do not.
		{bf, "edges keep the counts", "SELECT COUNT(DISTINCT rooms) FROM homes", 1},
		{bf, "edges keep the counts, grouped", "SELECT city, COUNT(DISTINCT rooms) FROM homes GROUP BY city", 1},
		// cities_so: attribute secrets, secrets-only, marginals on city and
		// kind (maxT = 3): rooms changes (1 × 3); city too (2 × 3).
		{bf, "secrets-only", "SELECT COUNT(DISTINCT rooms) FROM flats", 3},
		{bf, "secrets-only grouped", "SELECT city, COUNT(DISTINCT rooms) FROM flats GROUP BY city", 6},
		// Which cities have a home follows from the published marginal.
		{bf, "published", "SELECT COUNT(DISTINCT city) FROM homes", 0},
		// induced, rows and columns of 2×5: MaxHalf 2, MaxL1 4.
		{bf, "induced", "SELECT COUNT(DISTINCT age) FROM persons", 2},
		{bf, "induced grouped", "SELECT sex, COUNT(DISTINCT age) FROM persons GROUP BY sex", 4},
		{bf, "induced published", "SELECT COUNT(DISTINCT region) FROM persons", 0},
		// ddp households: m = 2, k = 1 (ΔQ under value changes: column 1,
		// unit 1, grouped unit 2k = 2).
		{ddp, "ddp column", "SELECT COUNT(DISTINCT age) FROM people", 2},
		{ddp, "ddp unit", "SELECT COUNT(DISTINCT person_id) FROM people", 2},
		{ddp, "ddp grouped unit", "SELECT sex, COUNT(DISTINCT person_id) FROM people GROUP BY sex", 4},
		// multi: m = 3, k = 2.
		{ddp, "ddp k column", "SELECT COUNT(DISTINCT hh) FROM members", 6},
		{ddp, "ddp k unit", "SELECT COUNT(DISTINCT pid) FROM members", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := plan(t, tc.p, tc.sql, planArgs{dialect: parser.Postgres})
			if err != nil {
				t.Fatal(err)
			}
			if len(pl.Aggs) != 1 || pl.Backend.Aggs[0].Kind != ir.CountDistinct {
				t.Fatalf("aggregates %+v", pl.Aggs)
			}
			a := pl.Aggs[0]
			if got := a.SensitivityValue(); math.Abs(got-tc.sens) > 1e-9 {
				t.Errorf("sensitivity %g, want %g (notes %v)", got, tc.sens, pl.Notes)
			}
			if (tc.sens == 0) != (pl.Budget.Epsilon == 0) {
				t.Errorf("sensitivity %g charged ε %g", tc.sens, pl.Budget.Epsilon)
			}
		})
	}
}
