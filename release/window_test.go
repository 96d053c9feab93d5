package release_test

import (
	"sort"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestWindowsOverNoisyRows: window functions are computed by the proxy
// over the noisy output rows and share the release (one charge) with the
// plain query. The expected values are computed here from the plain
// query's noisy counts, by the definitions (share of total, running total
// in key order, ranks by count descending).
func TestWindowsOverNoisyRows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(11)})
	plain, err := f.run(t, e, "alice", "SELECT sex, COUNT(*) FROM people GROUP BY sex", 1)
	if err != nil {
		t.Fatal(err)
	}
	spent, _ := f.ledger.Spent("alice", "census")
	res, err := f.run(t, e, "alice", `SELECT sex, COUNT(*) AS n,
		COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () AS share,
		SUM(COUNT(*)) OVER (ORDER BY sex) AS running,
		RANK() OVER (ORDER BY COUNT(*) DESC) AS r,
		ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, sex) AS rn,
		DENSE_RANK() OVER (PARTITION BY sex = 'Other' ORDER BY COUNT(*)) AS dr,
		COUNT(*) OVER () AS groups,
		MAX(COUNT(*)) OVER () - COUNT(*) AS gap
		FROM people GROUP BY sex ORDER BY r, sex`, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cached || res.Charged.Epsilon != 0 {
		t.Errorf("cached %v, charged %+v: windows are post-processing and must share the release", res.Cached, res.Charged)
	}
	if again, _ := f.ledger.Spent("alice", "census"); again != spent {
		t.Errorf("spent %+v, was %+v", again, spent)
	}
	counts := map[string]int64{}
	var total int64
	keys := []string{}
	for _, r := range plain.Rows {
		counts[r[0].Str] = r[1].Int
		total += r[1].Int
		keys = append(keys, r[0].Str)
	}
	sort.Strings(keys)
	byCount := append([]string(nil), keys...)
	sort.SliceStable(byCount, func(i, j int) bool { return counts[byCount[i]] > counts[byCount[j]] })
	if len(res.Rows) != 3 {
		t.Fatalf("rows %v", res.Rows)
	}
	var maxCount int64
	for _, k := range keys {
		maxCount = max(maxCount, counts[k])
	}
	for i, row := range res.Rows {
		k := row[0].Str
		n := counts[k]
		if row[1].Int != n {
			t.Errorf("%s: n %v, plain %d", k, row[1], n)
		}
		if want := float64(n) * 100.0 / float64(total); row[2].Kind != ir.KindFloat || row[2].Float != want {
			t.Errorf("%s: share %v, want %v", k, row[2], want)
		}
		var run int64
		for _, k2 := range keys {
			if k2 <= k {
				run += counts[k2]
			}
		}
		if row[3] != ir.Int(run) {
			t.Errorf("%s: running %v, want %d", k, row[3], run)
		}
		rank := int64(1)
		for _, k2 := range keys {
			if counts[k2] > n {
				rank++
			}
		}
		if row[4] != ir.Int(rank) {
			t.Errorf("%s: rank %v, want %d", k, row[4], rank)
		}
		rn := int64(0)
		for j, k2 := range byCount {
			if k2 == k {
				rn = int64(j + 1)
			}
		}
		if row[5] != ir.Int(rn) {
			t.Errorf("%s: row_number %v, want %d", k, row[5], rn)
		}
		// Partition "Other" alone: dense rank 1; Female and Male: 1 for
		// the smaller count, 2 for the larger (or 1 for both when equal).
		dr := int64(1)
		if k != "Other" {
			other := map[string]string{"Female": "Male", "Male": "Female"}[k]
			if counts[other] < n {
				dr = 2
			}
		}
		if row[6] != ir.Int(dr) {
			t.Errorf("%s: dense_rank %v, want %d", k, row[6], dr)
		}
		if row[7] != ir.Int(3) || row[8] != ir.Int(maxCount-n) {
			t.Errorf("%s: groups %v, gap %v (max %d)", k, row[7], row[8], maxCount)
		}
		if i > 0 && res.Rows[i-1][4].Int > row[4].Int {
			t.Errorf("rows not ordered by rank: %v", res.Rows)
		}
	}
}

// TestExpressionColumnsDescribeTheirNoise: an expression column lists the
// noisy aggregates it is computed from (through windows too) with their
// noise, for the cost notice; constants and keys list none.
func TestExpressionColumnsDescribeTheirNoise(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(3)})
	res, err := f.run(t, e, "alice", `SELECT sex, ROUND(AVG(age), 2) AS a,
		COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () AS share, lower(sex) AS l, 3 AS k
		FROM people GROUP BY sex`, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Columns
	if len(c) != 5 {
		t.Fatalf("columns %+v", c)
	}
	if c[1].Aggregate != "expr" || len(c[1].Uses) != 1 || c[1].Uses[0].Name != "avg(age)" || c[1].Uses[0].Aggregate != "avg" {
		t.Errorf("a: %+v, want computed from avg(age)", c[1])
	}
	if c[2].Aggregate != "expr" || len(c[2].Uses) != 1 || c[2].Uses[0].Name != "count(*)" || c[2].Uses[0].Scale <= 0 || c[2].Uses[0].CI95 <= 0 {
		t.Errorf("share: %+v, want computed from count(*) with its noise", c[2])
	}
	for _, i := range []int{3, 4} {
		if c[i].Aggregate != "" || len(c[i].Uses) != 0 {
			t.Errorf("%s: %+v, want no noise listed", c[i].Name, c[i])
		}
	}
}
