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
	// Ungrouped is set, with Query nil, when the only reason for
	// NotAggregate is the grouping rule (a column selected, or read by a
	// window, outside GROUP BY): it is the query as built otherwise. The
	// planner never plans it; it only reads its column references, so
	// that a reference to the privacy unit column is refused as such and
	// the analyst is not told to GROUP BY a column that would be refused
	// there too.
	Ungrouped *Query
	// Rows is the statement as a row-level read (RowQuery) when it fits
	// that subset, whether or not Query is set: the planner answers it on
	// a backend of another dialect when every table it reads is public.
	// RowsRefusal says why Rows is nil ("" for an aggregate SELECT).
	Rows        *RowQuery
	RowsRefusal string
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
	// Local is set for a SELECT that reads no table and whose every item
	// is a literal, a variable or a session function called without
	// arguments (a connector's connect-time probes, a pool's SELECT 1):
	// the session answers it itself when it knows every item. Nil for
	// anything else.
	Local []LocalItem
	// PsqlList is set for psql's "List of relations" query (\dt, \d
	// without a name, \dt pattern): the proxy answers it from the policy.
	PsqlList *PsqlList

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
	// SessionKill is KILL [QUERY | CONNECTION] id (MySQL): Settings[0] is
	// {Name: "query" or "connection", Value: the decimal id}.
	SessionKill
)

// Session is a statement that only touches session state.
type Session struct {
	Verb SessionVerb
	// Settings holds SET a = x, b = y (MySQL allows several in one SET);
	// for RESET and SHOW it holds one entry with only Name set
	// ("all" for RESET ALL / SHOW ALL). For USE, Name is the database.
	Settings []Setting
	// Full is SHOW FULL TABLES / SHOW FULL COLUMNS (MySQL), whose extra
	// columns clients index by position (SQLAlchemy reads Table_type).
	Full bool
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
	// Append says Value is appended to the setting's current value:
	// SET sql_mode = CONCAT(@@sql_mode, ',STRICT_TRANS_TABLES'), which
	// Connector/J and MariaDB Connector/J send on connect.
	Append bool
}

// LocalItemKind is the kind of one item of a local SELECT.
type LocalItemKind uint8

const (
	// LocalLiteral is a constant: Value.
	LocalLiteral LocalItemKind = iota
	// LocalSysVar is @@name, @@session.name or @@global.name (MySQL).
	LocalSysVar
	// LocalUserVar is @name (MySQL).
	LocalUserVar
	// LocalFunc is a function called without arguments, or one of SQL's
	// argument-less keywords (CURRENT_USER, CURRENT_TIMESTAMP, ...).
	LocalFunc
)

// LocalItem is one select-list item of a local SELECT.
type LocalItem struct {
	Kind LocalItemKind
	// Name is the lower-case variable or function name, without scope or
	// schema ("version_comment", "ddp_epsilon", "version").
	Name string
	// Global is set for @@global.name.
	Global bool
	// Value is a LocalLiteral's value (a decimal literal is a Float).
	Value Value
	// Output is the result column's name as the dialect names it: the
	// alias, else PostgreSQL's function name or MySQL's item as written.
	Output string
}

// PsqlList is psql's "List of relations" query over pg_class.
type PsqlList struct {
	// Relkinds are the relation kinds asked for ("r", "p", "v", ...).
	Relkinds []string
	// Pattern is the regular expression psql made of the name pattern
	// (\dt peo* gives "^(peo.*)$"); HasPattern says there is one.
	Pattern    string
	HasPattern bool
}
