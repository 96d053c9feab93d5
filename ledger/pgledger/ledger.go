package pgledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// DefaultSchema holds the ledger tables unless Options.Schema names another.
const DefaultSchema = "ddp_ledger"

// defaultConnectTimeout bounds opening one connection when the DSN sets no
// connect_timeout: a ledger that does not answer fails the query closed
// instead of holding the client.
const defaultConnectTimeout = 5 * time.Second

// defaultPoolConns is each of the two pools' size when the DSN sets no
// pool_max_conns: a replica opens at most twice this many connections to
// the ledger database (the second pool holds Flight's advisory locks).
const defaultPoolConns = 8

// DefaultTimeout bounds every ledger statement unless Options.Timeout
// says otherwise, so that a ledger database that goes silent (no reset,
// no answer) fails the query closed instead of holding the client.
const DefaultTimeout = 10 * time.Second

// flightTimeout bounds the wait for another replica's identical query
// (at most its backend statement timeout, normally).
const flightTimeout = 5 * time.Minute

// Options configures Open.
type Options struct {
	// Schema holds the tables (default DefaultSchema). Tests use their own.
	Schema string
	// Replica names this process in pending reservations and releases
	// (default host:pid). Unique per running replica.
	Replica string
	// Logger receives crash leftovers and failures (nil = discard). Cache
	// keys are never logged: they may embed query literals.
	Logger *slog.Logger
	// Now is the clock for charge times (nil = time.Now).
	Now func() time.Time
	// Timeout bounds each ledger statement (0 = DefaultTimeout).
	Timeout time.Duration
	// OnCommit, when set, is called after every statement that changed
	// the ledger — a reservation, a commit, a refund — with the changes
	// it carried and how long it took, the WAL flush of its commit
	// included (metrics; the bbolt ledger's Options.OnCommit). Each is
	// one statement committed on its own before it returns, so writes is
	// always 1: PostgreSQL's group commit, if any, is not visible here.
	// It must not block.
	OnCommit func(writes int, took time.Duration)
}

// Ledger is a budget ledger in PostgreSQL. Safe for concurrent use.
type Ledger struct {
	pool *pgxpool.Pool
	// locks holds the connections of Flight's advisory locks: a pool of
	// its own, so that queries holding every lock can still reserve and
	// commit on pool.
	locks   *pgxpool.Pool
	schema  string // quoted
	replica string
	log     *slog.Logger
	now     func() time.Time
	sql     statements
	timeout time.Duration
	// onCommit is Options.OnCommit (nil: none).
	onCommit func(writes int, took time.Duration)
}

// Open connects to the ledger database at dsn, creates the ledger tables
// where none exist and checks the schema version of those that do.
func Open(ctx context.Context, dsn string, opts Options) (*Ledger, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if err := validSchema(schema); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included.
		return nil, errors.New("open ledger: the ledger DSN cannot be parsed")
	}
	if !strings.Contains(dsn, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = defaultPoolConns
	}
	cfg.AfterConnect = durableCommits
	l := &Ledger{schema: quoteIdent(schema), replica: opts.Replica, log: opts.Logger, now: opts.Now, onCommit: opts.OnCommit}
	if l.replica == "" {
		host, _ := os.Hostname()
		l.replica = host + ":" + strconv.Itoa(os.Getpid())
	}
	if l.log == nil {
		l.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.sql = newStatements(l.schema)
	l.timeout = opts.Timeout
	if l.timeout <= 0 {
		l.timeout = DefaultTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	locks, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	defer func() {
		if l.pool == nil {
			locks.Close()
		}
	}()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger: connecting to the ledger database: %w", err)
	}
	err = migrate(ctx, conn.Conn(), schema)
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open ledger (schema %s): %w", schema, err)
	}
	l.pool, l.locks = pool, locks
	if p, err := l.Pending(); err != nil {
		pool.Close()
		locks.Close()
		return nil, fmt.Errorf("open ledger: %w", err)
	} else if len(p) > 0 {
		// Left by replicas that crashed, or in flight on live ones: they
		// stay charged either way.
		l.log.Warn("the ledger has pending reservations (in flight on other replicas, or left by a crash); they stay charged",
			"count", len(p))
	}
	return l, nil
}

// durableCommits makes every commit on conn wait for its WAL flush. A
// charge must be durable before the noisy answer leaves; with
// synchronous_commit off (a throughput setting a DBA may give the
// database, the role, or the DSN's options) a COMMIT returns before the
// flush, and a crash of the ledger database then forgets charges whose
// answers were sent. Stronger settings (remote_write, remote_apply) and
// local are kept: each waits at least for the local flush.
func durableCommits(ctx context.Context, conn *pgx.Conn) error {
	var v string
	if err := conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&v); err != nil {
		return fmt.Errorf("reading synchronous_commit: %w", err)
	}
	if v != "off" {
		return nil
	}
	if _, err := conn.Exec(ctx, `SET synchronous_commit = on`); err != nil {
		return fmt.Errorf("setting synchronous_commit = on (a charge must be durable before its answer leaves): %w", err)
	}
	return nil
}

// Replica returns the name this process records in pending reservations.
func (l *Ledger) Replica() string { return l.replica }

// Close closes the connections. Pending reservations stay charged.
func (l *Ledger) Close() error {
	l.locks.Close()
	l.pool.Close()
	return nil
}

// Sync is a no-op: every write is committed before it returns.
func (l *Ledger) Sync() error { return nil }

// unavailable wraps a database failure for the client: the ledger cannot
// be reached (or failed), so the query was not run. Budget and privacy
// errors of our own pass through unchanged.
func unavailable(op string, err error) error {
	var se *sqlerr.Error
	if errors.As(err, &se) || errors.Is(err, errNotPending) {
		return err
	}
	if connectionError(err) {
		return sqlerr.Wrap(sqlerr.LedgerUnavailable, fmt.Errorf("ledger %s: %w", op, err),
			"the privacy budget ledger database is unreachable, so the query was not run and nothing was answered; try again or ask the DBA")
	}
	return sqlerr.Wrap(sqlerr.Internal, fmt.Errorf("ledger %s: %w", op, err),
		"the privacy budget ledger failed, so the query was not run; try again or ask the DBA")
}

// connectionError reports whether err means the database could not be
// reached or dropped the connection (anything that is not an error the
// server reported about a statement, or a server error of class 08, 57P
// or 53).
func connectionError(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true
	}
	return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "53")
}
