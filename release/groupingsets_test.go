package release_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestRollupSubtotalsAreSumsOfCells: under the summed strategy every
// subtotal and the total equal the sums of the released finest cells
// exactly (counts, real sums, and the average recomputed from them), the
// rolled-up keys read NULL, GROUPING says which set a row is of, and the
// query costs what the finest grouping costs.
func TestRollupSubtotalsAreSumsOfCells(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRollupSubtotals(t, newFixture(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { testRollupSubtotals(t, newPostgresFixture(t)) })
}

func testRollupSubtotals(t *testing.T, f *fixture) {
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(11)})
	// sex <> 'Other' narrows sex to the two present values, so no cell is
	// empty (no count is clamped at 0 before it is shown).
	q := "SELECT sex, floor(age / 30) * 30 AS bin, COUNT(age) AS n, SUM(age) AS sa, SUM(income) AS si, AVG(age) AS a, GROUPING(sex, floor(age / 30) * 30) AS g " +
		"FROM people WHERE sex <> 'Other' GROUP BY ROLLUP(sex, floor(age / 30) * 30)"
	_, pl := f.plan(t, "alice", q, 2)
	if pl.GroupingSets == nil || pl.GroupingSets.Strategy != planner.SetsSummed {
		t.Fatalf("strategy %+v, want summed", pl.GroupingSets)
	}
	res, err := f.run(t, e, "alice", q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Charged.Epsilon != 2 {
		t.Errorf("charged %+v, want ε = 2 (the finest grouping's)", res.Charged)
	}
	type tot struct {
		n, sa int64
		si    float64
	}
	cells := map[string]tot{}
	var bySex = map[string]tot{}
	var all tot
	var subtotals, totals int
	for _, r := range res.Rows {
		row := tot{r[2].Int, r[3].Int, r[4].Float}
		switch g := r[6].Int; g {
		case 0:
			if r[0].IsNull() || r[1].IsNull() {
				t.Fatalf("finest row with a NULL key: %v", r)
			}
			cells[r[0].Text()+"/"+r[1].Text()] = row
			s := bySex[r[0].Text()]
			bySex[r[0].Text()] = tot{s.n + row.n, s.sa + row.sa, s.si + row.si}
			all = tot{all.n + row.n, all.sa + row.sa, all.si + row.si}
		case 1:
			subtotals++
			if r[0].IsNull() || !r[1].IsNull() {
				t.Fatalf("subtotal row %v: want sex set, bin NULL", r)
			}
		case 3:
			totals++
			if !r[0].IsNull() || !r[1].IsNull() {
				t.Fatalf("total row %v: want both keys NULL", r)
			}
		default:
			t.Fatalf("GROUPING = %d in row %v", g, r)
		}
		if want := float64(row.sa) / float64(row.n); math.Abs(r[5].Float-want) > 1e-9*want {
			t.Errorf("row %v: avg %g, want sum/count %g", r, r[5].Float, want)
		}
	}
	if len(cells) != 8 || subtotals != 2 || totals != 1 {
		t.Fatalf("%d cells, %d subtotals, %d totals; want 2×4, 2, 1", len(cells), subtotals, totals)
	}
	for _, r := range res.Rows {
		var want tot
		switch r[6].Int {
		case 1:
			want = bySex[r[0].Text()]
		case 3:
			want = all
		default:
			continue
		}
		if (tot{r[2].Int, r[3].Int, r[4].Float}) != want {
			t.Errorf("row %v: want the sums of its cells %+v", r, want)
		}
	}
}

// TestSeparateSetsError: the per-set strategy's noise matches the scale it
// advertises (ε/3 per set, three sets, count sensitivity 1: scale 2 each),
// and its total is its own noisy count, not the sum of the other set's.
// 300 releases of different literals (same truth: 500 women, 500 men);
// bounds at 5 standard errors (false rejection < 1e-5 per check).
func TestSeparateSetsError(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(3)})
	const n = 300
	var errs []float64
	var scale float64
	independent := 0
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("SELECT sex, age, COUNT(*), GROUPING(sex, age) FROM people WHERE sex <> 'Other' AND age <> %d GROUP BY GROUPING SETS ((sex), (age), (floor(age / 10) * 10))", -1-i)
		if i == 0 {
			_, pl := f.plan(t, "alice", q, 1.5)
			if !pl.GroupingSets.Separate() {
				t.Fatalf("strategy %v, want per set", pl.GroupingSets.Strategy)
			}
		}
		res, err := f.run(t, e, "alice", q, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		scale = res.Columns[2].Scale
		var sexSum, ageSum int64
		for _, r := range res.Rows {
			switch r[3].Int {
			case 1: // (sex): age rolled up
				errs = append(errs, float64(r[2].Int-500))
				sexSum += r[2].Int
			case 2: // (age)
				ageSum += r[2].Int
			}
		}
		if sexSum != ageSum {
			independent++
		}
	}
	if scale != 2 {
		t.Fatalf("advertised scale %g, want 1/(1.5/3) = 2", scale)
	}
	variance := discreteLaplaceVar(scale)
	m := float64(len(errs))
	mean, sq := 0.0, 0.0
	for _, x := range errs {
		mean += x
		sq += x * x
	}
	mean /= m
	emp := sq/m - mean*mean
	t.Logf("%d errors: mean %.3f, variance %.3f (advertised %.3f)", len(errs), mean, emp, variance)
	if se := math.Sqrt(variance / m); math.Abs(mean) > 5*se {
		t.Errorf("mean error %g, want 0 ± %g", mean, 5*se)
	}
	if se := math.Sqrt(5/m) * variance; math.Abs(emp-variance) > 5*se {
		t.Errorf("error variance %g, advertised %g (± %g)", emp, variance, 5*se)
	}
	// The two sets are independent releases: their totals differ almost
	// always (clamped empty ages aside, equal totals need equal noise sums).
	if independent < n/2 {
		t.Errorf("the two sets' totals agreed in %d of %d releases: not separate draws", n-independent, n)
	}
}

// TestSeparateSetsThresholdAndCache: ROLLUP over a key without a domain
// releases the keys that pass the threshold and the total row, charges ε
// and δ once, and a repeat is answered from the stored release for free.
func TestSeparateSetsThresholdAndCache(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testSeparateSetsThreshold(t, newFixture(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { testSeparateSetsThreshold(t, newPostgresFixture(t)) })
}

func testSeparateSetsThreshold(t *testing.T, f *fixture) {
	e := release.New(f.be, f.ledger, release.Options{})
	q := "SELECT bucket, COUNT(*), GROUPING(bucket) FROM people GROUP BY ROLLUP(bucket) ORDER BY bucket"
	res, err := f.run(t, e, "alice", q, 2)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range res.Rows {
		k := r[0].Text()
		if r[0].IsNull() {
			k = "NULL"
		}
		keys = append(keys, k+"/"+r[2].Text())
	}
	// PostgreSQL orders NULL last ascending.
	want := []string{"0/0", "1/0", "2/0", "3/0", "4/0", "5/0", "6/0", "NULL/1"}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v (not the one-person bucket 99)", keys, want)
	}
	if res.Charged.Epsilon != 2 || res.Charged.Delta != 1e-6 {
		t.Errorf("charged %+v, want (2, 1e-6)", res.Charged)
	}
	again, err := f.run(t, e, "alice", q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || fmt.Sprint(again.Rows) != fmt.Sprint(res.Rows) {
		t.Errorf("repeat: cached %v rows %v, want the same rows free", again.Cached, again.Rows)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 2 {
		t.Errorf("spent %+v, want 2", spent)
	}
}

// secondFails lets the first Aggregate of a release run and fails the
// next ones as if the backend went away.
type secondFails struct {
	planner.Backend
	calls *int
}

func (b secondFails) Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error {
	*b.calls++
	if *b.calls > 1 {
		return sqlerr.New(sqlerr.BackendUnavailable, "the database is unavailable")
	}
	return b.Backend.Aggregate(ctx, q, fn)
}

// TestSeparateSetsFailureKeepsCharge: once one set's backend query ran, a
// later failure (even "backend unavailable") keeps the charge; a failure
// of the first one before it ran is refunded.
func TestSeparateSetsFailureKeepsCharge(t *testing.T) {
	f := newFixture(t, t.TempDir())
	q := "SELECT sex, age, COUNT(*) FROM people GROUP BY GROUPING SETS ((sex), (age))"
	if _, pl := f.plan(t, "alice", q, 1); !pl.GroupingSets.Separate() {
		t.Fatalf("strategy %v, want per set", pl.GroupingSets.Strategy)
	}
	calls := 1 // the first call fails too: nothing ran
	e := release.New(secondFails{f.be, &calls}, f.ledger, release.Options{})
	if _, err := f.run(t, e, "alice", q, 1); !sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("got %v", err)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 0 {
		t.Fatalf("refund expected, spent %+v", spent)
	}
	calls = 0
	_, err := f.run(t, e, "alice", q, 1)
	if err == nil || sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("got %v, want a generic failure", err)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 1 {
		t.Fatalf("spent %+v after the first set ran, want 1", spent)
	}
	if pend, _ := f.ledger.Pending(); len(pend) != 0 {
		t.Fatalf("pending reservations left: %+v", pend)
	}
}

// TestRollupKeysOnlyAndNoRows: ROLLUP without an aggregate over declared
// keys is the public key sets plus the total row, free; over no row (a
// WHERE that is false) the total () still has its one row, as in SQL.
func TestRollupKeysOnlyAndNoRows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{})
	res, err := f.run(t, e, "bob", "SELECT sex, GROUPING(sex) FROM people GROUP BY ROLLUP(sex) ORDER BY sex", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsText(res.Rows); got != "Female,0;Male,0;Other,0;NULL,1" || res.Charged.Epsilon != 0 {
		t.Errorf("keys only: rows %s charged %+v, want the three sexes, the NULL total, free", got, res.Charged)
	}
	res, err = f.run(t, e, "bob", "SELECT sex, COUNT(*) FROM people WHERE 1 <> 1 GROUP BY ROLLUP(sex)", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsText(res.Rows); got != "NULL,0" || res.Charged.Epsilon != 0 {
		t.Errorf("no rows: rows %s charged %+v, want one total row of count 0, free", got, res.Charged)
	}
}

func rowsText(rows [][]ir.Value) string {
	var b []string
	for _, r := range rows {
		var c []string
		for _, v := range r {
			if v.IsNull() {
				c = append(c, "NULL")
			} else {
				c = append(c, v.Text())
			}
		}
		b = append(b, strings.Join(c, ","))
	}
	return strings.Join(b, ";")
}

// TestRollupPostProcessing: HAVING, ORDER BY and LIMIT see the rows of
// every set (GROUPING filters them like any output).
func TestRollupPostProcessing(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(2)})
	res, err := f.run(t, e, "alice", "SELECT sex, COUNT(*) AS n FROM people GROUP BY ROLLUP(sex) HAVING GROUPING(sex) = 1 OR COUNT(*) > 100", 5)
	if err != nil {
		t.Fatal(err)
	}
	// Female and Male (500 each) and the total pass; Other (0) does not.
	if got := len(res.Rows); got != 3 || !res.Rows[2][0].IsNull() || res.Rows[2][1].Int < 900 {
		t.Errorf("rows %s, want Female, Male and the total", rowsText(res.Rows))
	}
	res, err = f.run(t, e, "alice", "SELECT sex, COUNT(*) AS n FROM people GROUP BY ROLLUP(sex) ORDER BY n DESC LIMIT 1", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || !res.Rows[0][0].IsNull() {
		t.Errorf("rows %s, want the total alone (the largest count)", rowsText(res.Rows))
	}
}
