package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// Lookup returns the release committed under cacheKey, if any. It charges
// nothing: the answer was paid for when it was first released. Only
// durable releases are served: when a deferred commit of cacheKey is still
// waiting, Lookup makes it durable first (one shared fsync).
func (l *Ledger) Lookup(cacheKey string) ([]byte, bool, error) {
	if cacheKey == "" {
		return nil, false, nil
	}
	out, err := l.settledRelease(cacheKey)
	if err != nil {
		return nil, false, fmt.Errorf("ledger lookup: %w", err)
	}
	return out, out != nil, nil
}

// Spent returns what (user, dataset) has been charged, pending reservations
// included, rounded to float64 for display.
func (l *Ledger) Spent(user, dataset string) (budget.Budget, error) {
	a, err := l.account(user, dataset)
	if err != nil {
		return budget.Budget{}, err
	}
	return a.spent.budget(), nil
}

// Left returns what remains of limit for (user, dataset), computed exactly
// and never negative, for the notice that accompanies a cached answer.
func (l *Ledger) Left(user, dataset string, limit budget.Budget) (budget.Budget, error) {
	lim, err := l.memo.exactOf(limit)
	if err != nil {
		return budget.Budget{}, fmt.Errorf("ledger left: limit: %w", err)
	}
	a, err := l.account(user, dataset)
	if err != nil {
		return budget.Budget{}, err
	}
	return lim.sub(a.spent).clampZero().budget(), nil
}

// account returns the account of (user, dataset) as the budget views
// show it: without the unused rest of a lease this process holds, which
// no query has spent yet.
func (l *Ledger) account(user, dataset string) (account, error) {
	l.state.mu.Lock()
	defer l.state.mu.Unlock()
	key := accountKey(user, dataset)
	a, err := l.loadAccount(key)
	if err != nil {
		return account{}, fmt.Errorf("ledger account: %w", err)
	}
	out := *a
	out.spent = used(a, l.state.leases[string(key)])
	return out, nil
}

// Account is one (user, dataset) line of the budget view.
type Account = budget.Account

// All returns every account, sorted by user then dataset.
func (l *Ledger) All() ([]Account, error) {
	if err := l.checkpoint(); err != nil {
		return nil, fmt.Errorf("ledger accounts: %w", err)
	}
	// The accounts changed since Open are current in memory (the file
	// has them as of the checkpoint above; a lease's rest is left out).
	l.state.mu.Lock()
	current := make(map[string]account, len(l.state.accounts))
	for k, a := range l.state.accounts {
		c := *a
		c.spent = used(a, l.state.leases[k])
		current[k] = c
	}
	l.state.mu.Unlock()
	var out []Account
	err := l.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAccounts).ForEach(func(k, v []byte) error {
			user, dataset, err := splitAccountKey(k)
			if err != nil {
				return err
			}
			a, err := decodeAccount(v)
			if err != nil {
				return fmt.Errorf("account %q/%q: %w", user, dataset, err)
			}
			if c, ok := current[string(k)]; ok {
				a = c
			}
			out = append(out, Account{User: user, Dataset: dataset, Spent: a.spent.budget(),
				Queries: a.queries, LastCharge: a.lastCharge})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("ledger accounts: %w", err)
	}
	// Key order sorts by user length first; people expect names in order.
	slices.SortFunc(out, func(a, b Account) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Dataset, b.Dataset))
	})
	return out, nil
}

// PendingReservation is a reservation neither committed nor refunded
// (budget.Pending).
type PendingReservation = budget.Pending

// Pending lists pending reservations by ID.
func (l *Ledger) Pending() ([]PendingReservation, error) {
	if err := l.checkpoint(); err != nil {
		return nil, fmt.Errorf("ledger pending: %w", err)
	}
	live := l.liveLeases()
	var out []PendingReservation
	err := l.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("malformed reservation key %x", k)
			}
			if live[idFromKey(k)] {
				return nil // held by this process, not left behind
			}
			p, err := decodePending(v)
			if err != nil {
				return err
			}
			user, dataset, _ := splitAccountKey(p.accountKey) // checked by decodePending
			out = append(out, PendingReservation{ID: idFromKey(k), User: user, Dataset: dataset,
				Cost: p.cost.budget(), Time: p.time, Replica: p.replica})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("ledger pending: %w", err)
	}
	return out, nil
}

// The methods below are release.Ledger's (with a context, for ledgers that
// reach a server); on the embedded file the context only stops a call
// that has not started.

// Release is Lookup for release.Ledger.
func (l *Ledger) Release(ctx context.Context, cacheKey string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	return l.Lookup(cacheKey)
}

// Account returns (user, dataset)'s line of the budget (zero when it was
// never charged).
func (l *Ledger) Account(ctx context.Context, user, dataset string) (budget.Account, error) {
	if err := ctx.Err(); err != nil {
		return budget.Account{}, err
	}
	a, err := l.account(user, dataset)
	if err != nil {
		return budget.Account{}, err
	}
	return budget.Account{User: user, Dataset: dataset, Spent: a.spent.budget(), Queries: a.queries, LastCharge: a.lastCharge}, nil
}

// Remaining is Left for release.Ledger.
func (l *Ledger) Remaining(ctx context.Context, user, dataset string, limit budget.Budget) (budget.Budget, error) {
	if err := ctx.Err(); err != nil {
		return budget.Budget{}, err
	}
	return l.Left(user, dataset, limit)
}

// Accounts is All for release.Ledger.
func (l *Ledger) Accounts(ctx context.Context) ([]budget.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.All()
}

// Reservations is Pending for release.Ledger.
func (l *Ledger) Reservations(ctx context.Context) ([]budget.Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.Pending()
}
