// Package mysqlwire is the MySQL protocol front end. The protocol itself
// (handshake v10, capability negotiation, TLS, packet framing, COM_QUERY
// text results with multi-statements, COM_STMT_PREPARE/EXECUTE/CLOSE/RESET
// with binary results, COM_FIELD_LIST, COM_PING, COM_INIT_DB,
// COM_SET_OPTION, COM_RESET_CONNECTION, COM_QUIT) is Vitess's server-side
// implementation (github.com/dolthub/vitess/go/mysql), which MySQL clients
// have been run against for years. This package adapts it:
//
//   - auth.go checks mysql_native_password and caching_sha2_password
//     against the proxy's users (cleartext or SHA1(SHA1(pw)) verifiers);
//   - handler.go turns Vitess callbacks into calls on the consumer
//     interfaces Handler and Session defined here, which the session
//     package implements;
//   - encode.go converts results, bound parameters and errors: every
//     error becomes exactly one ERR packet with the sqlerr code's MySQL
//     errno and SQLSTATE, and the connection stays usable;
//   - guard.go reads every connection one packet ahead of Vitess and
//     enforces Config.MaxPacket before Vitess allocates anything: a
//     command over it gets ER_NET_PACKET_TOO_LARGE and the connection
//     closes (as in MySQL), long data over it fails its execute;
//     tlsguard.go moves the guard above TLS after the handshake, reaching
//     into Vitess's private reader (see installGuard). The prepared
//     statements of a connection are capped in handler.go.
//
// Lifecycle of a connection: Vitess accepts it and runs the handshake,
// asking auth.go; after the OK packet each command calls one Handler
// method in the connection's goroutine; Session.Close runs when the
// client quits or the connection drops. Server.Shutdown stops accepting,
// waits for in-flight connections up to its context, then closes them.
//
// mysqlwire imports ir and sqlerr, never the session, planner or any
// backend. Vitess logs through the standard library's global logger with
// messages that can quote client SQL; Server silences that logger's
// Vitess output (see quietVitess) and logs through slog itself.
package mysqlwire
