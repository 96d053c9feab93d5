package dependence_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/dependence"
)

// BenchmarkLoad50kEdges reads and summarises a 50,000-row friendship table
// from SQLite (the work done at policy load and on every reload).
func BenchmarkLoad50kEdges(b *testing.B) {
	be, _, _ := social50k(b, 50000)
	defer be.Close()
	ds := socialDataset()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dependence.Read(context.Background(), ds, be); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad50kEdgesPostgres is the same load from PostgreSQL (skipped
// without DDP_TEST_POSTGRES_DSN); the table lives in its own schema.
func BenchmarkLoad50kEdgesPostgres(b *testing.B) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("DDP_TEST_POSTGRES_DSN is not set")
	}
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	schema := fmt.Sprintf("ddpdepb_%d", rand.Uint32())
	if _, err := raw.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if _, err := raw.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			b.Errorf("dropping %s: %v", schema, err)
		}
		raw.Close()
	})
	for _, s := range []string{
		"CREATE TABLE " + schema + ".friendships (user_a INTEGER, user_b INTEGER, w DOUBLE PRECISION)",
		"INSERT INTO " + schema + ".friendships SELECT (i::bigint*7919) % 10000, (i::bigint*104729) % 10000, ((i*31) % 1000) / 1000.0 FROM generate_series(1, 50000) AS i",
	} {
		if _, err := raw.Exec(s); err != nil {
			b.Fatal(err)
		}
	}
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	ds := socialDataset()
	ds.Dependence.Edges.Schema = schema
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dependence.Read(context.Background(), ds, be); err != nil {
			b.Fatal(err)
		}
	}
}
