// Package pgtest holds what tests share to use the PostgreSQL server
// named by DDP_TEST_POSTGRES_DSN: the lookup that skips a test when it is
// not set, connections that fail the test when it is set but the server
// does not answer, and throwaway schemas. Test code only; the MySQL
// counterpart is internal/mysqltest.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
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

// Connect connects to dsn, the server DSN returned. A set DSN promises a
// server: when it does not answer, t fails (it does not skip), so a CI
// run with a broken database never passes by skipping. The connection is
// closed when the test ends.
func Connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("DDP_TEST_POSTGRES_DSN is set but the server is unreachable: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// CreateSchema creates a fresh schema (named as Schema names it, dropped
// with everything in it when the test ends) and returns its name.
func CreateSchema(t testing.TB, conn *pgx.Conn, dsn, prefix string) string {
	t.Helper()
	name := Schema(t, dsn, prefix)
	Exec(t, conn, "CREATE SCHEMA "+name)
	return name
}

// Exec runs each statement in order on conn, failing t with the statement
// that failed.
func Exec(t testing.TB, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %s: %v", s, err)
		}
	}
}

// OpenDB opens dsn as a database/sql pool (driver pgx) and pings it,
// failing t when the server does not answer, as Connect does. The pool is
// closed when the test ends.
func OpenDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("DDP_TEST_POSTGRES_DSN: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatalf("DDP_TEST_POSTGRES_DSN is set but the server is unreachable: %v", err)
	}
	return db
}
