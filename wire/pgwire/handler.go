package pgwire

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Handler is what the server needs from the rest of the proxy: who may log
// in, and a session per connection. The session package implements it.
type Handler interface {
	// LookupUser returns how to authenticate user; ok is false for an
	// unknown user (the server still runs the exchange to the end so an
	// attacker cannot tell unknown users from wrong passwords).
	LookupUser(user string) (auth UserAuth, ok bool)
	// NewSession starts a session for an authenticated user. params are the
	// startup parameters (database, application_name, client_encoding...).
	NewSession(ctx context.Context, user string, params map[string]string) (Session, error)
}

// UserAuth is one user's credentials. Exactly one of Password or
// SCRAMVerifier is set, unless Trust is.
type UserAuth struct {
	// Password is the cleartext password (from the policy's password_env).
	Password string
	// SCRAMVerifier is a PostgreSQL verifier:
	// SCRAM-SHA-256$<iterations>:<salt b64>$<StoredKey b64>:<ServerKey b64>.
	SCRAMVerifier string
	// Trust skips the password (the policy says listen.auth: trust).
	Trust bool
}

// Session executes statements for one connection. It is used by one
// goroutine at a time; ctx is cancelled by a CancelRequest for this
// connection or by server shutdown. Answers are written to an
// ir.RowWriter the server implements, so rows are encoded as the session
// produces them: Columns (RowDescription), Row (DataRow), Complete
// (notices, then CommandComplete or EmptyQueryResponse).
type Session interface {
	// Query runs a simple-protocol query string, writing each
	// statement's answer to w in order. When a statement fails, Query
	// returns the error (an *sqlerr.Error) after the answers of the
	// statements before it; the rest is not run.
	Query(ctx context.Context, sql string, w ir.RowWriter) error
	// Prepare parses and plans one statement for the extended protocol.
	// paramTypes are the parameter types the client declared with Parse
	// (ir.TypeUnknown = unspecified or a type without a name here).
	Prepare(ctx context.Context, sql string, paramTypes []ir.ColType) (*Prepared, error)
	// Execute runs a prepared statement with bound arguments (decoded by
	// the server according to Prepared.ParamTypes and the client's
	// declared OIDs), writing its answer to w. Its columns must match
	// Prepared.Columns (values are encoded as the Prepared column types,
	// which is what the client was told in RowDescription).
	Execute(ctx context.Context, p *Prepared, args []ir.Value, w ir.RowWriter) error
	// ParameterStatus lists the settings reported to the client at
	// startup (server_version, client_encoding, DateStyle, ...).
	ParameterStatus() map[string]string
	// TxStatus is the transaction state reported in every ReadyForQuery:
	// TxIdle, TxInBlock or TxFailed. The server asks after each simple
	// Query and each Sync; any other byte is reported as TxIdle.
	TxStatus() byte
	// Close ends the session.
	Close()
}

// Transaction states for Session.TxStatus, as ReadyForQuery carries them.
const (
	TxIdle    byte = 'I' // not in a transaction block
	TxInBlock byte = 'T' // inside BEGIN ... COMMIT
	TxFailed  byte = 'E' // in a failed transaction block (until ROLLBACK)
)

// Prepared is a statement prepared for the extended protocol.
type Prepared struct {
	SQL string
	// ParamTypes has one entry per $n parameter.
	ParamTypes []ir.ColType
	// Columns describes the result (nil: the statement returns no rows).
	Columns []ir.Column
	// State belongs to the session.
	State any
}
