package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestVerifyConstrainedDomains: serve refuses a constrained column holding
// NULL or an undeclared value, and accepts conforming data.
func TestVerifyConstrainedDomains(t *testing.T) {
	for _, c := range []struct {
		name, rows string
		ok         bool
	}{
		{"conforming", "(1, 'F', 3), (2, 'M', 1)", true},
		{"NULL", "(1, 'F', 3), (2, NULL, 1)", false},
		{"undeclared value", "(1, 'F', 3), (2, 'X', 1)", false},
		{"out of range", "(1, 'F', 3), (2, 'M', 12)", false},
		// SQLite keeps 2.5 in an INTEGER column: inside the range, yet
		// no value of the declared integer domain.
		{"fraction inside an integer range", "(1, 'F', 3), (2, 'M', 2.5)", false},
		{"integral real inside the range", "(1, 'F', 3), (2, 'M', 2.0)", true},
		// Two rows of one unit: the backend keeps one per unit (k = 1), so
		// a query no longer reads the rows the published counts count.
		{"unit with two rows", "(1, 'F', 3), (1, 'M', 1)", false},
		{"two rows of the NULL unit", "(NULL, 'F', 3), (NULL, 'M', 1)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "d.db")
			db, err := sql.Open("sqlite3", "file:"+dbPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"CREATE TABLE t (id INTEGER, sex TEXT, age INTEGER)", "INSERT INTO t VALUES " + c.rows} {
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
    constraints: [{marginal: [sex]}, {count: {age: {range: [0, 4]}}}]
    tables:
      t:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
          age: {type: integer, domain: {range: [0, 9]}}
`, dbPath)))
			if err != nil {
				t.Fatal(err)
			}
			be, err := connect.Open(context.Background(), pol.Backend, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			err = verifyConstrainedDomains(context.Background(), pol, be)
			if c.ok != (err == nil) {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "declared domain") && !strings.Contains(err.Error(), "one row per unit") {
				t.Errorf("message %q", err)
			}
		})
	}
}
