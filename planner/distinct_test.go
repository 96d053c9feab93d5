package planner_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// distinctWorst is the brute-force sensitivity of the worst distinct count
// of a shape (the case the proofs in sensitivity/distinct.go call tight)
// with one unit of at most k rows over 2k+1 values: value 0 fails the
// WHERE clause, x is the value, a column's groups are {1..k} and
// {k+1..2k}, a unit's one group per value.
func distinctWorst(t *testing.T, bounded bool, k int, grouped, units bool) int64 {
	t.Helper()
	dom := 2*k + 1
	a := oracle.Aggregate{Where: make([]bool, dom), Units: units}
	for v := 1; v < dom; v++ {
		a.Where[v] = true
	}
	if !units {
		a.Distinct = make([]int, dom)
		for v := range a.Distinct {
			a.Distinct[v] = v
		}
	}
	if grouped {
		a.GroupOf, a.Groups = make([]int, dom), dom
		for v := range a.GroupOf {
			a.GroupOf[v] = v
			if !units {
				a.GroupOf[v] = min(1, (v-1)/k)
			}
		}
	}
	nb := oracle.Unbounded
	if bounded {
		nb = oracle.Bounded
	}
	w, err := oracle.MaxL1(oracle.Space{Domain: dom, MaxUnits: 1, RowsPerUnit: k}, nb, a.Query())
	if err != nil {
		t.Fatal(err)
	}
	return w.L1
}

// TestDistinctSensitivities: COUNT(DISTINCT x) and COUNT(DISTINCT unit),
// grouped and ungrouped, under dp: the plan's sensitivity equals the value
// derived by hand (sensitivity/distinct.go: a column like COUNT — k, and
// 2k grouped under bounded neighbours; the unit 1, and k / 2k grouped) and
// the brute-force oracle's worst case; the backend counts a text column by
// its exact spelling (CAST to text) and the unit bare.
func TestDistinctSensitivities(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name    string
		sql     string
		label   string
		sens    float64
		bounded bool
		k       int
		grouped bool
		units   bool
		text    bool // the backend input is CAST(col AS text)
	}{
		// census: unbounded, k = 1; person_id is the unit (not exposed).
		{"column", "SELECT COUNT(DISTINCT zip) FROM people", "count(DISTINCT zip)", 1, false, 1, false, false, true},
		{"unit", "SELECT COUNT(DISTINCT person_id) FROM people", "count(DISTINCT person_id)", 1, false, 1, false, true, false},
		{"qualified unit", "SELECT COUNT(DISTINCT p.person_id) FROM people p WHERE age > 30", "count(DISTINCT person_id)", 1, false, 1, false, true, false},
		{"grouped column", "SELECT sex, COUNT(DISTINCT age) FROM people GROUP BY sex", "count(DISTINCT age)", 1, false, 1, true, false, false},
		// social: unbounded, k = 5.
		{"k column", "SELECT COUNT(DISTINCT cell) FROM checkins", "count(DISTINCT cell)", 5, false, 5, false, false, false},
		{"k unit", "SELECT COUNT(DISTINCT user_id) FROM checkins", "count(DISTINCT user_id)", 1, false, 5, false, true, false},
		{"k grouped column", "SELECT venue, COUNT(DISTINCT cell) FROM checkins GROUP BY venue", "count(DISTINCT cell)", 5, false, 5, true, false, false},
		{"k grouped unit", "SELECT venue, COUNT(DISTINCT user_id) FROM checkins GROUP BY venue", "count(DISTINCT user_id)", 5, false, 5, true, true, false},
		// bounded, k = 3.
		{"bounded column", "SELECT COUNT(DISTINCT ward) FROM visits", "count(DISTINCT ward)", 3, true, 3, false, false, true},
		{"bounded unit", "SELECT COUNT(DISTINCT patient) FROM visits", "count(DISTINCT patient)", 1, true, 3, false, true, false},
		{"bounded grouped column", "SELECT ward, COUNT(DISTINCT cost) FROM visits GROUP BY ward", "count(DISTINCT cost)", 6, true, 3, true, false, false},
		{"bounded grouped unit", "SELECT ward, COUNT(DISTINCT patient) FROM visits GROUP BY ward", "count(DISTINCT patient)", 6, true, 3, true, true, false},
		{"bounded expression", "SELECT COUNT(DISTINCT cost / 10) FROM visits", "count(DISTINCT (\"cost\" / 10))", 3, true, 3, false, false, false},
	}
	for _, tt := range tests {
		// The oracle enumerates every unit of up to k rows: k = 5 takes
		// half a minute, so it checks k ≤ 3 here (sensitivity's tests
		// check the closed forms for k = 1..3 against it).
		if tt.k <= 3 {
			if got := distinctWorst(t, tt.bounded, tt.k, tt.grouped, tt.units); float64(got) != tt.sens {
				t.Fatalf("%s: the oracle's worst case gives %d, derived by hand %g", tt.name, got, tt.sens)
			}
		}
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			t.Run(tt.name+"/"+d.String(), func(t *testing.T) {
				pl, err := plan(t, p, tt.sql, planArgs{eps: 1, dialect: d})
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				if len(pl.Aggs) != 1 {
					t.Fatalf("%d aggregates %+v, want 1", len(pl.Aggs), pl.Aggs)
				}
				a, ba := pl.Aggs[0], pl.Backend.Aggs[0]
				if d == parser.Postgres && a.Label != tt.label {
					t.Errorf("label %q, want %q", a.Label, tt.label)
				}
				if got := float64(a.Sensitivity) * a.Quantum; got != tt.sens || a.Epsilon != 1 || a.ScaleValue() != tt.sens {
					t.Errorf("sensitivity %g ε %g scale %g, want %g, 1, %g (notes %v)", got, a.Epsilon, a.ScaleValue(), tt.sens, tt.sens, pl.Notes)
				}
				if ba.Kind != ir.CountDistinct {
					t.Fatalf("backend aggregate %+v, want a distinct count", ba)
				}
				cast, isCast := ba.Expr.(ir.Cast)
				if tt.text != (isCast && cast.To == ir.CastText) {
					t.Errorf("backend input %s: exact text %v, want %v", ir.FormatExpr(ba.Expr), isCast, tt.text)
				}
				if tt.units && (ba.Column == nil || *ba.Column != pl.Backend.Unit) {
					t.Errorf("unit count over %+v, want the bare unit column %+v", ba.Column, pl.Backend.Unit)
				}
			})
		}
	}
}

// TestDistinctRefusals: DISTINCT stays refused where no bound is
// implemented, and the unit column stays unreadable outside
// COUNT(DISTINCT unit).
func TestDistinctRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tc := range []struct {
		sql, msg string
		code     sqlerr.Code
	}{
		{"SELECT SUM(DISTINCT age) FROM people", "only COUNT takes DISTINCT", sqlerr.FeatureNotSupported},
		{"SELECT AVG(DISTINCT age) FROM people", "only COUNT takes DISTINCT", sqlerr.FeatureNotSupported},
		{"SELECT COUNT(person_id) FROM people", "privacy unit", sqlerr.InsufficientPrivilege},
		{"SELECT COUNT(*) FROM people WHERE person_id = 3", "privacy unit", sqlerr.InsufficientPrivilege},
		{"SELECT COUNT(DISTINCT person_id + 1) FROM people", "privacy unit", sqlerr.InsufficientPrivilege},
	} {
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			_, err := plan(t, p, tc.sql, planArgs{dialect: d})
			e := sqlerr.As(err)
			if err == nil || e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("%s (%v): %v, want %v containing %q", tc.sql, d, err, tc.code, tc.msg)
			}
		}
	}
	// COUNT(DISTINCT *) is not SQL: refused before planning, charged nothing.
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		if _, err := plan(t, p, "SELECT COUNT(DISTINCT *) FROM people", planArgs{dialect: d}); err == nil {
			t.Errorf("%v: COUNT(DISTINCT *) planned", d)
		}
	}
}

// TestDistinctPostProcessing: a distinct count in HAVING, ORDER BY and an
// expression of the select list is one noisy part, computed once and
// post-processed; under threshold key selection the released keys come
// from the hidden COUNT(*), whose noise is separate.
func TestDistinctPostProcessing(t *testing.T) {
	p := planner.New(loadPolicy(t))
	sql := "SELECT venue, COUNT(DISTINCT cell) AS n, COUNT(DISTINCT cell) * 2 + 1 AS m FROM checkins GROUP BY venue HAVING COUNT(DISTINCT cell) > 3 ORDER BY COUNT(DISTINCT cell) DESC"
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		pl, err := plan(t, p, sql, planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		if len(pl.Aggs) != 1 || pl.Backend.Aggs[0].Kind != ir.CountDistinct || pl.Aggs[0].Epsilon != 1 {
			t.Fatalf("%v: aggregates %+v, want one distinct count with all of ε", d, pl.Aggs)
		}
		if pl.Having == nil || len(pl.OrderBy) != 1 {
			t.Errorf("%v: HAVING %v, ORDER BY %v", d, pl.Having, pl.OrderBy)
		}
	}
	// cell has no declared domain: threshold selection (social has δ).
	pl, err := plan(t, p, "SELECT cell, COUNT(DISTINCT user_id) FROM checkins GROUP BY cell", planArgs{eps: 1, dialect: parser.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Keys.Mode != planner.KeysThreshold || len(pl.Aggs) != 2 {
		t.Fatalf("keys %v, aggregates %+v: want threshold selection over a hidden count(*)", pl.Keys.Mode, pl.Aggs)
	}
	for i, a := range pl.Aggs {
		kind := pl.Backend.Aggs[i].Kind
		want := map[ir.BackendAggKind]float64{ir.CountRows: 5, ir.CountDistinct: 5}[kind]
		if i == pl.Keys.CountAgg && kind != ir.CountRows {
			t.Errorf("the keys are selected by %s, not count(*)", a.Label)
		}
		if float64(a.Sensitivity) != want || a.Epsilon != 0.5 {
			t.Errorf("%s: sensitivity %d ε %g, want %g and 0.5", a.Label, a.Sensitivity, a.Epsilon, want)
		}
	}
}

// TestDistinctExplainJSON: explain --json shows the distinct count's
// column with its aggregate, mechanism, ε share and 95% interval.
func TestDistinctExplainJSON(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT COUNT(DISTINCT user_id) AS users, COUNT(*) FROM checkins", planArgs{eps: 1, dialect: parser.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pl.Explain(sqlrender.Postgres().Preview))
	if err != nil {
		t.Fatal(err)
	}
	var x planner.Explanation
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	if len(x.Columns) != 2 {
		t.Fatalf("columns %+v", x.Columns)
	}
	c := x.Columns[0]
	// Scale 1/0.5 = 2: the discrete Laplace 95% half-width is about
	// 3·2 (continuous: ln(20)·2 = 5.99).
	if c.Name != "users" || c.Aggregate != "count" || c.Sensitivity != 1 || c.Epsilon != 0.5 || c.Scale != 2 ||
		!strings.Contains(c.Mechanism, "laplace") || c.CI95 < 5 || c.CI95 > 7 {
		t.Errorf("distinct column %+v", c)
	}
	if !strings.Contains(string(b), "count(DISTINCT user_id)") || !strings.Contains(x.BackendSQL, "COUNT(DISTINCT") {
		t.Errorf("explain does not name the distinct count: %s", b)
	}
	if math.IsNaN(c.CI95) {
		t.Error("no interval")
	}
}

// TestDistinctGroupingSets: distinct counts do not add up across cells,
// so ROLLUP releases each set separately, each with its own shape's
// sensitivity (bounded, k = 3: grouped 2k = 6 for both; the total 1 for
// the unit and k = 3 for the column), ε split over sets and aggregates.
func TestDistinctGroupingSets(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT ward, COUNT(DISTINCT patient), COUNT(DISTINCT cost) FROM visits GROUP BY ROLLUP(ward)", planArgs{eps: 1, dialect: parser.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	gs := pl.GroupingSets
	if gs == nil || gs.Strategy != planner.SetsSeparate || len(gs.Release) != 2 {
		t.Fatalf("grouping sets %+v, want one release per set", gs)
	}
	want := map[int][]int64{1: {6, 6}, 0: {1, 3}} // by the set's number of keys
	for _, r := range gs.Release {
		for i, a := range r.Aggs {
			if a.Sensitivity != want[len(r.Groups)][i] || a.Epsilon != 0.25 {
				t.Errorf("set of %d keys: %s sensitivity %d ε %g, want %d and 0.25", len(r.Groups), a.Label, a.Sensitivity, a.Epsilon, want[len(r.Groups)][i])
			}
		}
	}
}
