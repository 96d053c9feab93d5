package sqlite

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Backend is an SQLite database file. Its methods are those of
// backends.Engine (Dialect, Aggregate, Rows, Close, Ping) plus Columns.
type Backend struct {
	*backends.Engine
}

// Open opens the existing database file at path (it is never created: a
// mistyped path must not become an empty database) and checks that LIKE
// is case-sensitive on its connections. Every connection gets the
// saturating sum the SQLite dialect renders SUM with.
func Open(ctx context.Context, path string, opts backends.Options) (*Backend, error) {
	db, err := driver.Open(dsn(path), registerFunctions)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "invalid SQLite database path")
	}
	d := sqlrender.SQLite()
	if d.SaturatingSum != saturatingSum {
		db.Close()
		return nil, sqlerr.New(sqlerr.Internal, "internal error: the SQLite dialect sums with %q, but the backend registers %q", d.SaturatingSum, saturatingSum)
	}
	b := &Backend{Engine: backends.NewEngine(db, d, opts, classify, nil)}
	if err := b.checkLike(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// dsn builds a file: URI. Every pooled connection runs the pragmas when
// it is opened.
func dsn(path string) string {
	q := url.Values{}
	q.Add("mode", "rw")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "case_sensitive_like(1)")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// checkLike fails closed when the pragma did not take effect (a build
// that omits it would silently make LIKE case-insensitive).
func (b *Backend) checkLike(ctx context.Context) error {
	var got int64 = -1
	err := b.Rows(ctx, `SELECT 'A' LIKE 'a'`, nil, func(_ []string, row []ir.Value) error {
		got = row[0].Int
		return nil
	})
	if err != nil {
		if sqlerr.HasCode(err, sqlerr.BackendFailed) {
			// Opening the file happens lazily; a missing file fails here.
			return backends.Unavailable(err)
		}
		return err
	}
	if got != 0 {
		return sqlerr.New(sqlerr.Internal, "the SQLite build ignores PRAGMA case_sensitive_like; LIKE would match case-insensitively")
	}
	return nil
}

// Columns lists the columns of schema.table in declaration order (schema
// "" means "main"). A table with no columns is UndefinedTable.
func (b *Backend) Columns(ctx context.Context, schema, table string) ([]backends.ColumnInfo, error) {
	if schema == "" {
		schema = "main"
	}
	const q = `SELECT name, type FROM pragma_table_info(?, ?) ORDER BY cid`
	var cols []backends.ColumnInfo
	err := b.Rows(ctx, q, []ir.Value{ir.String(table), ir.String(schema)}, func(_ []string, row []ir.Value) error {
		cols = append(cols, backends.ColumnInfo{Name: row[0].Str, Type: row[1].Str})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "table %q not found in the SQLite backend", schema+"."+table).
			WithHint("check the table name in the policy")
	}
	return cols, nil
}

// classify: SQLite has no statement timeout of its own (the context is the
// timeout), so only the result code is reported, for logs.
func classify(err error) (bool, string) {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		return false, "sqlite_" + strconv.Itoa(int(se.ExtendedCode()))
	}
	return false, ""
}

// UniqueNotNull reports whether column of schema.table is NOT NULL and
// alone forms a non-partial unique index, or is the INTEGER PRIMARY KEY
// (the rowid, never NULL). Then every value of it names at most one row, and
// the planner can skip the per-unit bounding window. Schema only.
func (b *Backend) UniqueNotNull(ctx context.Context, schema, table, column string) (bool, error) {
	if schema == "" {
		schema = "main"
	}
	const q = `SELECT
  (SELECT COUNT(*) FROM pragma_table_info(?1, ?2) WHERE lower(name) = lower(?3)
     AND (("notnull" = 1) OR (pk = 1 AND upper(type) = 'INTEGER'
          AND (SELECT COUNT(*) FROM pragma_table_info(?1, ?2) WHERE pk > 0) = 1))),
  (SELECT COUNT(*) FROM pragma_table_info(?1, ?2) WHERE lower(name) = lower(?3)
     AND pk = 1 AND upper(type) = 'INTEGER'
     AND (SELECT COUNT(*) FROM pragma_table_info(?1, ?2) WHERE pk > 0) = 1),
  (SELECT COUNT(*) FROM pragma_index_list(?1, ?2) il
     WHERE il."unique" = 1 AND il.partial = 0
       AND (SELECT COUNT(*) FROM pragma_index_info(il.name, ?2)) = 1
       AND (SELECT lower(name) FROM pragma_index_info(il.name, ?2)) = lower(?3))`
	var notNull, rowid, unique int64
	err := b.Rows(ctx, q, []ir.Value{ir.String(table), ir.String(schema), ir.String(column)}, func(_ []string, row []ir.Value) error {
		notNull, rowid, unique = row[0].Int, row[1].Int, row[2].Int
		return nil
	})
	if err != nil {
		return false, err
	}
	return rowid > 0 || (notNull > 0 && unique > 0), nil
}
