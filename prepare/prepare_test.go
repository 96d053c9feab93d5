package prepare

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// sqlitePolicy makes a SQLite database from stmts and an induced policy
// over its table t (a marginal on sex, unit id).
func sqlitePolicy(t *testing.T, stmts ...string) *policies.Policy {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	pol, err := policies.LoadBytes(filepath.Join(dir, "p.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: sqlite, dsn: %q}
datasets:
  d:
    model: induced
    constraints: [{marginal: [sex]}]
    tables:
      t:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
`, path)))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// TestOpen: one step opens the backend, marks unique units and refuses a
// policy whose constrained column holds an undeclared value.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	pol := sqlitePolicy(t, "CREATE TABLE t (id INTEGER NOT NULL PRIMARY KEY, sex TEXT)", "INSERT INTO t VALUES (1, 'F'), (2, 'M')")
	be, err := Open(ctx, pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	be.Close()
	if !pol.Datasets["d"].Tables["t"].UnitUnique {
		t.Error("a NOT NULL primary-key unit was not marked unique")
	}

	pol = sqlitePolicy(t, "CREATE TABLE t (id INTEGER, sex TEXT)", "INSERT INTO t VALUES (1, 'F'), (2, 'X')")
	if _, err := Open(ctx, pol, nil); err == nil || !strings.Contains(err.Error(), "outside its declared domain") {
		t.Errorf("undeclared value: %v", err)
	}
	if pol.Datasets["d"].Tables["t"].UnitUnique {
		t.Error("a unit without a unique index was marked unique")
	}
}
