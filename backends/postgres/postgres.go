package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"

	"github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Backend is a PostgreSQL database. Its methods are those of
// backends.Engine (Dialect, Aggregate, Rows, Close, Ping) plus Columns.
type Backend struct {
	*backends.Engine
	catalog catalogCache
}

// New prepares a pool for dsn (a URL or key=value string, as lib/pq
// accepts) without connecting: an unreachable server shows up as
// BackendUnavailable on the first query.
func New(dsn string, opts backends.Options) (*Backend, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		// pq's message may quote the DSN, password included: keep it out.
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "invalid PostgreSQL connection string").
			WithHint("use postgres://user@host:port/db?sslmode=... or key=value pairs")
	}
	// One round trip per statement with arguments: Parse, Bind, Describe,
	// Execute and Sync of the unnamed statement go out together, instead
	// of a Parse/Describe round trip before Bind/Execute. The arguments
	// we bind (sqlrender.Dialect.Arg) are never []byte, so every one is
	// still sent as text and typed by the server exactly as before.
	cfg.BinaryParameters = true
	base, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "invalid PostgreSQL connection string")
	}
	// Dates and times are read and written in UTC whatever the server's
	// TimeZone (exprtype: a timestamptz is a UTC reading), in the ISO
	// form ir.ParseTime reads.
	//
	// standard_conforming_strings is on whatever the server, role or DSN
	// says: pass-through text is checked with pg_query, which reads
	// 'a\' as a whole string; with it off the server would read on
	// past the backslash, and what pg_query saw as the next string
	// literal would run as SQL unchecked.
	setup := "SET default_transaction_read_only = on; SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, YMD'; SET standard_conforming_strings = on"
	if ms := opts.StatementTimeout.Milliseconds(); ms > 0 {
		setup += fmt.Sprintf("; SET statement_timeout = %d", ms)
	} else if opts.StatementTimeout > 0 {
		setup += "; SET statement_timeout = 1"
	}
	socks := backends.NewSockets(opts.ConnectTimeout)
	base.Dialer(keyDialer{socks})
	db := sql.OpenDB(&sessionConnector{base: base, setup: setup, socks: socks})
	e := backends.NewEngine(db, sqlrender.Postgres(), opts, classify, socks)
	// Private queries' rows are read straight from lib/pq, and their
	// statements are prepared once per connection and query shape
	// (backend.prepared_statements, on by default): that cuts
	// PostgreSQL's CPU per query by about half. Connections behind a
	// transaction pooler do not cache them (ownSession).
	e.ReadAggregatesDirectly(true)
	if opts.PreparedStatements > 0 {
		e.CacheStatements(opts.PreparedStatements, Replan)
	}
	return &Backend{Engine: e}, nil
}

// Open is New followed by a connection check; a server that cannot be
// reached is reported as BackendUnavailable and the pool is closed.
func Open(ctx context.Context, dsn string, opts backends.Options) (*Backend, error) {
	b, err := New(dsn, opts)
	if err != nil {
		return nil, err
	}
	if err := b.Ping(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Columns lists the columns of schema.table in ordinal order (schema ""
// means the session's current schema). A table with no visible columns is
// UndefinedTable.
func (b *Backend) Columns(ctx context.Context, schema, table string) ([]backends.ColumnInfo, error) {
	const q = `SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = COALESCE(NULLIF($1, ''), current_schema()) AND table_name = $2
ORDER BY ordinal_position`
	var cols []backends.ColumnInfo
	err := b.Rows(ctx, q, []ir.Value{ir.String(schema), ir.String(table)}, func(_ []string, row []ir.Value) error {
		cols = append(cols, backends.ColumnInfo{Name: row[0].Str, Type: row[1].Str})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "table %q not found in the PostgreSQL backend", qualified(schema, table)).
			WithHint("check the table name and schema in the policy, and the backend user's privileges")
	}
	return cols, nil
}

func qualified(schema, table string) string {
	if schema == "" {
		return table
	}
	return schema + "." + table
}

// classify recognises the server's statement timeout. A client cancel
// also yields 57014, but the engine checks the caller's ctx first.
func classify(err error) (bool, string) {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return pe.Code == "57014", string(pe.Code)
	}
	if errors.Is(err, driver.ErrBadConn) {
		return false, "bad_conn"
	}
	return false, ""
}

// StatementCacheSize bounds the prepared statements kept per connection
// when they are cached (Engine.CacheStatements): one per shape of private
// query (literals are bound, not spliced).
const StatementCacheSize = 256

// Replan recognises PostgreSQL's refusal to reuse a prepared statement
// whose result type changed with its tables ("cached plan must not change
// result type", raised while binding, before anything ran).
func Replan(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == "0A000" && pe.Routine == "RevalidateCachedQuery"
}

// sessionConnector configures every new session before database/sql
// hands it out, so no pooled connection ever runs without the timeout.
// Connections are dialed through socks, under its connect timeout.
type sessionConnector struct {
	base  driver.Connector
	setup string
	socks *backends.Sockets
}

func (c *sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.socks.Connect(ctx, c.open)
}

func (c *sessionConnector) open(ctx context.Context) (driver.Conn, error) {
	conn, cancel, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	if cancel != nil {
		backends.SetCanceler(ctx, cancel)
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("postgres: driver connection cannot execute session setup")
	}
	if _, err := ex.ExecContext(ctx, c.setup, nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("postgres: session setup: %w", err)
	}
	// A statement whose connection the proxy cut (at the cancel grace,
	// or a silent network) stops within a second on PostgreSQL
	// 14 and later, instead of running on until it ends or
	// statement_timeout fires: the server otherwise notices a gone client
	// only when it next writes to it. It matters because PostgreSQL can
	// miss a CancelRequest that arrives in a statement's first
	// milliseconds (measured with lib/pq: at 5 ms in, any statement with
	// parameters ran to its end; at 30 ms it was cancelled), and the
	// proxy cuts the connection cancelGrace after a cancel. Servers that
	// cannot check keep the old behaviour (connectionCheckUnavailable).
	if _, err := ex.ExecContext(ctx, connectionCheckSetup, nil); err != nil && !connectionCheckUnavailable(err) {
		conn.Close()
		return nil, fmt.Errorf("postgres: session setup: %w", err)
	}
	// Whether statements may be cached on it (Engine.CacheStatements).
	dedicated, err := ownSession(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("postgres: session setup: %w", err)
	}
	if dedicated {
		backends.MarkDedicated(ctx)
	}
	return conn, nil
}

// ownSession reports whether conn talks to one server session of its own:
// the process id the server gave at startup (BackendKeyData, which lib/pq
// keeps for its CancelRequest) is the one pg_backend_pid() reports. A
// pooler answers the startup with a key of its own (PgBouncer: random),
// so behind one they differ, and statements prepared on the connection
// could later be looked up in another server session. lib/pq does not
// export the id: it is read from its connection's pid field, and a driver
// without one is taken for not dedicated.
func ownSession(ctx context.Context, conn driver.Conn) (bool, error) {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false, nil
	}
	f := v.Elem().FieldByName("pid")
	if !f.IsValid() || !f.CanInt() {
		return false, nil
	}
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return false, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT pg_backend_pid()", nil)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	vals := make([]driver.Value, 1)
	if err := rows.Next(vals); err != nil {
		return false, err
	}
	pid, ok := vals[0].(int64)
	return ok && pid != 0 && pid == f.Int(), nil
}

// connectionCheckSetup sets the server's client_connection_check_interval
// on the proxy's connections to one second.
const connectionCheckSetup = "SET client_connection_check_interval = 1000"

// connectionCheckUnavailable recognises a refused connectionCheckSetup
// that only means the server cannot check its client: PostgreSQL before
// 14 does not have the parameter (42704, undefined_object), and on a
// platform whose wait events cannot report a closed socket (Windows) its
// check hook refuses any value but 0 (22023, invalid_parameter_value).
func connectionCheckUnavailable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "42704" || pe.Code == "22023")
}

// connect opens a lib/pq connection and returns the function that sends
// its CancelRequest (nil: its key could not be read; see keyConn).
func (c *sessionConnector) connect(ctx context.Context) (driver.Conn, func(context.Context) error, error) {
	ks := &keySlot{}
	conn, err := c.base.Connect(context.WithValue(ctx, keySlotKey{}, ks))
	if err != nil {
		return nil, nil, err
	}
	if ks.last == nil {
		return conn, nil, nil
	}
	return conn, ks.last.canceler(c.socks), nil
}

func (c *sessionConnector) Driver() driver.Driver { return c.base.Driver() }

// UniqueNotNull reports whether column of schema.table is NOT NULL and
// alone forms a valid, non-partial unique index (a primary key counts).
// Then every value of it names at most one row, and the planner can skip
// the per-unit bounding window for a privacy unit with k ≥ 1. This reads
// the schema only, never the data.
func (b *Backend) UniqueNotNull(ctx context.Context, schema, table, column string) (bool, error) {
	const q = `SELECT EXISTS (
  SELECT 1 FROM pg_catalog.pg_index i
  JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
  WHERE n.nspname = COALESCE(NULLIF($1, ''), current_schema()) AND c.relname = $2
    AND i.indisunique AND i.indisvalid AND i.indnkeyatts = 1
    AND i.indpred IS NULL AND i.indexprs IS NULL
    AND lower(a.attname) = lower($3) AND a.attnotnull)`
	ok := false
	err := b.Rows(ctx, q, []ir.Value{ir.String(schema), ir.String(table), ir.String(column)}, func(_ []string, row []ir.Value) error {
		ok = row[0].Kind == ir.KindBool && row[0].Bool
		return nil
	})
	return ok, err
}
