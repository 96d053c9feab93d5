package backends

import (
	"log/slog"
	"time"
)

// Options configures a backend's connection pool.
type Options struct {
	// StatementTimeout bounds every statement (0 = no limit). PostgreSQL
	// enforces it server side (statement_timeout on every session), MySQL
	// too (max_execution_time / max_statement_time), and both are bounded on
	// the client side by ClientTimeout, which cuts a silent connection;
	// SQLite through the context, which interrupts the running statement.
	StatementTimeout time.Duration
	// ConnectTimeout bounds opening one network connection, handshake and
	// session setup included (0 = DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// MaxOpenConns caps the pool (0 = database/sql's default, unlimited).
	MaxOpenConns int
	// PreparedStatements > 0 caches that many prepared statements per
	// connection for aggregates (PostgreSQL only; Engine.CacheStatements).
	PreparedStatements int
	// Logger receives failures with their internal causes (nil = discard).
	// Query text and bound values are never logged.
	Logger *slog.Logger
}

// ColumnInfo describes one column of a backend table, as reported by the
// backend's catalog (for `ddp-proxy check --connect`).
type ColumnInfo struct {
	Name string
	// Type is the backend's own type name (PostgreSQL's
	// information_schema data_type, SQLite's declared type).
	Type string
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}
