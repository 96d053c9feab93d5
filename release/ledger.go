package release

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Ledger is what the engine needs of a budget ledger (the bbolt file or
// the PostgreSQL ledger shared by replicas).
type Ledger interface {
	Lookup(cacheKey string) ([]byte, bool, error)
	Reserve(ctx context.Context, user, dataset string, cost, limit policies.Budget) (Reservation, error)
	Left(user, dataset string, limit policies.Budget) (policies.Budget, error)
	Spent(user, dataset string) (policies.Budget, error)
}

// Reservation is a durable charge waiting for its answer (one-shot).
type Reservation interface {
	Commit(cacheKey string, release []byte) ([]byte, error)
	CommitDeferred(cacheKey string, release []byte) ([]byte, error)
	Refund() error
}

// Flighter is implemented by ledgers shared between processes: Flight
// holds cacheKey against other replicas until the returned function is
// called, so identical queries on several replicas are charged once.
type Flighter interface {
	Flight(ctx context.Context, cacheKey string) (func(), error)
}

// lookup returns the release stored under key. On a miss with a ledger
// shared by replicas it takes the cross-replica hold on key and looks
// again, so that a release another replica published meanwhile is served
// instead of charged twice; done releases the hold (call it once the
// fresh release is committed). Cached answers cost no hold.
func (e *Engine) lookup(ctx context.Context, key string) (data []byte, ok bool, done func(), err error) {
	done = func() {}
	data, ok, err = e.ledger.Lookup(key)
	if err != nil || ok {
		return data, ok, done, ledgerErrorOrNil(err)
	}
	f, shared := e.ledger.(Flighter)
	if !shared {
		return nil, false, done, nil
	}
	if done, err = f.Flight(ctx, key); err != nil {
		return nil, false, func() {}, ledgerError(err)
	}
	data, ok, err = e.ledger.Lookup(key)
	if err != nil {
		done()
		return nil, false, func() {}, ledgerError(err)
	}
	return data, ok, done, nil
}

func ledgerErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return ledgerError(err)
}

// ledgerError keeps the code of a ledger that could not be reached
// (08006: nothing ran, nothing was charged) and words anything else as an
// unreadable ledger.
func ledgerError(err error) error {
	if sqlerr.HasCode(err, sqlerr.LedgerUnavailable) {
		return err
	}
	return sqlerr.Wrap(sqlerr.Internal, err, "internal error: the budget ledger is unreadable")
}

// BBolt adapts the embedded ledger to Ledger.
func BBolt(l *ledger.Ledger) Ledger { return bboltLedger{l} }

type bboltLedger struct{ *ledger.Ledger }

func (b bboltLedger) Reserve(ctx context.Context, user, dataset string, cost, limit policies.Budget) (Reservation, error) {
	r, err := b.Ledger.Reserve(ctx, user, dataset, cost, limit)
	if err != nil {
		return nil, err
	}
	return r, nil
}
