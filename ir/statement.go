package ir

// StatementKind is the parser's classification of one statement.
type StatementKind uint8

const (
	// StmtSelect is a SELECT (or VALUES/TABLE/SHOW-as-query) that reads
	// relations or evaluates expressions. Query is set when the statement
	// fits the aggregate subset; the planner decides, with the policy, whether
	// it is a private aggregate, a public/catalog pass-through, or refused.
	StmtSelect StatementKind = iota
	// StmtSession is SET/RESET/SHOW of a setting, BEGIN/COMMIT/ROLLBACK,
	// USE, and similar statements that only touch session state.
	StmtSession
	// StmtExplain is EXPLAIN of an inner statement.
	StmtExplain
	// StmtRefused is a statement the proxy never runs (DML, DDL, COPY,
	// GRANT, CALL, LOCK, ...). Refused holds the *sqlerr.Error to return.
	StmtRefused
	// StmtEmpty is an empty query (";" or whitespace).
	StmtEmpty
	// StmtCursor is DECLARE CURSOR, FETCH, MOVE or CLOSE (Cursor).
	StmtCursor
)

var stmtKindText = [...]string{"select", "session", "explain", "refused", "empty", "cursor"}

func (k StatementKind) String() string { return stmtKindText[k] }

// Statement is one parsed statement of a (possibly multi-statement) query
// string.
type Statement struct {
	Kind StatementKind
	// Text is this statement's own SQL text, trimmed, without the trailing
	// semicolon. It is forwarded verbatim only for public/catalog
	// pass-through in the same dialect as the backend.
	Text string

	// For StmtSelect.
	Query *Query // nil when the statement is outside the aggregate subset
	// NotAggregate says why Query is nil, in words for the analyst
	// ("SELECT * reads rows", "subqueries are not supported", ...).
	NotAggregate string
	// Relations lists every relation the statement reads anywhere
	// (subqueries, CTEs, joins, set operations included), so the planner can
	// fail closed when any of them is private. CTE names are not listed.
	Relations []TableRef
	// Functions lists the lower-case names of every function called
	// anywhere in the statement (qualified names keep their schema:
	// "pg_catalog.format_type").
	Functions []string
	// NumParams is the number of bind parameters ($n / ?) in the statement.
	NumParams int
	// OutputNames are the result column names when the parser can tell
	// them without the catalog (nil otherwise, e.g. for SELECT *).
	OutputNames []string

	// For StmtSession.
	Session *Session

	// For StmtExplain.
	Explain *Statement
	Analyze bool // EXPLAIN ANALYZE

	// For StmtRefused: an *sqlerr.Error with the SQLSTATE and the reason.
	Refused error

	// For StmtCursor.
	Cursor *Cursor
}

// SessionVerb is the kind of a session statement.
type SessionVerb uint8

const (
	SessionSet SessionVerb = iota
	SessionReset
	SessionShow
	SessionBegin
	SessionCommit
	SessionRollback
	SessionUse   // USE db (MySQL)
	SessionOther // DISCARD, DEALLOCATE, SAVEPOINT, ...: accepted without effect
)

// Session is a statement that only touches session state.
type Session struct {
	Verb SessionVerb
	// Settings holds SET a = x, b = y (MySQL allows several in one SET);
	// for RESET and SHOW it holds one entry with only Name set
	// ("all" for RESET ALL / SHOW ALL). For USE, Name is the database.
	Settings []Setting
}

// Setting is one assignment or name of a session statement.
type Setting struct {
	// Name is lower-case and dotted as written ("ddp.epsilon",
	// "search_path", "names", "autocommit", "ddp_epsilon" for a MySQL user
	// variable @ddp_epsilon).
	Name string
	// Value is the assigned value as text (list values joined with ", ").
	Value string
	// Default is set for SET x TO DEFAULT / SET x = DEFAULT.
	Default bool
	// Scope is "" (session), "local", "global" or "user" (MySQL @var).
	Scope string
}
