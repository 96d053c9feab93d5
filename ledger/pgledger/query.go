package pgledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
)

// accountRow is one decoded budgets row.
type accountRow struct {
	spentEps, spentDelta, committedEps, committedDelta *big.Rat
	queries                                            int64
	lastCharge                                         time.Time
}

func scanAccount(row pgx.Row, extra ...any) (accountRow, error) {
	var se, sd, ce, cd string
	var last *time.Time
	var a accountRow
	dest := append(extra, &se, &sd, &ce, &cd, &a.queries, &last)
	if err := row.Scan(dest...); err != nil {
		return accountRow{}, err
	}
	var errs [4]error
	a.spentEps, errs[0] = parseNumeric(se)
	a.spentDelta, errs[1] = parseNumeric(sd)
	a.committedEps, errs[2] = parseNumeric(ce)
	a.committedDelta, errs[3] = parseNumeric(cd)
	if last != nil {
		a.lastCharge = *last
	}
	return a, errors.Join(errs[:]...)
}

// account reads (user, dataset); found is false when it was never charged.
func (l *Ledger) account(ctx context.Context, user, dataset string) (a accountRow, found bool, err error) {
	a, err = scanAccount(l.pool.QueryRow(ctx, l.sql.account, user, dataset))
	if errors.Is(err, pgx.ErrNoRows) {
		z := new(big.Rat)
		return accountRow{spentEps: z, spentDelta: z, committedEps: z, committedDelta: z}, false, nil
	}
	return a, err == nil, err
}

// Lookup is Release without a context (the bbolt ledger's name).
func (l *Ledger) Lookup(cacheKey string) ([]byte, bool, error) {
	return l.Release(context.Background(), cacheKey)
}

// Spent returns what (user, dataset) has been charged, pending
// reservations included, rounded to float64 for display.
func (l *Ledger) Spent(user, dataset string) (budget.Budget, error) {
	a, err := l.Account(context.Background(), user, dataset)
	return a.Spent, err
}

// Left is Remaining without a context.
func (l *Ledger) Left(user, dataset string, limit budget.Budget) (budget.Budget, error) {
	return l.Remaining(context.Background(), user, dataset, limit)
}

// All returns every account, sorted by user then dataset (byte order).
func (l *Ledger) All() ([]ledger.Account, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	rows, err := l.pool.Query(ctx, l.sql.accounts)
	if err != nil {
		return nil, unavailable("accounts", err)
	}
	defer rows.Close()
	var out []ledger.Account
	for rows.Next() {
		var user, dataset string
		a, err := scanAccount(rows, &user, &dataset)
		if err != nil {
			return nil, fmt.Errorf("ledger accounts: %w", err)
		}
		out = append(out, ledger.Account{User: user, Dataset: dataset, Spent: budgetOf(a.spentEps, a.spentDelta),
			Queries: uint64(max(a.queries, 0)), LastCharge: a.lastCharge})
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("accounts", err)
	}
	return out, nil
}

// PendingReservation is a reservation neither committed nor refunded,
// with the replica that made it. Its charge stays whether that replica
// is running the query or died doing so.
type PendingReservation struct {
	ledger.PendingReservation
	Replica string
}

// Pending lists pending reservations of every replica by ID.
func (l *Ledger) Pending() ([]PendingReservation, error) {
	ps, err := l.pendingRows()
	if err != nil {
		return nil, err
	}
	out := make([]PendingReservation, len(ps))
	for i, p := range ps {
		out[i] = PendingReservation{ledger.PendingReservation{ID: uint64(p.id), User: p.user, Dataset: p.dataset,
			Cost: budgetOf(p.eps, p.delta), Time: p.created}, p.replica}
	}
	return out, nil
}

type pendingRow struct {
	id                     int64
	user, dataset, replica string
	eps, delta             *big.Rat
	created                time.Time
}

func (l *Ledger) pendingRows() ([]pendingRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	rows, err := l.pool.Query(ctx, l.sql.pending)
	if err != nil {
		return nil, unavailable("pending", err)
	}
	defer rows.Close()
	var out []pendingRow
	for rows.Next() {
		var p pendingRow
		var e, d string
		if err := rows.Scan(&p.id, &p.user, &p.dataset, &e, &d, &p.replica, &p.created); err != nil {
			return nil, fmt.Errorf("ledger pending: %w", err)
		}
		var e1, e2 error
		p.eps, e1 = parseNumeric(e)
		p.delta, e2 = parseNumeric(d)
		if err := errors.Join(e1, e2); err != nil {
			return nil, fmt.Errorf("ledger pending: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("pending", err)
	}
	return out, nil
}
