// Package mysqltest holds what tests share to use the MySQL or MariaDB
// server named by DDP_TEST_MYSQL_DSN: the lookup that skips a test when it
// is not set, and a connection that fails the test when it is set but the
// server does not answer. Test code only; the PostgreSQL counterpart is
// internal/pgtest.
package mysqltest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"

	_ "github.com/go-sql-driver/mysql" // the "mysql" database/sql driver
)

// Env is the variable that names the test server.
const Env = "DDP_TEST_MYSQL_DSN"

// DSN returns DDP_TEST_MYSQL_DSN, or skips t saying what is skipped.
func DSN(t testing.TB, what string) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		t.Skipf("%s is not set (e.g. root@tcp(127.0.0.1:3306)/test): skipping %s", Env, what)
	}
	return dsn
}

// Open opens dsn and pings it: a set DSN promises a server, so when it
// does not answer t fails (it does not skip). The pool is closed when the
// test ends.
func Open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatalf("%s is set but the server is unreachable: %v", Env, err)
	}
	return db
}

// Name returns prefix followed by random hex: a table name that tests
// sharing the server never both use.
func Name(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
