package main

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPassthroughLexerMismatchDemo: a pass-through statement's text goes
// to the backend, whose lexer may see code where the front end's grammar
// saw a comment or a string. On the demo (SQLite) the private table
// people must never be read that way.
func TestPassthroughLexerMismatchDemo(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	conn := connectPgx(t, pgAddr, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{
		// PostgreSQL comments nest, SQLite's do not.
		"SELECT lower('a') /* /* */ , (SELECT count(*) FROM people) -- */",
		"SELECT count(*) FROM cells /* /* */ , people -- */",
		"SELECT E'a\\', ' , (SELECT count(*) FROM people) -- ' FROM cells LIMIT 1",
		"SELECT $$a$$ , ' , (SELECT count(*) FROM people) -- ' FROM cells LIMIT 1",
		"SELECT 'a' , ' , (SELECT count(*) FROM people) -- ' FROM cells LIMIT 1",
	} {
		r, err := queryPgx(conn, q)
		if err != nil {
			t.Logf("postgres %s: %v", q, err)
			continue
		}
		t.Logf("postgres %s: %v %v", q, r.vals, r.err)
		// Answered statements may only return their own string literals
		// (a row read of the public table cells binds them as values); a
		// number is the private table's count, read by the backend.
		for _, row := range r.vals {
			for _, v := range row {
				if _, ok := v.(string); !ok {
					t.Errorf("postgres %s: the backend read the private table: %v", q, r.vals)
				}
			}
		}
	}
	db := openDB(t, "mysql", "analyst:demo@tcp("+myAddr+")/demo")
	for _, q := range []string{
		// MySQL strings take backslash escapes, SQLite's do not.
		`SELECT lower('a\' , (SELECT count(*) FROM people) -- ')`,
		`SELECT lower('a\') , (SELECT count(*) FROM people) -- ')`,
	} {
		cols, _, err := resultShape(db, q)
		if err != nil {
			t.Logf("mysql %s: %v", q, err)
			continue
		}
		t.Logf("mysql %s: columns %v", q, cols)
		if len(cols) > 1 {
			t.Errorf("mysql %s: the backend read the private table (columns %v)", q, cols)
		}
	}
}
