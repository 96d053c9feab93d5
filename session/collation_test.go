package session

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

const collationPolicy = `
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
          sex: {type: text, domain: {values: ['F', 'f', 'F ', 'M']}}
`

// TestGroupByUnderCaseInsensitiveCollation: on MySQL a text column with
// the usual case- and pad-insensitive collation (utf8mb4_general_ci)
// groups 'F', 'f' and 'F ' together and returns the spelling of
// whichever row it met first. Grouped so, one person's spelling (the
// first row: 'f' instead of 'F') moved the whole group's count from key
// 'F' to key 'f' — a change of hundreds in one released count from one
// person, far beyond the sensitivity the noise is calibrated to. Each
// declared spelling must count its own rows only.
func TestGroupByUnderCaseInsensitiveCollation(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_MYSQL_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_MYSQL_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("ddp_coll_%d", os.Getpid())
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	drop := "DROP DATABASE IF EXISTS " + schema
	t.Cleanup(func() { raw.Exec(drop); raw.Close() })
	var rows []string
	for i := range 1000 {
		s := "F"
		switch {
		case i == 0:
			s = "f" // the one person whose spelling decides
		case i%10 == 5:
			s = "F "
		case i%100 >= 80:
			s = "M"
		}
		rows = append(rows, fmt.Sprintf("(%d, '%s')", i, s))
	}
	for _, s := range []string{drop, "CREATE DATABASE " + schema,
		"CREATE TABLE " + schema + ".people (id BIGINT, sex VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)",
		"INSERT INTO " + schema + ".people VALUES " + strings.Join(rows, ", ")} {
		if _, err := raw.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	be, err := mysql.Open(ctx, dsn, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := totalityProxyPolicy(t, collationPolicy, "mysql", dsn, schema, "a", be)
	// True counts (i%10 == 5 wins over M): f 1, 'F ' 100, M 180, F 719.
	want := map[string]int64{"F": 719, "f": 1, "F ": 100, "M": 180}
	for _, q := range []string{
		"SELECT sex, COUNT(*) FROM people GROUP BY sex",
		"SELECT sex, COUNT(*) FROM people WHERE sex IS NOT NULL GROUP BY sex",
		"SELECT lower(sex) AS k, COUNT(*) FROM people GROUP BY 1",
	} {
		res, err, _ := f.run(t, probe{name: q, dialect: parser.MySQL, sql: q})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got := map[string]int64{}
		for _, r := range res.Rows {
			got[r[0].Str] = r[1].Int
		}
		exp := want
		if strings.Contains(q, "lower") {
			exp = map[string]int64{"f": 720, "f ": 100, "m": 180}
		}
		for k, n := range exp {
			if d := got[k] - n; d > 60 || d < -60 {
				t.Errorf("%s: key %q released %d, true count %d (all: %v)", q, k, got[k], n, got)
			}
		}
	}
}
