package session

import (
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// A repeat charged again because its release was evicted says so; a
// fresh answer does not.
func TestEvictedCostNotice(t *testing.T) {
	pl := &planner.Plan{Dataset: &policies.Dataset{Name: "census"}}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	got := costNotice(pl, &release.Result{Charged: policies.Budget{Epsilon: 0.5}, Evicted: at})
	if !strings.Contains(got, "spent ε = 0.5") || !strings.Contains(got, "evicted by ledger.retention at 2026-11-27T09:00:00Z") {
		t.Errorf("notice %q", got)
	}
	if got := costNotice(pl, &release.Result{Charged: policies.Budget{Epsilon: 0.5}}); strings.Contains(got, "evicted") {
		t.Errorf("fresh notice %q mentions eviction", got)
	}
}
