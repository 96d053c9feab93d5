// Package admin is the operators' HTTP listener (policy listen.admin): the
// Prometheus metrics of one proxy (/metrics), liveness (/healthz),
// readiness (/readyz: backend and ledger reachable) and the DBA's budget
// page (/budget).
//
// Every proxy owns its own Metrics with its own prometheus.Registry; there
// is no global registry, so two proxies in one process (tests) never mix
// their counters.
//
// Nothing here is authenticated: the listener is off by default and is to
// be bound to a private address. No metric or page shows a query's text or
// a literal of it; the budget page shows statement fingerprints.
//
// # Imports
//
// admin sits above session (whose Observer it implements) and reads the
// ledger through the small interfaces it defines; it must never be
// imported by the privacy code, the planner, the backends or the wire
// packages.
package admin
