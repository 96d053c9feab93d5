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
	// record is the pending record as logged.
	record []byte
	// logged is the log group of the charge (see durable).
	logged *flush

	mu   sync.Mutex
	done bool
}

// Reserve durably charges cost to (user, dataset): Charge without the
// query's audit details (for tests and tools; serving code charges
// through Charge, the release.Ledger method).
func (l *Ledger) Reserve(ctx context.Context, user, dataset string, cost, limit budget.Budget) (*Reservation, error) {
	return l.reserve(ctx, budget.Charge{User: user, Dataset: dataset, Cost: cost}, limit, false)
}

// Charge durably charges c.Cost to (c.User, c.Dataset) if the total spent
// stays within limit for both ε and δ, records a pending reservation and
// the charge's audit entry (audit.go), all in one log record. When the
// log is fsynced and Charge returns, the charge survives any crash. With
// c.Overlap, Charge returns once the charge is decided and its log write
// has started; Commit and CommitDeferred wait for that write.
//
// If the budget would be exceeded, Charge charges nothing and returns a
// *sqlerr.Error with code sqlerr.BudgetExhausted that says what is left and
// what was asked. Costs and limits must be finite and ≥ 0; they are read as
// exact decimals (see budget.ExactDecimal).
func (l *Ledger) Charge(ctx context.Context, c budget.Charge, limit budget.Budget) (budget.Reservation, error) {
	r, err := l.reserve(ctx, c, limit, c.Overlap)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return r, nil
}

func (l *Ledger) reserve(ctx context.Context, ch budget.Charge, limit budget.Budget, early bool) (*Reservation, error) {
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
	// The records are encoded before the decision: no work under the lock
	// that does not need it.
	dec := &pending{accountKey: key, cost: c, time: now, replica: l.replica}
	pend, err := dec.encode()
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, fmt.Errorf("ledger reserve: %w", err), "internal error: the charge could not be recorded")
	}
	audit, err := auditOf(ch, key, c, now, l.replica).encode()
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, fmt.Errorf("ledger reserve: %w", err), "internal error: the charge could not be recorded")
	}
	st := &l.state
	st.mu.Lock()
	a, err := l.loadAccount(key)
	if err != nil {
		st.mu.Unlock()
		return nil, unavailable(fmt.Errorf("ledger reserve: %w", err))
	}
	ls := st.leases[string(key)]
	was := used(a, ls)
	usedNow := was.add(c)
	if err := checkLimit(dataset, was, c, usedNow, lim); err != nil {
		st.mu.Unlock()
		return nil, err
	}
	rec := &logRecord{kind: logReserve, time: now, pending: pend, audit: audit, decoded: dec}
	n := syncNow
	if l.leaseFrac != nil && !st.noLeases {
		if !ls.fits(c) {
			if ls, err = l.takeLease(key, a, leaseSize(l.leaseFrac, c, usedNow, lim), now); err != nil {
				st.mu.Unlock()
				return nil, unavailable(fmt.Errorf("ledger reserve: %w", err))
			}
		}
		rec.kind, rec.lease, n = logCarve, ls.id, written
	}
	rec.id = st.seq + 1
	g, err := l.wal.append(rec, n)
	if err != nil {
		st.mu.Unlock()
		return nil, unavailable(fmt.Errorf("ledger reserve: %w", err))
	}
	// Decided and logged: from here the charge stands in memory whatever
	// happens to the log write (fail closed).
	st.seq = rec.id
	if rec.kind == logCarve {
		ls.left = ls.left.sub(c) // spent has it since the lease
	} else {
		a.spent = a.spent.add(c)
	}
	a.queries++
	a.lastCharge = now
	r.ID, r.record = rec.id, pend
	r.Left = lim.sub(usedNow).clampZero().budget()
	st.mu.Unlock()
	r.logged = g
	if !early {
		if err := r.durable(); err != nil {
			return nil, err
		}
	}
	l.log.Debug("budget reserved", "user", user, "dataset", dataset, "reservation", r.ID,
		"epsilon", cost.Epsilon, "delta", cost.Delta)
	return r, nil
}

// unavailable is the error of a ledger that cannot record a charge.
func unavailable(err error) error {
	return sqlerr.Wrap(sqlerr.Internal, err,
		"the privacy budget ledger is unavailable, so the query was not run; try again or ask the DBA")
}

// durable waits until the reservation's charge is in the log on disk.
// Every way of settling it except Refund waits for it first: nothing the
// caller sends after settling may leave before the charge is durable.
func (r *Reservation) durable() error {
	g := r.logged
	if g == nil {
		return nil
	}
	if err := g.wait(); err != nil {
		return unavailable(fmt.Errorf("ledger reserve: %w", err))
	}
	return nil
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

// Commit makes the charge final and stores release under cacheKey,
// durably (its log record is fsynced before Commit returns). It returns
// the release to send: normally release itself, but if an identical query
// (same cacheKey) committed first, the release stored then, so that every
// client sees the same answer and repeating a query cannot average the
// noise away. An empty cacheKey stores nothing (for answers that must not
// be reused).
//
// Only send after Commit returned nil. If Commit fails, the reservation stays
// charged (fail closed) and nothing may be sent; it cannot be committed or
// refunded again.
func (r *Reservation) Commit(cacheKey string, release []byte) ([]byte, error) {
	return r.commit(cacheKey, release, true)
}

// CommitDeferred is Commit without waiting for its own record to be
// durable: the charge is (CommitDeferred waits for it when the reservation
// was made with budget.Charge.Overlap), so the answer may be sent as soon as this
// returns. The record (charge final, release stored under cacheKey) rides
// with the next group of log writes — usually the next charge's — or is
// written by itself after Options.SettleDelay, so a fresh answer pays one
// fsync, shared with concurrent charges.
//
// A crash before the record is durable leaves the reservation pending —
// still charged (fail closed) — and the release is forgotten, so a repeat
// of the query is charged again and drawn afresh. Lookup never serves a
// release that is not durable: it waits for the record first. The
// returned release follows Commit's rule (an identical query's release
// wins).
func (r *Reservation) CommitDeferred(cacheKey string, release []byte) ([]byte, error) {
	return r.commit(cacheKey, release, false)
}

func (r *Reservation) commit(cacheKey string, release []byte, wait bool) ([]byte, error) {
	if len(cacheKey) > bolt.MaxKeySize {
		return nil, fmt.Errorf("ledger commit: cache key of %d bytes exceeds %d", len(cacheKey), bolt.MaxKeySize)
	}
	if cacheKey != "" && len(release) == 0 {
		// An empty value would be indistinguishable from a miss.
		return nil, errors.New("ledger commit: empty release")
	}
	if err := r.take(); err != nil {
		return nil, err
	}
	if err := r.durable(); err != nil {
		return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
	}
	l := r.l
	out := release
	rec := &logRecord{kind: logCommit, id: r.ID, time: l.now()}
	st := &l.state
	st.mu.Lock()
	a, err := l.loadAccount(r.accountKey)
	var prev []byte
	var prevLSN uint64
	if err == nil {
		prev, prevLSN, err = l.storedRelease(cacheKey)
	}
	if cacheKey != "" && err == nil && prev == nil {
		rec.key, rec.release = []byte(cacheKey), bytes.Clone(release)
	}
	var g *flush
	if err == nil {
		n := deferred
		if wait {
			n = syncNow
		}
		g, err = l.wal.append(rec, n)
	}
	if err != nil {
		st.mu.Unlock()
		return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
	}
	a.committed = a.committed.add(r.cost)
	if rec.key != nil {
		st.releases[cacheKey] = logged{data: rec.release, lsn: rec.lsn}
	}
	st.mu.Unlock()
	if prev != nil {
		// An identical query was released first: answer with it, once
		// it is durable (its record precedes ours in the log).
		out = prev
		if err := l.wal.syncDurable(prevLSN); err != nil {
			return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
		}
	}
	if wait {
		if err := g.wait(); err != nil {
			return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, err)
		}
	}
	l.log.Debug("budget committed", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	return out, nil
}

// Refund returns the reserved cost and forgets the reservation; the
// refund is durable when it returns.
//
// PRIVACY: call Refund only when the failure cannot depend on private data:
// no backend connection, or the backend failed before the query started.
// Anything after execution began (timeout, runtime error, cancellation) must
// stay charged: a query that fails only for some data would otherwise probe
// the data for free (DESIGN.md, "Safety rules").
func (r *Reservation) Refund() error {
	if err := r.take(); err != nil {
		return err
	}
	l := r.l
	st := &l.state
	st.mu.Lock()
	a, err := l.loadAccount(r.accountKey)
	if err != nil {
		st.mu.Unlock()
		return fmt.Errorf("ledger refund reservation %d: %w", r.ID, err)
	}
	spent := a.spent.sub(r.cost)
	if spent.negative() {
		st.mu.Unlock()
		return fmt.Errorf("ledger refund reservation %d: refund would make the spent budget negative", r.ID)
	}
	g, err := l.wal.append(&logRecord{kind: logRefund, id: r.ID, time: l.now()}, syncNow)
	if err != nil {
		st.mu.Unlock()
		return fmt.Errorf("ledger refund reservation %d: %w", r.ID, err)
	}
	a.spent = spent
	a.queries--
	st.mu.Unlock()
	if err := g.wait(); err != nil {
		return fmt.Errorf("ledger refund reservation %d: %w", r.ID, err)
	}
	l.log.Debug("budget refunded", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	return nil
}

// take spends the reservation's one settlement: whatever the outcome of
// the attempt, a failed Commit must not be followed by a Refund.
func (r *Reservation) take() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return ErrResolved
	}
	r.done = true
	return nil
}

// settledRelease returns the durable release stored under cacheKey (nil
// if none), first waiting for its log record to be durable.
func (l *Ledger) settledRelease(cacheKey string) ([]byte, error) {
	return l.settledReleaseAfter(cacheKey, false)
}

// settledReleaseAfter is settledRelease; checkpointed says a checkpoint
// already ran for this lookup, so a release still only in the log then
// means no checkpoint can move it (the ledger is closing).
func (l *Ledger) settledReleaseAfter(cacheKey string, checkpointed bool) ([]byte, error) {
	l.state.mu.Lock()
	r, ok := l.state.releases[cacheKey]
	l.state.mu.Unlock()
	out, lsn := r.data, r.lsn
	if !ok {
		// Not in the log since the last checkpoint: in the file or
		// nowhere. Read outside the state's lock (cached answers must
		// not queue behind charges); a release a checkpoint moves into
		// the file meanwhile was committed after this lookup began.
		var err error
		if out, err = l.fileRelease(cacheKey); err != nil {
			return nil, err
		}
	}
	if lsn > 0 && l.retention.MaxBytes > 0 {
		// The bytes bound is applied as releases reach the bbolt file:
		// get it there first, so a release the bound evicts is never
		// served.
		if checkpointed {
			return nil, errClosed
		}
		if err := l.checkpoint(); err != nil {
			return nil, err
		}
		return l.settledReleaseAfter(cacheKey, true)
	}
	if lsn > 0 {
		if err := l.wal.syncDurable(lsn); err != nil {
			return nil, err
		}
	}
	return out, nil
}
