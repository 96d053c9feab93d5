// Package sqlerr is the one error vocabulary of ddp-proxy. Every package
// reports client-visible failures as *Error carrying a typed Code; the wire
// front ends turn it into a PostgreSQL ErrorResponse or a MySQL ERR packet
// exactly once, at the boundary, with errors.As. The message of an *Error is
// written for the analyst and must never contain backend error text or row
// values: the wrapped cause is for logs only.
//
// This package imports nothing from the project.
package sqlerr

import (
	"errors"
	"fmt"
)

// Code identifies a class of failure in both wire vocabularies.
type Code struct {
	Name       string // stable identifier used in logs and explain --json
	SQLState   string // PostgreSQL SQLSTATE
	MySQLErrno uint16 // MySQL error number
	MySQLState string // SQLSTATE MySQL clients expect with that number
}

// The codes. Keep All in sync: a test checks that every code maps to both
// vocabularies.
var (
	SyntaxError           = Code{"syntax_error", "42601", 1064, "42000"}
	FeatureNotSupported   = Code{"feature_not_supported", "0A000", 1235, "42000"}
	InsufficientPrivilege = Code{"insufficient_privilege", "42501", 1142, "42000"}
	ReadOnly              = Code{"read_only", "25006", 1792, "25006"}
	UndefinedTable        = Code{"undefined_table", "42P01", 1146, "42S02"}
	UndefinedColumn       = Code{"undefined_column", "42703", 1054, "42S22"}
	UndefinedFunction     = Code{"undefined_function", "42883", 1305, "42000"}
	UndefinedObject       = Code{"undefined_object", "42704", 1193, "HY000"}
	// NoSuchThread is MySQL's KILL of a connection id that is not there
	// (ER_NO_SUCH_THREAD); PostgreSQL has no KILL.
	NoSuchThread = Code{"no_such_thread", "42704", 1094, "HY000"}
	// PeerUnavailable: another replica a request had to reach (a
	// forwarded KILL) could not be reached.
	PeerUnavailable       = Code{"peer_unavailable", "08006", 1105, "HY000"}
	AmbiguousColumn       = Code{"ambiguous_column", "42702", 1052, "23000"}
	GroupingError         = Code{"grouping_error", "42803", 1055, "42000"}
	WindowingError        = Code{"windowing_error", "42P20", 3593, "HY000"}
	DatatypeMismatch      = Code{"datatype_mismatch", "42804", 1210, "HY000"}
	InvalidParameterValue = Code{"invalid_parameter_value", "22023", 1231, "42000"}
	BudgetExhausted       = Code{"budget_exhausted", "53400", 1226, "42000"}
	InvalidPassword       = Code{"invalid_password", "28P01", 1045, "28000"}
	InvalidAuthorization  = Code{"invalid_authorization", "28000", 1045, "28000"}
	QueryCanceled         = Code{"query_canceled", "57014", 1317, "70100"}
	StatementTimeout      = Code{"statement_timeout", "57014", 3024, "HY000"}
	BackendUnavailable    = Code{"backend_unavailable", "08006", 2013, "HY000"}
	BackendFailed         = Code{"backend_failed", "XX000", 1105, "HY000"}
	// BackendRefused: the backend refused a statement of the proxy's when
	// preparing it, before running it (a policy that does not match the
	// database: a declared type or name, a privilege). Refundable, like
	// BackendUnavailable: nothing was run.
	BackendRefused = Code{"backend_refused", "58000", 1105, "HY000"}
	// LedgerUnavailable: the budget ledger's database cannot be reached, so
	// nothing was run or answered (fail closed; a charge the database
	// committed before it went away stays). A code of its own so that it is
	// never mistaken for BackendUnavailable, which refunds.
	LedgerUnavailable  = Code{"ledger_unavailable", "08006", 2013, "HY000"}
	ProtocolViolation  = Code{"protocol_violation", "08P01", 1047, "08S01"}
	TooManyConnections = Code{"too_many_connections", "53300", 1040, "08004"}
	Internal           = Code{"internal_error", "XX000", 1105, "HY000"}

	// Protocol-level codes (prepared statements, portals, parameter values).
	DuplicatePreparedStatement  = Code{"duplicate_prepared_statement", "42P05", 1105, "HY000"}
	InvalidStatementName        = Code{"invalid_sql_statement_name", "26000", 1243, "HY000"}
	DuplicateCursor             = Code{"duplicate_cursor", "42P03", 1105, "HY000"}
	InvalidCursorName           = Code{"invalid_cursor_name", "34000", 1326, "24000"}
	NoActiveTransaction         = Code{"no_active_sql_transaction", "25P01", 1105, "HY000"}
	InvalidTextRepresentation   = Code{"invalid_text_representation", "22P02", 1366, "HY000"}
	InvalidBinaryRepresentation = Code{"invalid_binary_representation", "22P03", 1366, "HY000"}
	AdminShutdown               = Code{"admin_shutdown", "57P01", 1053, "08S01"}

	// Size limits of the front ends (program_limit_exceeded). A message
	// over the limit ends the connection (MySQL's ER_NET_PACKET_TOO_LARGE);
	// the per-connection caps on prepared statements and parameters fail
	// one statement and leave the connection usable.
	PacketTooLarge            = Code{"packet_too_large", "54000", 1153, "08S01"}
	TooManyPreparedStatements = Code{"too_many_prepared_statements", "54000", 1461, "42000"}
	ProgramLimitExceeded      = Code{"program_limit_exceeded", "54000", 1105, "HY000"}
	// Plan-time refusals of failures the backend would raise (the
	// totality rule and the backends' fixed limits, DESIGN.md "Safety
	// rules"): reported before anything is charged. TooManyParameters is
	// MySQL's ER_PS_MANY_PARAM.
	NumericValueOutOfRange   = Code{"numeric_value_out_of_range", "22003", 1690, "22003"}
	CharacterNotInRepertoire = Code{"character_not_in_repertoire", "22021", 1300, "HY000"}
	TooManyParameters        = Code{"too_many_parameters", "54000", 1390, "HY000"}
	// A date or timestamp literal that is not one (ER_TRUNCATED_WRONG_VALUE)
	// or whose fields are out of range (ER_DATETIME_FUNCTION_OVERFLOW).
	InvalidDatetimeFormat = Code{"invalid_datetime_format", "22007", 1292, "22007"}
	DatetimeFieldOverflow = Code{"datetime_field_overflow", "22008", 1441, "22008"}
	StatementTooComplex   = Code{"statement_too_complex", "54001", 1473, "HY000"}
)

// All lists every code; the wire mapping tests iterate it.
var All = []Code{
	SyntaxError, FeatureNotSupported, InsufficientPrivilege, ReadOnly,
	UndefinedTable, UndefinedColumn, UndefinedFunction, UndefinedObject, NoSuchThread, PeerUnavailable,
	AmbiguousColumn, GroupingError, WindowingError, DatatypeMismatch, InvalidParameterValue,
	BudgetExhausted, InvalidPassword, InvalidAuthorization, QueryCanceled,
	StatementTimeout, BackendUnavailable, BackendFailed, BackendRefused, LedgerUnavailable, ProtocolViolation,
	TooManyConnections, Internal,
	DuplicatePreparedStatement, InvalidStatementName, DuplicateCursor, InvalidCursorName, NoActiveTransaction,
	InvalidTextRepresentation, InvalidBinaryRepresentation, AdminShutdown,
	PacketTooLarge, TooManyPreparedStatements, ProgramLimitExceeded,
	NumericValueOutOfRange, CharacterNotInRepertoire, TooManyParameters, StatementTooComplex,
	InvalidDatetimeFormat, DatetimeFieldOverflow,
}

// Error is a client-visible failure.
type Error struct {
	Code Code
	// Message is shown to the client. It says what went wrong and, where
	// possible, what to change. Never put row values or backend text here.
	Message string
	// Hint optionally names the fix (a policy field, a rewrite).
	Hint string
	// Cause is the internal error, for logs only.
	Cause error
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Message + " (hint: " + e.Hint + ")"
	}
	return e.Message
}

// Unwrap exposes the internal cause to errors.Is/As (logging only).
func (e *Error) Unwrap() error { return e.Cause }

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error whose client message is msg and whose logged cause is err.
func Wrap(code Code, err error, msg string) *Error {
	return &Error{Code: code, Message: msg, Cause: err}
}

// Canceled is the error of a statement its client cancelled (a
// CancelRequest, a KILL QUERY, a dropped connection's context), in
// PostgreSQL's words; cause says how it ended, for the log.
func Canceled(cause error) *Error {
	return Wrap(QueryCanceled, cause, "canceling statement due to user request")
}

// WithHint returns a copy of e with the hint set.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = fmt.Sprintf(format, args...)
	return &c
}

// As returns the *Error in err's chain, or an Internal error with a generic
// message when there is none: unknown errors never reach a client verbatim.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: "internal error", Cause: err}
}

// HasCode reports whether err carries the code c.
func HasCode(err error, c Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}

// NeverRan reports whether err is a backend failure that certainly came
// before the statement ran (BackendUnavailable: the server never saw it;
// BackendRefused: the server refused to prepare it), so it cannot depend
// on private data and its charge may be refunded.
func NeverRan(err error) bool {
	return HasCode(err, BackendUnavailable) || HasCode(err, BackendRefused)
}
