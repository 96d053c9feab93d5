package release_test

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// rankDistance is how many rows (in sorted order) the value v lies from
// the target position h = p·(n−1) of sorted: the distance from h to the
// positions [C_<(v), C_≤(v) − 1] the rows equal to v occupy (an absent
// value occupies the gap between C_<(v) − 1 and C_<(v)).
func rankDistance(sorted []float64, v, p float64) float64 {
	below := sort.SearchFloat64s(sorted, v)
	atOrBelow := sort.Search(len(sorted), func(i int) bool { return sorted[i] > v })
	h := p * float64(len(sorted)-1)
	return math.Max(math.Max(float64(below)-h, h+1-float64(atOrBelow)), 0)
}

// TestQuantilesWithinRankError runs MIN, MAX, median and two percentiles
// of age (the fixture's 1000 ages, 10…99, bounds [0, 100]: 101 integer
// candidates) through the planner and the release 80 times each (distinct
// WHERE literals that keep every row, so no answer comes from the cache),
// and checks that the released value lies within the advertised rank
// error of the requested rank in at least 95% of the draws minus 4
// standard errors of a binomial proportion (0.95 − 0.10 for 80 draws: a
// correct bound fails with probability below 1e-4). It also checks the
// value is an integer of the candidate set (age is an integer column).
func TestQuantilesWithinRankError(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testQuantilesWithinRankError(t, newFixture(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { testQuantilesWithinRankError(t, newPostgresFixture(t)) })
}

func testQuantilesWithinRankError(t *testing.T, f *fixture) {
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(41)})
	var ages, incomes []float64
	for i := range nPeople {
		ages = append(ages, float64(trueAge(i)))
		incomes = append(incomes, trueIncome(i))
	}
	sort.Float64s(ages)
	const draws = 80
	for _, tc := range []struct {
		sql string
		p   float64
		eps float64
		// real: income, 1024 bins of width 1000/1024 over [0, 1000]
		// holding at most 2 rows each; the reported midpoint may sit up
		// to those 2 rows away from where the bin's rows are.
		real bool
	}{
		{"SELECT MIN(age) FROM people", 0, 1, false},
		{"SELECT MAX(age) FROM people", 1, 1, false},
		{"SELECT median(age) FROM people", 0.5, 1, false},
		{"SELECT median(age) FROM people", 0.5, 0.02, false}, // R ≈ 380 rows
		{"SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY age) FROM people", 0.9, 1, false},
		{"SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY age DESC) FROM people", 0.75, 1, false},
		{"SELECT median(income) FROM people", 0.5, 1, true},
	} {
		within := 0
		var rankErr float64
		for i := range draws {
			q := strings.Replace(tc.sql, " FROM people", fmt.Sprintf(" FROM people WHERE income >= -%d", i+1), 1)
			u, pl := f.plan(t, "alice", q, tc.eps)
			res, err := e.Run(t.Context(), u, pl)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			rankErr = res.Columns[0].RankError
			if rankErr <= 0 || math.IsInf(rankErr, 0) {
				t.Fatalf("%s: rank error %v", q, rankErr)
			}
			v, ok := res.Rows[0][0].AsFloat()
			switch {
			case tc.real && (!ok || v < 0 || v > 1000):
				t.Fatalf("%s: value %v is not in [0, 1000]", q, res.Rows[0][0])
			case tc.real:
				if rankDistance(incomes, v, tc.p) <= rankErr+2 {
					within++
				}
			case !ok || v != math.Trunc(v) || v < 0 || v > 100:
				t.Fatalf("%s: value %v is not an integer candidate in [0, 100]", q, res.Rows[0][0])
			case rankDistance(ages, v, tc.p) <= rankErr:
				within++
			}
		}
		floor := 0.95 - 4*math.Sqrt(0.95*0.05/draws)
		if float64(within)/draws < floor {
			t.Errorf("%s: within %v rows in %d of %d draws (< %.3f)", tc.sql, rankErr, within, draws, floor)
		}
		t.Logf("%s at ε %g: rank error bound %v rows, held in %d of %d draws", tc.sql, tc.eps, rankErr, within, draws)
	}
}

// TestQuantileGroupedAndExplained: a grouped median over a declared key
// domain releases one value per key — also for the key without rows
// (Other), whose value is drawn from all-zero counts — and explain --json
// names the mechanism, the ε share and the rank error bound, and MIN's
// note that it is not the extreme value.
func TestQuantileGroupedAndExplained(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(42)})
	u, pl := f.plan(t, "alice", "SELECT sex, median(age), MIN(age), COUNT(*) FROM people GROUP BY sex", 3)
	res, err := e.Run(t.Context(), u, pl)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("rows %v, want one per declared sex", res.Rows)
	}
	for _, r := range res.Rows {
		for _, c := range []int{1, 2} {
			if r[c].IsNull() {
				t.Errorf("key %v: quantile column %d is NULL", r[0], c)
			}
		}
	}
	x := pl.Explain(nil)
	raw, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Columns []struct {
			Name      string  `json:"name"`
			Aggregate string  `json:"aggregate"`
			Mechanism string  `json:"mechanism"`
			Epsilon   float64 `json:"epsilon"`
			RankError float64 `json:"rank_error"`
		} `json:"columns"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	for _, c := range back.Columns[1:3] {
		// Three parts (two quantiles and the count) share ε = 3.
		if c.Mechanism != "exponential" || c.Epsilon != 1 || c.RankError <= 0 {
			t.Errorf("explain column %+v: want mechanism exponential, ε 1, a rank error bound", c)
		}
	}
	if !strings.Contains(strings.Join(back.Notes, "\n"), "not the extreme value") {
		t.Errorf("explain notes do not say MIN is not the extreme value: %v", back.Notes)
	}
	var b strings.Builder
	x.WriteText(&b)
	if !strings.Contains(b.String(), "rank error ≤") {
		t.Errorf("explain text has no rank error:\n%s", b.String())
	}
}

// TestQuantileRefusals: what the planner refuses before any charge.
func TestQuantileRefusals(t *testing.T) {
	f := newFixture(t, t.TempDir())
	for _, q := range []string{
		"SELECT MIN(sex) FROM people",        // text
		"SELECT MAX(bucket) FROM people",     // no bounds
		"SELECT median(age + 1) FROM people", // an expression
		"SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY age) FROM people",
		"SELECT percentile_cont(age) FROM people", // no WITHIN GROUP
	} {
		stmts, err := parser.Parse(parser.Postgres, q)
		if err != nil {
			continue // refused by the parser: fine too
		}
		if stmts[0].Query == nil {
			continue
		}
		if _, err := f.p.Plan(planner.Request{User: f.pol.User("alice"), Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err == nil {
			t.Errorf("%s: planned, want a refusal", q)
		}
	}
}

// TestQuantileOfNoRows: a query that provably reads no row answers NULL
// for a quantile (as SQL does for MIN of an empty input), free.
func TestQuantileOfNoRows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(43)})
	res, err := f.run(t, e, "alice", "SELECT MIN(age), median(income), COUNT(*) FROM people WHERE 1 <> 1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || !res.Rows[0][0].IsNull() || !res.Rows[0][1].IsNull() || res.Charged.Epsilon != 0 {
		t.Errorf("rows %v charged %v: want NULL quantiles, free", res.Rows, res.Charged)
	}
}

// TestQuantileUnderThresholdKeys: with keys chosen from the data (bucket
// has no declared domain; alice may spend δ), the hidden COUNT(*) decides
// which keys are released and only those get a median: the seven buckets
// of ~143 rows each, never bucket 99, which holds one person alone (its
// release threshold is far above 1 at ε = 1).
func TestQuantileUnderThresholdKeys(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(44)})
	u, pl := f.plan(t, "alice", "SELECT bucket, median(age) FROM people GROUP BY bucket", 1)
	if pl.Keys.Mode != planner.KeysThreshold {
		t.Fatalf("key selection %v, want threshold", pl.Keys.Mode)
	}
	res, err := e.Run(t.Context(), u, pl)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 7 {
		t.Fatalf("released %d keys, want the 7 large buckets: %v", len(res.Rows), res.Rows)
	}
	for _, r := range res.Rows {
		if r[0].Int == 99 || r[1].IsNull() {
			t.Errorf("row %v: bucket 99 released or median missing", r)
		}
		if v, _ := r[1].AsFloat(); v < 10 || v > 99 {
			// Each bucket's ages span 10…99 with its median near 54; a
			// value outside the data's range at ε = 1 over ~143 rows would
			// be beyond the rank error.
			t.Errorf("bucket %v: median %v outside the data's range", r[0], r[1])
		}
	}
}
