package demo_test

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/ddp-proxy/ddp-proxy/demo"
)

// buildDemo builds the demo under a fresh temporary directory.
func buildDemo(t *testing.T) demo.Files {
	t.Helper()
	f, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return f
}

// openRO opens a database file read-only, closed when the test ends.
func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scalar runs a query returning one value.
func scalar[T any](t *testing.T, db *sql.DB, query string, args ...any) T {
	t.Helper()
	var v T
	if err := db.QueryRow(query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// rows runs a query and calls fn for each row (fn scans it).
func rows(t *testing.T, db *sql.DB, query string, fn func(*sql.Rows) error) {
	t.Helper()
	rs, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := fn(rs); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
