package budget

import "time"

// Budget is an (ε, δ) pair. It is the only way DP parameters travel
// together, so they cannot be swapped by position.
type Budget struct {
	Epsilon float64 `yaml:"epsilon" json:"epsilon"`
	Delta   float64 `yaml:"delta" json:"delta"`
}

// Charge is what a ledger is asked to charge, and what its audit history
// keeps about the charge.
type Charge struct {
	User    string
	Dataset string
	Cost    Budget
	// Release is the cache key the answer is released under (a hash: it
	// never holds query literals).
	Release string
	// Fingerprint identifies the statement's shape: a hash of the
	// normalised statement, literal values left out, so the DBA can group
	// the charges of one query written with different constants.
	Fingerprint string
	// Query is the statement text as the client sent it (bind
	// parameters are not part of it). It may hold literals the analyst
	// typed: the audit history is for the DBA only.
	Query string
	// Overlap lets the ledger return before the charge is durable, so the
	// caller's private computation runs while the charge is written. The
	// caller promises to send nothing before it settled the reservation:
	// Commit and CommitDeferred then return only once the charge is
	// durable (or fail, and the charge stays: nothing may be sent), so a
	// crash can lose only a charge whose answer never left. A ledger whose
	// charges are durable at once ignores it. Not part of the audit.
	Overlap bool
}

// Reservation is a durable charge waiting for its answer (see
// Charge.Overlap for one made durable while the answer is computed). It is
// one-shot: exactly one Commit, CommitDeferred or Refund takes effect.
//
// Commit makes the charge final and stores release under cacheKey (""
// stores nothing); it returns the release to send, which is the release
// stored first when an identical query committed before. CommitDeferred
// does the same without waiting for the record to be durable (the charge
// already is). Refund returns the cost: only for failures that cannot
// depend on private data.
type Reservation interface {
	Commit(cacheKey string, release []byte) ([]byte, error)
	CommitDeferred(cacheKey string, release []byte) ([]byte, error)
	Refund() error
}

// Account is one (user, dataset) line of the budget.
type Account struct {
	User    string `json:"user"`
	Dataset string `json:"dataset"`
	// Spent includes pending reservations (rounded to float64 for
	// display; the ledger sums exactly).
	Spent Budget `json:"spent"`
	// Queries counts charged queries (refunds excluded).
	Queries uint64 `json:"queries"`
	// LastCharge is the time of the latest charge (a refund does not move
	// it back).
	LastCharge time.Time `json:"last_charge"`
}

// Pending is a reservation neither committed nor refunded. Outside a
// running query it was left by a crash after the charge; it stays charged,
// because the backend may have run.
type Pending struct {
	ID      uint64    `json:"id"`
	User    string    `json:"user"`
	Dataset string    `json:"dataset"`
	Cost    Budget    `json:"cost"`
	Time    time.Time `json:"time"`
	// Replica names the serving process that made the reservation.
	Replica string `json:"replica,omitempty"`
}

// AuditEntry is one charge in the audit history.
type AuditEntry struct {
	// Reservation is the ledger's id of the charge.
	Reservation uint64    `json:"reservation"`
	Time        time.Time `json:"time"`
	User        string    `json:"user"`
	Dataset     string    `json:"dataset"`
	Cost        Budget    `json:"cost"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Query       string    `json:"query,omitempty"`
	Release     string    `json:"release,omitempty"`
	Replica     string    `json:"replica,omitempty"`
	// Refunded is when the charge was returned (zero: it stands).
	Refunded time.Time `json:"refunded,omitzero"`
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	User    string
	Dataset string
	// Since keeps entries charged at or after it.
	Since time.Time
}

// Match reports whether e passes the filter.
func (f AuditFilter) Match(e AuditEntry) bool {
	return (f.User == "" || e.User == f.User) &&
		(f.Dataset == "" || e.Dataset == f.Dataset) &&
		(f.Since.IsZero() || !e.Time.Before(f.Since))
}
