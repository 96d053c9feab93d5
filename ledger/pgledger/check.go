package pgledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/jackc/pgx/v5"
)

// Check verifies the budget invariants on one snapshot and returns every
// violation (nil when consistent): each account's spent equals, exactly,
// its committed total plus the cost of its pending reservations (of every
// replica); nothing is negative; no pending reservation lacks its
// account; an account has charged at least as many queries as it has
// pending. Tests run it after every test.
func (l *Ledger) Check(ctx context.Context) error {
	var errs []error
	err := pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		type sums struct {
			eps, delta *big.Rat
			n          int64
		}
		per := map[[2]string]*sums{}
		rows, err := tx.Query(ctx, l.sql.pending)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var user, dataset, e, d, replica string
			var created any
			if err := rows.Scan(&id, &user, &dataset, &e, &d, &replica, &created); err != nil {
				rows.Close()
				return err
			}
			pe, e1 := parseNumeric(e)
			pd, e2 := parseNumeric(d)
			if err := errors.Join(e1, e2); err != nil {
				errs = append(errs, fmt.Errorf("reservation %d: %w", id, err))
				continue
			}
			if pe.Sign() < 0 || pd.Sign() < 0 {
				errs = append(errs, fmt.Errorf("reservation %d: negative cost", id))
			}
			k := [2]string{user, dataset}
			s := per[k]
			if s == nil {
				s = &sums{new(big.Rat), new(big.Rat), 0}
				per[k] = s
			}
			s.eps.Add(s.eps, pe)
			s.delta.Add(s.delta, pd)
			s.n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, l.sql.accounts)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var user, dataset string
			a, err := scanAccount(rows, &user, &dataset)
			name := fmt.Sprintf("account %q/%q", user, dataset)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				continue
			}
			k := [2]string{user, dataset}
			s := per[k]
			delete(per, k)
			if s == nil {
				s = &sums{new(big.Rat), new(big.Rat), 0}
			}
			for _, r := range []*big.Rat{a.spentEps, a.spentDelta, a.committedEps, a.committedDelta} {
				if r.Sign() < 0 {
					errs = append(errs, fmt.Errorf("%s: negative spent or committed budget", name))
					break
				}
			}
			we, wd := addRat(a.committedEps, s.eps), addRat(a.committedDelta, s.delta)
			if a.spentEps.Cmp(we) != 0 || a.spentDelta.Cmp(wd) != 0 {
				errs = append(errs, fmt.Errorf("%s: spent (ε %s, δ %s) != committed + pending (ε %s, δ %s)",
					name, a.spentEps.RatString(), a.spentDelta.RatString(), we.RatString(), wd.RatString()))
			}
			if a.queries < s.n {
				errs = append(errs, fmt.Errorf("%s: %d queries charged but %d pending", name, a.queries, s.n))
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for k := range per {
			errs = append(errs, fmt.Errorf("pending reservations for missing account %q/%q", k[0], k[1]))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	return nil
}
