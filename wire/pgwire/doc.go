// Package pgwire is ddp-proxy's PostgreSQL front end: a server for the
// PostgreSQL frontend/backend protocol 3.0 that hands every statement to a
// Session and sends back what it returns.
//
// # Layers
//
//   - server.go: Server, the accept loop, the connection registry that
//     CancelRequest and Shutdown use, MaxConnections.
//   - startup.go: the untyped startup packets (SSLRequest, GSSENCRequest,
//     CancelRequest, StartupMessage) and TLS upgrade.
//   - auth.go: trust, SCRAM-SHA-256 (xdg-go/scram) or cleartext over TLS, verifier parsing,
//     fake credentials for unknown users.
//   - conn.go: one connection's goroutine: the message loop, output
//     buffering, per-statement contexts, errors.
//   - query.go, extended.go: the simple and extended query protocols.
//   - encode.go, decode.go: result values out (text and binary), bind
//     parameters in.
//   - errors.go: the single *sqlerr.Error → ErrorResponse conversion.
//
// Message framing is github.com/jackc/pgx/v5/pgproto3 (reads, and the
// encoding of most backend messages); DataRows are encoded here directly
// to avoid an allocation per row.
//
// # Connection lifecycle
//
//  1. Startup. The client sends SSLRequest (answered 'S' and upgraded to
//     TLS when Config.TLS is set, else 'N'), GSSENCRequest (always 'N'),
//     then a StartupMessage — or a CancelRequest, which cancels the running
//     statement of the connection whose process id and secret key match
//     and closes without a reply (with Config.PeerID, one whose process
//     id names another peer is forwarded to it). Protocol 3.x with x > 0, and _pq_.
//     options, are answered with NegotiateProtocolVersion (3.0, options
//     declined); other major versions get FATAL 08P01. No user name:
//     FATAL 28000. Over MaxConnections: FATAL 53300.
//  2. Authentication. Trust users get AuthenticationOk. Everyone else runs
//     SCRAM-SHA-256 without channel binding; unknown users run it against
//     fake credentials, so wrong password and unknown user both end in the
//     same FATAL 28P01. With Config.CleartextOverTLS, clients on a TLS
//     connection (only) are asked for the cleartext password instead,
//     checked against the same (real or fake) SCRAM credentials. Startup
//     and authentication must finish within startupTimeout.
//  3. Ready. Handler.NewSession opens the session; the server sends one
//     ParameterStatus per Session.ParameterStatus entry, BackendKeyData
//     (random process id and secret) and ReadyForQuery with
//     Session.TxStatus.
//  4. Query loop.
//     Simple protocol: Query → for each statement RowDescription,
//     DataRows (text), NoticeResponses, CommandComplete (or
//     EmptyQueryResponse); an error after the statements that succeeded;
//     ReadyForQuery.
//     Extended protocol: Parse / Bind / Describe / Execute / Close, each
//     acknowledged; Execute with a row limit sends PortalSuspended and the
//     next Execute continues from the rows the portal buffered (the session
//     runs a portal once). After an error everything up to Sync is skipped;
//     Sync answers ReadyForQuery and, outside a transaction block, ends all
//     portals. Every session call gets a context that CancelRequest cancels.
//     CopyData/CopyDone/CopyFail outside COPY are ignored, as PostgreSQL
//     does; FunctionCall is refused with 0A000.
//  5. Termination. Terminate or EOF closes the connection and the session.
//     A malformed or unknown message is FATAL 08P01; one over
//     Config.MaxMessageBytes is FATAL 54000, its body never read into
//     memory (it is drained, bounded in time, so the client reads the
//     error instead of a reset). A panic ends only its connection
//     (logged, FATAL XX000). Prepared statements (count and text size)
//     and portals are capped per connection; a Parse or Bind over the
//     caps fails with 54000 and the connection stays usable.
//     Shutdown closes idle connections at once (FATAL 57P01), lets a
//     running statement — or a started extended batch, until its Sync —
//     finish and be answered, and at its deadline cancels what still runs.
//
// # Errors
//
// Every client-visible error is a *sqlerr.Error converted to an
// ErrorResponse in one function, errorResponse; anything else becomes
// XX000 "internal error" and its text is only logged. A session call that
// fails with a bare context error after a CancelRequest reports 57014.
//
// Must never import: planner, release, ledger, backends, parser, session
// (see package wire). Only ir and sqlerr from this module.
package pgwire
