package pgledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/ledger"
)

// importedReplica names pending reservations that came from a dump without
// a replica (a bbolt ledger has one process, and no name for it).
const importedReplica = "imported"

// Export returns the whole ledger as a dump, read from one snapshot.
func (l *Ledger) Export(ctx context.Context) (*ledger.Dump, error) {
	d := &ledger.Dump{Format: ledger.DumpFormat, Version: ledger.DumpVersion}
	err := pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, l.sql.accounts)
		if err != nil {
			return err
		}
		for rows.Next() {
			var user, dataset string
			a, err := scanAccount(rows, &user, &dataset)
			if err != nil {
				rows.Close()
				return err
			}
			d.Accounts = append(d.Accounts, ledger.DumpAccount{User: user, Dataset: dataset,
				SpentEpsilon: a.spentEps.RatString(), SpentDelta: a.spentDelta.RatString(),
				CommittedEpsilon: a.committedEps.RatString(), CommittedDelta: a.committedDelta.RatString(),
				Queries: uint64(max(a.queries, 0)), LastCharge: a.lastCharge})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, l.sql.pending)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p ledger.DumpPending
			var id int64
			if err := rows.Scan(&id, &p.User, &p.Dataset, &p.Epsilon, &p.Delta, &p.Replica, &p.Time); err != nil {
				rows.Close()
				return err
			}
			p.ID = uint64(id)
			d.Pending = append(d.Pending, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, fmt.Sprintf(`SELECT cache_key, data FROM %s.releases ORDER BY cache_key`, l.schema))
		if err != nil {
			return err
		}
		for rows.Next() {
			var r ledger.DumpRelease
			if err := rows.Scan(&r.Key, &r.Data); err != nil {
				rows.Close()
				return err
			}
			d.Releases = append(d.Releases, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, fmt.Sprintf(`SELECT reservation, charged, user_name, dataset, epsilon::text, delta::text, fingerprint, query, release, replica, refunded
  FROM %s.audit ORDER BY reservation`, l.schema))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a ledger.DumpAudit
			var id int64
			var refunded *time.Time
			if err := rows.Scan(&id, &a.Time, &a.User, &a.Dataset, &a.Epsilon, &a.Delta, &a.Fingerprint, &a.Query, &a.Release, &a.Replica, &refunded); err != nil {
				return err
			}
			a.Reservation = uint64(id)
			if refunded != nil {
				a.Refunded = *refunded
			}
			d.Audit = append(d.Audit, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("ledger export: %w", err)
	}
	return d, nil
}

// Import writes a dump into an empty ledger in one transaction (so a
// failure leaves it empty), and refuses a ledger that holds anything.
// Pending reservations stay pending, under their replica's name.
func (l *Ledger) Import(ctx context.Context, d *ledger.Dump) error {
	if err := d.Check(); err != nil {
		return fmt.Errorf("ledger import: %w", err)
	}
	num := func(s string) (string, error) {
		r, _ := new(big.Rat).SetString(s) // checked by d.Check
		return ratText(r)
	}
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		// Nobody may charge while the ledger is filled.
		if _, err := tx.Exec(ctx, fmt.Sprintf(`LOCK TABLE %[1]s.budgets, %[1]s.pending, %[1]s.releases IN EXCLUSIVE MODE`, l.schema)); err != nil {
			return err
		}
		var busy bool
		if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %[1]s.budgets) OR EXISTS (SELECT 1 FROM %[1]s.pending) OR EXISTS (SELECT 1 FROM %[1]s.releases) OR EXISTS (SELECT 1 FROM %[1]s.audit)`, l.schema)).Scan(&busy); err != nil {
			return err
		}
		if busy {
			return errors.New("the ledger is not empty; import only into a new ledger (a new ledger.schema)")
		}
		for _, a := range d.Accounts {
			if err := checkNames(a.User, a.Dataset); err != nil {
				return err
			}
			var vals [4]string
			for i, s := range []string{a.SpentEpsilon, a.SpentDelta, a.CommittedEpsilon, a.CommittedDelta} {
				v, err := num(s)
				if err != nil {
					return fmt.Errorf("account %q/%q: %w", a.User, a.Dataset, err)
				}
				vals[i] = v
			}
			var last *time.Time
			if !a.LastCharge.IsZero() {
				last = &a.LastCharge
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.budgets (user_name, dataset, spent_epsilon, spent_delta, committed_epsilon, committed_delta, queries, last_charge)
VALUES ($1, $2, $3::numeric, $4::numeric, $5::numeric, $6::numeric, $7, $8)`, l.schema),
				a.User, a.Dataset, vals[0], vals[1], vals[2], vals[3], int64(a.Queries), last); err != nil {
				return err
			}
		}
		for _, p := range d.Pending {
			e, err := num(p.Epsilon)
			if err != nil {
				return fmt.Errorf("reservation %d: %w", p.ID, err)
			}
			dl, err := num(p.Delta)
			if err != nil {
				return fmt.Errorf("reservation %d: %w", p.ID, err)
			}
			replica := p.Replica
			if replica == "" {
				replica = importedReplica
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.pending (id, user_name, dataset, epsilon, delta, replica, created)
VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6, $7)`, l.schema), int64(p.ID), p.User, p.Dataset, e, dl, replica, p.Time); err != nil {
				return err
			}
		}
		for _, a := range d.Audit {
			e, err := num(a.Epsilon)
			if err != nil {
				return fmt.Errorf("audit entry %d: %w", a.Reservation, err)
			}
			dl, err := num(a.Delta)
			if err != nil {
				return fmt.Errorf("audit entry %d: %w", a.Reservation, err)
			}
			if err := checkNames(a.User, a.Dataset); err != nil {
				return err
			}
			var refunded *time.Time
			if !a.Refunded.IsZero() {
				refunded = &a.Refunded
			}
			replica := a.Replica
			if replica == "" {
				replica = importedReplica
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.audit (reservation, charged, user_name, dataset, epsilon, delta, fingerprint, query, release, replica, refunded)
VALUES ($1, $2, $3, $4, $5::numeric, $6::numeric, $7, $8, $9, $10, $11)`, l.schema),
				int64(a.Reservation), a.Time, a.User, a.Dataset, e, dl, auditText(a.Fingerprint), auditText(a.Query), auditText(a.Release), replica, refunded); err != nil {
				return err
			}
		}
		// New reservation ids continue after the imported ones (pending
		// and audit entries are keyed by them).
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%[1]s.pending', 'id'),
	GREATEST((SELECT max(id) FROM %[1]s.pending), (SELECT max(reservation) FROM %[1]s.audit), 1))`, l.schema)); err != nil {
			return err
		}
		for _, r := range d.Releases {
			if _, err := tx.Exec(ctx, l.sql.publish, r.Key, r.Data, importedReplica, l.now().UTC()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger import: %w", err)
	}
	return l.Check(ctx)
}
