package pgledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/internal/ctxend"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// maxNameBytes bounds user plus dataset names, as the bbolt ledger's key
// size does, so that a dump moves between the two.
const maxNameBytes = 32 << 10

// Reservation is a durable charge waiting for its answer. It is one-shot:
// exactly one Commit, CommitDeferred or Refund takes effect.
type Reservation struct {
	ID      uint64
	User    string
	Dataset string
	// Cost is what was charged; Left what remains of the limit after it.
	Cost budget.Budget
	Left budget.Budget

	l    *Ledger
	cost pair

	mu   sync.Mutex
	done bool
}

// Reserve charges cost to (user, dataset); see Charge.
func (l *Ledger) Reserve(ctx context.Context, user, dataset string, cost, limit budget.Budget) (*Reservation, error) {
	return l.reserve(ctx, budget.Charge{User: user, Dataset: dataset, Cost: cost}, limit)
}

// Charge charges c.Cost to (c.User, c.Dataset) if the total spent stays
// within limit for both ε and δ, records a pending reservation naming
// this replica and the charge's audit entry, in one statement committed
// before it returns. If the budget would be exceeded, nothing is charged
// and the error is a *sqlerr.Error with code BudgetExhausted; if the
// ledger database cannot be reached it is LedgerUnavailable (08006) and
// the caller must run nothing.
func (l *Ledger) Charge(ctx context.Context, c budget.Charge, limit budget.Budget) (budget.Reservation, error) {
	r, err := l.reserve(ctx, c, limit)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (l *Ledger) reserve(ctx context.Context, ch budget.Charge, limit budget.Budget) (*Reservation, error) {
	user, dataset, cost := ch.User, ch.Dataset, ch.Cost
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkNames(user, dataset); err != nil {
		return nil, err
	}
	c, err := pairOf(cost)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err,
			"the privacy cost of a query must be a finite number ≥ 0; change SET ddp.epsilon")
	}
	lim, err := pairOf(limit)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.Internal, err, fmt.Sprintf(
			"the budget of dataset %s in the policy is not a finite number ≥ 0; ask the DBA to fix the policy", dataset))
	}
	octx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	// Three attempts: a missing account row is created between the first
	// two, and a refund racing the budget check may free room once.
	for range 3 {
		r, err := l.tryReserve(ctx, octx, ch, c, lim)
		if err != nil || r != nil {
			return r, err
		}
		a, found, err := l.account(octx, user, dataset)
		if err != nil {
			return nil, l.failure(ctx, "reserve", err)
		}
		if !found {
			if _, err := l.pool.Exec(octx, l.sql.ensureAccount, user, dataset); err != nil {
				return nil, l.failure(ctx, "reserve", err)
			}
			continue
		}
		if err := checkLimit(dataset, a, c, lim); err != nil {
			return nil, err
		}
	}
	return nil, sqlerr.New(sqlerr.Internal, "the privacy budget ledger is too busy to charge this query; try again")
}

// tryReserve runs the reservation statement: a reservation, or nil when
// the conditional UPDATE matched no row (no account, or over the limit).
// ctx is the caller's (its end is reported as such), octx bounds the
// statement.
func (l *Ledger) tryReserve(ctx, octx context.Context, ch budget.Charge, c, lim pair) (*Reservation, error) {
	user, dataset := ch.User, ch.Dataset
	var id int64
	var se, sd string
	start := time.Now()
	err := l.pool.QueryRow(octx, l.sql.reserve, user, dataset, c.eps.text, c.delta.text,
		lim.eps.text, lim.delta.text, l.replica, l.now().UTC(),
		auditText(ch.Fingerprint), auditText(ch.Query), auditText(ch.Release)).Scan(&id, &se, &sd)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, l.failure(ctx, "reserve", err)
	}
	l.committed(start)
	spentEps, e1 := parseNumeric(se)
	spentDelta, e2 := parseNumeric(sd)
	if err := errors.Join(e1, e2); err != nil {
		// Charged, but unreadable: stays charged, nothing runs.
		return nil, sqlerr.Wrap(sqlerr.Internal, err, "the privacy budget ledger returned an unreadable total; the query was not run")
	}
	r := &Reservation{ID: uint64(id), User: user, Dataset: dataset, l: l, cost: c,
		Cost: budgetOf(c.eps.rat, c.delta.rat), Left: leftOf(lim, spentEps, spentDelta)}
	l.log.Debug("budget reserved", "user", user, "dataset", dataset, "reservation", r.ID, "replica", l.replica)
	return r, nil
}

// failure words a database error for the client, or returns the caller's
// own cancellation unchanged.
func (l *Ledger) failure(ctx context.Context, op string, err error) error {
	if cerr := ctxend.Err(ctx); cerr != nil {
		return cerr
	}
	return unavailable(op, err)
}

// checkNames refuses names PostgreSQL text cannot hold (a NUL byte,
// invalid UTF-8) or that would not fit the bbolt ledger after a migration.
func checkNames(user, dataset string) error {
	if user == "" || dataset == "" {
		return sqlerr.New(sqlerr.Internal, "internal error: budget charged without a user or dataset")
	}
	for _, s := range []string{user, dataset} {
		if !utf8.ValidString(s) || containsNUL(s) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "user and dataset names in the budget ledger must be UTF-8 text without NUL bytes")
		}
	}
	if len(user)+len(dataset) > maxNameBytes {
		return sqlerr.New(sqlerr.InvalidParameterValue, "user and dataset names are too long for the budget ledger (%d bytes at most together)", maxNameBytes)
	}
	return nil
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// checkLimit returns BudgetExhausted when spent + cost exceeds the limit in
// ε or δ (exactly), the words the bbolt ledger uses; nil when it now fits
// (a refund freed room since the UPDATE looked).
func checkLimit(dataset string, a accountRow, c, lim pair) error {
	left := func(limit, spent *big.Rat) string { return fmtRat(clampSub(limit, spent)) }
	if sum := addRat(a.spentEps, c.eps.rat); sum.Cmp(lim.eps.rat) > 0 {
		return sqlerr.New(sqlerr.BudgetExhausted,
			"budget exhausted for dataset %s: %s ε left, this query needs %s; ask the DBA for more or lower SET ddp.epsilon",
			dataset, left(lim.eps.rat, a.spentEps), fmtRat(c.eps.rat))
	}
	if sum := addRat(a.spentDelta, c.delta.rat); sum.Cmp(lim.delta.rat) > 0 {
		return sqlerr.New(sqlerr.BudgetExhausted,
			"budget exhausted for dataset %s: %s δ left, this query needs %s; ask the DBA for more δ, or declare a domain for the GROUP BY columns so that no δ is needed",
			dataset, left(lim.delta.rat, a.spentDelta), fmtRat(c.delta.rat))
	}
	return nil
}

// Commit makes the charge final and publishes release under cacheKey
// first-writer-wins, in one transaction. It returns the release to send:
// release itself, or the one an identical query published first (on any
// replica). An empty cacheKey publishes nothing. If Commit fails, the
// reservation stays charged and nothing may be sent.
func (r *Reservation) Commit(cacheKey string, release []byte) ([]byte, error) {
	if cacheKey != "" && len(release) == 0 {
		return nil, errors.New("ledger commit: empty release")
	}
	if err := r.claim(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.l.timeout)
	defer cancel()
	l := r.l
	var key []byte // NULL: publish nothing
	if cacheKey != "" {
		key = []byte(cacheKey)
	}
	var settled, stored int64
	start := time.Now()
	err := l.pool.QueryRow(ctx, l.sql.commit, int64(r.ID), l.replica, r.cost.eps.text, r.cost.delta.text,
		key, release, l.now().UTC()).Scan(&settled, &stored)
	if err == nil && settled != 1 {
		err = errNotPending
	}
	if err == nil {
		l.committed(start)
	}
	out := release
	if err == nil && key != nil && stored == 0 {
		// An identical query published first. This new statement sees
		// its committed row; the INSERT waited for it if it was not.
		err = l.pool.QueryRow(ctx, l.sql.readRelease, key).Scan(&out)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger commit reservation %d: %w", r.ID, unavailable("commit", err))
	}
	l.log.Debug("budget committed", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	return out, nil
}

// CommitDeferred is Commit: a PostgreSQL commit is one WAL flush, and the
// release must be visible to the other replicas before the answer leaves,
// so there is nothing to defer.
func (r *Reservation) CommitDeferred(cacheKey string, release []byte) ([]byte, error) {
	return r.Commit(cacheKey, release)
}

// Refund returns the reserved cost and forgets the reservation.
//
// PRIVACY: only for failures that cannot depend on private data (no
// backend connection, backend down before the query ran); see
// ledger.Reservation.Refund.
func (r *Reservation) Refund() error {
	if err := r.claim(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.l.timeout)
	defer cancel()
	var settled int64
	start := time.Now()
	err := r.l.pool.QueryRow(ctx, r.l.sql.refund, int64(r.ID), r.l.replica, r.cost.eps.text, r.cost.delta.text,
		r.l.now().UTC()).Scan(&settled)
	if err == nil && settled != 1 {
		err = errNotPending
	}
	if err != nil {
		return fmt.Errorf("ledger refund reservation %d: %w", r.ID, unavailable("refund", err))
	}
	r.l.committed(start)
	r.l.log.Debug("budget refunded", "user", r.User, "dataset", r.Dataset, "reservation", r.ID)
	return nil
}

// committed reports one ledger-changing statement that began at start
// and has committed (Options.OnCommit). A statement that changed nothing
// (a reservation over the limit, a commit of a reservation no longer
// pending) is not reported: it flushed no WAL.
func (l *Ledger) committed(start time.Time) {
	if l.onCommit != nil {
		l.onCommit(1, time.Since(start))
	}
}

// errNotPending: the reservation's pending row is gone, belongs to another
// replica or does not match; nothing was changed.
var errNotPending = errors.New("reservation is not pending")

// claim marks the reservation resolved. The first attempt spends it,
// whatever its outcome: a failed Commit must not be followed by a Refund.
func (r *Reservation) claim() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return ledger.ErrResolved
	}
	r.done = true
	return nil
}

// maxAuditText caps the query text kept per audit entry, as the bbolt
// ledger does: a longer text is cut on a rune boundary and marked.
const maxAuditText = 16 << 10

// auditText makes s storable as PostgreSQL text (valid UTF-8, no NUL) and
// cuts it to maxAuditText.
func auditText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	if len(s) > maxAuditText {
		cut := maxAuditText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… [%d bytes cut]", len(s)-cut)
	}
	return s
}
