package session

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

const dupKeyPolicy = `
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
      visits:
        schema: %q
        unit: id
        columns:
          at: {type: timestamp, domain: {values: ['2010-06-01 00:00:00', '2010-06-02 00:00:00']}}
`

// TestKeysThatReadAlike: SQLite stores a timestamp as text, and two
// spellings of one instant ('2010-06-01 00:00:00' and
// '2010-06-01T00:00:00') are two backend groups that read as one key.
// The second group met replaced the first, so one person storing the
// other spelling (sorted after the others) replaced a count of 2000 by
// 1. Groups that read as one key are added up.
func TestKeysThatReadAlike(t *testing.T) {
	ctx := context.Background()
	for _, odd := range []string{"2010-06-01 00:00:00", "2010-06-01T00:00:00", "2010-06-01 00:00:00.000"} {
		t.Run(odd, func(t *testing.T) {
			rows := []string{fmt.Sprintf("(0, '%s')", odd)}
			for i := 1; i < 2000; i++ {
				rows = append(rows, fmt.Sprintf("(%d, '2010-06-01 00:00:00')", i))
			}
			for i := 2000; i < 2500; i++ {
				rows = append(rows, fmt.Sprintf("(%d, '2010-06-02 00:00:00')", i))
			}
			dsn := filepath.Join(t.TempDir(), "d.db")
			db, err := sql.Open("sqlite3", "file:"+dsn)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"CREATE TABLE visits (id INTEGER, at TIMESTAMP)", "INSERT INTO visits VALUES " + strings.Join(rows, ", ")} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			db.Close()
			be, err := sqlite.Open(ctx, dsn, backends.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f := totalityProxyPolicy(t, dupKeyPolicy, "sqlite", dsn, "", "a", be)
			q := "SELECT at, COUNT(*) FROM visits GROUP BY at"
			res, err, _ := f.run(t, probe{name: q, dialect: parser.Postgres, sql: q})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 2 {
				t.Fatalf("rows %v, want the two declared keys", res.Rows)
			}
			if n := res.Rows[0][1].Int; n < 1900 || n > 2100 {
				t.Errorf("key %s released %d, true count 2000 (%v)", res.Rows[0][0].SQL(), n, res.Rows)
			}
		})
	}
}
