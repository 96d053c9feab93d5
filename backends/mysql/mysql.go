package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Backend is a MySQL or MariaDB database. Its methods are those of
// backends.Engine plus Columns and UniqueNotNull.
type Backend struct {
	*backends.Engine
	database string
	bools    boolColumns
	conn     *sessionConnector
}

// ExactTableNames reports whether the server compares table names
// case-sensitively (lower_case_table_names = 0), as read by the setup of
// its connections; false until a connection was made, and for 1 or 2.
func (b *Backend) ExactTableNames() bool { return b.conn.lowerCase.Load() == 0 }

// Server error numbers of a statement timeout.
const (
	errMySQLQueryTimeout       = 3024 // ER_QUERY_TIMEOUT (max_execution_time)
	errMariaDBStatementTimeout = 1969 // ER_STATEMENT_TIMEOUT (max_statement_time)
)

// New prepares a pool for dsn (go-sql-driver/mysql syntax,
// user:pass@tcp(host:port)/db?params) without connecting.
func New(dsn string, opts backends.Options) (*Backend, error) {
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		// The driver's message may quote the DSN, password included.
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, errors.New("invalid DSN"), "invalid MySQL connection string").
			WithHint("use user:password@tcp(host:3306)/database (go-sql-driver/mysql syntax)")
	}
	// Exact integers and doubles come back typed only with the binary
	// protocol: never interpolate arguments into the text.
	cfg.InterpolateParams = false
	cfg.ParseTime = false
	// Dial through the engine's sockets (connect timeout, keepalives, cut
	// at the client-side deadline).
	socks := backends.NewSockets(opts.ConnectTimeout)
	cfg.DialFunc = socks.DialContext
	// The driver logs I/O failures (a cut connection among them) to the
	// process's standard logger; route them to ours.
	cfg.Logger = driverLog{opts.Logger}
	if cfg.Timeout == 0 {
		cfg.Timeout = socks.ConnectTimeout()
	}
	base, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, errors.New("invalid DSN"), "invalid MySQL connection string")
	}
	sc := &sessionConnector{base: base, timeout: opts.StatementTimeout, socks: socks}
	sc.lowerCase.Store(-1)
	db := sql.OpenDB(sc)
	return &Backend{Engine: backends.NewEngine(db, sqlrender.MySQL(), opts, classify, socks), database: cfg.DBName, conn: sc}, nil
}

// Open is New followed by a connection check.
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

// Columns lists the columns of schema.table (schema "" is the DSN's
// database) in ordinal order.
func (b *Backend) Columns(ctx context.Context, schema, table string) ([]backends.ColumnInfo, error) {
	const q = `SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ?
ORDER BY ordinal_position`
	var cols []backends.ColumnInfo
	err := b.Rows(ctx, q, []ir.Value{ir.String(schema), ir.String(table)}, func(_ []string, row []ir.Value) error {
		cols = append(cols, backends.ColumnInfo{Name: row[0].Text(), Type: strings.ToUpper(row[1].Text())})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		name := table
		if schema != "" {
			name = schema + "." + table
		}
		return nil, sqlerr.New(sqlerr.UndefinedTable, "table %q not found in the MySQL backend", name).
			WithHint("check the table name and database in the policy, and the backend user's privileges")
	}
	return cols, nil
}

// UniqueNotNull reports whether column of schema.table is NOT NULL and
// alone forms a unique index (PRIMARY KEY included), so every value names
// at most one row. It reads information_schema only, never the data.
func (b *Backend) UniqueNotNull(ctx context.Context, schema, table, column string) (bool, error) {
	const q = `SELECT COUNT(*) FROM information_schema.statistics s
JOIN information_schema.columns c
  ON c.table_schema = s.table_schema AND c.table_name = s.table_name AND c.column_name = s.column_name
WHERE s.table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND s.table_name = ?
  AND LOWER(s.column_name) = LOWER(?) AND s.non_unique = 0 AND s.sub_part IS NULL
  AND c.is_nullable = 'NO'
  AND (SELECT COUNT(*) FROM information_schema.statistics s2
       WHERE s2.table_schema = s.table_schema AND s2.table_name = s.table_name
         AND s2.index_name = s.index_name) = 1`
	ok := false
	err := b.Rows(ctx, q, []ir.Value{ir.String(schema), ir.String(table), ir.String(column)}, func(_ []string, row []ir.Value) error {
		n, err := backends.DecodeInt(driverValue(row[0]))
		ok = err == nil && n > 0
		return nil
	})
	return ok, err
}

func driverValue(v ir.Value) any {
	switch v.Kind {
	case ir.KindInt:
		return v.Int
	case ir.KindString:
		return v.Str
	case ir.KindFloat:
		return v.Float
	}
	return nil
}

// classify recognises the servers' statement timeouts.
func classify(err error) (bool, string) {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == errMySQLQueryTimeout || me.Number == errMariaDBStatementTimeout, strconv.Itoa(int(me.Number))
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn) {
		return false, "bad_conn"
	}
	return false, ""
}

// sessionConnector configures every new session before database/sql hands
// it out: read-only, and the statement timeout in the flavour's own
// variable (MySQL's max_execution_time in ms applies to SELECT only,
// which is all the proxy sends; MariaDB's max_statement_time is seconds).
type sessionConnector struct {
	base    driver.Connector
	timeout time.Duration
	socks   *backends.Sockets
	// lowerCase is the server's lower_case_table_names (-1 until a
	// connection's setup read it).
	lowerCase atomic.Int32
}

func (c *sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.socks.Connect(ctx, c.open)
}

func (c *sessionConnector) open(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.setup(ctx, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("mysql: session setup: %w", err)
	}
	return conn, nil
}

// textOf reads a driver value of the text or binary protocol as text.
func textOf(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

func (c *sessionConnector) setup(ctx context.Context, conn driver.Conn) error {
	q, ok1 := conn.(driver.QueryerContext)
	ex, ok2 := conn.(driver.ExecerContext)
	if !ok1 || !ok2 {
		return errors.New("driver connection cannot run session setup")
	}
	rows, err := q.QueryContext(ctx, "SELECT VERSION(), @@lower_case_table_names, @@SESSION.sql_mode", nil)
	if err != nil {
		return err
	}
	dest := make([]driver.Value, 3)
	err = rows.Next(dest)
	rows.Close()
	if err != nil && err != io.EOF {
		return err
	}
	if n, err := strconv.Atoi(textOf(dest[1])); err == nil {
		c.lowerCase.Store(int32(n))
	}
	version := ""
	switch v := dest[0].(type) {
	case []byte:
		version = string(v)
	case string:
		version = v
	}
	mariadb := strings.Contains(strings.ToLower(version), "mariadb")
	var stmts []string
	// Literals compare case- and trailing-space-sensitively, as on the
	// other backends (columns keep their own collation: see
	// sqlrender.MySQL).
	if mariadb {
		stmts = append(stmts, "SET SESSION tx_read_only = 1", "SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin")
	} else {
		stmts = append(stmts, "SET SESSION transaction_read_only = 1", "SET NAMES utf8mb4 COLLATE utf8mb4_0900_bin")
	}
	// TIMESTAMP columns are read and compared in UTC (exprtype: a
	// timestamptz is a UTC reading), whatever the server's time_zone.
	stmts = append(stmts, "SET SESSION time_zone = '+00:00'")
	if mode, changed := lexingMode(textOf(dest[2])); changed {
		stmts = append(stmts, "SET SESSION sql_mode = '"+mode+"'")
	}
	if c.timeout > 0 {
		if mariadb {
			stmts = append(stmts, fmt.Sprintf("SET SESSION max_statement_time = %s", strconv.FormatFloat(max(c.timeout.Seconds(), 0.001), 'f', 3, 64)))
		} else {
			stmts = append(stmts, fmt.Sprintf("SET SESSION max_execution_time = %d", max(c.timeout.Milliseconds(), 1)))
		}
	}
	for _, s := range stmts {
		if _, err := ex.ExecContext(ctx, s, nil); err != nil {
			return err
		}
	}
	return nil
}

func (c *sessionConnector) Driver() driver.Driver { return c.base.Driver() }

// driverLog adapts slog to go-sql-driver's Logger. The driver's messages
// are I/O errors, never query text or values.
type driverLog struct{ log *slog.Logger }

func (l driverLog) Print(v ...any) {
	if l.log != nil {
		l.log.Debug("mysql driver", "msg", fmt.Sprint(v...))
	}
}

// Database is the DSN's database ("" when it names none).
func (b *Backend) Database() string { return b.database }

// lexingModes are the sql_mode flags under which the server splits a
// statement into tokens otherwise than the proxy's grammar (TiDB's, in the
// default mode) does. Pass-through text goes to the server as written, so
// with NO_BACKSLASH_ESCAPES a string the grammar read whole ('a\' ...')
// would end at the backslash there and the rest run unchecked: a private
// table read by it answered exactly. ANSI and MariaDB's ORACLE, MSSQL,
// DB2, POSTGRESQL and MAXDB are composite modes (ANSI_QUOTES among them;
// ORACLE switches MariaDB to another grammar).
var lexingModes = map[string]bool{
	"NO_BACKSLASH_ESCAPES": true, "ANSI_QUOTES": true, "ANSI": true,
	"ORACLE": true, "MSSQL": true, "DB2": true, "POSTGRESQL": true, "MAXDB": true,
}

// lexingMode returns the session's sql_mode without lexingModes, and
// whether that removed any. A mode list with anything but flag names in
// it (never seen from a server) is replaced by the empty mode.
func lexingMode(mode string) (string, bool) {
	var keep []string
	changed := false
	for _, m := range strings.Split(mode, ",") {
		m = strings.TrimSpace(m)
		switch {
		case m == "":
		case strings.Trim(strings.ToUpper(m), "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != "":
			return "", true
		case lexingModes[strings.ToUpper(m)]:
			changed = true
		default:
			keep = append(keep, m)
		}
	}
	return strings.Join(keep, ","), changed
}
