package parser

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	tidb "github.com/pingcap/tidb/pkg/parser"
)

// Fingerprint identifies a statement's shape for the audit history: 16 hex
// digits that are equal for statements that differ only in literal values,
// bind parameters, whitespace or comments, and never contain a literal.
// PostgreSQL text uses libpg_query's fingerprint (over the parse tree,
// constants left out), MySQL text TiDB's digest of the normalised
// statement (literals replaced by ?). "" when the text does not parse.
func Fingerprint(d Dialect, text string) string {
	switch d {
	case Postgres:
		fp, err := pg.Fingerprint(text)
		if err != nil {
			return ""
		}
		return fp
	case MySQL:
		_, dg := tidb.NormalizeDigest(text)
		if dg == nil {
			return ""
		}
		if s := dg.String(); len(s) >= 16 {
			return s[:16]
		}
	}
	return ""
}
