package main

import (
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestMariaDBExecutableCommentNotForwarded: MariaDB runs what is inside
// /*M! ... */ (and /*M!###### ... */), which TiDB's grammar skips as a
// comment. A statement the parser reads as public (no relation, or only
// public ones) must not reach MariaDB with such a comment in its text: a
// private table read inside it would be answered exactly.
func TestMariaDBExecutableCommentNotForwarded(t *testing.T) {
	f := newMariaFixture(t, 40, 5)
	addr := serveMySQL(t, f.pol)
	db := openDB(t, "mysql", "analyst:"+f.password+"@tcp("+addr+")/test")
	for _, q := range []string{
		"SELECT 1 /*M!, (SELECT COUNT(*) FROM " + f.table + ") */",
		"SELECT 1 /*M!100000 , (SELECT COUNT(*) FROM " + f.table + ") */",
		"SELECT LOWER('a') /*M!, (SELECT COUNT(*) FROM " + f.table + ") */",
		"SELECT 1 + 1 /*M!, (SELECT COUNT(*) FROM " + f.table + ") */",
		"SELECT LOWER('a') /*T! ' */ , (SELECT COUNT(*) FROM " + f.table + ") -- ' */",
		"SELECT LOWER('a') /*!99999 'x */ , (SELECT COUNT(*) FROM " + f.table + ") -- ' */",
		"SELECT 1 AS a FROM DUAL /*M! WHERE (SELECT COUNT(*) FROM " + f.table + ") > 1000 */",
		"SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'x' /*M! OR (SELECT COUNT(*) FROM " + f.table + ") > 0 */",
	} {
		cols, n, err := resultShape(db, q)
		if err != nil {
			t.Logf("%s: refused: %v", q, err)
			continue
		}
		t.Logf("%s: columns %v, %d rows", q, cols, n)
		if len(cols) > 1 || strings.Contains(q, "DUAL") && n == 0 {
			t.Errorf("%s: MariaDB ran the executable comment (columns %v, %d rows): it read the private table %s", q, cols, n, f.table)
		}
	}
}

// TestPostgresFrontEndOnMariaDBComments: PostgreSQL's grammar reads
// /*! ... */ and /*M! ... */ as comments, which MySQL and MariaDB run.
func TestPostgresFrontEndOnMariaDBComments(t *testing.T) {
	f := newMariaFixture(t, 40, 5)
	f.pol.Listen.Postgres = "127.0.0.1:0"
	f.pol.Listen.MySQL = policies.ListenOff
	p, _ := servePolicy(t, f.pol)
	db := openDB(t, "pgx", "postgres://analyst:"+f.password+"@"+p.pgAddr+"/test?sslmode=disable")
	for _, q := range []string{
		"SELECT lower('a') /*! , (SELECT COUNT(*) FROM " + f.table + ") */",
		"SELECT lower('a') /*M! , (SELECT COUNT(*) FROM " + f.table + ") */",
		"SELECT lower('a') --x\n, (SELECT COUNT(*) FROM " + f.table + ")",
	} {
		cols, _, err := resultShape(db, q)
		if err != nil {
			t.Logf("%s: refused: %v", q, err)
			continue
		}
		t.Logf("%s: columns %v", q, cols)
		if len(cols) > 1 {
			t.Errorf("%s: the backend read the private table (columns %v)", q, cols)
		}
	}
}

// TestMariaDBBackslashWithServerSQLMode: a backend whose sql_mode has
// NO_BACKSLASH_ESCAPES (the DBA's server or DSN setting) ends a string at
// \' where TiDB's grammar, in the default mode, reads on: the proxy's
// connections must lex strings as its grammar does.
func TestMariaDBBackslashWithServerSQLMode(t *testing.T) {
	f := newMariaFixture(t, 40, 5)
	sep := "?"
	if strings.Contains(f.pol.Backend.DSN, "?") {
		sep = "&"
	}
	f.pol.Backend.DSN += sep + "sql_mode=%27NO_BACKSLASH_ESCAPES%27"
	addr := serveMySQL(t, f.pol)
	db := openDB(t, "mysql", "analyst:"+f.password+"@tcp("+addr+")/test")
	q := `SELECT lower('a\') , (SELECT COUNT(*) FROM ` + f.table + `) -- ')`
	cols, _, err := resultShape(db, q)
	if err != nil {
		t.Logf("%s: %v", q, err)
		return
	}
	t.Logf("%s: columns %v", q, cols)
	if len(cols) > 1 {
		t.Errorf("%s: the backend read the private table (columns %v)", q, cols)
	}
}
