package release_test

import (
	"sort"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestStagesOverNoisyRows: Looker's pivot wrapper (rank, min rank per
// pivot row, dense rank of that, filter, order, limit) is post-processing
// of the plain query's one release: free after it, and equal to the
// answer computed here by hand from that release's noisy rows by the
// definitions of the window functions.
func TestStagesOverNoisyRows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(5)})
	const inner = `SELECT sex AS "s", floor(age / 10) AS "d", COUNT(*) AS "n" FROM people GROUP BY 1, 2`
	plain, err := f.run(t, e, "alice", inner, 1)
	if err != nil {
		t.Fatal(err)
	}
	spent, _ := f.ledger.Spent("alice", "census")
	type row struct {
		s        string
		d        ir.Value
		n        int64
		rank     int64
		minRank  int64
		pivotRow int64
	}
	var rows []row
	for _, r := range plain.Rows {
		rows = append(rows, row{s: r[0].Str, d: r[1], n: r[2].Int})
	}
	if len(rows) != 33 {
		t.Fatalf("plain query: %d rows, want 3 sexes × 11 decades", len(rows))
	}
	// RANK() OVER (ORDER BY n DESC): 1 + the rows with a larger count.
	for i := range rows {
		rows[i].rank = 1
		for _, o := range rows {
			if o.n > rows[i].n {
				rows[i].rank++
			}
		}
	}
	// MIN(rank) OVER (PARTITION BY s).
	for i := range rows {
		rows[i].minRank = rows[i].rank
		for _, o := range rows {
			if o.s == rows[i].s {
				rows[i].minRank = min(rows[i].minRank, o.rank)
			}
		}
	}
	// DENSE_RANK() OVER (ORDER BY min rank): 1 + the distinct smaller ones.
	for i := range rows {
		smaller := map[int64]bool{}
		for _, o := range rows {
			if o.minRank < rows[i].minRank {
				smaller[o.minRank] = true
			}
		}
		rows[i].pivotRow = int64(1 + len(smaller))
	}
	// WHERE pivot row <= 2 ORDER BY pivot row, s, d LIMIT 7.
	var want []row
	for _, r := range rows {
		if r.pivotRow <= 2 {
			want = append(want, r)
		}
	}
	sort.Slice(want, func(i, j int) bool {
		a, b := want[i], want[j]
		if a.pivotRow != b.pivotRow {
			return a.pivotRow < b.pivotRow
		}
		if a.s != b.s {
			return a.s < b.s
		}
		return ir.CompareValues(a.d, b.d) < 0
	})
	want = want[:min(7, len(want))]

	pivot := `SELECT * FROM (SELECT *, DENSE_RANK() OVER (ORDER BY z___min_rank) as z___pivot_row_rank FROM (SELECT *, MIN(z___rank) OVER (PARTITION BY "s") as z___min_rank FROM (SELECT *, RANK() OVER (ORDER BY "n" DESC) AS z___rank FROM (` +
		inner + `) ww) bb) zz) aa WHERE z___pivot_row_rank <= 2 ORDER BY z___pivot_row_rank, "s", "d" LIMIT 7`
	res, err := f.run(t, e, "alice", pivot, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cached || res.Charged.Epsilon != 0 {
		t.Errorf("cached %v, charged %+v: the stages are post-processing of the plain query's release", res.Cached, res.Charged)
	}
	if again, _ := f.ledger.Spent("alice", "census"); again != spent {
		t.Errorf("spent %+v, was %+v", again, spent)
	}
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if len(names) != 6 || names[5] != "z___pivot_row_rank" || names[3] != "z___rank" || res.Columns[2].Aggregate != "count" {
		t.Errorf("columns %+v", res.Columns)
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(res.Rows), len(want), res.Rows)
	}
	for i, w := range want {
		got := res.Rows[i]
		exp := []ir.Value{ir.String(w.s), w.d, ir.Int(w.n), ir.Int(w.rank), ir.Int(w.minRank), ir.Int(w.pivotRow)}
		for j := range exp {
			if ir.CompareValues(got[j], exp[j]) != 0 {
				t.Errorf("row %d: %v, want %v", i, got, exp)
				break
			}
		}
	}
}

// TestStageFiltersAfterWindows: a WHERE over a level with a window filters
// after the window, as SQL does: the total below counts every group, not
// only those the filter keeps.
func TestStageFiltersAfterWindows(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(9)})
	plain, err := f.run(t, e, "alice", "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex", 1)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	least := plain.Rows[0][1].Int
	for _, r := range plain.Rows {
		total += r[1].Int
		least = min(least, r[1].Int)
	}
	var want [][]ir.Value
	for _, r := range plain.Rows {
		if r[1].Int > least {
			want = append(want, []ir.Value{r[0], r[1], ir.Int(total)})
		}
	}
	if len(want) == 0 || len(want) == len(plain.Rows) {
		t.Fatalf("noisy counts %v: the filter would keep all or nothing, proving nothing", plain.Rows)
	}
	res, err := f.run(t, e, "alice", "SELECT * FROM (SELECT sex, COUNT(*) AS n, SUM(COUNT(*)) OVER () AS total FROM people GROUP BY sex) t WHERE n > "+ir.Int(least).SQL(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cached || res.Charged.Epsilon != 0 {
		t.Errorf("cached %v, charged %+v", res.Cached, res.Charged)
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("rows %v, want %v", res.Rows, want)
	}
	for i := range want {
		for j := range want[i] {
			if ir.CompareValues(res.Rows[i][j], want[i][j]) != 0 {
				t.Errorf("rows %v, want %v", res.Rows, want)
			}
		}
	}
}
