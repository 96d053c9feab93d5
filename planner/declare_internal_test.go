package planner

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestDeclareMemo: the remembered policy entry is the one computed
// without the memo, and each part of the key (dataset, table, column,
// declared or not) gets its own entry: a key differing in any one part
// misses and names its own path.
func TestDeclareMemo(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.Load("testdata/planner.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := New(pol)
	want := func(path string) string { return path + " (" + pol.Position(path) + ")" }
	cases := []struct {
		k    declareKey
		path string
	}{
		{declareKey{dataset: "census", table: "people", column: "age", declared: true}, "datasets.census.tables.people.columns.age"},
		{declareKey{dataset: "census", table: "people", column: "income", declared: true}, "datasets.census.tables.people.columns.income"},
		{declareKey{dataset: "census", table: "people"}, "datasets.census.tables.people.columns"},
		{declareKey{dataset: "census", table: "zips", column: "zip", declared: true}, "datasets.census.tables.zips.columns.zip"},
		{declareKey{dataset: "social", table: "checkins", column: "duration", declared: true}, "datasets.social.tables.checkins.columns.duration"},
	}
	for round := range 2 { // the second round reads the memo
		for _, c := range cases {
			if got := p.declare(c.k); got != want(c.path) {
				t.Errorf("round %d %+v: %q, want %q", round, c.k, got, want(c.path))
			}
		}
	}
	n := 0
	p.declares.Range(func(any, any) bool { n++; return true })
	if n != len(cases) {
		t.Errorf("%d entries for %d keys", n, len(cases))
	}
}
