package ledger

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Lookup returns the release committed under cacheKey, if any. It charges
// nothing: the answer was paid for when it was first released. Only
// durable releases are served: when a deferred commit of cacheKey is still
// waiting, Lookup makes it durable first (one shared fsync).
func (l *Ledger) Lookup(cacheKey string) ([]byte, bool, error) {
	if cacheKey == "" {
		return nil, false, nil
	}
	out, err := l.settledRelease(cacheKey, false)
	if err != nil {
		return nil, false, fmt.Errorf("ledger lookup: %w", err)
	}
	return out, out != nil, nil
}

// Spent returns what (user, dataset) has been charged, pending reservations
// included, rounded to float64 for display.
func (l *Ledger) Spent(user, dataset string) (policies.Budget, error) {
	a, err := l.account(user, dataset)
	if err != nil {
		return policies.Budget{}, err
	}
	return a.spent.budget(), nil
}

// Left returns what remains of limit for (user, dataset), computed exactly
// and never negative, for the notice that accompanies a cached answer.
func (l *Ledger) Left(user, dataset string, limit policies.Budget) (policies.Budget, error) {
	lim, err := exactOf(limit)
	if err != nil {
		return policies.Budget{}, fmt.Errorf("ledger left: limit: %w", err)
	}
	a, err := l.account(user, dataset)
	if err != nil {
		return policies.Budget{}, err
	}
	return lim.sub(a.spent).clampZero().budget(), nil
}

func (l *Ledger) account(user, dataset string) (account, error) {
	var a account
	err := l.db.View(func(tx *bolt.Tx) error {
		var err error
		a, err = getAccount(tx.Bucket(bucketAccounts), accountKey(user, dataset))
		return err
	})
	if err != nil {
		return account{}, fmt.Errorf("ledger account: %w", err)
	}
	return a, nil
}

// Account is one (user, dataset) line of the budget view.
type Account struct {
	User    string
	Dataset string
	// Spent includes pending reservations.
	Spent policies.Budget
	// Queries counts charged queries (refunds excluded).
	Queries uint64
	// LastCharge is the time of the latest charge (a refund does not move
	// it back).
	LastCharge time.Time
}

// All returns every account, sorted by user then dataset.
func (l *Ledger) All() ([]Account, error) {
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

// PendingReservation is a reservation neither committed nor refunded. Outside
// a running query it was left by a crash after the charge; it stays charged,
// because the backend may have run.
type PendingReservation struct {
	ID      uint64
	User    string
	Dataset string
	Cost    policies.Budget
	Time    time.Time
}

// Pending lists pending reservations by ID.
func (l *Ledger) Pending() ([]PendingReservation, error) {
	var out []PendingReservation
	err := l.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("malformed reservation key %x", k)
			}
			p, err := decodePending(v)
			if err != nil {
				return err
			}
			user, dataset, _ := splitAccountKey(p.accountKey) // checked by decodePending
			out = append(out, PendingReservation{ID: idFromKey(k), User: user, Dataset: dataset,
				Cost: p.cost.budget(), Time: p.time})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("ledger pending: %w", err)
	}
	return out, nil
}
