package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// The embedded bbolt ledger is a release.Ledger.
var _ release.Ledger = (*ledger.Ledger)(nil)

// servedLedger is the ledger as serve holds it: what the release step
// and the sessions use, closed at shutdown.
type servedLedger interface {
	release.Ledger
	Close() error
}

// openLedger opens the ledger the policy names for serving. This is where
// another implementation of release.Ledger (a database shared by
// replicas) is chosen. onCommit (nil: none) is told about every write
// transaction of either ledger (the admin listener's metrics).
func openLedger(ctx context.Context, pol *policies.Policy, log *slog.Logger, onCommit func(writes int, took time.Duration)) (servedLedger, error) {
	if pol.Ledger.Driver == policies.LedgerPostgres {
		return openPGLedger(ctx, pol, log.With("component", "ledger"), onCommit)
	}
	led, err := ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log.With("component", "ledger"), Replica: pol.Ledger.Replica,
		OnCommit: onCommit, Retention: retentionOf(pol), Lease: pol.Ledger.Lease})
	if err != nil {
		return nil, fmt.Errorf("opening the budget ledger: %w", err)
	}
	if pend, err := led.Reservations(ctx); err == nil && len(pend) > 0 {
		log.Warn("reservations left by an earlier crash stay charged", "count", len(pend))
	}
	return led, nil
}

// retentionOf is the policy's ledger.retention in the ledger's units.
func retentionOf(pol *policies.Policy) ledger.Retention {
	r := pol.Ledger.Retention
	return ledger.Retention{MaxAge: time.Duration(r.MaxAgeHours) * time.Hour, MaxBytes: int64(r.MaxMegabytes) << 20}
}

// The PostgreSQL ledger, shared by replicas, is a release.Ledger too, and
// a release.Flighter: identical queries on several replicas are charged
// once.
var (
	_ release.Ledger   = (*pgledger.Ledger)(nil)
	_ release.Flighter = (*pgledger.Ledger)(nil)
	_ servedLedger     = (*pgledger.Ledger)(nil)
)

// openPGLedger opens the PostgreSQL ledger a policy names (driver
// postgres), as this replica; onCommit as for openLedger.
func openPGLedger(ctx context.Context, pol *policies.Policy, log *slog.Logger, onCommit func(writes int, took time.Duration)) (*pgledger.Ledger, error) {
	if missing := pol.MissingEnvOf("ledger.dsn"); len(missing) > 0 {
		// An offline load (budget, audit, ledger) leaves unset variables.
		// Only the DSN's own are named: the backend's and the passwords
		// are not needed to read the ledger.
		return nil, fmt.Errorf("ledger.dsn refers to environment variables that are not set (%s): export them first", strings.Join(missing, ", "))
	}
	replica := pol.Ledger.Replica
	if replica == "" {
		replica = ledger.DefaultReplica()
	}
	l, err := pgledger.Open(ctx, pol.Ledger.DSN, pgledger.Options{Schema: pol.Ledger.Schema, Replica: replica, Logger: log, OnCommit: onCommit})
	if err != nil {
		return nil, fmt.Errorf("opening the budget ledger (postgres, schema %s): %w", pol.Ledger.Schema, err)
	}
	return l, nil
}
