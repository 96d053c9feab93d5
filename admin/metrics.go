package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/session"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MetricsOptions configures NewMetrics.
type MetricsOptions struct {
	// PerUser labels ε and δ spent with the user too (policy
	// metrics.per_user); by default they are per dataset only.
	PerUser bool
	// Datasets are the policy's datasets, whose series start at 0.
	Datasets []string
}

// Metrics are one proxy's Prometheus metrics. It implements
// session.Observer; the ledger, the backend and the front ends report
// through its other methods.
type Metrics struct {
	reg     *prometheus.Registry
	perUser bool

	statements *prometheus.CounterVec
	refusals   *prometheus.CounterVec
	epsilon    *prometheus.CounterVec
	delta      *prometheus.CounterVec
	cacheHits  *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	commitTime prometheus.Histogram
	commitSize prometheus.Histogram
	backend    *prometheus.HistogramVec
}

var _ session.Observer = (*Metrics)(nil)

// NewMetrics returns metrics on a registry of their own (with the Go
// runtime's and the process's collectors).
func NewMetrics(opts MetricsOptions) *Metrics {
	spentLabels := []string{"dataset"}
	if opts.PerUser {
		spentLabels = append(spentLabels, "user")
	}
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		perUser: opts.PerUser,
		statements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ddp_statements_total",
			Help: "Statements executed, by class (private, passthrough, catalog, session, explain, budget, refused, empty) and outcome (fresh, cached, free, ok, refused).",
		}, []string{"class", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ddp_refusals_total",
			Help: "Statements answered with an error, by SQLSTATE.",
		}, []string{"sqlstate"}),
		epsilon: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ddp_epsilon_spent_total",
			Help: "Privacy budget ε charged and not refunded (answers sent, and queries that failed after reaching the backend).",
		}, spentLabels),
		delta: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ddp_delta_spent_total",
			Help: "Privacy budget δ charged and not refunded.",
		}, spentLabels),
		cacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ddp_release_cache_hits_total",
			Help: "Private queries answered from an earlier release or synopsis, at no cost.",
		}, []string{"dataset"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ddp_statement_duration_seconds",
			Help:    "Time from a statement's receipt to its answer, by class.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"class"}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ddp_ledger_commit_seconds",
			Help:    "Duration of one ledger write, made durable: bbolt, one change-log write with its fdatasync; PostgreSQL, one reservation, commit or refund statement with its commit's WAL flush.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 14),
		}),
		commitSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ddp_ledger_commit_writes",
			Help:    "Writes (reservations, commits, refunds) carried by one ledger write: bbolt's group commit size; always 1 with the PostgreSQL ledger, whose statements commit one by one.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9),
		}),
		backend: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ddp_backend_seconds",
			Help:    "Duration of backend statements run for private queries, by operation (aggregate, rows).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"op"}),
	}
	m.reg.MustRegister(m.statements, m.refusals, m.epsilon, m.delta, m.cacheHits, m.duration,
		m.commitTime, m.commitSize, m.backend,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every SQLSTATE the proxy answers with starts at 0, so that a rate or
	// an alert (budget exhausted, 53400) has a series before its first
	// event (Prometheus reads a missing series as no data, not as 0).
	for _, c := range sqlerr.All {
		m.refusals.WithLabelValues(c.SQLState)
	}
	m.Datasets(opts.Datasets)
	return m
}

// Datasets starts the per-dataset series of datasets at 0 (at startup
// and after a reload that adds one): spent and cache hits then read 0
// rather than no data until the first charge. With per-user labels the
// spent series start with each user's first charge (the users are not
// known here).
func (m *Metrics) Datasets(names []string) {
	for _, d := range names {
		m.cacheHits.WithLabelValues(d)
		if !m.perUser {
			m.epsilon.WithLabelValues(d)
			m.delta.WithLabelValues(d)
		}
	}
}

// Registry is the registry /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Statement counts one executed statement (session.Observer).
func (m *Metrics) Statement(ev session.Event) {
	m.statements.WithLabelValues(ev.Class, ev.Outcome).Inc()
	m.duration.WithLabelValues(ev.Class).Observe(ev.Duration.Seconds())
	if ev.Code != "" {
		m.refusals.WithLabelValues(ev.Code).Inc()
	}
	if ev.Outcome == session.OutcomeCached {
		m.cacheHits.WithLabelValues(ev.Dataset).Inc()
	}
}

// Spent counts a charge that stands: committed, whether the answer was
// sent or the query failed after it reached the backend (a refunded
// reservation is never counted). The ledger reports it, not the
// statement: a failed statement can have spent budget.
func (m *Metrics) Spent(user, dataset string, cost policies.Budget) {
	labels := []string{dataset}
	if m.perUser {
		labels = append(labels, user)
	}
	m.epsilon.WithLabelValues(labels...).Add(cost.Epsilon)
	if cost.Delta > 0 {
		m.delta.WithLabelValues(labels...).Add(cost.Delta)
	}
}

// LedgerCommit records one durable ledger write (ledger.Options.OnCommit,
// pgledger.Options.OnCommit).
func (m *Metrics) LedgerCommit(writes int, took time.Duration) {
	m.commitTime.Observe(took.Seconds())
	m.commitSize.Observe(float64(writes))
}

// Backend records one backend statement of a private query.
func (m *Metrics) Backend(op string, took time.Duration) {
	m.backend.WithLabelValues(op).Observe(took.Seconds())
}

// OpenConnections exports the open client connections of a front end,
// read from it at every scrape.
func (m *Metrics) OpenConnections(frontend string, count func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "ddp_open_connections",
		Help:        "Open client connections, by front end.",
		ConstLabels: prometheus.Labels{"frontend": frontend},
	}, func() float64 { return float64(count()) }))
}
