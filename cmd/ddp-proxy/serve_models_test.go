package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/prepare"
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
			err = prepare.VerifyConstrainedDomains(context.Background(), pol, be)
			if c.ok != (err == nil) {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "declared domain") && !strings.Contains(err.Error(), "one row per unit") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// TestVerifyConstrainedTextExactly: under a case-insensitive collation
// (SQLite's NOCASE, MariaDB's default *_ci) an undeclared spelling passes
// an IN over the declared values, and WHERE sex = 'f' also selects the
// rows spelled 'F'; serve refuses both, and accepts exact data.
func TestVerifyConstrainedTextExactly(t *testing.T) {
	type tc struct {
		name, domain, rows string
		ok                 bool
	}
	cases := []tc{
		{"exact", "[F, M]", "(1, 'F'), (2, 'M')", true},
		{"undeclared case", "[F, M]", "(1, 'F'), (2, 'm')", false},
		{"declared values equal under the collation", "[F, f, M]", "(1, 'F'), (2, 'M')", false},
		{"NULL", "[F, M]", "(1, 'F'), (2, NULL)", false},
	}
	run := func(t *testing.T, driver, dsn, create string, setup func(stmts ...string), c tc) {
		setup("DROP TABLE IF EXISTS review_vt", create, "INSERT INTO review_vt VALUES "+c.rows)
		pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "p.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: %s, dsn: %q}
datasets:
  d:
    model: induced
    constraints: [{marginal: [sex]}]
    tables:
      review_vt:
        unit: id
        columns:
          sex: {type: text, domain: {values: %s}}
`, driver, dsn, c.domain)))
		if err != nil {
			t.Fatal(err)
		}
		be, err := connect.Open(context.Background(), pol.Backend, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		err = prepare.VerifyConstrainedDomains(context.Background(), pol, be)
		if c.ok != (err == nil) {
			t.Fatalf("err = %v, want ok %v", err, c.ok)
		}
	}
	for _, c := range cases {
		t.Run("sqlite/"+c.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "d.db")
			db, err := sql.Open("sqlite3", "file:"+dbPath)
			if err != nil {
				t.Fatal(err)
			}
			prepare := func(stmts ...string) {
				for _, s := range stmts {
					if _, err := db.Exec(s); err != nil {
						t.Fatal(err)
					}
				}
				db.Close()
			}
			run(t, "sqlite", dbPath, "CREATE TABLE review_vt (id INTEGER, sex TEXT COLLATE NOCASE)", prepare, c)
		})
	}
	server := func(driver, dsn, create string, before ...string) {
		for _, c := range cases {
			t.Run(driver+"/"+c.name, func(t *testing.T) {
				db, err := sql.Open(driver, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS review_vt"); db.Close() })
				prepare := func(stmts ...string) {
					for _, s := range append(before, stmts...) {
						if _, err := db.Exec(s); err != nil {
							t.Fatal(err)
						}
					}
				}
				run(t, driver, dsn, create, prepare, c)
			})
		}
	}
	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		// A nondeterministic ICU collation: 'F' = 'f'.
		server("postgres", dsn, "CREATE TABLE review_vt (id INT, sex TEXT COLLATE review_ci)",
			"CREATE COLLATION IF NOT EXISTS review_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
		server("mysql", dsn, "CREATE TABLE review_vt (id INT, sex VARCHAR(10) COLLATE utf8mb4_general_ci) CHARACTER SET utf8mb4")
	}
}
