// Package session is the per-connection logic shared by the wire front
// ends: it parses a client's statements (through a parse cache), answers
// session statements (SET/SHOW/RESET/BEGIN...), EXPLAIN and the budget view
// itself, hands private aggregates to the planner and the release engine,
// and forwards public or catalog statements to the backend.
//
// Private answers are held back to listen.min_response_ms here (Exec,
// holdPrivateAnswer), not in the front ends, so both wires pad alike.
//
// Every executed statement is reported to Config.Observer (the admin
// listener's metrics) with its class and outcome, and every private one
// is logged once at info by its fingerprint (observe.go): never its text,
// a literal or a value.
//
// Answers stream. Exec(ctx, statement, args, w) writes a statement's
// answer to an ir.RowWriter — columns once, rows one by one, then a
// completion with the structured cost (ε, δ, cache hit, notices) — and
// returns that cost. The wire front ends implement the writer, so rows
// are encoded as they come: pass-through rows go from the backend
// (backends.Engine.Stream) through a per-row filter (statistics blanked,
// undeclared relations dropped) to the wire; a private answer's rows are
// held once, by the release (post-processing needs them all), and go to
// the wire from there. Only the proxy's own small answers (session
// statements, EXPLAIN, the budget view, local and emulated-catalog
// answers) are built as a Result first. The one path of a query:
//
//	wire (pgwire/mysqlwire: decode) → session (parse, own answer or plan)
//	→ planner → release → backends → release (noise) → session → wire (encode)
//
// A Proxy holds what all sessions share for the life of the process
// (backend, ledger, engine, parse cache, logger); a generation holds one
// policy and what is derived from it (planner, emulated catalog); a
// reload builds a generation and swaps one pointer. A Session holds one
// connection's state (user, ε, settings, transaction flag) and the
// generation it runs on, moving to the newest before each statement. The
// PostgreSQL adapter (pg.go) implements wire/pgwire's Handler and Session
// interfaces by passing the front end's writer to the core; the MySQL
// adapter (mysql*.go) implements wire/mysqlwire's, answering MySQL's own
// session statements (SHOW TABLES/VARIABLES/WARNINGS, DESCRIBE, SELECT
// @@var, SET @ddp_epsilon) and wrapping the writer for everything else
// (MySQL statistics columns blanked, cost notes kept for SHOW WARNINGS).
//
// session may import parser, planner, release, ledger, policies, ir,
// sqlerr and the wire packages' interface types. It must not import a
// database driver: the backend arrives through Config.
package session
