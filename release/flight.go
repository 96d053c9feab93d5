package release

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/internal/ctxend"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Flighter is implemented by ledgers shared between processes (the
// PostgreSQL ledger of several replicas): Flight holds cacheKey against
// the other replicas until the returned function is called, so that an
// identical query arriving on several replicas at once is charged once.
// Inside one process keyedMutex already does this.
type Flighter interface {
	Flight(ctx context.Context, cacheKey string) (func(), error)
}

// lookup returns the release stored under key. On a miss with a shared
// ledger it takes the cross-replica hold on key and looks again, so that a
// release another replica published meanwhile is served instead of being
// charged twice; done releases the hold (call it once the fresh release
// is committed). A cached answer takes no hold.
func (e *Engine) lookup(ctx context.Context, key string) (data []byte, ok bool, done func(), err error) {
	done = func() {}
	data, ok, err = e.ledger.Release(ctx, key)
	if err != nil {
		return nil, false, done, LedgerError(ctx, err)
	}
	f, shared := LedgerAs[Flighter](e.ledger)
	if ok || !shared {
		return data, ok, done, nil
	}
	if done, err = f.Flight(ctx, key); err != nil {
		return nil, false, func() {}, LedgerError(ctx, err)
	}
	data, ok, err = e.ledger.Release(ctx, key)
	if err != nil {
		done()
		return nil, false, func() {}, LedgerError(ctx, err)
	}
	return data, ok, done, nil
}

// LedgerError keeps the code of a ledger that cannot be reached (08006:
// nothing ran, nothing is answered), reports a call the caller's
// statement ended (a cancel, a statement timeout: a shared ledger's
// network call then fails) as the cancel it is, and words anything else
// as an unreadable ledger. The session uses it for SHOW ddp.budget too.
func LedgerError(ctx context.Context, err error) error {
	if ctxend.Err(ctx) != nil {
		return sqlerr.Canceled(err)
	}
	if sqlerr.HasCode(err, sqlerr.LedgerUnavailable) {
		return err
	}
	return sqlerr.Wrap(sqlerr.Internal, err, "internal error: the budget ledger is unreadable")
}
