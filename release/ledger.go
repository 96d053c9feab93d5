package release

import (
	"context"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// Ledger is the budget ledger as the release step uses it: the durable
// charge before a private query runs, the release cache that makes a
// repeated query free and identical, and the budget left for the notice.
// The embedded bbolt file (package ledger) implements it; so may a ledger
// on a database shared by several replicas. Every implementation must
// keep the protocol of package ledger's doc: Charge is durable when it
// returns; a Reservation settles once; Release serves only durable
// releases; the first release stored under a key wins.
type Ledger interface {
	// Charge durably charges c.Cost to (c.User, c.Dataset) within limit
	// and records the charge in the audit history, in one write. Over
	// the limit it charges nothing and returns a sqlerr.BudgetExhausted
	// error.
	Charge(ctx context.Context, c budget.Charge, limit budget.Budget) (budget.Reservation, error)
	// Release returns the release stored under cacheKey, if any.
	Release(ctx context.Context, cacheKey string) ([]byte, bool, error)
	// Account returns (user, dataset)'s spent budget.
	Account(ctx context.Context, user, dataset string) (budget.Account, error)
	// Remaining returns what is left of limit, exactly, never negative.
	Remaining(ctx context.Context, user, dataset string, limit budget.Budget) (budget.Budget, error)
	LedgerReader
}

// LedgerReader is what the DBA reads from a ledger (ddp-proxy budget and
// audit, the admin listener): it changes nothing.
type LedgerReader interface {
	// Accounts lists every (user, dataset) charged, by user then dataset.
	Accounts(ctx context.Context) ([]budget.Account, error)
	// Reservations lists the pending reservations (in flight, or left by
	// a crash: they stay charged).
	Reservations(ctx context.Context) ([]budget.Pending, error)
	// Audit calls fn for each charge f selects, oldest first.
	Audit(ctx context.Context, f budget.AuditFilter, fn func(budget.AuditEntry) error) error
}

// Wrapper is implemented by a ledger that wraps another (metrics, a hook
// at close): the release step looks for its optional interfaces
// (Flighter, Evicted) on the wrapped ledgers too, so a wrapper never hides
// them — as errors.As unwraps errors.
type Wrapper interface {
	Unwrap() Ledger
}

// LedgerAs finds the first ledger of the wrapper chain from l that
// implements T.
func LedgerAs[T any](l Ledger) (T, bool) {
	for l != nil {
		if t, ok := l.(T); ok {
			return t, true
		}
		w, ok := l.(Wrapper)
		if !ok {
			break
		}
		l = w.Unwrap()
	}
	var zero T
	return zero, false
}

// evictionReporter is implemented by ledgers with a retention bound that
// remember what they evicted (optional: the notice of a query charged
// again because its release was evicted says so when the ledger knows).
type evictionReporter interface {
	Evicted(ctx context.Context, cacheKey string) (time.Time, bool, error)
}

// evictedAt returns when key's release was evicted (zero if it was not,
// or the ledger cannot tell). For the notice only: errors are ignored.
func (e *Engine) evictedAt(ctx context.Context, key string) time.Time {
	er, ok := LedgerAs[evictionReporter](e.ledger)
	if !ok {
		return time.Time{}
	}
	t, ok, err := er.Evicted(ctx, key)
	if err != nil || !ok {
		return time.Time{}
	}
	return t
}

// Query is what the audit history keeps about the statement a plan
// answers: its text as the client sent it and its fingerprint (computed
// only when a charge is made, so a cached answer does not pay for it).
type Query struct {
	Text        string
	Fingerprint func() string
}

// charge is the ledger charge of a release of plan cost under key.
func (q Query) charge(user, dataset, key string, cost budget.Budget) budget.Charge {
	c := budget.Charge{User: user, Dataset: dataset, Cost: cost, Release: key, Query: q.Text}
	if q.Fingerprint != nil {
		c.Fingerprint = q.Fingerprint()
	}
	return c
}
