// Package release runs private plans: it evaluates public key domains,
// reserves budget in the ledger, runs the true aggregate on the backend,
// draws the noise, commits the charge together with the noisy release,
// and only then post-processes (HAVING, ORDER BY, LIMIT) and returns rows.
// Identical releases (same plan cache key) are served from the ledger
// without a new charge, across restarts, so repeating a query to average
// out the noise gains nothing.
//
// Order of effects (DESIGN.md "Budget ledger"): reserve (fsynced: the
// charge is durable) → run backend → commit charge + released rows
// (ledger.CommitDeferred: the record rides on the next durable ledger
// write, so a fresh answer waits for one fsync) → return. A crash anywhere
// never yields an uncharged answer: a lost commit record leaves the
// reservation pending and charged, and only durable releases are reused. A reservation is refunded
// only when the backend certainly never ran the statement
// (sqlerr.NeverRan: BackendUnavailable, or BackendRefused for a statement
// the server refused to prepare); any later failure stays charged and
// reaches the client as a generic error. Grouping sets released set by set
// (groupingsets.go) run one backend query per set under one reservation:
// refunded only if the first fails before running; once one ran, any
// failure keeps the charge.
//
// release may import planner, budget, noise, policies, ir and sqlerr (the
// ledger is the interface Ledger, implemented by package ledger). It
// must not import wire front ends, parsers or database drivers.
package release
