package pgledger

import (
	"context"
	"strings"
	"testing"
)

// TestCommitsWaitForFlush: a ledger database configured with
// synchronous_commit = off (here through the DSN's options; ALTER
// DATABASE or ALTER ROLE do the same) acknowledges a COMMIT before its WAL
// is flushed, so a charge could be lost in a crash after its answer left.
// Every connection of both pools must commit synchronously.
func TestCommitsWaitForFlush(t *testing.T) {
	dsn := testDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	lax := dsn + sep + "options=-c%20synchronous_commit%3Doff"
	l := openTest(t, lax, testSchema(t, dsn), "r1")
	ctx := context.Background()
	for name, p := range map[string]func() (string, error){
		"pool": func() (v string, err error) {
			err = l.pool.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&v)
			return v, err
		},
		"locks": func() (v string, err error) {
			err = l.locks.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&v)
			return v, err
		},
	} {
		v, err := p()
		if err != nil {
			t.Fatal(err)
		}
		if v == "off" {
			t.Errorf("%s: synchronous_commit is off on a ledger connection: a charge may not be durable when its answer leaves", name)
		}
	}
}
