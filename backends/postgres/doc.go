// Package postgres is the PostgreSQL backend (github.com/lib/pq): a
// backends.Engine over a pool whose every session runs with
// statement_timeout set and default_transaction_read_only on (the proxy
// never writes through a backend; read-only sessions make that a server
// guarantee), plus the classification of pq errors and the Columns
// introspection helper.
//
// It must never import the planner or any privacy package; the
// compile-time check that *Backend satisfies backends.Backend is in
// backends/connect and the tests.
package postgres
