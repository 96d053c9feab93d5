package session

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

const pgSearchPolicy = `
version: 1
backend: {driver: %s, dsn: %q}
ledger: {path: %q}
users:
  - name: eve
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {hr: {epsilon: 1000}}
    max_epsilon: 1
datasets:
  hr:
    tables:
      people:
        schema: %q
        unit: id
        columns:
          name: {type: text}
          note: {type: text}
`

// TestSearchOnNondeterministicCollation: PostgreSQL raises "nondeterministic
// collations are not supported for LIKE" (ILIKE, substring searches:
// replace) when it evaluates them on such a column — an error after the
// charge, which a WHERE conjunct placed before it could make depend on
// whether some row matches. The searched text is given the database's
// default collation, which is always deterministic: the query answers.
func TestSearchOnNondeterministicCollation(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("ddp_search_%d", os.Getpid())
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	drop := "DROP SCHEMA IF EXISTS " + schema + " CASCADE"
	t.Cleanup(func() { raw.Exec(drop); raw.Close() })
	var rows []string
	for i := range 50 {
		rows = append(rows, fmt.Sprintf("(%d, 'Name%d', 'n%d')", i, i, i%5))
	}
	for _, s := range []string{drop, "CREATE SCHEMA " + schema,
		"CREATE COLLATION " + schema + ".ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
		"CREATE TABLE " + schema + ".people (id BIGINT, name TEXT COLLATE " + schema + ".ci, note TEXT)",
		"INSERT INTO " + schema + ".people VALUES " + strings.Join(rows, ", ")} {
		if _, err := raw.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	be, err := postgres.Open(ctx, dsn, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := totalityProxyPolicy(t, pgSearchPolicy, "postgres", dsn, schema, "a", be)
	for _, q := range []string{
		"SELECT COUNT(*) FROM people WHERE note = 'n1' AND name LIKE 'Name1%'",
		"SELECT COUNT(*) FROM people WHERE note = 'n1' AND name NOT ILIKE 'name1%'",
		"SELECT COUNT(*) FROM people WHERE note = 'n1' AND lower(name) LIKE 'name%'",
		"SELECT COUNT(*) FROM people WHERE note = 'n1' AND replace(name, 'Name', 'N') = 'N1'",
	} {
		if _, err, _ := f.run(t, probe{name: q, dialect: parser.Postgres, sql: q}); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
