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
// A Proxy holds what all sessions share (policy, planner, engine, backend,
// ledger, parse cache); a Session holds one connection's state (user, ε,
// settings, transaction flag). The PostgreSQL adapter (pg.go) implements
// wire/pgwire's Handler and Session interfaces; the MySQL adapter
// (mysql*.go) implements wire/mysqlwire's, answering MySQL's own session
// statements (SHOW TABLES/VARIABLES/WARNINGS, DESCRIBE, SELECT @@var,
// SET @ddp_epsilon) and reusing Session for everything else.
//
// session may import parser, planner, release, ledger, policies, ir,
// sqlerr and the wire packages' interface types. It must not import a
// database driver: the backend arrives through Config.
package session
