package admin

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/session"
)

// TestSeriesStartAtZero: the spent and cache-hit series of every dataset,
// and the refusal series of the budget's SQLSTATE, exist at 0 before the
// first event (an alert on a rate needs the series), and then count.
func TestSeriesStartAtZero(t *testing.T) {
	m := NewMetrics(MetricsOptions{Datasets: []string{"census", "payroll"}})
	want := `
# HELP ddp_epsilon_spent_total Privacy budget ε charged and not refunded (answers sent, and queries that failed after reaching the backend).
# TYPE ddp_epsilon_spent_total counter
ddp_epsilon_spent_total{dataset="census"} 0
ddp_epsilon_spent_total{dataset="payroll"} 0
# HELP ddp_release_cache_hits_total Private queries answered from an earlier release or synopsis, at no cost.
# TYPE ddp_release_cache_hits_total counter
ddp_release_cache_hits_total{dataset="census"} 0
ddp_release_cache_hits_total{dataset="payroll"} 0
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "ddp_epsilon_spent_total", "ddp_release_cache_hits_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.refusals.WithLabelValues("53400")); got != 0 {
		t.Errorf("budget refusals %v before any", got)
	}
	if n := testutil.CollectAndCount(m.refusals); n < 20 {
		t.Errorf("%d refusal series at start, want one per SQLSTATE the proxy answers with", n)
	}
	m.Spent("ann", "census", policies.Budget{Epsilon: 0.5})
	m.Statement(session.Event{Class: session.ClassPrivate, Outcome: session.OutcomeRefused, Code: "53400"})
	m.Datasets([]string{"census", "sales"}) // a reload adds sales, keeps census's count
	if got := testutil.ToFloat64(m.epsilon.WithLabelValues("census")); got != 0.5 {
		t.Errorf("census spent %v after a reload, want 0.5", got)
	}
	if got := testutil.ToFloat64(m.refusals.WithLabelValues("53400")); got != 1 {
		t.Errorf("budget refusals %v, want 1", got)
	}
	if n := testutil.CollectAndCount(m.epsilon); n != 3 {
		t.Errorf("%d spent series, want 3 (census, payroll, sales)", n)
	}
	// Per-user labels: the users are not known ahead, so no series start.
	pu := NewMetrics(MetricsOptions{PerUser: true, Datasets: []string{"census"}})
	if n := testutil.CollectAndCount(pu.epsilon); n != 0 {
		t.Errorf("%d per-user spent series before any charge, want 0", n)
	}
}
