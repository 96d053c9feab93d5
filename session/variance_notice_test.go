package session

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// The cost notice of a variance column says how it is computed and its
// interval, which depends on the group's row count (the Interval texts
// are written as aggregate.variance writes them, figures plain).
func TestVarianceCostNotice(t *testing.T) {
	res := &release.Result{Columns: []release.Column{
		{Name: "v", Aggregate: "var_pop", Interval: "±360000/n for a group of n rows (delta method)"},
		{Name: "r", Aggregate: "expr", Uses: []release.Column{{Name: "stddev_samp(age)", Aggregate: "stddev_samp", Interval: "±sqrt(110000/(n − 1)) for a group of n rows (delta method)"}}},
	}, Charged: policies.Budget{Epsilon: 0.5}, Remaining: policies.Budget{Epsilon: 9.5}}
	got := costNotice(&planner.Plan{Dataset: &policies.Dataset{Name: "census"}}, res)
	for _, w := range []string{
		"v: population variance from a noisy count, a noisy sum and a noisy sum of squares",
		"clamped to the feasible range, 95% within ±360000/n for a group of n rows (delta method)",
		"r: computed from stddev_samp(age) (sample standard deviation from",
		"95% within ±sqrt(110000/(n − 1)) for a group of n rows",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("notice %q lacks %q", got, w)
		}
	}
}
