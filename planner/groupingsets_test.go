package planner_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestGroupingSetsSummedCostsTheFinestGrouping: ROLLUP over keys with
// declared domains is one release of the finest grouping: the same true
// aggregates, noise, budget and release key as the plain GROUP BY of all
// its keys (subtotals are post-processing of those cells).
func TestGroupingSetsSummedCostsTheFinestGrouping(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		rollup := "SELECT sex, age, COUNT(*), SUM(temp) FROM people GROUP BY ROLLUP(sex, age)"
		if d == parser.MySQL {
			rollup = "SELECT sex, age, COUNT(*), SUM(temp) FROM people GROUP BY sex, age WITH ROLLUP"
		}
		pl, err := plan(t, p, rollup, planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		flat, err := plan(t, p, "SELECT sex, age, COUNT(*), SUM(temp) FROM people GROUP BY sex, age", planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		gs := pl.GroupingSets
		if gs == nil || gs.Strategy != planner.SetsSummed {
			t.Fatalf("%v: grouping sets %+v, want the summed strategy", d, gs)
		}
		// N = 2·121 finest cells; 3 sets. Summed: each set's rows add up
		// to N cells' variance, 3N per aggregate. Separately (ε/3 each)
		// 2·121 + 2 + 1 rows at ~9 times the variance: far more.
		if gs.SumError != 3*242*2 || !(gs.SeparateError > 9*245*2*0.99) {
			t.Errorf("errors summed %g, separate %g; want 1452 and about 4410", gs.SumError, gs.SeparateError)
		}
		if pl.Budget != flat.Budget || pl.CacheKey != flat.CacheKey {
			t.Errorf("%v: budget %+v key %s, want the plain GROUP BY's %+v %s", d, pl.Budget, pl.CacheKey, flat.Budget, flat.CacheKey)
		}
		for i := range pl.Aggs {
			if pl.Aggs[i] != flat.Aggs[i] {
				t.Errorf("%v: aggregate %d %+v, want %+v", d, i, pl.Aggs[i], flat.Aggs[i])
			}
		}
		if want := [][]int{{0, 1}, {0}, {}}; len(gs.Sets) != 3 || len(gs.Sets[2]) != 0 || len(gs.Sets[1]) != 1 {
			t.Errorf("sets %v, want %v", gs.Sets, want)
		}
	}
}

// TestGroupingSetsSeparate: sets that do not nest (bins and ages and sex,
// whose finest grouping has 2·13·121 cells) are released one by one, each
// at ε/3 with its own grouping's sensitivity, derived by hand: under
// unbounded dp with k = 1 a histogram or a count has sensitivity 1 and
// SUM(temp) over [-10, 50] has 50; two aggregates split each set's ε.
func TestGroupingSetsSeparate(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT sex, COUNT(*), SUM(temp) FROM people GROUP BY GROUPING SETS ((sex), (floor(age / 10) * 10), (age), (sex))", planArgs{eps: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	gs := pl.GroupingSets
	if !gs.Separate() || len(gs.Release) != 3 {
		t.Fatalf("grouping sets %+v, want 3 separate releases", gs)
	}
	if gs.Distinct[3] != gs.Distinct[0] {
		t.Errorf("the repeated set (sex) is released twice: %v", gs.Distinct)
	}
	if pl.Budget.Epsilon != 1.5 || pl.Budget.Delta != 0 {
		t.Errorf("budget %+v, want ε = 1.5 in all", pl.Budget)
	}
	for i, r := range gs.Release {
		if r.Budget.Epsilon != 0.5 || r.Keys.Mode != planner.KeysDomain {
			t.Errorf("set %d: budget %+v keys %v, want ε = 0.5 over a domain", i, r.Budget, r.Keys.Mode)
		}
		if r.Aggs[0].Sensitivity != 1 || r.Aggs[0].Scale.Float64() != 4 {
			t.Errorf("set %d: count sensitivity %d scale %v, want 1 and 1/(0.5/2) = 4", i, r.Aggs[0].Sensitivity, r.Aggs[0].Scale)
		}
		if r.Aggs[1].Sensitivity != 50 || r.Aggs[1].Scale.Float64() != 200 {
			t.Errorf("set %d: sum sensitivity %d scale %v, want 50 and 200", i, r.Aggs[1].Sensitivity, r.Aggs[1].Scale)
		}
		if len(r.Backend.GroupBy) != 1 {
			t.Errorf("set %d groups by %d keys", i, len(r.Backend.GroupBy))
		}
	}
	if !(gs.SeparateError < gs.SumError) {
		t.Errorf("errors summed %g, separate %g: the cheaper one was not chosen", gs.SumError, gs.SeparateError)
	}
	other, err := plan(t, p, "SELECT sex, COUNT(*), SUM(temp) FROM people GROUP BY GROUPING SETS ((sex), (floor(age / 10) * 10), (age))", planArgs{eps: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if other.CacheKey != pl.CacheKey {
		t.Errorf("a repeated set changed the release key: its rows are the same release shown twice")
	}
	flat, err := plan(t, p, "SELECT sex, COUNT(*), SUM(temp) FROM people GROUP BY sex, floor(age / 10) * 10, age", planArgs{eps: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if flat.CacheKey == pl.CacheKey {
		t.Errorf("separate releases share the finest grouping's release key")
	}
	x := pl.Explain(func(q *ir.BackendQuery) (string, error) { return q.Canonical(), nil })
	if x.BackendSQL != "" || x.GroupingSets == nil || !strings.Contains(x.GroupingSets.Sets[2].BackendSQL, `GROUP BY "t0"."age"`) {
		t.Errorf("backend SQL: top %q, sets %+v; want one query per set and none for the finest grouping", x.BackendSQL, x.GroupingSets)
	}
	var text strings.Builder
	x.WriteText(&text)
	if !strings.Contains(text.String(), "grouping sets: per_set_release") || !strings.Contains(text.String(), "set 4 (sex): the rows of set 1 again") {
		t.Errorf("explain text:\n%s", text.String())
	}
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		GroupingSets struct {
			Strategy string `json:"strategy"`
			Sets     []struct {
				Keys    []string `json:"keys"`
				Epsilon float64  `json:"epsilon"`
				SameAs  *int     `json:"same_as"`
			} `json:"sets"`
		} `json:"grouping_sets"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.GroupingSets.Strategy != "per_set_release" || len(m.GroupingSets.Sets) != 4 ||
		m.GroupingSets.Sets[1].Epsilon != 0.5 || m.GroupingSets.Sets[3].SameAs == nil || *m.GroupingSets.Sets[3].SameAs != 0 {
		t.Errorf("explain grouping_sets = %s", b)
	}
	if !strings.Contains(strings.Join(x.Notes, "\n"), "each distinct set is its own histogram") {
		t.Errorf("notes %q do not say the strategy", x.Notes)
	}
}

// TestGroupingSetsThreshold: a key without a domain makes its sets select
// keys by threshold (δ to them), the total () is one row; without δ the
// query is refused before any charge.
func TestGroupingSetsThreshold(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT cell, COUNT(*) FROM checkins GROUP BY ROLLUP(cell)", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	gs := pl.GroupingSets
	if !gs.Separate() || len(gs.Release) != 2 {
		t.Fatalf("grouping sets %+v, want 2 separate releases", gs)
	}
	cell, total := gs.Release[0], gs.Release[1]
	if cell.Keys.Mode != planner.KeysThreshold || cell.Budget.Delta != 1e-6 || cell.Budget.Epsilon != 0.5 {
		t.Errorf("set (cell): keys %v budget %+v", cell.Keys.Mode, cell.Budget)
	}
	// k = 5 rows per unit: the histogram and the count both have
	// sensitivity 5, at ε/2 the scale is 10.
	for _, r := range gs.Release {
		if a := r.Aggs[r.Keys.CountAgg]; a.Sensitivity != 5 || a.Scale.Float64() != 10 {
			t.Errorf("count sensitivity %d scale %v, want 5 and 10", a.Sensitivity, a.Scale)
		}
	}
	if total.Keys.Mode != planner.KeysNone || total.Budget.Delta != 0 {
		t.Errorf("set (): keys %v budget %+v", total.Keys.Mode, total.Budget)
	}
	if pl.Budget.Epsilon != 1 || pl.Budget.Delta != 1e-6 {
		t.Errorf("budget %+v, want (1, 1e-6)", pl.Budget)
	}
	if _, err := plan(t, p, "SELECT zip, COUNT(*) FROM people GROUP BY ROLLUP(zip)", planArgs{user: "bob"}); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("without δ: %v, want a refusal", err)
	}
}

// TestGroupingFuncPlan: GROUPING(...) is a hidden integer output usable in
// the select list, HAVING and ORDER BY, and is 0 under a plain GROUP BY.
func TestGroupingFuncPlan(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT sex, GROUPING(sex) AS g, COUNT(*) FROM people GROUP BY ROLLUP(sex) HAVING GROUPING(sex) = 1 OR COUNT(*) > 3 ORDER BY GROUPING(sex), sex", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range pl.Outputs {
		if o.Kind == planner.OutGrouping {
			found = true
			if pl.GroupingValue(o, 0) != 0 || pl.GroupingValue(o, 1) != 1 {
				t.Errorf("GROUPING(sex) on set (sex) %d, on () %d; want 0 and 1", pl.GroupingValue(o, 0), pl.GroupingValue(o, 1))
			}
		}
	}
	if !found || pl.Outputs[1].Type != "integer" {
		t.Errorf("outputs %+v: no integer GROUPING output", pl.Outputs)
	}
	if _, err := plan(t, p, "SELECT sex, GROUPING(sex), COUNT(*) FROM people GROUP BY sex", planArgs{eps: 1}); err != nil {
		t.Errorf("GROUPING under a plain GROUP BY: %v", err)
	}
}

// TestGroupingSetsUnderInduced: each set takes its own grouping's
// sensitivity under the model, and exact sets take no ε. With the row and
// column sums of sex × region published (induced), a histogram by sex or
// by region alone has sensitivity 0 and the total is fixed by them, while
// the 2×5 histogram has min(2·2, 2·5) = 4 (TestBlowfishSensitivities).
func TestGroupingSetsUnderInduced(t *testing.T) {
	p := loadBlowfish(t)
	pl, err := plan(t, p, "SELECT sex, region, COUNT(*) FROM persons GROUP BY GROUPING SETS ((sex), (region))", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !pl.GroupingSets.Separate() || pl.Budget.Epsilon != 0 {
		t.Fatalf("strategy %v budget %+v: two published marginals should be exact and free", pl.GroupingSets.Strategy, pl.Budget)
	}
	for _, r := range pl.GroupingSets.Release {
		if r.Aggs[0].Sensitivity != 0 {
			t.Errorf("marginal set sensitivity %d, want 0", r.Aggs[0].Sensitivity)
		}
	}
	pl, err = plan(t, p, "SELECT sex, region, COUNT(*) FROM persons GROUP BY ROLLUP(sex, region)", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	gs := pl.GroupingSets
	if !gs.Separate() || pl.Budget.Epsilon != 1 {
		t.Fatalf("strategy %v budget %+v, want per set charging ε = 1", gs.Strategy, pl.Budget)
	}
	// (sex, region) is the one noisy set and takes all of ε; (sex) and
	// () are exact.
	want := []int64{4, 0, 0}
	for i, r := range gs.Release {
		a := r.Aggs[0]
		if a.Sensitivity != want[i] {
			t.Errorf("set %d: sensitivity %d, want %d", i, a.Sensitivity, want[i])
		}
		if want[i] > 0 && (r.Budget.Epsilon != 1 || a.Scale.Float64() != 4) {
			t.Errorf("set %d: ε %g scale %v, want all of ε = 1 and scale 4", i, r.Budget.Epsilon, a.Scale)
		}
	}
	// Summed, the 2 + 1 subtotal rows would add 5 and 10 noisy cells.
	if !(gs.SeparateError < gs.SumError) {
		t.Errorf("errors summed %g, per set %g", gs.SumError, gs.SeparateError)
	}
}

// TestSetReleasesMatchPlainGroupBy: each set released separately is
// calibrated exactly as the plain GROUP BY of its keys at the set's ε
// (the path the sensitivity oracle tests cover), under every model: no
// new sensitivity formula is involved.
func TestSetReleasesMatchPlainGroupBy(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	ddp := planner.New(loadDDP(t))
	tests := []struct {
		name string
		p    *planner.Planner
		from string
		aggs string
		keys []string // the GROUP BY entries; sets index them
		sets string   // the GROUP BY clause
		eps  float64
	}{
		{"dp", planner.New(loadPolicy(t)), "people", "COUNT(*), SUM(temp), AVG(income)",
			[]string{"sex", "floor(age / 10) * 10", "age"}, "GROUPING SETS ((sex), (floor(age / 10) * 10), (age), ())", 2},
		{"dp threshold", planner.New(loadPolicy(t)), "checkins", "COUNT(*), SUM(duration)",
			[]string{"venue", "cell"}, "ROLLUP(venue, cell)", 2},
		{"induced", loadBlowfish(t), "persons", "COUNT(*)",
			[]string{"sex", "region"}, "GROUPING SETS ((sex, region), (sex), (region), ())", 2},
		{"blowfish distance", loadBlowfish(t), "visits", "COUNT(*), SUM(y)",
			[]string{"x", "kind"}, "GROUPING SETS ((x), (kind))", 2},
		{"ddp groups", ddp, "people", "COUNT(*), SUM(age)",
			[]string{"sex", "floor(age / 10) * 10", "floor(age / 5) * 5"}, "GROUPING SETS ((sex), (floor(age / 10) * 10), (floor(age / 5) * 5))", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, tt.p, fmt.Sprintf("SELECT %s FROM %s GROUP BY %s", tt.aggs, tt.from, tt.sets), planArgs{eps: tt.eps})
			if err != nil {
				t.Fatal(err)
			}
			gs := pl.GroupingSets
			if !gs.Separate() {
				t.Fatalf("strategy %v, want per set", gs.Strategy)
			}
			for d, r := range gs.Release {
				set := gs.Sets[slices.Index(gs.Distinct, d)]
				var keys []string
				for _, g := range set {
					keys = append(keys, tt.keys[g])
				}
				q := fmt.Sprintf("SELECT %s FROM %s", tt.aggs, tt.from)
				if len(keys) > 0 {
					q += " GROUP BY " + strings.Join(keys, ", ")
				}
				eps := r.Budget.Epsilon
				if eps == 0 {
					eps = tt.eps // an exact set: any ε plans it
				}
				flat, err := plan(t, tt.p, q, planArgs{eps: eps})
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if len(flat.Aggs) != len(r.Aggs) || flat.Keys.Mode != r.Keys.Mode || flat.Keys.Threshold != r.Keys.Threshold && r.Budget.Delta == flat.Budget.Delta {
					t.Fatalf("%s: keys %+v aggs %d, set has %+v %d", q, flat.Keys, len(flat.Aggs), r.Keys, len(r.Aggs))
				}
				for j := range r.Aggs {
					a, b := r.Aggs[j], flat.Aggs[j]
					if a.Sensitivity != b.Sensitivity || a.Quantum != b.Quantum || a.Multiplier != b.Multiplier ||
						(r.Budget.Epsilon > 0 && a.Scale.String() != b.Scale.String()) {
						t.Errorf("%s: aggregate %d of the set %+v, plain %+v", q, j, a, b)
					}
				}
			}
		})
	}
}

// TestGroupingSetsExactFinest: when the finest cells are exact (a
// blowfish partition histogram: sensitivity 0), their sums are exact and
// free, so summation is chosen and explain's JSON stays valid.
func TestGroupingSetsExactFinest(t *testing.T) {
	p := loadBlowfish(t)
	pl, err := plan(t, p, "SELECT city, COUNT(*) FROM homes GROUP BY ROLLUP(city)", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if pl.GroupingSets.Strategy != planner.SetsSummed || pl.Budget.Epsilon != 0 {
		t.Errorf("strategy %v budget %+v, want summed, free", pl.GroupingSets.Strategy, pl.Budget)
	}
	if _, err := json.Marshal(pl.Explain(nil)); err != nil {
		t.Errorf("explain JSON: %v", err)
	}
}
