package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/session"
	"github.com/ddp-proxy/ddp-proxy/wire/pgwire"
)

// shutdownGrace is how long in-flight queries may run after SIGTERM.
const shutdownGrace = 30 * time.Second

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (required)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if *policyPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: ddp-proxy serve --policy FILE")
		return exitError{2}
	}
	pol, err := policies.Load(*policyPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p, err := startProxy(ctx, pol, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ddp-proxy: PostgreSQL front end on %s\n", p.pgAddr)
	return p.wait(ctx)
}

// proxy is a running proxy: backend, ledger and front ends.
type proxy struct {
	pgAddr  string
	pg      *pgwire.Server
	backend connect.Backend
	ledger  *ledger.Ledger
	served  chan error
	log     *slog.Logger
}

// startProxy opens the backend and the ledger and starts the front ends.
func startProxy(ctx context.Context, pol *policies.Policy, log *slog.Logger) (*proxy, error) {
	be, err := connect.Open(ctx, pol.Backend, log.With("component", "backend"))
	if err != nil {
		return nil, fmt.Errorf("connecting to the %s backend: %w", pol.Backend.Driver, err)
	}
	if err := prepareBackend(ctx, pol, be, log); err != nil {
		be.Close()
		return nil, err
	}
	led, err := ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log.With("component", "ledger")})
	if err != nil {
		be.Close()
		return nil, fmt.Errorf("opening the budget ledger: %w", err)
	}
	if pend, err := led.Pending(); err == nil && len(pend) > 0 {
		log.Warn("reservations left by an earlier crash stay charged", "count", len(pend))
	}
	eng := release.New(be, led, release.Options{Logger: log.With("component", "release"), Source: noise.CryptoSource()})
	px := session.New(session.Config{Policy: pol, Backend: be, Ledger: led, Engine: eng, Logger: log})
	var tlsCfg *tls.Config
	if pol.Listen.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(pol.Listen.TLSCert, pol.Listen.TLSKey)
		if err != nil {
			led.Close()
			be.Close()
			return nil, fmt.Errorf("loading the TLS certificate: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	p := &proxy{backend: be, ledger: led, served: make(chan error, 1), log: log}
	if pol.Listen.Postgres != policies.ListenOff {
		ln, err := net.Listen("tcp", pol.Listen.Postgres)
		if err != nil {
			led.Close()
			be.Close()
			return nil, fmt.Errorf("listening on %s (listen.postgres): %w", pol.Listen.Postgres, err)
		}
		p.pgAddr = ln.Addr().String()
		p.pg = pgwire.NewServer(pgwire.Config{
			Handler:        px.PGHandler(),
			TLS:            tlsCfg,
			MaxConnections: pol.Listen.MaxConnections,
			Logger:         log.With("component", "pgwire"),
		})
		go func() { p.served <- p.pg.Serve(context.WithoutCancel(ctx), ln) }()
		log.Info("listening", "frontend", "postgres", "addr", p.pgAddr, "auth", pol.Listen.Auth, "tls", tlsCfg != nil)
	}
	return p, nil
}

// wait serves until ctx ends (SIGINT/SIGTERM), then shuts down
// gracefully: in-flight queries finish (their charges are committed) for up
// to shutdownGrace, then the ledger is closed.
func (p *proxy) wait(ctx context.Context) error {
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-p.served:
	}
	p.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if p.pg != nil {
		if err := p.pg.Shutdown(sctx); err != nil {
			p.log.Warn("shutdown", "err", err)
		}
	}
	err := errors.Join(serveErr, p.ledger.Close(), p.backend.Close())
	if err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// prepareBackend derives from the backend what the policy needs before the
// first query: unique units (no bounding window needed) and, per model,
// structures read once at load (never per query).
func prepareBackend(ctx context.Context, pol *policies.Policy, be connect.Backend, log *slog.Logger) error {
	connect.MarkUniqueUnits(ctx, pol, be, log)
	return verifyConstrainedDomains(ctx, pol, be)
}
