package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/ddp-proxy/ddp-proxy/admin"
	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
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

// meteredLedger counts the budget charges that stand (admin.Metrics.Spent):
// a reservation committed, with its answer or after a failure that may
// depend on private data. Only the engine's ledger is wrapped (it is the
// one that charges).
type meteredLedger struct {
	release.Ledger
	m *admin.Metrics
}

var (
	_ release.Ledger  = meteredLedger{}
	_ release.Wrapper = meteredLedger{}
)

// meter wraps l for the metrics.
func meter(l release.Ledger, m *admin.Metrics) release.Ledger { return meteredLedger{Ledger: l, m: m} }

// Unwrap lets the release step find the wrapped ledger's optional
// interfaces (the cross-replica hold, the eviction report): hiding them
// would let identical queries on several replicas be charged once each,
// and drop the notice that a repeat was charged again after eviction.
func (l meteredLedger) Unwrap() release.Ledger { return l.Ledger }

func (l meteredLedger) Charge(ctx context.Context, c budget.Charge, limit budget.Budget) (budget.Reservation, error) {
	r, err := l.Ledger.Charge(ctx, c, limit)
	if err != nil {
		return nil, err
	}
	return &meteredReservation{Reservation: r, m: l.m, c: c}, nil
}

// meteredReservation counts its cost once it is committed. A commit that
// fails leaves the reservation charged (fail closed), so it counts too.
type meteredReservation struct {
	budget.Reservation
	m *admin.Metrics
	c budget.Charge
}

func (r *meteredReservation) Commit(cacheKey string, rel []byte) ([]byte, error) {
	out, err := r.Reservation.Commit(cacheKey, rel)
	r.m.Spent(r.c.User, r.c.Dataset, r.c.Cost)
	return out, err
}

func (r *meteredReservation) CommitDeferred(cacheKey string, rel []byte) ([]byte, error) {
	out, err := r.Reservation.CommitDeferred(cacheKey, rel)
	r.m.Spent(r.c.User, r.c.Dataset, r.c.Cost)
	return out, err
}

// startAdmin starts the admin listener (listen.admin) unless it is off.
func (p *proxy) startAdmin(pol *policies.Policy, led ledgerView, log *slog.Logger) error {
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
