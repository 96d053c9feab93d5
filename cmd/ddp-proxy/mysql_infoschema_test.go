package main

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/internal/mysqltest"
)

// connectorJGetColumns is the query MariaDB Connector/J 2.7 sends for
// DatabaseMetaData.getColumns(demo, null, people, %), as captured.
func connectorJGetColumns(t *testing.T, db, table string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/connectorj_getcolumns.sql")
	if err != nil {
		t.Fatal(err)
	}
	q := strings.Replace(string(b), "TABLE_SCHEMA='demo'", "TABLE_SCHEMA='"+db+"'", 1)
	return strings.Replace(q, "TABLE_NAME='people'", "TABLE_NAME='"+table+"'", 1)
}

// TestMySQLInfoSchemaMariaDB: on a MySQL backend information_schema is
// forwarded, restricted to the policy's tables, with statistics blanked
// or refused; a connector's metadata query works.
func TestMySQLInfoSchemaMariaDB(t *testing.T) {
	f := newMariaFixture(t, 50, 5)
	addr := serveMySQL(t, f.pol)
	ctx := context.Background()
	_, conn := mysqlConn(t, "analyst:"+f.password+"@tcp("+addr+")/test")

	// Only the policy's table, although the test database holds others
	// (the other tests' tables, at least the fixture's own raw pool).
	tables := queryStrings(t, conn, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test'")
	if len(tables) != 1 || tables[0][0] != f.table {
		t.Errorf("information_schema.TABLES = %v, want only %s", tables, f.table)
	}
	star := queryStrings(t, conn, "SELECT * FROM information_schema.TABLES WHERE TABLE_NAME = '"+f.table+"'")
	rows, _ := conn.QueryContext(ctx, "SELECT * FROM information_schema.TABLES WHERE TABLE_NAME = '"+f.table+"'")
	cols, _ := rows.Columns()
	rows.Close()
	for i, c := range cols {
		switch strings.ToLower(c) {
		case "table_rows", "data_length", "avg_row_length", "index_length", "auto_increment", "update_time":
			if star[0][i] != "" {
				t.Errorf("%s = %q in SELECT *, want NULL", c, star[0][i])
			}
		}
	}
	for _, q := range []string{
		"SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE AUTO_INCREMENT > 10",
		"SELECT * FROM information_schema.COLUMN_STATISTICS",
		"SELECT INDEX_NAME, CARDINALITY FROM information_schema.STATISTICS",
	} {
		_, err := conn.QueryContext(ctx, q)
		wantMySQLError(t, err, 1142, "42000")
	}
	if _, err := rawMariaDB(t).Exec("ALTER TABLE " + f.table + " ADD COLUMN secret_note TEXT"); err != nil {
		t.Fatal(err)
	}
	got := queryStrings(t, conn, connectorJGetColumns(t, "test", f.table))
	if len(got) != 4 || got[0][3] != "id" || got[1][3] != "age" { // not secret_note: the policy does not list it
		t.Errorf("Connector/J getColumns = %v", got)
	}
}

func rawMariaDB(t *testing.T) *sql.DB {
	t.Helper()
	return mysqltest.Open(t, mariaDSN(t))
}

// TestMySQLInfoSchemaDemo: on the SQLite demo the same queries are
// answered from the policy.
func TestMySQLInfoSchemaDemo(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", "analyst:x@tcp("+addr+")/demo")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tables := joined(queryStrings(t, conn, "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1"))
	if want := strings.Join(demoTables(t), "\t\n") + "\t\n"; tables != want {
		t.Errorf("tables:\n%s", tables)
	}
	got := queryStrings(t, conn, connectorJGetColumns(t, "demo", "people"))
	if len(got) != 14 || got[0][3] != "age" || got[0][4] != "-5" {
		t.Errorf("Connector/J getColumns = %v", got)
	}
}
