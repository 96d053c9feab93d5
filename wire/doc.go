// Package wire is the home of ddp-proxy's client-facing front ends: the
// code that speaks a database's wire protocol so that psql, JDBC,
// psycopg2, BI tools and the MySQL client can connect to the proxy as if
// it were the database.
//
// The wire layer owns everything about connections and bytes: listening,
// TLS, startup and authentication handshakes, message framing, the
// simple and extended query protocols, encoding result values and
// decoding parameters, cancel requests, connection limits and graceful
// shutdown, and turning a *sqlerr.Error into the protocol's error packet
// exactly once. It owns nothing about what a statement means.
//
// Each front end defines, next to its server, the small interface it
// calls (pgwire.Handler and pgwire.Session, mysqlwire.Handler and
// mysqlwire.Session): who may log in, and a session that runs statements
// and writes each answer to an ir.RowWriter the front end implements
// (columns, rows of ir.Values, a completion with the cost), so rows are
// encoded as the session produces them and never held whole here. Result
// column types are ir.ColType; each front end maps them to its protocol
// in one place (pgwire: oidOf/typeOfOID; mysqlwire: mysqlType). The
// session package implements those interfaces; the front ends never see
// it.
//
// Subpackages:
//
//	pgwire     PostgreSQL protocol 3.0 server
//	mysqlwire  MySQL protocol server (Vitess's protocol implementation,
//	           adapted to mysqlwire.Handler and mysqlwire.Session)
//
// Both front ends number a replica's connections the same way when
// replicas are peers (peers.go: the replica number in an id's high bits).
//
// Must never import: planner, release, ledger, backends, parser,
// sensitivity, constraints, noise, policies, session. The wire layer may
// import only ir (values in rows and parameters) and sqlerr (the error
// vocabulary), so a new protocol can be added without touching the
// privacy code and the privacy code cannot depend on a wire format.
package wire
