package ir

// ColType is a result column's type: the one vocabulary the proxy answers
// in, whatever the client's protocol. Each wire front end maps it to its
// protocol's types in one place (pgwire: OIDs; mysqlwire: field types).
type ColType uint8

// Result column types.
const (
	TypeText        ColType = iota // text; also anything without a better type
	TypeInt8                       // 64-bit integer
	TypeFloat8                     // double precision
	TypeBool                       // boolean
	TypeInt4                       // 32-bit integer (catalog columns)
	TypeName                       // PostgreSQL name (catalog columns)
	TypeOID                        // PostgreSQL oid (catalog columns)
	TypeDate                       // date
	TypeTimestamp                  // timestamp without time zone
	TypeTimestampTZ                // timestamp with time zone, in UTC
)

// Column is a result column.
type Column struct {
	Name string
	Type ColType
}

// Cost is what one statement's answer cost, as the session reports it to
// the client: the budget charged (zero for an answer that is free or
// served from an earlier release), whether it was such a repeat, and the
// notices that state the cost and noise in words (DESIGN.md: every
// answer states its cost).
type Cost struct {
	Epsilon float64
	Delta   float64
	// Private is set for an answer computed from private rows.
	Private bool
	// Cached is set for a private answer served from an earlier release
	// or a synopsis, at no cost.
	Cached  bool
	Notices []string
}

// Completion ends one statement's answer.
type Completion struct {
	// Tag is the PostgreSQL command tag ("SELECT 3", "SET", "BEGIN").
	Tag string
	// Empty marks an empty statement (no tag, no rows).
	Empty bool
	Cost  Cost
}

// RowWriter receives one statement's answer as it is produced, so that
// rows go from the backend (or the release) to the client without being
// held again on the way (Vitess's callback style). For each statement:
// Columns at most once (never for a statement without rows: SET, BEGIN),
// then Row once per row, then Complete once. The caller does not reuse or
// change a row slice after passing it, so a writer may keep it (a
// PostgreSQL portal read in parts) without copying. An error from the
// writer (the client went away) stops the statement.
type RowWriter interface {
	Columns(cols []Column) error
	Row(row []Value) error
	Complete(c Completion) error
}

// TypeUnknown marks a parameter whose type the client did not declare.
const TypeUnknown ColType = 255
