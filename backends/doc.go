// Package backends holds what the database backends share: the connection
// Options, the ColumnInfo of the introspection helpers, the decoding of
// driver values into ir.Value, and Engine, the database/sql runner that
// renders an ir.BackendQuery (through sqlrender), runs it on a pooled
// connection under a statement timeout and maps every failure onto the
// error codes of Backend (backend.go), the one interface every driver
// implements and the planner, sessions and commands use.
//
// The drivers live in sub-packages, one per database: postgres (lib/pq),
// sqlite (ncruces/go-sqlite3) and mysql (go-sql-driver/mysql, MySQL 8 and
// MariaDB). Each is a thin layer over
// Engine: it opens the pool, configures every session (statement timeout,
// case-sensitive LIKE) and classifies its driver's errors. The network
// drivers dial through Sockets (connect timeout, keepalives), which lets
// the Engine cut a connection whose backend went silent.
//
// This package and its sub-packages must never import the planner, the
// privacy code (sensitivity, constraints, noise, ledger) or the wire front
// ends: the planner consumes backends through Backend, defined here,
// and the backends know nothing about budgets or noise. Only the error
// codes they return carry that knowledge (BackendUnavailable and
// BackendRefused are the only refundable ones, sqlerr.NeverRan), so the code choice is conservative throughout.
package backends
