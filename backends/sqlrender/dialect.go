package sqlrender

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// PlaceholderStyle is how a dialect spells bind parameters.
type PlaceholderStyle uint8

const (
	// Dollar numbers parameters: $1, $2, ... (PostgreSQL).
	Dollar PlaceholderStyle = iota
	// Question uses positional ? (SQLite, MySQL).
	Question
)

// Dialect is the table of spellings Render needs. The constructors return a
// fresh value each time, so callers may adjust a copy without affecting
// anyone else.
type Dialect struct {
	// Name is what backends.Backend.Dialect returns.
	Name string
	// IdentQuote encloses identifiers (" or `).
	IdentQuote   byte
	Placeholders PlaceholderStyle
	// ParamCast, indexed by ir.Kind, wraps a literal's placeholder in
	// CAST(ph AS type) when not empty. PostgreSQL needs it: an untyped
	// parameter takes the type of the other operand (int4 = $1 fails for
	// 2^40 or 1.5, and `$1 IS NULL` cannot be typed at all).
	ParamCast [ir.KindTimestampTZ + 1]string
	// BoolAsInt binds booleans as 0/1 (SQLite has no boolean type).
	BoolAsInt bool
	// Least and Greatest are the two-argument scalar min and max.
	Least, Greatest string
	// LeastIgnoresNull is set when LEAST/GREATEST skip NULL arguments
	// (PostgreSQL) instead of returning NULL: clamping must then guard NULL
	// explicitly, or a NULL value would count as the bound.
	LeastIgnoresNull bool
	// IntDiv divides two integers truncating toward zero (MySQL's /
	// returns a decimal; its DIV truncates).
	IntDiv string
	// IntType and FloatType are CAST targets for exact 64-bit integers and
	// IEEE doubles.
	IntType, FloatType string
	// NullSafeEq is the equality under which NULL equals NULL (IS NOT
	// DISTINCT FROM; MySQL <=>, SQLite IS).
	NullSafeEq string
	// TextType is the CAST target for text.
	TextType string
	// ILike is set when the dialect has a case-sensitive LIKE and an
	// ILIKE; otherwise case-insensitive matching renders as
	// LOWER(x) LIKE LOWER(p).
	ILike bool
	// LikeEscape follows every LIKE pattern. ir.Like patterns use backslash
	// as the escape character; SQLite has no default escape.
	LikeEscape string
	// NullsFirst follows every ORDER BY key so NULLs sort first everywhere
	// (PostgreSQL's default is last, SQLite's and MySQL's first).
	NullsFirst string
	// SaturatingSum names a backend aggregate that sums integers exactly
	// and saturates the total at the int64 limits instead of raising an
	// error (SQLite's SUM raises "integer overflow"; backends/sqlite
	// registers this function on every connection). Empty: SUM, whose
	// exact total is clamped to the int64 limits in SQL.
	SaturatingSum string
	// ExactTextCollate follows a text group key (a CAST to text at the
	// top of a key: planner's exactTextKey) so that it groups by the
	// exact spelling whatever the column's collation or type: PostgreSQL's
	// citext and nondeterministic collations, SQLite's COLLATE NOCASE
	// and RTRIM would merge 'F', 'f' and 'F ' into one group carrying
	// one row's spelling. Empty on MySQL, whose CAST(x AS CHAR) already
	// has the session's binary no-pad collation.
	ExactTextCollate string
	// SearchCollate follows the text operand of LIKE/ILIKE and the first
	// argument of a searching function (exprtype.Func.Searches): on a
	// column of a nondeterministic collation PostgreSQL raises "not
	// supported" when it evaluates them, which may depend on the rows
	// reached. PostgreSQL's database default collation is always
	// deterministic, and keeps ILIKE's case folding. Empty where every
	// collation supports them.
	SearchCollate string
	// MaxParams is the most bind parameters one statement may carry, and
	// MaxDepth the deepest parenthesis nesting the renderer may produce
	// with a margin below the backend's own expression-depth limit. The
	// planner refuses larger statements before anything is charged
	// (planner.Limits; Measure reports a statement's shape).
	MaxParams, MaxDepth int
	// MaxSQLBytes caps the SQL text (MySQL's default max_allowed_packet
	// is 16 MB); rendering beyond it fails with ProgramLimitExceeded.
	MaxSQLBytes int
	// UncastSum leaves the outer CAST off a SUM (MySQL: see MySQL()).
	UncastSum bool
	// TimeZoneSuffix binds a timestamptz as text ending in +00
	// (PostgreSQL); otherwise time values are bound as ir.CanonicalText,
	// UTC without a suffix (MySQL's DATETIME and the SQLite text form).
	TimeZoneSuffix bool
	// TimeAsText: the dialect has no date types (SQLite). Dates and
	// timestamps are stored and compared as ir.CanonicalText, a cast to
	// date is date(x) and one to timestamp datetime(x), which write that
	// form.
	TimeAsText bool
}

// Postgres is the PostgreSQL dialect.
func Postgres() *Dialect {
	return &Dialect{
		Name:         "postgres",
		IdentQuote:   '"',
		Placeholders: Dollar,
		ParamCast: [ir.KindTimestampTZ + 1]string{
			ir.KindInt:         "BIGINT",
			ir.KindFloat:       "DOUBLE PRECISION",
			ir.KindString:      "TEXT",
			ir.KindBool:        "BOOLEAN",
			ir.KindDate:        "DATE",
			ir.KindTimestamp:   "TIMESTAMP",
			ir.KindTimestampTZ: "TIMESTAMPTZ",
		},
		TimeZoneSuffix:   true,
		Least:            "LEAST",
		Greatest:         "GREATEST",
		LeastIgnoresNull: true,
		IntDiv:           "/",
		IntType:          "BIGINT",
		FloatType:        "DOUBLE PRECISION",
		TextType:         "TEXT",
		ExactTextCollate: ` COLLATE "C"`,
		SearchCollate:    ` COLLATE "default"`,
		NullSafeEq:       "IS NOT DISTINCT FROM",
		ILike:            true,
		NullsFirst:       " NULLS FIRST",
		// The extended protocol counts parameters in an int16 (lib/pq).
		MaxParams:   65535,
		MaxDepth:    postgresMaxDepth,
		MaxSQLBytes: maxSQLBytes,
	}
}

// SQLite is the SQLite dialect. It assumes a build with the math functions
// (floor, ceil), which the embedded ncruces build has, and connections with
// PRAGMA case_sensitive_like = ON (backends/sqlite sets and checks it):
// SQLite's LIKE is otherwise case-insensitive for ASCII. LOWER and UPPER
// fold ASCII letters only, unlike PostgreSQL's locale-aware folding.
func SQLite() *Dialect {
	return &Dialect{
		Name:             "sqlite",
		IdentQuote:       '"',
		Placeholders:     Question,
		BoolAsInt:        true,
		TimeAsText:       true,
		Least:            "MIN",
		Greatest:         "MAX",
		IntDiv:           "/",
		IntType:          "INTEGER",
		FloatType:        "REAL",
		TextType:         "TEXT",
		ExactTextCollate: " COLLATE BINARY",
		NullSafeEq:       "IS",
		LikeEscape:       ` ESCAPE '\'`,
		// SQLITE_MAX_VARIABLE_NUMBER of the embedded build (the default
		// since 3.32; TestParamLimitsHold runs it and fails one more).
		MaxParams:     32766,
		MaxDepth:      sqliteMaxDepth,
		MaxSQLBytes:   maxSQLBytes,
		SaturatingSum: "ddp_saturating_sum",
	}
}

// QuoteIdent quotes name as an identifier, doubling embedded quotes.
func (d *Dialect) QuoteIdent(name string) string {
	var b strings.Builder
	d.writeIdent(&b, name)
	return b.String()
}

func (d *Dialect) writeIdent(b *strings.Builder, name string) {
	q := d.IdentQuote
	b.WriteByte(q)
	for i := 0; i < len(name); i++ {
		if name[i] == q {
			b.WriteByte(q)
		}
		b.WriteByte(name[i])
	}
	b.WriteByte(q)
}

// identLen is the length of what writeIdent writes for name.
func (d *Dialect) identLen(name string) int {
	n := len(name) + 2
	for i := 0; i < len(name); i++ {
		if name[i] == d.IdentQuote {
			n++
		}
	}
	return n
}

// Arg converts v into the value a database/sql driver of this dialect
// binds: int64, float64, string, bool (0/1 int64 with BoolAsInt) or nil.
func (d *Dialect) Arg(v ir.Value) any {
	switch v.Kind {
	case ir.KindInt:
		return v.Int
	case ir.KindFloat:
		return v.Float
	case ir.KindString:
		return v.Str
	case ir.KindBool:
		if d.BoolAsInt {
			if v.Bool {
				return int64(1)
			}
			return int64(0)
		}
		return v.Bool
	case ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
		if d.TimeZoneSuffix {
			return ir.FormatTime(v.Kind, v.Int)
		}
		return ir.CanonicalText(v.Kind, v.Int)
	}
	return nil
}
