package mysqlwire

import (
	"context"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Handler is what the front end needs from the rest of the proxy.
type Handler interface {
	// LookupUser returns how to check a user's password; ok is false for
	// an unknown user (or one that cannot log in over MySQL).
	LookupUser(name string) (UserAuth, bool)
	// NewSession starts a session for an authenticated user; database is
	// the one named in the handshake ("" for none).
	NewSession(ctx context.Context, connID uint32, user, database string) (Session, error)
}

// UserAuth is one user's credentials.
type UserAuth struct {
	// Trust accepts any password (the demo).
	Trust bool
	// Password is the cleartext password, when the proxy knows it. It
	// allows both mysql_native_password and caching_sha2_password.
	Password string
	// NativeHash is SHA1(SHA1(password)) (20 bytes): mysql.user's
	// authentication_string without the '*'. It allows
	// mysql_native_password, and caching_sha2_password over TLS.
	NativeHash []byte
}

// Session is one client connection's state. Its methods are called from
// the connection's goroutine only. Answers are written to an
// ir.RowWriter the front end implements: rows are encoded and handed to
// Vitess as the session produces them; a statement that writes no
// columns is answered with an OK packet.
type Session interface {
	// Query runs one statement of the client's text (Vitess splits
	// multi-statements before calling), writing its answer to w.
	Query(ctx context.Context, sql string, w ir.RowWriter) error
	// Prepare parses one statement for COM_STMT_PREPARE.
	Prepare(ctx context.Context, sql string) (*Prepared, error)
	// Execute runs a prepared statement with its bound arguments,
	// writing its answer to w.
	Execute(ctx context.Context, p *Prepared, args []ir.Value, w ir.RowWriter) error
	// UseDatabase handles COM_INIT_DB.
	UseDatabase(name string) error
	// FieldList describes table's columns for COM_FIELD_LIST.
	FieldList(ctx context.Context, table string) ([]ir.Column, error)
	// Reset handles COM_RESET_CONNECTION: session state back to defaults.
	Reset()
	// Warnings is the warning count of the last statement.
	Warnings() uint16
	Close()
}

// Prepared is a prepared statement.
type Prepared struct {
	NumParams int
	// Columns describes the result (nil: an OK packet, no rows).
	Columns []ir.Column
	// State belongs to the Session.
	State any
}

// killerKey carries the front end's kill function in a statement's context.
type killerKey struct{}

type killer func(id uint32, queryOnly bool) error

// Kill runs KILL [QUERY | CONNECTION] id for the statement of ctx: the
// session reads the statement (the parser), and only the front end knows
// the connections, so it puts its kill function in every statement's
// context. A user may end only their own connections' statements.
func Kill(ctx context.Context, id uint32, queryOnly bool) error {
	k, ok := ctx.Value(killerKey{}).(killer)
	if !ok {
		return sqlerr.New(sqlerr.FeatureNotSupported, "KILL is answered only through the MySQL front end")
	}
	return k(id, queryOnly)
}
