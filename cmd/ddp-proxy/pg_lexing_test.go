package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
)

// TestPostgresBackendStandardConformingStringsOff: with
// standard_conforming_strings off (a server, role or DSN setting), the
// server ends a string at \' where pg_query, which the proxy checks the
// text with, reads on. Pass-through text must reach the server lexed as
// the proxy lexed it.
func TestPostgresBackendStandardConformingStringsOff(t *testing.T) {
	dsn := pgtest.DSN(t, "the standard_conforming_strings test")
	raw := pgtest.Connect(t, dsn)
	schema := pgtest.CreateSchema(t, raw, dsn, "ddp_scs_")
	pgtest.Exec(t, raw,
		"CREATE TABLE "+schema+".secret (id bigint PRIMARY KEY, v bigint)",
		"INSERT INTO "+schema+".secret SELECT g, g FROM generate_series(1, 37) g",
		"CREATE TABLE "+schema+".pub (id bigint PRIMARY KEY, v bigint)",
	)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	bdsn := dsn + sep + "options=-c%20standard_conforming_strings%3Doff"
	dir := t.TempDir()
	yaml := fmt.Sprintf(pgAnalystPolicyHead+`    budgets: {stats: {epsilon: 1}}
datasets:
  stats:
    tables:
      secret:
        schema: %s
        unit: id
        columns:
          v: {type: integer, bounds: [0, 100]}
      pub:
        schema: %s
        public: true
`, bdsn, filepath.Join(dir, "ledger.db"), schema, schema)
	pol := loadPolicyText(t, dir, yaml)
	p, _ := servePolicy(t, pol)
	conn := connectPgxURL(t, fmt.Sprintf("postgres://analyst@%s/test?sslmode=disable", p.pgAddr), pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{
		`SELECT 'a\', ' , (SELECT count(*) FROM ` + schema + `.secret) -- '`,
		`SELECT id FROM ` + schema + `.pub WHERE 'a\' = ' OR (SELECT count(*) FROM ` + schema + `.secret) > 0 -- '`,
		`SELECT lower('a\') , (SELECT count(*) FROM ` + schema + `.secret) -- ')`,
		`SELECT id FROM ` + schema + `.pub WHERE 'a\' = '' OR (SELECT count(*) FROM ` + schema + `.secret) > 0 -- '`,
		`SELECT relname FROM pg_class WHERE relname = 'a\' OR (SELECT count(*) FROM ` + schema + `.secret) > 0 -- '`,
	} {
		r, err := queryPgx(conn, q)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		vals := r.vals
		t.Logf("%s: %d columns, %v, %v", q, r.cols, vals, r.err)
		// Read as pg_query reads it, each statement returns strings only
		// (or no row from the empty public table); a number is the count.
		leaked := strings.Contains(q, "pub WHERE") && len(vals) > 0
		for _, row := range vals {
			for _, v := range row {
				if _, ok := v.(string); !ok {
					leaked = true
				}
			}
		}
		if leaked {
			t.Errorf("%s: the backend read the private table: %v", q, vals)
		}
	}
}
