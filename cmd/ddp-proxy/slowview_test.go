package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
)

// slowBackendView creates on the PostgreSQL at dsn a view of 200 million
// generated rows (id, age 0–99) — no key, so the per-unit window runs
// over all of it: tens of seconds for one COUNT — dropped when the test
// ends, and returns its name (prefix and random hex) and a function
// counting the backend statements running on it (pg_stat_activity).
func slowBackendView(t *testing.T, dsn, prefix string) (view string, running func() int) {
	t.Helper()
	db := pgtest.Connect(t, dsn)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	view = prefix + hex.EncodeToString(suffix)
	pgtest.Exec(t, db, fmt.Sprintf(`CREATE VIEW %s AS SELECT i AS id, (i %% 100)::int AS age FROM generate_series(1, 200000000) AS i`, view))
	// Registered after Connect's cleanup, so it runs first, on a live
	// connection.
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), "DROP VIEW IF EXISTS "+view) })
	return view, func() int {
		var n int
		if err := db.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%'||$1||'%' AND pid <> pg_backend_pid()", view).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}
