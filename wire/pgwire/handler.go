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
// connection or by server shutdown.
type Session interface {
	// Query runs a simple-protocol query string: one Result per statement,
	// in order. When a statement fails, Query returns the results of the
	// statements before it and the error (an *sqlerr.Error); the rest is
	// not run.
	Query(ctx context.Context, sql string) ([]Result, error)
	// Prepare parses and plans one statement for the extended protocol.
	// paramTypes are the parameter type OIDs the client sent with Parse (0
	// = unspecified).
	Prepare(ctx context.Context, sql string, paramTypes []uint32) (*Prepared, error)
	// Execute runs a prepared statement with bound arguments (decoded by
	// the server according to Prepared.ParamTypes and the client's
	// declared OIDs). The result's rows must match Prepared.Columns
	// (same number of columns; values are encoded as the Prepared column
	// types, which is what the client was told in RowDescription).
	Execute(ctx context.Context, p *Prepared, args []ir.Value) (Result, error)
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

// Type is a result or parameter type, mapped to a PostgreSQL OID by the
// server.
type Type uint8

const (
	TypeText        Type = iota // text (25); also used for unknown types
	TypeInt8                    // bigint (20)
	TypeFloat8                  // double precision (701)
	TypeBool                    // boolean (16)
	TypeInt4                    // integer (23)
	TypeName                    // name (19), catalog columns
	TypeOID                     // oid (26), catalog columns
	TypeDate                    // date (1082)
	TypeTimestamp               // timestamp without time zone (1114)
	TypeTimestampTZ             // timestamp with time zone (1184), in UTC
)

// Column is a result column.
type Column struct {
	Name string
	Type Type
}

// Notice is a NoticeResponse sent before the result's CommandComplete.
type Notice struct {
	Message string
	Detail  string
	Hint    string
}

// Result is the outcome of one statement.
type Result struct {
	// Columns is nil for a statement that returns no rows (SET, BEGIN).
	Columns []Column
	Rows    [][]ir.Value
	// Tag is the CommandComplete tag ("SELECT 3", "SET", "BEGIN", "SHOW").
	Tag string
	// Empty marks an empty query (EmptyQueryResponse instead of a tag).
	Empty   bool
	Notices []Notice
}

// Prepared is a statement prepared for the extended protocol.
type Prepared struct {
	SQL string
	// ParamTypes has one entry per $n parameter.
	ParamTypes []Type
	// Columns describes the result (nil: the statement returns no rows).
	Columns []Column
	// State belongs to the session.
	State any
}
