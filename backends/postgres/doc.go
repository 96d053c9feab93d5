// Package postgres is the PostgreSQL backend (github.com/lib/pq): a
// backends.Engine over a pool whose every session runs with
// statement_timeout set and default_transaction_read_only on (the proxy
// never writes through a backend; read-only sessions make that a server
// guarantee), plus the classification of pq errors and the Columns
// introspection helper.
//
// The engine cancels a statement with the connection's CancelRequest
// itself, so lib/pq watches no context per statement; the key is read
// from the connection's startup handshake as it passes (cancel.go). Over
// TLS it cannot be, and lib/pq cancels by itself.
//
// It must never import the planner or any privacy package; the
// compile-time check that *Backend satisfies backends.Backend is in
// backends/connect and the tests.
package postgres
