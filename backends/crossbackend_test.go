package backends_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
)

// TestSameRowsOnEveryBackend loads one data set into PostgreSQL and SQLite
// and requires identical BackendRows from both for 300 random queries
// (fixed seed), keys' kinds included.
func TestSameRowsOnEveryBackend(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set; set it (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to compare PostgreSQL with SQLite")
	}
	ctx := context.Background()
	d := backendtest.Generate(rand.New(rand.NewPCG(9, 9)), 30, fmt.Sprintf("x%d_%d", os.Getpid(), time.Now().UnixNano()))

	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Drop(ctx, raw); raw.Close() })
	if err := d.Load(ctx, raw, "postgres"); err != nil {
		t.Fatalf("DDP_TEST_POSTGRES_DSN is set but loading failed: %v", err)
	}
	pg, err := postgres.Open(ctx, dsn, backends.Options{StatementTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })

	path := filepath.Join(t.TempDir(), "x.db")
	rawLite, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer rawLite.Close()
	if err := d.Load(ctx, rawLite, "sqlite"); err != nil {
		t.Fatal(err)
	}
	lite, err := sqlite.Open(ctx, path, backends.Options{StatementTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })

	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		q := d.RandomQuery(rng)
		a, errA := backendtest.Collect(ctx, pg, q)
		b, errB := backendtest.Collect(ctx, lite, q)
		if errA != nil || errB != nil {
			t.Fatalf("query %d: postgres %v, sqlite %v\n%s", i, errA, errB, q.Canonical())
		}
		backendtest.CanonicalKeys(q, a)
		backendtest.CanonicalKeys(q, b)
		if diff := backendtest.Diff(a, b); diff != "" {
			t.Fatalf("query %d: sqlite differs from postgres: %s\n%s", i, diff, q.Canonical())
		}
	}
}
