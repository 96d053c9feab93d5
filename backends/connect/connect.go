// Package connect opens the backend a policy names. It is the one place
// that knows every driver package, so the planner and the commands stay
// free of driver imports.
package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

var (
	_ backends.Backend = (*postgres.Backend)(nil)
	_ backends.Backend = (*sqlite.Backend)(nil)
	_ backends.Backend = (*mysql.Backend)(nil)
)

// Open connects to the policy's backend and checks that it answers. Its
// caller is the operator (serve, check, the tools), so a failure says
// which server or file was tried and what the driver reported (an
// *OpenError, whose Unwrap is the backend's *sqlerr.Error).
func Open(ctx context.Context, cfg policies.Backend, log *slog.Logger) (backends.Backend, error) {
	be, err := open(ctx, cfg, log)
	if err != nil {
		return nil, &OpenError{Driver: cfg.Driver, Target: Target(cfg), Err: err}
	}
	return be, nil
}

func open(ctx context.Context, cfg policies.Backend, log *slog.Logger) (backends.Backend, error) {
	opts := backends.Options{
		StatementTimeout:   cfg.StatementTimeout.Duration,
		ConnectTimeout:     cfg.ConnectTimeout.Duration,
		MaxOpenConns:       cfg.MaxOpenConns,
		PreparedStatements: cfg.PreparedStatements,
		Logger:             log,
	}
	switch cfg.Driver {
	case "postgres":
		return postgres.Open(ctx, cfg.DSN, opts)
	case "sqlite":
		return sqlite.Open(ctx, sqlitePath(cfg.DSN), opts)
	case "mysql":
		return mysql.Open(ctx, cfg.DSN, opts)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "backend driver %q is not supported by this version", cfg.Driver)
}

// sqlitePath turns the policy's DSN (a path or a file: URI, already made
// absolute by the policy loader) into the file path sqlite.Open expects.
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return filepath.Clean(p)
}

// OpenError is a backend that could not be opened, described for the
// operator: the backend's errors are worded for analysts ("the backend
// database is unavailable; the query was not run") and keep the driver's
// message as their cause, which is what the operator needs to see.
type OpenError struct {
	Driver string
	// Target is where the connection went (Target), never a password.
	Target string
	Err    error
}

func (e *OpenError) Error() string {
	why := e.Err.Error()
	var se *sqlerr.Error
	if errors.As(e.Err, &se) && se.Cause != nil {
		why = se.Cause.Error()
	}
	return fmt.Sprintf("cannot open the %s backend (%s): %s", e.Driver, e.Target, why)
}

func (e *OpenError) Unwrap() error { return e.Err }

// Target describes where cfg's DSN points, without its password: host,
// port, database and user for a server, the path for SQLite. A DSN that
// does not parse is described as such (opening it fails with the
// driver's own reason).
func Target(cfg policies.Backend) string {
	switch cfg.Driver {
	case "postgres":
		// pgconn reads both DSN forms (URL and key=value) and the
		// libpq environment defaults (PGHOST, …) as lib/pq does.
		c, err := pgconn.ParseConfig(cfg.DSN)
		if err != nil {
			return "backend.dsn does not parse"
		}
		return fmt.Sprintf("host %s, port %d, database %s, user %s", c.Host, c.Port, c.Database, c.User)
	case "mysql":
		c, err := gomysql.ParseDSN(cfg.DSN)
		if err != nil {
			return "backend.dsn does not parse"
		}
		return fmt.Sprintf("%s %s, database %s, user %s", c.Net, c.Addr, c.DBName, c.User)
	case "sqlite":
		return "file " + sqlitePath(cfg.DSN)
	}
	return "backend.dsn"
}
