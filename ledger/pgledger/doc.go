// Package pgledger is the budget ledger of ddp-proxy kept in PostgreSQL
// (or a PostgreSQL-compatible store), for several proxy replicas that share
// one budget per (user, dataset). It keeps the bbolt ledger's protocol and
// guarantees (ledger/doc.go): reserve durably before the backend runs,
// commit or refund once, crash leftovers stay charged, one release per
// cache key.
//
// # How each guarantee is kept across replicas
//
//   - A reservation is one statement, committed before Reserve returns: a
//     conditional UPDATE of the account row (spent + cost <= limit, for ε
//     and δ) and, in the same statement, the INSERT of the pending row. Row
//     locking serialises concurrent UPDATEs of one account and PostgreSQL
//     re-evaluates the WHERE clause on the newest row version, so two
//     replicas can never both fit into the last bit of a budget.
//   - Amounts are NUMERIC, exact decimals. Each float64 ε or δ is sent as
//     the shortest decimal that round-trips to it, the string
//     budget.ExactDecimal reads, so both ledgers charge the same exact
//     amount: three charges of 0.1 fit a limit of 0.3.
//   - A release is published first-writer-wins (INSERT … ON CONFLICT DO
//     NOTHING, then read back), so every replica serves the same answer.
//     Identical queries on several replicas are also serialised by a
//     session advisory lock per cache key (Flight), so they are charged
//     once; a replica that dies releases its locks with its connections.
//   - Pending rows name the replica that reserved them. A replica killed
//     between reserve and commit leaves its pending rows charged; nothing
//     ever refunds another replica's reservation.
//   - Every error reaching the database is fail closed: Reserve returns
//     sqlerr.LedgerUnavailable (SQLSTATE 08006) and the caller runs
//     nothing and answers nothing. A reservation the database committed
//     before the connection broke stays charged (never refunded blindly).
//     Every statement is bounded (Options.Timeout), so a silent database
//     fails the query too.
//
// # Schema
//
// The proxy creates its tables in one schema (Options.Schema, default
// ddp_ledger) and records the schema version in its meta table; Open
// refuses a schema written by a newer ddp-proxy.
//
// # Imports
//
// pgledger imports ledger (the dump format), budget (the shared types
// of release.Ledger, ExactDecimal), sqlerr and pgx. Like ledger, it never
// imports release, planner, backends, wire or parser; cmd/ddp-proxy
// asserts that it implements release.Ledger and release.Flighter.
package pgledger
