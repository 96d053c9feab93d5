package release_test

import (
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestKeysWithoutAggregateAreFree: GROUP BY without an aggregate over a
// declared or derived key set answers the keys (narrowed by WHERE) with
// no backend call and no charge, even for a user without budget left.
func TestKeysWithoutAggregateAreFree(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{})
	if _, err := f.run(t, e, "bob", "SELECT COUNT(*) FROM people", 0.3); err != nil {
		t.Fatal(err)
	}
	spent, _ := f.ledger.Spent("bob", "census")
	f.be.Close() // no backend call may happen from here on
	tests := []struct {
		sql  string
		want []string
	}{
		{"SELECT sex FROM people WHERE sex <> 'Other' GROUP BY sex ORDER BY sex", []string{"Female", "Male"}},
		{"SELECT CASE WHEN age < 18 THEN 'minor' ELSE 'adult' END AS g FROM people GROUP BY 1 ORDER BY 1", []string{"adult", "minor"}},
		{"SELECT age FROM people WHERE age BETWEEN 30 AND 32 GROUP BY age ORDER BY age DESC", []string{"32", "31", "30"}},
	}
	for _, tt := range tests {
		res, err := f.run(t, e, "bob", tt.sql, 0)
		if err != nil {
			t.Errorf("%s: %v", tt.sql, err)
			continue
		}
		var got []string
		for _, r := range res.Rows {
			got = append(got, r[0].Text())
		}
		if !slices.Equal(got, tt.want) || res.Charged != (policies.Budget{}) {
			t.Errorf("%s: rows %v charged %+v, want %v free", tt.sql, got, res.Charged, tt.want)
		}
	}
	if again, _ := f.ledger.Spent("bob", "census"); again != spent {
		t.Errorf("spent %+v, was %+v", again, spent)
	}
}

// TestExpressionKeysRelease: a histogram of bins over the fixture's ages
// (0..100 declared, people aged 10..99) releases every derived key, the
// empty one too, and charges the ε asked.
func TestExpressionKeysRelease(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(5)})
	res, err := f.run(t, e, "alice", "SELECT floor(age / 25) * 25 AS bin, COUNT(*) AS n FROM people GROUP BY 1 ORDER BY 1", 5)
	if err != nil {
		t.Fatal(err)
	}
	var bins []int64
	for _, r := range res.Rows {
		bins = append(bins, r[0].Int)
	}
	// 0..100 / 25 * 25: 0, 25, 50, 75, 100 (100 holds nobody: released).
	if !slices.Equal(bins, []int64{0, 25, 50, 75, 100}) {
		t.Fatalf("bins %v", bins)
	}
	if res.Charged.Epsilon != 5 {
		t.Errorf("charged %+v", res.Charged)
	}
}
