package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestPostgresBackendStandardConformingStringsOff: with
// standard_conforming_strings off (a server, role or DSN setting), the
// server ends a string at \' where pg_query, which the proxy checks the
// text with, reads on. Pass-through text must reach the server lexed as
// the proxy lexed it.
func TestPostgresBackendStandardConformingStringsOff(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	raw, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %v", err)
	}
	defer raw.Close(ctx)
	var rnd [4]byte
	rand.Read(rnd[:])
	schema := "ddp_scs_" + hex.EncodeToString(rnd[:])
	for _, s := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".secret (id bigint PRIMARY KEY, v bigint)",
		"INSERT INTO " + schema + ".secret SELECT g, g FROM generate_series(1, 37) g",
		"CREATE TABLE " + schema + ".pub (id bigint PRIMARY KEY, v bigint)",
	} {
		if _, err := raw.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			c.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	bdsn := dsn + sep + "options=-c%20standard_conforming_strings%3Doff"
	dir := t.TempDir()
	yaml := fmt.Sprintf(`version: 1
backend: {driver: postgres, dsn: %q}
listen: {postgres: "127.0.0.1:0", mysql: "off", auth: trust}
ledger: {path: %q}
users:
  - name: analyst
    scram_sha_256: "SCRAM-SHA-256$4096:ZGRwLXByb3h5LWRlbW8tc2FsdCE=$qAPd8V/SnKFcyDDCKp0IQLTsCwRJ/RRL6UQFwfbZ4M4=:NohECoZRG0EHMADxICmNaj7uHHXk9KtR7jVNv8Y7IE8="
    budgets: {stats: {epsilon: 1}}
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
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := servePolicy(t, pol)
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst@%s/test?sslmode=disable", p.pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`SELECT 'a\', ' , (SELECT count(*) FROM ` + schema + `.secret) -- '`,
		`SELECT id FROM ` + schema + `.pub WHERE 'a\' = ' OR (SELECT count(*) FROM ` + schema + `.secret) > 0 -- '`,
		`SELECT lower('a\') , (SELECT count(*) FROM ` + schema + `.secret) -- ')`,
		`SELECT id FROM ` + schema + `.pub WHERE 'a\' = '' OR (SELECT count(*) FROM ` + schema + `.secret) > 0 -- '`,
		`SELECT relname FROM pg_class WHERE relname = 'a\' OR (SELECT count(*) FROM ` + schema + `.secret) > 0 -- '`,
	} {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		n := len(rows.FieldDescriptions())
		var vals [][]any
		for rows.Next() {
			v, _ := rows.Values()
			vals = append(vals, v)
		}
		err = rows.Err()
		rows.Close()
		t.Logf("%s: %d columns, %v, %v", q, n, vals, err)
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
