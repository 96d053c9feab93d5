// Package connect opens the backend a policy names. It is the one place
// that knows every driver package, so the planner and the commands stay
// free of driver imports.
package connect

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

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

// Open connects to the policy's backend and checks that it answers.
func Open(ctx context.Context, cfg policies.Backend, log *slog.Logger) (backends.Backend, error) {
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
