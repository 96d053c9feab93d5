package backends

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Backend is a database holding the real data: the one interface the
// planner, the release engine, the sessions and the commands use
// (planner.Backend and session.Backend are aliases of it). The drivers
// (one sub-package each) implement it over Engine and render
// ir.BackendQuery in their own SQL dialect; they never see client SQL
// text except for public/catalog pass-through, and never put literals
// into SQL text (they bind them).
//
// Errors are *sqlerr.Error values whose messages carry no backend text or
// row values, with exactly these codes, because the release step decides
// refunds from them (DESIGN.md safety rules):
//   - sqlerr.BackendUnavailable: the statement certainly never started
//     executing (no connection could be had, the server refused us).
//   - sqlerr.BackendRefused: the server refused to prepare the statement,
//     so it never ran. Only these two codes are refundable
//     (sqlerr.NeverRan).
//   - sqlerr.QueryCanceled: ctx was cancelled (client cancel, shutdown).
//   - sqlerr.StatementTimeout: the backend's statement timeout fired.
//   - sqlerr.BackendFailed: anything else.
type Backend interface {
	// Dialect names the SQL dialect: "postgres", "mysql" or "sqlite".
	Dialect() string
	// Aggregate computes q and calls fn once per group (exactly once, with
	// no keys, when q has no GROUP BY). Rows arrive in no particular order.
	Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error
	// Rows runs sql (in the backend's dialect, with args bound to its
	// placeholders) over public or catalog tables only, and calls fn per row
	// with the column names first seen in cols.
	Rows(ctx context.Context, sql string, args []ir.Value, fn func(cols []string, row []ir.Value) error) error
	// Stream runs a public/catalog pass-through statement like Rows:
	// start is called once with the column descriptions, and the function
	// it returns once per row, as the backend produces them.
	Stream(ctx context.Context, text string, args []ir.Value, start func([]ColumnInfo) func([]ir.Value) error) error
	// Close releases the connection pool.
	Close() error
}
