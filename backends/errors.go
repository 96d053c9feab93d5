package backends

import "github.com/ddp-proxy/ddp-proxy/sqlerr"

// The client-visible failures. Their messages never carry backend text or
// values: the driver error is only the Cause, for logs.

// Unavailable reports that no statement was sent (refundable).
func Unavailable(cause error) *sqlerr.Error {
	return sqlerr.Wrap(sqlerr.BackendUnavailable, cause,
		"the backend database is unavailable; the query was not run").
		WithHint("retry later, or ask the operator to check the database")
}

// Refused reports that the server refused to prepare a statement of the
// proxy's (refundable: it never ran). The statement is the planner's, not
// the client's, so the cause is a policy that does not match the
// database; the driver's message goes to the log, for the operator.
func Refused(cause error) *sqlerr.Error {
	return sqlerr.Wrap(sqlerr.BackendRefused, cause,
		"the backend refused the query before running it; nothing was charged").
		WithHint("the policy may not match the database (a column's declared type or name, or a privilege of the proxy's database user); ask the operator to run ddp-proxy check --connect on the policy file")
}

// Canceled reports that the caller's context ended.
func Canceled(cause error) *sqlerr.Error {
	return sqlerr.Wrap(sqlerr.QueryCanceled, cause, "the query was cancelled")
}

// TimedOut reports that the statement timeout fired.
func TimedOut(cause error) *sqlerr.Error {
	return sqlerr.Wrap(sqlerr.StatementTimeout, cause,
		"the query exceeded the backend statement timeout").
		WithHint("narrow the query, or ask the operator to raise the statement timeout")
}

// Failed reports any other failure once the statement may have started.
func Failed(cause error) *sqlerr.Error {
	return sqlerr.Wrap(sqlerr.BackendFailed, cause, "the backend failed while running the query")
}

// Unresponsive reports a statement abandoned at the proxy's own deadline
// (ClientTimeout): the backend neither answered nor reported its statement
// timeout, so it or the network to it has gone silent. The statement had
// been sent, so it counts as run (not refundable).
func Unresponsive(cause error) *sqlerr.Error {
	return sqlerr.Wrap(sqlerr.StatementTimeout, cause,
		"the backend did not answer within the statement timeout; the query was abandoned").
		WithHint("the database or the network to it may be down; retry later, or ask the operator to check the backend")
}
