package sqlrender

import "github.com/ddp-proxy/ddp-proxy/ir"

// MySQL is the MySQL 8 / MariaDB ≥ 10.4 dialect (window functions for the
// contribution bound, CAST AS DOUBLE). Differences from the other
// dialects, and why:
//
//   - CAST targets are SIGNED, DOUBLE and CHAR: neither server accepts
//     CAST(x AS BIGINT) or CAST(x AS TEXT).
//   - SUM over integers returns DECIMAL(65) here, so the outer CAST of a
//     sum is left out (UncastSum): the exact DECIMAL total is clamped to
//     the int64 limits in SQL (as on PostgreSQL) and read as an int64 by
//     backends.DecodeInt.
//   - LEAST/GREATEST return NULL when an argument is NULL, as in SQLite.
//   - LENGTH counts bytes; CHAR_LENGTH counts characters like PostgreSQL
//     (exprtype's function table spells it).
//   - ROUND of a double rounds half to even on most C libraries, so round
//     is rendered as SIGN(x)·FLOOR(|x|+0.5) like on PostgreSQL.
//   - / of two integers returns a DECIMAL: integer division is DIV, real
//     division casts both operands to DOUBLE.
//   - ASC sorts NULLs first already; backslash is LIKE's default escape.
//
// Text comparison and LIKE follow the column's collation: with the usual
// case-insensitive collations (utf8mb4_general_ci) 'a' = 'A'. (Text group
// keys arrive as CAST(key AS CHAR), in the session's binary no-pad
// collation: see planner's exactTextKey.)
// Declare text columns with a binary no-pad collation (utf8mb4_nopad_bin
// on MariaDB, utf8mb4_0900_bin on MySQL 8) to get the answers the
// PostgreSQL and SQLite backends give on the same data.
func MySQL() *Dialect {
	return &Dialect{
		Name:         "mysql",
		IdentQuote:   '`',
		Placeholders: Question,
		Least:        "LEAST",
		Greatest:     "GREATEST",
		IntDiv:       "DIV",
		IntType:      "SIGNED",
		NullSafeEq:   "<=>",
		FloatType:    "DOUBLE",
		TextType:     "CHAR",
		UncastSum:    true,
		// Dates and times are bound as text and cast (a DATETIME keeps
		// six fractional digits); sessions run in UTC (time_zone).
		ParamCast: [ir.KindTimestampTZ + 1]string{
			ir.KindDate:        "DATE",
			ir.KindTimestamp:   "DATETIME(6)",
			ir.KindTimestampTZ: "DATETIME(6)",
		},
		// A prepared statement's parameter count is two bytes.
		MaxParams:   65535,
		MaxDepth:    mysqlMaxDepth,
		MaxSQLBytes: maxSQLBytes,
	}
}
