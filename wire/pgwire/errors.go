package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Severities of an ErrorResponse.
const (
	sevError = "ERROR"
	sevFatal = "FATAL"
)

// errorResponse is the one place an error becomes an ErrorResponse. Errors
// that are not *sqlerr.Error become XX000 "internal error" (sqlerr.As), so
// their text — possibly backend text with row values — never reaches the
// client.
func errorResponse(severity string, err error) *pgproto3.ErrorResponse {
	e := sqlerr.As(err)
	return &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                e.Code.SQLState,
		Message:             e.Message,
		Hint:                e.Hint,
	}
}

// protocolErr is a client protocol violation (08P01).
func protocolErr(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.ProtocolViolation, format, args...)
}
