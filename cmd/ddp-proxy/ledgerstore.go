package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// ledgerStore is an open budget ledger of either driver.
type ledgerStore interface {
	release.Ledger
	Close() error
}

// bboltStore adapts the embedded ledger to release.Ledger.
type bboltStore struct{ *ledger.Ledger }

func (b bboltStore) Reserve(ctx context.Context, user, dataset string, cost, limit policies.Budget) (release.Reservation, error) {
	r, err := b.Ledger.Reserve(ctx, user, dataset, cost, limit)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// pgStore adapts the PostgreSQL ledger to release.Ledger; its Flight makes
// it a release.Flighter.
type pgStore struct{ *pgledger.Ledger }

func (p pgStore) Reserve(ctx context.Context, user, dataset string, cost, limit policies.Budget) (release.Reservation, error) {
	r, err := p.Ledger.Reserve(ctx, user, dataset, cost, limit)
	if err != nil {
		return nil, err
	}
	return r, nil
}

var (
	_ release.Flighter = pgStore{}
	_ ledgerStore      = pgStore{}
	_ ledgerStore      = bboltStore{}
)

// openLedgerStore opens the ledger the policy names: the bbolt file, or
// the PostgreSQL ledger shared by replicas.
func openLedgerStore(ctx context.Context, pol *policies.Policy, log *slog.Logger) (ledgerStore, error) {
	if pol.Ledger.Driver == policies.LedgerPostgres {
		l, err := pgledger.Open(ctx, pol.Ledger.DSN, pgledger.Options{Schema: pol.Ledger.Schema, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("opening the budget ledger (postgres, schema %s): %w", pol.Ledger.Schema, err)
		}
		return pgStore{l}, nil
	}
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("opening the budget ledger: %w", err)
	}
	return bboltStore{l}, nil
}
