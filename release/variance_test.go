package release_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestVarianceRelease runs the variance family through the whole release
// path on SQLite and (with DDP_TEST_POSTGRES_DSN) PostgreSQL, ungrouped,
// grouped with HAVING and inside an expression, and compares with the
// variances of the fixture's rows. The tolerance is 3× the 95% half-width
// explain states (C/n), so a correct release fails only far in the tail;
// the seed is fixed.
func TestVarianceRelease(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testVarianceRelease(t, newFixture(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { testVarianceRelease(t, newPostgresFixture(t)) })
}

func testVarianceRelease(t *testing.T, f *fixture) {
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(11)})
	variance := func(x func(i int) float64, keep func(i int) bool, samp bool) (float64, float64) {
		var n, mean, ss float64
		for i := 0; i < nPeople; i++ {
			if keep(i) {
				n++
				mean += x(i)
			}
		}
		mean /= n
		for i := 0; i < nPeople; i++ {
			if keep(i) {
				ss += (x(i) - mean) * (x(i) - mean)
			}
		}
		if samp {
			return ss / (n - 1), n
		}
		return ss / n, n
	}
	age := func(i int) float64 { return float64(trueAge(i)) }
	all := func(int) bool { return true }
	female := func(i int) bool { return i%2 == 0 }
	tests := []struct {
		sql   string
		want  func() (float64, float64)
		sqrt  bool
		group bool
	}{
		{"SELECT var_pop(age) FROM people", func() (float64, float64) { return variance(age, all, false) }, false, false},
		{"SELECT stddev_samp(income) FROM people", func() (float64, float64) { return variance(trueIncome, all, true) }, true, false},
		{"SELECT sex, variance(age) FROM people GROUP BY sex HAVING var_samp(age) >= 0 ORDER BY sex", func() (float64, float64) { return variance(age, female, true) }, false, true},
		{"SELECT round(stddev_pop(age), 3) FROM people", func() (float64, float64) { return variance(age, all, false) }, true, false},
	}
	for _, tc := range tests {
		_, pl := f.plan(t, "alice", tc.sql, 9)
		res, err := f.run(t, e, "alice", tc.sql, 9)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		col := 0
		if tc.group {
			col = 1
		}
		if len(res.Rows) == 0 {
			t.Fatalf("%s: no rows", tc.sql)
		}
		v, ok := res.Rows[0][col].AsFloat()
		if !ok {
			t.Fatalf("%s: %v is no number", tc.sql, res.Rows[0][col])
		}
		if iv := res.Columns[col].Interval; !tc.sqrt && !tc.group && !strings.Contains(iv, "/n for a group of n rows") {
			t.Errorf("%s: the notice's interval is %q", tc.sql, iv)
		}
		want, n := tc.want()
		// The first variance output (the column, or what round reads):
		// its 95% half-width is C/n (C/(n−1) for the sample forms).
		var c float64
		for _, o := range pl.Outputs {
			if o.Unit != nil && c == 0 {
				c = o.Unit.Summarize(pl.PartNoise(o)).CI95OverN
			}
		}
		tol := 3 * c / (n - 1)
		if tc.sqrt {
			want, tol = math.Sqrt(want), math.Sqrt(tol)
		}
		t.Logf("%s = %g, want %g ± %g", tc.sql, v, want, tol)
		if math.Abs(v-want) > tol {
			t.Errorf("%s = %g, want %g ± %g", tc.sql, v, want, tol)
		}
	}
}
