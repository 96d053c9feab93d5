package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/ddp-proxy/ddp-proxy/admin"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// timedBackend reports the duration of every backend statement the
// release engine runs (private queries: their aggregates, key domains
// and join-key checks). Only the engine's backend is wrapped: the
// session's finds optional interfaces on the backend by type assertion,
// which a wrapper would hide.
type timedBackend struct {
	planner.Backend
	m *admin.Metrics
}

var _ planner.Backend = timedBackend{}

func (b timedBackend) Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error {
	start := time.Now()
	err := b.Backend.Aggregate(ctx, q, fn)
	b.m.Backend("aggregate", time.Since(start))
	return err
}

func (b timedBackend) Rows(ctx context.Context, sql string, args []ir.Value, fn func(cols []string, row []ir.Value) error) error {
	start := time.Now()
	err := b.Backend.Rows(ctx, sql, args, fn)
	b.m.Backend("rows", time.Since(start))
	return err
}

// startAdmin starts the admin listener (listen.admin) unless it is off.
func (p *proxy) startAdmin(pol *policies.Policy, led pageLedger, log *slog.Logger) error {
	if pol.Listen.Admin == policies.ListenOff {
		return nil
	}
	ln, err := net.Listen("tcp", pol.Listen.Admin)
	if err != nil {
		return fmt.Errorf("listening on %s (listen.admin): %w", pol.Listen.Admin, err)
	}
	p.adminAddr = ln.Addr().String()
	p.admin = admin.NewServer(admin.Config{
		Metrics: p.metrics,
		Ready: map[string]admin.Check{
			"backend": func(ctx context.Context) error {
				return p.backend.Rows(ctx, "SELECT 1", nil, func([]string, []ir.Value) error { return nil })
			},
			"ledger": func(ctx context.Context) error {
				_, err := led.Reservations(ctx)
				return err
			},
		},
		Budget: p.budgetPage(led),
		// The DBA's read-only ledger views, audit texts included: one
		// more reason to keep the admin listener private.
		Ledger: ledgerHandler(led),
		Logger: log.With("component", "admin"),
	})
	go func() {
		if err := p.admin.Serve(ln); err != nil {
			log.Error("admin listener stopped", "err", err)
		}
	}()
	log.Info("listening", "frontend", "admin", "addr", p.adminAddr)
	return nil
}
