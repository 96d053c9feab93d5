package ir

// CursorVerb is what a cursor statement does.
type CursorVerb uint8

const (
	// CursorDeclare is DECLARE name CURSOR [WITH HOLD] FOR query.
	CursorDeclare CursorVerb = iota
	// CursorFetch is FETCH [direction] [FROM] name.
	CursorFetch
	// CursorMove is MOVE: FETCH that returns no rows.
	CursorMove
	// CursorClose is CLOSE name (Name "" for CLOSE ALL).
	CursorClose
)

// FetchDirection is the direction of FETCH and MOVE.
type FetchDirection uint8

const (
	FetchForward  FetchDirection = iota // the next Count rows
	FetchBackward                       // the previous Count rows, last first
	FetchAbsolute                       // the row at position Count (negative: from the end)
	FetchRelative                       // the row Count positions away
)

// FetchAll is Count for FETCH ALL / FETCH FORWARD ALL.
const FetchAll = int64(1<<63 - 1)

// Cursor is a SQL-level cursor statement (PostgreSQL's DECLARE, FETCH,
// MOVE, CLOSE; psycopg's named cursors send them).
type Cursor struct {
	Verb CursorVerb
	Name string
	// For CursorDeclare: the query (a StmtSelect, or the StmtRefused that
	// says why it is not one) and whether the cursor outlives the
	// transaction (WITH HOLD).
	Query *Statement
	Hold  bool
	// For CursorFetch and CursorMove.
	Direction FetchDirection
	Count     int64
}
