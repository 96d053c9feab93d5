package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ddp-proxy/ddp-proxy/admin"
	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/prepare"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/session"
	"github.com/ddp-proxy/ddp-proxy/wire/mysqlwire"
	"github.com/ddp-proxy/ddp-proxy/wire/pgwire"
)

// defaultGCPercent is serve's garbage collector target. The proxy's live
// heap is small (the ledger is memory-mapped, not on the heap) while every
// answer allocates 10-35 KB, so at Go's default of 100 it collects often:
// at 400, BenchmarkPrivateAnswer spends 30% less CPU per cached answer
// (fresh answers: no difference measured), for a peak heap of up to five
// times the live heap instead of two.
const defaultGCPercent = 400

// gcSet reports whether serve sets the GC target itself: when --gc-percent
// is given, or when it is not and GOGC is unset (an operator's GOGC is
// left to the runtime).
func gcSet(fs *flag.FlagSet, gogc string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "gc-percent" })
	return given || gogc == ""
}

// shutdownGrace is how long in-flight queries may run after SIGTERM.
const shutdownGrace = 30 * time.Second

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (required)")
	pidFile := fs.String("pid-file", "", "write the process id here (default: the ledger path + .pid), for ddp-proxy reload")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "least severe level logged: debug, info, warn or error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) here until shutdown, for benchmarks")
	memProfile := fs.String("memprofile", "", "write an allocation profile (go tool pprof -sample_index=alloc_space) here at shutdown, for benchmarks")
	gcPercent := fs.Int("gc-percent", defaultGCPercent, "garbage collector target: the heap may grow this many percent over the live heap between collections (the GOGC variable, when set, is the default instead; a GOMEMLIMIT caps the total)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if *gcPercent < 0 {
		fmt.Fprintf(stderr, "ddp-proxy serve: --gc-percent %d: want 0 or more (to turn collection off, GOGC=off with a GOMEMLIMIT)\n%s\n", *gcPercent, serveUsage)
		return exitError{2}
	}
	if gcSet(fs, os.Getenv("GOGC")) {
		debug.SetGCPercent(*gcPercent)
	}
	if *policyPath == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, serveUsage)
		return exitError{2}
	}
	if *logFormat != "text" || *logLevel != "info" {
		l, err := newLogger(stderr, *logFormat, *logLevel)
		if err != nil {
			fmt.Fprintf(stderr, "ddp-proxy serve: %v\n%s\n", err, serveUsage)
			return exitError{2}
		}
		log = l
	}
	pol, err := policies.Load(*policyPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitError{1}
		}
		defer stopProfile()
	}
	if *memProfile != "" {
		defer func() {
			if err := writeAllocProfile(*memProfile); err != nil {
				fmt.Fprintln(stderr, err)
			}
		}()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Registered before the proxy starts, so an early SIGHUP reloads
	// instead of killing the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	p, err := startProxy(ctx, pol, log)
	if err != nil {
		return err
	}
	pidPath := *pidFile
	if pidPath == "" {
		pidPath = defaultPidFile(pol)
	}
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		log.Warn("cannot write the pid file; reload with kill -HUP <pid>", "path", pidPath, "err", err)
		pidPath = ""
	} else {
		defer os.Remove(pidPath)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = p.reload(ctx, *policyPath)
			}
		}
	}()
	if p.pgAddr != "" {
		fmt.Fprintf(stdout, "ddp-proxy: PostgreSQL front end on %s\n", p.pgAddr)
	}
	if p.myAddr != "" {
		fmt.Fprintf(stdout, "ddp-proxy: MySQL front end on %s\n", p.myAddr)
	}
	if p.adminAddr != "" {
		fmt.Fprintf(stdout, "ddp-proxy: admin listener (metrics, health, budget page) on http://%s/\n", p.adminAddr)
	}
	log.Info("serving; SIGHUP (ddp-proxy reload) reloads the policy", "policy", *policyPath, "pid", os.Getpid(), "pid_file", pidPath)
	return p.wait(ctx)
}

// defaultPidFile is where serve writes its pid unless told otherwise:
// next to the ledger, which is unique per running proxy (bbolt's lock).
func defaultPidFile(pol *policies.Policy) string { return pol.Ledger.Path + ".pid" }

// reload re-reads the policy file and, when it is valid and compatible
// with what is running, prepares the backend for it and swaps it in for
// new sessions and the next statement of open ones. Backend, ledger and
// listeners stay. On any problem the policy in force is kept and the
// problems are logged.
func (p *proxy) reload(ctx context.Context, path string) error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	log := p.log.With("policy", path)
	pol, err := policies.Load(path)
	if err != nil {
		log.Error("policy reload failed; keeping the policy in force", "err", err)
		return err
	}
	old := p.sessions.Policy()
	if err := reloadable(old, pol); err != nil {
		log.Error("policy reload refused; keeping the policy in force", "err", err)
		return err
	}
	for _, w := range restartOnly(old, pol) {
		log.Warn("policy reload: this setting takes effect only after a restart", "setting", w)
	}
	if err := prepare.Backend(ctx, pol, p.backend, log); err != nil {
		log.Error("policy reload failed while preparing the backend; keeping the policy in force", "err", err)
		return err
	}
	p.sessions.SetPolicy(pol)
	p.metrics.Datasets(pol.DatasetNames)
	warnSchema(ctx, pol, p.backend, log)
	log.Info("policy reloaded", "users", len(pol.Users), "datasets", len(pol.DatasetNames))
	return nil
}

// reloadable refuses reloads that would need another backend or ledger:
// those are opened once at startup.
func reloadable(old, pol *policies.Policy) error {
	var errs []error
	if pol.Backend.Driver != old.Backend.Driver || pol.Backend.DSN != old.Backend.DSN {
		errs = append(errs, errors.New("backend.driver or backend.dsn changed: restart the proxy to use another backend"))
	}
	if pol.Ledger != old.Ledger {
		errs = append(errs, errors.New("ledger (driver, path, dsn, schema or replica) changed: restart the proxy to use another ledger"))
	}
	return errors.Join(errs...)
}

// restartOnly lists changed settings that a reload cannot apply (the
// listeners and the backend pool are set up once).
func restartOnly(old, pol *policies.Policy) []string {
	var out []string
	o, n := old.Listen, pol.Listen
	if o.Postgres != n.Postgres {
		out = append(out, "listen.postgres")
	}
	if o.MySQL != n.MySQL {
		out = append(out, "listen.mysql")
	}
	if o.TLSCert != n.TLSCert || o.TLSKey != n.TLSKey {
		out = append(out, "listen.tls_cert/tls_key")
	}
	if (o.Auth == policies.AuthCleartext) != (n.Auth == policies.AuthCleartext) {
		out = append(out, "listen.auth (cleartext)")
	}
	if o.Admin != n.Admin {
		out = append(out, "listen.admin")
	}
	if o.PeerID != n.PeerID || !maps.Equal(o.Peers, n.Peers) || o.PeerSecret != n.PeerSecret {
		out = append(out, "listen.peer_id/peers/peer_secret_env")
	}
	if old.Metrics != pol.Metrics {
		out = append(out, "metrics")
	}
	if o.MaxConnections != n.MaxConnections {
		out = append(out, "listen.max_connections")
	}
	if o.MaxQueryBytes != n.MaxQueryBytes {
		out = append(out, "listen.max_query_bytes")
	}
	if o.MaxPreparedStatements != n.MaxPreparedStatements || o.MaxPreparedBytes != n.MaxPreparedBytes {
		out = append(out, "listen.max_prepared_statements/max_prepared_bytes")
	}
	if old.Backend.StatementTimeout != pol.Backend.StatementTimeout {
		out = append(out, "backend.statement_timeout")
	}
	if old.Backend.ConnectTimeout != pol.Backend.ConnectTimeout {
		out = append(out, "backend.connect_timeout")
	}
	if old.Backend.MaxOpenConns != pol.Backend.MaxOpenConns {
		out = append(out, "backend.max_open_conns")
	}
	if old.Backend.PreparedStatements != pol.Backend.PreparedStatements {
		out = append(out, "backend.prepared_statements")
	}
	if old.Ledger.Replica != pol.Ledger.Replica || old.Ledger.Retention != pol.Ledger.Retention {
		out = append(out, "ledger.replica/retention")
	}
	return out
}

// proxy is a running proxy: backend, ledger and front ends.
type proxy struct {
	pgAddr string
	pg     *pgwire.Server
	myAddr string
	my     *mysqlwire.Server
	// myKill is my, for the PostgreSQL front end's goroutines: a KILL
	// another replica forwards arrives there (as a cancel request), and
	// may arrive before the MySQL front end has started.
	myKill   atomic.Pointer[mysqlwire.Server]
	sessions *session.Proxy
	reloadMu sync.Mutex
	backend  backends.Backend
	ledger   servedLedger
	served   chan error
	log      *slog.Logger
	// metrics are this proxy's own (served on listen.admin when on).
	metrics   *admin.Metrics
	adminAddr string
	admin     *admin.Server
}

// warnSchema logs, as warnings, where the policy does not match the
// backend's schema (what check --connect reports): serving goes on, but
// the queries that touch a mismatch fail, so the operator hears of it at
// startup rather than from analysts.
func warnSchema(ctx context.Context, pol *policies.Policy, be backends.Backend, log *slog.Logger) {
	cl, ok := be.(columnLister)
	if !ok {
		return
	}
	for _, p := range checkSchema(ctx, pol, cl) {
		log.Warn("the policy does not match the backend; queries on it will fail (ddp-proxy check --connect lists every mismatch)", "problem", p)
	}
}

// startProxy opens the backend and the ledger and starts the front ends.
func startProxy(ctx context.Context, pol *policies.Policy, log *slog.Logger) (*proxy, error) {
	be, err := prepare.Open(ctx, pol, log)
	if err != nil {
		return nil, err
	}
	warnSchema(ctx, pol, be, log)
	metrics := admin.NewMetrics(admin.MetricsOptions{PerUser: pol.Metrics.PerUser, Datasets: pol.DatasetNames})
	led, err := openLedger(ctx, pol, log, metrics.LedgerCommit)
	if err != nil {
		be.Close()
		return nil, err
	}
	// `ddp-proxy budget` and `audit` read the ledger through this socket
	// while serve holds the file (ledger_socket.go).
	// A PostgreSQL ledger needs no socket: budget and audit read the
	// database itself, and replicas on one host must not share one.
	if pol.Ledger.Driver != policies.LedgerPostgres {
		stopSocket := serveLedgerSocket(pol.Ledger.Path, led, log.With("component", "ledger-socket"))
		led = closeAlso(led, stopSocket)
	}
	eng := release.New(timedBackend{Backend: be, m: metrics}, meter(led, metrics), release.Options{Logger: log.With("component", "release"), Source: noise.CryptoSource()})
	px := session.New(session.Config{Policy: pol, Backend: be, Ledger: led, Engine: eng, Logger: log,
		InfoSchema: emulated.QueryMySQL, MaxAllowedPacket: pol.Listen.MaxQueryBytes, Observer: metrics})
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
	p := &proxy{sessions: px, backend: be, ledger: led, served: make(chan error, 2), log: log, metrics: metrics}
	if pol.Listen.Postgres != policies.ListenOff {
		ln, err := net.Listen("tcp", pol.Listen.Postgres)
		if err != nil {
			led.Close()
			be.Close()
			return nil, fmt.Errorf("listening on %s (listen.postgres): %w", pol.Listen.Postgres, err)
		}
		p.pgAddr = ln.Addr().String()
		p.pg = pgwire.NewServer(pgwire.Config{
			Handler: px.PGHandler(),
			TLS:     tlsCfg,
			// Only on TLS connections; plain ones always use SCRAM.
			CleartextOverTLS:      pol.Listen.Auth == policies.AuthCleartext,
			MaxConnections:        pol.Listen.MaxConnections,
			MaxMessageBytes:       pol.Listen.MaxQueryBytes,
			MaxPreparedStatements: pol.Listen.MaxPreparedStatements,
			MaxPreparedBytes:      pol.Listen.MaxPreparedBytes,
			Logger:                log.With("component", "pgwire"),
			PeerID:                pol.Listen.PeerID,
			Peers:                 maps.Clone(pol.Listen.Peers),
			// KILLs of this replica's MySQL connections typed on another.
			ForeignCancel: func(pid uint32, key []byte) {
				if my := p.myKill.Load(); my != nil {
					my.KillWithKey(pid, key)
				}
			},
		})
		metrics.OpenConnections("postgres", p.pg.Conns)
		go func() { p.served <- p.pg.Serve(context.WithoutCancel(ctx), ln) }()
		log.Info("listening", "frontend", "postgres", "addr", p.pgAddr, "auth", pol.Listen.Auth, "tls", tlsCfg != nil)
	}
	err = p.startMySQL(ctx, pol, px, tlsCfg)
	if err == nil {
		err = p.startAdmin(pol, led, log)
	}
	if err != nil {
		if p.pg != nil {
			p.pg.Shutdown(context.Background())
		}
		if p.my != nil {
			p.my.Shutdown(context.Background())
		}
		led.Close()
		be.Close()
		return nil, err
	}
	return p, nil
}

// startMySQL starts the MySQL front end unless listen.mysql is off.
func (p *proxy) startMySQL(ctx context.Context, pol *policies.Policy, px *session.Proxy, tlsCfg *tls.Config) error {
	if pol.Listen.MySQL == policies.ListenOff {
		return nil
	}
	ln, err := net.Listen("tcp", pol.Listen.MySQL)
	if err != nil {
		return fmt.Errorf("listening on %s (listen.mysql): %w", pol.Listen.MySQL, err)
	}
	p.myAddr = ln.Addr().String()
	p.my = mysqlwire.NewServer(mysqlwire.Config{
		Handler:               px.MySQLHandler(),
		TLS:                   tlsCfg,
		MaxConnections:        pol.Listen.MaxConnections,
		MaxPacket:             pol.Listen.MaxQueryBytes,
		MaxPreparedStatements: pol.Listen.MaxPreparedStatements,
		MaxPreparedBytes:      pol.Listen.MaxPreparedBytes,
		Logger:                p.log.With("component", "mysqlwire"),
		PeerID:                pol.Listen.PeerID,
		PeerSecret:            []byte(pol.Listen.PeerSecret),
		// Carried by the owner's PostgreSQL front end (pgwire
		// ForeignCancel), the channel peers already have.
		ForwardKill: func(owner int, id uint32, key []byte) error {
			addr, ok := pol.Listen.Peers[owner]
			if !ok {
				return fmt.Errorf("listen.peers has no replica %d", owner)
			}
			return pgwire.SendCancel(addr, id, key)
		},
	})
	p.myKill.Store(p.my)
	p.metrics.OpenConnections("mysql", p.my.Conns)
	go func() { p.served <- p.my.Serve(context.WithoutCancel(ctx), ln) }()
	p.log.Info("listening", "frontend", "mysql", "addr", p.myAddr, "auth", pol.Listen.Auth, "tls", tlsCfg != nil)
	return nil
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
	if p.my != nil {
		if err := p.my.Shutdown(sctx); err != nil {
			p.log.Warn("shutdown", "frontend", "mysql", "err", err)
		}
	}
	if p.admin != nil {
		if err := p.admin.Shutdown(sctx); err != nil {
			p.log.Warn("shutdown", "frontend", "admin", "err", err)
		}
	}
	// Closing the backend's pool says goodbye on each connection; one the
	// server already closed (a restart, an idle timeout) fails that
	// write. Nothing is lost then, so it is a warning, not a failed
	// shutdown; the ledger's close is what must succeed.
	if err := p.backend.Close(); err != nil {
		p.log.Warn("closing the backend's connections", "err", err)
	}
	err := errors.Join(serveErr, p.ledger.Close())
	if err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
