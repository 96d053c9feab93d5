package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ledger"
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
// transaction (the admin listener's metrics).
func openLedger(ctx context.Context, pol *policies.Policy, log *slog.Logger, onCommit func(writes int, took time.Duration)) (servedLedger, error) {
	led, err := ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log.With("component", "ledger"), Replica: pol.Ledger.Replica,
		OnCommit: onCommit, Retention: retentionOf(pol)})
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
