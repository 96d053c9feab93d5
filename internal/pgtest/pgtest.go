// Package pgtest holds what tests share to use the PostgreSQL server
// named by DDP_TEST_POSTGRES_DSN: the lookup that skips a test when it is
// not set, and throwaway schemas. Test code only.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// DSN returns DDP_TEST_POSTGRES_DSN, or skips t saying what is skipped.
func DSN(t testing.TB, what string) string {
	t.Helper()
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skipf("DDP_TEST_POSTGRES_DSN is not set: skipping %s", what)
	}
	return dsn
}

// Schema returns a fresh schema name, prefix followed by random hex (tests
// sharing the server never collide), dropped with everything in it when
// the test ends. It does not create the schema.
func Schema(t testing.TB, dsn, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	})
	return name
}
