package parser

import (
	"crypto/sha256"
	"encoding/hex"

	pg "github.com/pganalyze/pg_query_go/v6"
	tidb "github.com/pingcap/tidb/pkg/parser"
)

// Fingerprint identifies a statement's shape for logs and audit: a hash of
// the statement normalised by the dialect's own grammar with every literal
// removed, so two queries that differ only in constants share it and no
// constant (which may be private data an analyst typed) can be read back
// from it. PostgreSQL text uses pg_query's fingerprint (literals,
// parameter numbers and aliases ignored); MySQL text TiDB's digest of the
// normalised text (literals replaced by ?). It is "" for text the
// grammar rejects.
func Fingerprint(d Dialect, text string) string {
	switch d {
	case Postgres:
		fp, err := pg.Fingerprint(text)
		if err != nil {
			return ""
		}
		return "pg:" + fp
	case MySQL:
		norm, _ := tidb.NormalizeDigest(text)
		if norm == "" {
			return ""
		}
		// Hashed again so that the normalised text (identifiers included)
		// never appears, only its digest.
		h := sha256.Sum256([]byte(norm))
		return "my:" + hex.EncodeToString(h[:8])
	}
	return ""
}
