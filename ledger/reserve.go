package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ErrResolved is returned by Commit or Refund on a reservation that was
// already committed or refunded. Nothing is changed.
var ErrResolved = errors.New("ledger: reservation already committed or refunded")

// Reservation is a durable charge waiting for its answer. It is one-shot:
// exactly one Commit or Refund takes effect.
type Reservation struct {
	// ID is unique within the ledger file and never reused.
	ID      uint64
	User    string
	Dataset string
	// Cost is what was charged.
	Cost budget.Budget
	// Left is what remains of the limit after this charge (computed
	// exactly, rounded to float64 for display).
	Left budget.Budget

	l          *Ledger
	accountKey []byte
	cost       exact
	// record is the pending record as written: resolving compares the
	// stored bytes with it instead of decoding them.
	record []byte

	mu   sync.Mutex
	done bool
}

// Reserve durably charges cost to (user, dataset): Charge without the
// query's audit details (for tests and tools; serving code charges
// through Charge, the release.Ledger method).
func (l *Ledger) Reserve(ctx context.Context, user, dataset string, cost, limit budget.Budget) (*Reservation, error) {
	return l.reserve(ctx, budget.Charge{User: user, Dataset: dataset, Cost: cost}, limit)
}

// Charge durably charges c.Cost to (c.User, c.Dataset) if the total spent
// stays within limit for both ε and δ, records a pending reservation and
// the charge's audit entry (audit.go), all in one transaction. When the
// file is fsynced and Charge returns, the charge survives any crash.
//
// If the budget would be exceeded, Charge charges nothing and returns a
// *sqlerr.Error with code sqlerr.BudgetExhausted that says what is left and
// what was asked. Costs and limits must be finite and ≥ 0; they are read as
// exact decimals (see ExactDecimal).
func (l *Ledger) Charge(ctx context.Context, c budget.Charge, limit budget.Budget) (budget.Reservation, error) {
	r, err := l.reserve(ctx, c, limit)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return r, nil
}

func (l *Ledger) reserve(ctx context.Context, ch budget.Charge, limit budget.Budget) (*Reservation, error) {
	user, dataset, cost := ch.User, ch.Dataset, ch.Cost
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key, err := checkAccount(user, dataset)
	if err != nil {
		return nil, err
	}
	c, err := l.memo.exactOf(cost)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err,
			"the privacy cost of a query must be a finite number ≥ 0; change SET ddp.epsilon")
	}
	lim, err := l.memo.exactOf(limit)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, fmt.Sprintf(
			"the budget of dataset %s in the policy is not a finite number ≥ 0; ask the DBA to fix the policy", dataset))
	}
	r := &Reservation{User: user, Dataset: dataset, Cost: cost, l: l, accountKey: key, cost: c}
	now := l.now()
	err = l.writes.update(func(tx *bolt.Tx) error {
		// Waiting for the writer lock can take a while under load; a
		// client that gave up meanwhile must not be charged.
		if err := ctx.Err(); err != nil {
			return err
		}
		accts := tx.Bucket(bucketAccounts)
		a, err := l.memo.getAccount(accts, key)
		if err != nil {
			return err
		}
		spent := a.spent.add(c)
		if err := checkLimit(dataset, a.spent, c, spent, lim); err != nil {
			return err
		}
		a.spent = spent
		a.queries++
		a.lastCharge = now
		if err := l.memo.putAccount(tx, key, a); err != nil {
			return err
		}
		pb := tx.Bucket(bucketPending)
		id, err := pb.NextSequence()
		if err != nil {
			return err
		}
		v, err := pending{accountKey: key, cost: c, time: now, replica: l.replica}.encode()
		if err != nil {
			return err
		}
		if err := budgetPut(tx, bucketPending, idKey(id), v); err != nil {
			return err
		}
		r.record = v
		if err := putAudit(tx, id, auditOf(ch, key, c, now, l.replica)); err != nil {
			return err
		}
		r.ID = id
		r.Left = lim.sub(spent).clampZero().budget()
		return nil
	})
	if err != nil {
		var se *sqlerr.Error
		if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, sqlerr.Wrap(sqlerr.Internal, fmt.Errorf("ledger reserve: %w", err),
			"the privacy budget ledger is unavailable, so the query was not run; try again or ask the DBA")
	}
	l.log.Debug("budget reserved", "user", user, "dataset", dataset, "reservation", r.ID,
		"epsilon", cost.Epsilon, "delta", cost.Delta)
	return r, nil
}

// checkAccount validates the names and returns the account key.
func checkAccount(user, dataset string) ([]byte, error) {
	if user == "" || dataset == "" {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: budget charged without a user or dataset")
	}
	key := accountKey(user, dataset)
	if len(key) > bolt.MaxKeySize {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue,
			"user and dataset names are too long for the budget ledger (%d bytes at most together)", bolt.MaxKeySize-8)
	}
	return key, nil
}

// checkLimit returns the BudgetExhausted error when newSpent exceeds lim in
// ε or δ. The comparison is exact.
func checkLimit(dataset string, spent, cost, newSpent, lim exact) error {
	if newSpent.eps.Cmp(lim.eps) <= 0 && newSpent.delta.Cmp(lim.delta) <= 0 {
		return nil
	}
	left := lim.sub(spent).clampZero() // for the message only
	if newSpent.eps.Cmp(lim.eps) > 0 {
		return sqlerr.New(sqlerr.BudgetExhausted,
			"budget exhausted for dataset %s: %s ε left, this query needs %s; ask the DBA for more or lower SET ddp.epsilon",
			dataset, fmtRat(left.eps), fmtRat(cost.eps))
	}
	if newSpent.delta.Cmp(lim.delta) > 0 {
		return sqlerr.New(sqlerr.BudgetExhausted,
			"budget exhausted for dataset %s: %s δ left, this query needs %s; ask the DBA for more δ, or declare a domain for the GROUP BY columns so that no δ is needed",
			dataset, fmtRat(left.delta), fmtRat(cost.delta))
	}
	return nil
}

// Commit makes the charge final and stores release under cacheKey, in one
// fsynced transaction. It returns the release to send: normally release
// itself, but if an identical query (same cacheKey) committed first, the
// release stored then, so that every client sees the same answer and
// repeating a query cannot average the noise away. An empty cacheKey stores
// nothing (for answers that must not be reused).
//
// Only send after Commit returned nil. If Commit fails, the reservation stays
// charged (fail closed) and nothing may be sent; it cannot be committed or
// refunded again.
func (r *Reservation) Commit(cacheKey string, release []byte) ([]byte, error) {
	if len(cacheKey) > bolt.MaxKeySize {
		return nil, fmt.Errorf("ledger commit: cache key of %d bytes exceeds %d", len(cacheKey), bolt.MaxKeySize)
	}
	if cacheKey != "" && len(release) == 0 {
		// An empty value would be indistinguishable from a miss.
		return nil, errors.New("ledger commit: empty release")
	}
	out := release
	now := r.l.now()
	err := r.resolve(func(tx *bolt.Tx, a *account, p pending) error {
		a.committed = a.committed.add(p.cost)
		if cacheKey == "" {
			return nil
		}
		rb := tx.Bucket(bucketReleases)
		if prev := rb.Get([]byte(cacheKey)); prev != nil {
			out = append([]byte(nil), prev...)
			return nil
		}
		// bbolt may keep referencing the value until the transaction
		// ends; the caller's slice is not ours to pin.
		return r.l.putRelease(tx, []byte(cacheKey), append([]byte(nil), release...), now)
	})
	if err != nil {
		return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
	}
	r.l.log.Debug("budget committed", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	return out, nil
}

// Refund returns the reserved cost and forgets the reservation, in one
// fsynced transaction.
//
// PRIVACY: call Refund only when the failure cannot depend on private data:
// no backend connection, or the backend failed before the query started.
// Anything after execution began (timeout, runtime error, cancellation) must
// stay charged: a query that fails only for some data would otherwise probe
// the data for free (DESIGN.md, "Safety rules").
func (r *Reservation) Refund() error {
	now := r.l.now()
	err := r.resolve(func(tx *bolt.Tx, a *account, p pending) error {
		a.spent = a.spent.sub(p.cost)
		a.queries--
		if a.spent.negative() {
			return errors.New("refund would make the spent budget negative")
		}
		return markRefunded(tx, r.ID, now)
	})
	if err != nil {
		return fmt.Errorf("ledger refund reservation %d: %w", r.ID, err)
	}
	r.l.log.Debug("budget refunded", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	return nil
}

// CommitDeferred is Commit without waiting for an fsync: the charge was
// made durable by Reserve, so the answer may be sent as soon as this
// returns. The commit record (charge final, release stored under cacheKey)
// rides on the next durable ledger write — usually the next Reserve — or
// is committed by itself after Options.SettleDelay, so a fresh answer pays
// one fsync instead of two.
//
// A crash before the record is durable leaves the reservation pending:
// still charged (fail closed), and the release is forgotten, so a repeat
// of the query is charged again and drawn afresh. Lookup never serves a
// release that is not durable: it waits for the record first. The
// returned release follows Commit's rule (an identical query's durable
// release wins). Commit errors that show up only when the record is
// written are logged; the reservation then stays charged.
func (r *Reservation) CommitDeferred(cacheKey string, release []byte) ([]byte, error) {
	if len(cacheKey) > bolt.MaxKeySize {
		return nil, fmt.Errorf("ledger commit: cache key of %d bytes exceeds %d", len(cacheKey), bolt.MaxKeySize)
	}
	if cacheKey != "" && len(release) == 0 {
		return nil, errors.New("ledger commit: empty release")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil, ErrResolved
	}
	r.done = true
	l := r.l
	out := release
	store := cacheKey != ""
	if store {
		prev, err := l.settledRelease(cacheKey, true)
		if err != nil {
			return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
		}
		if prev != nil {
			// An identical query was released first: answer with it and
			// only settle the charge.
			out, store = prev, false
			l.relMu.Unlock()
		} else {
			l.unsettled[cacheKey]++
			l.relMu.Unlock()
		}
	}
	key := []byte(cacheKey)
	val := append([]byte(nil), release...)
	now := l.now()
	fn := r.resolveTx(func(tx *bolt.Tx, a *account, p pending) error {
		a.committed = a.committed.add(p.cost)
		if !store {
			return nil
		}
		rb := tx.Bucket(bucketReleases)
		if rb.Get(key) != nil {
			return nil
		}
		return l.putRelease(tx, key, val, now)
	})
	settled := func() {
		if store {
			l.relMu.Lock()
			if l.unsettled[cacheKey]--; l.unsettled[cacheKey] <= 0 {
				delete(l.unsettled, cacheKey)
			}
			l.relMu.Unlock()
		}
	}
	after := func(err error) {
		settled()
		if err != nil {
			l.log.Error("deferred commit failed; the reservation stays charged", "reservation", r.ID, "err", err)
			return
		}
		l.log.Debug("budget committed", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	}
	if err := l.writes.later(fn, after); err != nil {
		settled() // nothing was queued
		return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
	}
	return out, nil
}

// settledRelease returns the durable release stored under cacheKey (nil
// if none), first waiting for deferred commits of that key. It returns
// with l.relMu held when hold is set (and err is nil), so the caller can
// register a new deferred commit before anyone else looks.
func (l *Ledger) settledRelease(cacheKey string, hold bool) ([]byte, error) {
	l.relMu.Lock()
	for l.unsettled[cacheKey] > 0 {
		l.relMu.Unlock()
		if err := l.Sync(); err != nil {
			return nil, err
		}
		l.relMu.Lock()
	}
	var out []byte
	err := l.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketReleases).Get([]byte(cacheKey)); v != nil {
			// v lives in the mmap only for the transaction.
			out = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil || !hold {
		l.relMu.Unlock()
	}
	return out, err
}

// resolve runs the common part of Commit and Refund in one durable
// transaction. The reservation is spent once a transaction was attempted,
// whatever its outcome: a failed Commit must not be followed by a Refund.
func (r *Reservation) resolve(apply func(tx *bolt.Tx, a *account, p pending) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return ErrResolved
	}
	r.done = true
	return r.l.writes.update(r.resolveTx(apply))
}

// resolveTx is the transaction of a commit or refund: load and delete the
// pending record, let apply update the account, store it.
func (r *Reservation) resolveTx(apply func(tx *bolt.Tx, a *account, p pending) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		pb := tx.Bucket(bucketPending)
		id := idKey(r.ID)
		v := pb.Get(id)
		if v == nil {
			return errors.New("reservation is not pending")
		}
		// The record this reservation wrote, byte for byte: its key and
		// cost are then the reservation's own (no decoding).
		if !bytes.Equal(v, r.record) {
			return errors.New("stored reservation does not match")
		}
		p := pending{accountKey: r.accountKey, cost: r.cost}
		accts := tx.Bucket(bucketAccounts)
		a, err := r.l.memo.getAccount(accts, p.accountKey)
		if err != nil {
			return err
		}
		if err := apply(tx, &a, p); err != nil {
			return err
		}
		if err := budgetDelete(tx, bucketPending, id); err != nil {
			return err
		}
		return r.l.memo.putAccount(tx, p.accountKey, a)
	}
}
