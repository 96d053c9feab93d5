package pgledger

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// Release returns the release published under cacheKey, if any.
func (l *Ledger) Release(ctx context.Context, cacheKey string) ([]byte, bool, error) {
	if cacheKey == "" {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	var out []byte
	err := l.pool.QueryRow(ctx, l.sql.lookup, []byte(cacheKey)).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable("lookup", err)
	}
	return out, true, nil
}

// Account returns (user, dataset)'s spent budget (zero if never charged).
func (l *Ledger) Account(ctx context.Context, user, dataset string) (budget.Account, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	a, _, err := l.account(ctx, user, dataset)
	if err != nil {
		return budget.Account{}, unavailable("account", err)
	}
	return budget.Account{User: user, Dataset: dataset, Spent: budgetOf(a.spentEps, a.spentDelta),
		Queries: uint64(max(a.queries, 0)), LastCharge: a.lastCharge}, nil
}

// Remaining returns what is left of limit for (user, dataset), exactly
// computed, never negative.
func (l *Ledger) Remaining(ctx context.Context, user, dataset string, limit budget.Budget) (budget.Budget, error) {
	lim, err := pairOf(limit)
	if err != nil {
		return budget.Budget{}, fmt.Errorf("ledger remaining: limit: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	a, _, err := l.account(ctx, user, dataset)
	if err != nil {
		return budget.Budget{}, unavailable("remaining", err)
	}
	return leftOf(lim, a.spentEps, a.spentDelta), nil
}

// Accounts lists every account by user then dataset.
func (l *Ledger) Accounts(ctx context.Context) ([]budget.Account, error) {
	return l.All()
}

// Reservations lists the pending reservations of every replica.
func (l *Ledger) Reservations(ctx context.Context) ([]budget.Pending, error) {
	ps, err := l.pendingRows()
	if err != nil {
		return nil, err
	}
	out := make([]budget.Pending, len(ps))
	for i, p := range ps {
		out[i] = budget.Pending{ID: uint64(p.id), User: p.user, Dataset: p.dataset,
			Cost: budgetOf(p.eps, p.delta), Time: p.created, Replica: p.replica}
	}
	return out, nil
}

// auditPage is how many entries one statement reads.
const auditPage = 512

// Audit calls fn for every entry f selects, in charge order, until fn
// returns an error (returned as is).
//
// The pages are read in one REPEATABLE READ transaction: reservations
// commit out of id order (an id is drawn when the reservation statement
// starts, the row appears when it commits), so pages read one statement
// each would advance past an id still in flight and skip its charge for
// good while listing later ones. The transaction runs on a connection of
// its own, opened for this read, so that a slow reader (fn runs between
// pages) holds no connection the reservations need.
func (l *Ledger) Audit(ctx context.Context, f budget.AuditFilter, fn func(budget.AuditEntry) error) error {
	var since *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	conn, err := pgx.ConnectConfig(cctx, l.pool.Config().ConnConfig)
	cancel()
	if err != nil {
		return l.failure(ctx, "audit", err)
	}
	defer conn.Close(context.Background())
	bctx, cancel := context.WithTimeout(ctx, l.timeout)
	tx, err := conn.BeginTx(bctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	cancel()
	if err != nil {
		return l.failure(ctx, "audit", err)
	}
	defer tx.Rollback(context.Background())
	after := int64(0)
	for {
		page, err := l.auditPage(ctx, tx, after, f, since)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(page) < auditPage {
			return nil
		}
		after = int64(page[len(page)-1].Reservation)
	}
}

func (l *Ledger) auditPage(ctx context.Context, tx pgx.Tx, after int64, f budget.AuditFilter, since *time.Time) ([]budget.AuditEntry, error) {
	qctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	rows, err := tx.Query(qctx, l.sql.audit, after, f.User, f.Dataset, since, auditPage)
	if err != nil {
		return nil, l.failure(ctx, "audit", err)
	}
	defer rows.Close()
	var page []budget.AuditEntry
	for rows.Next() {
		var e budget.AuditEntry
		var id int64
		var eps, delta string
		var refunded *time.Time
		if err := rows.Scan(&id, &e.Time, &e.User, &e.Dataset, &eps, &delta, &e.Fingerprint, &e.Query, &e.Release, &e.Replica, &refunded); err != nil {
			return nil, fmt.Errorf("ledger audit: %w", err)
		}
		re, e1 := parseNumeric(eps)
		rd, e2 := parseNumeric(delta)
		if err := errors.Join(e1, e2); err != nil {
			return nil, fmt.Errorf("ledger audit: %w", err)
		}
		e.Reservation, e.Cost = uint64(id), budgetOf(re, rd)
		if refunded != nil {
			e.Refunded = *refunded
		}
		page = append(page, e)
	}
	if err := rows.Err(); err != nil {
		return nil, l.failure(ctx, "audit", err)
	}
	return page, nil
}
