package demo_test

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The ε every example is run with in the test (the user's max_epsilon), so
// the noise is small enough for the accuracy checks to mean something.
const testEpsilon = demo.ExampleEpsilon

// Tolerances are 10 noise scales: a discrete Laplace sample exceeds that
// with probability about e^-10 = 4.5e-5 per cell (under 2e-3 over the ~20
// cells checked); the seeded source makes the run reproducible anyway.
const tolScales = 10

// exampleCheck checks one example's noisy result against the truth.
type exampleCheck func(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan)

// TestExamples runs every example through parser, planner and release on
// the built demo, as the proxy would for psql, and checks the answers
// against true values computed directly from the database.
func TestExamples(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
	ctx := context.Background()
	be, err := connect.Open(ctx, pol.Backend, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := dependence.Load(ctx, pol, be, nil); err != nil { // as serve does at startup
		t.Fatal(err)
	}
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Check(); err != nil {
			t.Errorf("ledger check: %v", err)
		}
		l.Close()
		be.Close()
	})
	eng := release.New(be, l, release.Options{Source: noise.SeededSource(20260423)})
	p := planner.New(pol)
	user := pol.User(demo.DemoUser)
	tr := newTruth(t, openRO(t, f.Database))

	checks := map[string]exampleCheck{
		"SELECT sex, COUNT(*) FROM people GROUP BY sex;":                                                                 checkSex,
		"SELECT income, COUNT(*), AVG(hours_per_week) FROM people WHERE age BETWEEN 25 AND 65 GROUP BY income;":          checkIncome,
		"SELECT c.borough, COUNT(*) FROM checkins k JOIN cells c ON k.cell = c.cell GROUP BY c.borough ORDER BY 2 DESC;": checkBoroughs,
		"SELECT venue_category, COUNT(*) FROM checkins WHERE checkin_time >= '2010-01-01' GROUP BY venue_category;":      checkCategories,
		"SELECT COUNT(*) FROM checkins_ddp;":                                                                             checkTotalDDP,
		"SELECT date_trunc('month', checkin_time) AS month, COUNT(*) FROM checkins GROUP BY 1 ORDER BY 1;":               checkMonths,
		"SELECT sex, COUNT(*) FROM census_published GROUP BY sex;":                                                       checkPublishedSex,
		"SELECT COUNT(*) FROM checkins WHERE checkin_time >= DATE '2010-01-01' AND checkin_time < DATE '2010-04-01';":    checkQuarter,
		"SELECT sex, race, COUNT(*) FROM census_published GROUP BY sex, race;":                                           checkSexRace,
		"SELECT COUNT(*) FROM salaries WHERE salary BETWEEN 40000 AND 60000;":                                            checkSalaryRange,
	}

	exs := demo.Examples()
	if len(exs) < 4 || exs[0].SQL != "SELECT sex, COUNT(*) FROM people GROUP BY sex;" {
		t.Fatalf("want at least 4 examples, the simplest first; got %d, first %q", len(exs), exs[0].SQL)
	}
	refused := 0
	remaining := map[string]policies.Budget{}
	for _, ex := range exs {
		t.Run(ex.Title, func(t *testing.T) {
			if ex.Title == "" {
				t.Error("example without a title")
			}
			for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
				if _, err := parser.Parse(d, ex.SQL); err != nil {
					t.Errorf("%s does not parse in dialect %v: %v", ex.SQL, d, err)
				}
			}
			stmts, err := parser.Parse(parser.Postgres, ex.SQL)
			if err != nil || len(stmts) != 1 {
				t.Fatalf("parse: %d statements, %v", len(stmts), err)
			}
			pl, err := p.Plan(planner.Request{User: user, Epsilon: testEpsilon, Dialect: "postgres", Statement: &stmts[0]})
			if ex.Refused {
				refused++
				if se := sqlerr.As(err); err == nil || se.Code.SQLState != "42501" {
					t.Fatalf("want a refusal with SQLSTATE 42501, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			res, err := eng.Run(ctx, user, pl)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			want := testEpsilon
			if ex.Free {
				want = 0
			}
			if res.Cached || res.Charged.Epsilon != want {
				t.Errorf("charged %v (cached %v), want ε %v", res.Charged, res.Cached, want)
			}
			remaining[pl.Dataset.Name] = res.Remaining
			check := checks[ex.SQL]
			if check == nil {
				t.Fatalf("no check for this example in the test; add one")
			}
			check(t, tr, res, pl)
		})
	}
	if refused != 1 {
		t.Errorf("%d refused examples, want exactly 1", refused)
	}
	// Two queries at ε = 1 on census, four on social, out of 10.
	for ds, want := range map[string]float64{"census": 8, "social": 6} {
		if got := remaining[ds].Epsilon; got != want {
			t.Errorf("remaining ε on %s = %v, want %v", ds, got, want)
		}
	}
}

// truth holds the true data the checks compare against.
type truth struct {
	db       *sql.DB
	checkins []checkinRow
	borough  map[int]string // cell -> borough
	cats     []string
}

func newTruth(t *testing.T, db *sql.DB) *truth {
	t.Helper()
	tr := &truth{db: db, checkins: readCheckins(t, db), borough: map[int]string{}}
	rows(t, db, "SELECT cell, borough FROM cells", func(rs *sql.Rows) error {
		var c int
		var b string
		err := rs.Scan(&c, &b)
		tr.borough[c] = b
		return err
	})
	rows(t, db, "SELECT category FROM venue_categories", func(rs *sql.Rows) error {
		var c string
		err := rs.Scan(&c)
		tr.cats = append(tr.cats, c)
		return err
	})
	return tr
}

// truncatedCounts bounds the true grouped counts after the contribution
// bound k: the backend keeps some k of each user's rows that pass the
// filter, and whichever it keeps, user u contributes to group g at least
// max(0, n_ug − (n_u − k)) and at most min(n_ug, k) rows.
func (tr *truth) truncatedCounts(k int, keep func(checkinRow) bool, group func(checkinRow) string) map[string][2]int64 {
	perUser := map[int]map[string]int{}
	total := map[int]int{}
	for _, c := range tr.checkins {
		if !keep(c) {
			continue
		}
		if perUser[c.user] == nil {
			perUser[c.user] = map[string]int{}
		}
		perUser[c.user][group(c)]++
		total[c.user]++
	}
	out := map[string][2]int64{}
	for u, groups := range perUser {
		excess := max(total[u]-k, 0)
		for g, n := range groups {
			b := out[g]
			b[0] += int64(max(n-excess, 0))
			b[1] += int64(min(n, k))
			out[g] = b
		}
	}
	return out
}

// sqlCounts runs a GROUP BY key, COUNT(*) query on the database itself.
func sqlCounts(t *testing.T, db *sql.DB, query string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	rows(t, db, query, func(rs *sql.Rows) error {
		var k string
		var n int64
		err := rs.Scan(&k, &n)
		out[k] = n
		return err
	})
	return out
}

// resultCounts maps the key column (0) to the integer column col.
func resultCounts(t *testing.T, res *release.Result, col int) (map[string]int64, []string) {
	t.Helper()
	out := map[string]int64{}
	var keys []string
	for _, r := range res.Rows {
		if r[0].Kind != ir.KindString || r[col].Kind != ir.KindInt {
			t.Fatalf("row %v: want a text key and an integer count", r)
		}
		out[r[0].Str] = r[col].Int
		keys = append(keys, r[0].Str)
	}
	return out, keys
}

// checkNear requires every key, and only those, with |got − want| within
// tol of the interval [lo, hi].
func checkNear(t *testing.T, got map[string]int64, want map[string][2]int64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d groups %v, want %d", len(got), got, len(want))
	}
	for k, b := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("group %q missing", k)
			continue
		}
		if float64(g) < float64(b[0])-tol || float64(g) > float64(b[1])+tol {
			t.Errorf("group %q: noisy count %d, true count in [%d, %d], tolerance %v", k, g, b[0], b[1], tol)
		}
	}
}

func exact(m map[string]int64) map[string][2]int64 {
	out := map[string][2]int64{}
	for k, v := range m {
		out[k] = [2]int64{v, v}
	}
	return out
}

// checkScale requires the count column's advertised scale to be the hand
// derived one: histogram sensitivity k (unbounded neighbours) over the
// count's share ε/m of the query's ε.
func checkScale(t *testing.T, res *release.Result, col, k int, pl *planner.Plan) float64 {
	t.Helper()
	want := float64(k) / (testEpsilon / float64(len(pl.Aggs)))
	if got := res.Columns[col].Scale; math.Abs(got-want) > 1e-9 {
		t.Errorf("count scale %v, want %v", got, want)
	}
	return want
}

func checkSex(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	scale := checkScale(t, res, 1, 1, pl)
	want := sqlCounts(t, tr.db, "SELECT sex, COUNT(*) FROM people GROUP BY sex")
	if len(want) != 2 || want["Female"] == 0 || want["Male"] == 0 {
		t.Fatalf("true sex counts %v: want the two documented values", want)
	}
	got, _ := resultCounts(t, res, 1)
	checkNear(t, got, exact(want), tolScales*scale)
}

func checkIncome(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	m := len(pl.Aggs) // a count and a sum, or two counts and a sum
	if m < 2 || m > 3 {
		t.Fatalf("%d aggregates, want 2 or 3", m)
	}
	countScale := checkScale(t, res, 1, 1, pl)
	// SUM(hours_per_week) in [1, 99]: sensitivity 99 over ε/m.
	sumScale := 99 / (testEpsilon / float64(m))
	type row struct {
		n   int64
		avg float64
	}
	want := map[string]row{}
	rows(t, tr.db, "SELECT income, COUNT(*), AVG(hours_per_week) FROM people WHERE age BETWEEN 25 AND 65 GROUP BY income", func(rs *sql.Rows) error {
		var k string
		var r row
		err := rs.Scan(&k, &r.n, &r.avg)
		want[k] = r
		return err
	})
	if len(res.Rows) != 2 || len(want) != 2 {
		t.Fatalf("%d rows (true %d), want the 2 income classes", len(res.Rows), len(want))
	}
	for _, r := range res.Rows {
		w, ok := want[r[0].Str]
		if !ok || r[1].Kind != ir.KindInt || r[2].Kind != ir.KindFloat {
			t.Fatalf("row %v: want income, integer count, real average", r)
		}
		if d := math.Abs(float64(r[1].Int - w.n)); d > tolScales*countScale {
			t.Errorf("%s: count %d, true %d", r[0].Str, r[1].Int, w.n)
		}
		// (S+e1)/(C+e2) − S/C = (e1 − avg·e2)/(C+e2), with |e1| ≤ 10·sumScale
		// and |e2| ≤ 10·countScale.
		e1, e2 := tolScales*sumScale, tolScales*countScale
		bound := (e1 + 99*e2) / (float64(w.n) - e2)
		if avg := r[2].Float; avg < 1 || avg > 99 || math.Abs(avg-w.avg) > bound {
			t.Errorf("%s: average %v, true %v, want within %v and inside the bounds [1, 99]", r[0].Str, avg, w.avg, bound)
		}
	}
}

func checkBoroughs(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	scale := checkScale(t, res, 1, 20, pl)
	want := tr.truncatedCounts(20, func(checkinRow) bool { return true }, func(c checkinRow) string { return tr.borough[c.cell] })
	// Every borough of the public cells table is a group, with or without
	// check-ins.
	for _, b := range tr.borough {
		if _, ok := want[b]; !ok {
			want[b] = [2]int64{0, 0}
		}
	}
	got, keys := resultCounts(t, res, 1)
	checkNear(t, got, want, tolScales*scale)
	counts := make([]int64, len(keys))
	for i, k := range keys {
		counts[i] = got[k]
	}
	if !slices.IsSortedFunc(counts, func(a, b int64) int { return int(b - a) }) {
		t.Errorf("counts %v are not in descending order (ORDER BY 2 DESC)", counts)
	}
}

func checkCategories(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	scale := checkScale(t, res, 1, 20, pl)
	want := tr.truncatedCounts(20, func(c checkinRow) bool { return c.at >= "2010-01-01" }, func(c checkinRow) string { return c.category })
	for _, c := range tr.cats {
		if _, ok := want[c]; !ok {
			want[c] = [2]int64{0, 0}
		}
	}
	got, _ := resultCounts(t, res, 1)
	checkNear(t, got, want, tolScales*scale)
}

// checkQuarter: the noisy count of the check-ins of 2010's first quarter,
// each user's first 20 counted (the contribution bound), against the
// count from the stored times.
func checkQuarter(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	scale := checkScale(t, res, 0, 20, pl)
	want := tr.truncatedCounts(20, func(c checkinRow) bool { return c.at >= "2010-01-01" && c.at < "2010-04-01" }, func(checkinRow) string { return "" })
	if want[""][0] < 1000 {
		t.Fatalf("only %d check-ins in the quarter: the example shows nothing", want[""][0])
	}
	if len(res.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(res.Rows))
	}
	got, ok := res.Rows[0][0].AsFloat()
	if lo, hi := float64(want[""][0]), float64(want[""][1]); !ok || got < lo-tolScales*scale || got > hi+tolScales*scale {
		t.Errorf("count %v, want [%v, %v] ± %v", res.Rows[0][0], lo, hi, tolScales*scale)
	}
}

// checkMonths: the monthly time series has one row per month of the
// declared bounds of checkin_time (2009-02 to 2010-10: 21), in order,
// each near the month's count of the stored times (each user's first 20
// check-ins counted).
func checkMonths(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	scale := checkScale(t, res, 1, 20, pl)
	want := tr.truncatedCounts(20, func(checkinRow) bool { return true }, func(c checkinRow) string { return c.at[:7] })
	if len(res.Rows) != 21 {
		t.Fatalf("%d months, want the 21 of 2009-02..2010-10", len(res.Rows))
	}
	var months []string
	got := map[string]int64{}
	for _, r := range res.Rows {
		if r[0].Kind != ir.KindTimestamp || r[1].Kind != ir.KindInt {
			t.Fatalf("row %v: want a timestamp month and an integer count", r)
		}
		m := r[0].GoTime()
		if m.Day() != 1 || m.Hour() != 0 || m.Minute() != 0 || m.Second() != 0 {
			t.Errorf("key %v is not the start of a month", r[0])
		}
		months = append(months, m.Format("2006-01"))
		got[m.Format("2006-01")] = r[1].Int
	}
	if months[0] != "2009-02" || months[20] != "2010-10" || !slices.IsSorted(months) {
		t.Errorf("months %v, want 2009-02..2010-10 in order (ORDER BY 1)", months)
	}
	for _, m := range months {
		if _, ok := want[m]; !ok {
			want[m] = [2]int64{0, 0}
		}
	}
	checkNear(t, got, want, tolScales*scale)
}

// checkTotalDDP: the total count under dependent DP, with more noise than
// plain DP's k/ε and at most the baseline's L·ΔQ/ε (L = 1 + the most
// friends of any user; ΔQ = k for adding or removing a user, 2k when
// DDP's neighbours modify one user's rows, liu2016 Def. 3 — the envelope
// admits either reading), near the truncated truth.
func checkTotalDDP(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	const k = 20
	eps := testEpsilon / float64(len(pl.Aggs))
	maxDeg := scalar[int64](t, tr.db, `SELECT MAX(n) FROM (SELECT u, COUNT(*) AS n FROM
		(SELECT user_a AS u FROM friendships UNION ALL SELECT user_b FROM friendships) GROUP BY u)`)
	scale := res.Columns[0].Scale
	if hi := float64(1+maxDeg) * 2 * k / eps; !(scale > k/eps) || scale > hi*(1+1e-9) {
		t.Errorf("ddp count scale %v, want in (%v, %v]", scale, k/eps, hi)
	}
	want := tr.truncatedCounts(k, func(checkinRow) bool { return true }, func(checkinRow) string { return "" })
	if len(res.Rows) != 1 || res.Rows[0][0].Kind != ir.KindInt {
		t.Fatalf("rows %v, want one integer count", res.Rows)
	}
	checkNear(t, map[string]int64{"": res.Rows[0][0].Int}, want, tolScales*scale)
}

// groupCounts is the true COUNT(*) per value of the grouping expression.
func groupCounts(t *testing.T, db *sql.DB, q string) map[string]int64 {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// resultMap keys a result's count column by its group columns joined with "|".
func resultMap(t *testing.T, res *release.Result, groups int) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range res.Rows {
		var key []string
		for i := 0; i < groups; i++ {
			key = append(key, r[i].Text())
		}
		if r[groups].Kind != ir.KindInt {
			t.Fatalf("row %v: want an integer count", r)
		}
		out[strings.Join(key, "|")] = r[groups].Int
	}
	return out
}

// The published sex counts come back exactly (sensitivity 0 under the
// declared row and column totals).
func checkPublishedSex(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	want := groupCounts(t, tr.db, "SELECT sex, COUNT(*) FROM census_published GROUP BY sex")
	got := resultMap(t, res, 1)
	if len(got) != 2 || got["Female"] != want["Female"] || got["Male"] != want["Male"] {
		t.Errorf("published sex counts %v, want exactly %v", got, want)
	}
	if pl.Aggs[0].Sensitivity != 0 {
		t.Errorf("sensitivity %d, want 0", pl.Aggs[0].Sensitivity)
	}
}

// The sex x race histogram under published row and column totals of a 2 x 5
// table: Graver max L1 min(2r, 2c) = 4 (kifer2011 Lemma 4.1), every cell of
// the declared domains released.
func checkSexRace(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	if pl.Aggs[0].Sensitivity != 4 {
		t.Errorf("sensitivity %d, want min(2·2, 2·5) = 4", pl.Aggs[0].Sensitivity)
	}
	scale := 4 / testEpsilon
	if got := res.Columns[2].Scale; math.Abs(got-scale) > 1e-9 {
		t.Errorf("scale %v, want %v", got, scale)
	}
	want := groupCounts(t, tr.db, "SELECT sex || '|' || race, COUNT(*) FROM census_published GROUP BY sex, race")
	got := resultMap(t, res, 2)
	if len(got) != 10 {
		t.Errorf("%d cells, want all 2 x 5", len(got))
	}
	for k, n := range got {
		if d := math.Abs(float64(n - want[k])); d > tolScales*scale {
			t.Errorf("cell %s: %d, true %d (tolerance %v)", k, n, want[k], tolScales*scale)
		}
	}
}

// A salary range count answered from the released synopsis is near the
// truth, within the noise the plan reports.
func checkSalaryRange(t *testing.T, tr *truth, res *release.Result, pl *planner.Plan) {
	if pl.Synopsis == nil {
		t.Fatal("the salary range count was not planned as a synopsis answer")
	}
	want := scalar[int64](t, tr.db, "SELECT COUNT(*) FROM salaries WHERE salary BETWEEN 40000 AND 60000")
	if res.Rows[0][0].Kind != ir.KindInt {
		t.Fatalf("count %v is not an integer", res.Rows[0][0])
	}
	n := res.Rows[0][0].Int
	scale := res.Columns[0].Scale
	if !(scale > 0) || math.Abs(float64(n-want)) > tolScales*scale {
		t.Errorf("salary range count %d, true %d, scale %v", n, want, scale)
	}
}
