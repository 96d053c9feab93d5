package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/internal/catalogtest"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// planMySQL plans sql from the MySQL front end on a MySQL backend, with
// info as the backend's information_schema.
func planMySQL(t *testing.T, sql string, info *catalog.MySQLInfoSchema) (*planner.Plan, error) {
	t.Helper()
	pol := loadPolicy(t)
	pol.Backend.Driver = "mysql"
	stmts, err := parser.Parse(parser.MySQL, sql)
	if err != nil {
		return nil, err
	}
	return planner.New(pol).Plan(planner.Request{User: pol.User("alice"), Dialect: "mysql", Statement: &stmts[0], MySQLInfoSchema: info})
}

// TestMySQLPassthrough: on a MySQL backend information_schema statements
// are forwarded as the rewritten tree, never as the client's text; the
// text is not scanned for statistics names; pg_ names are ordinary tables.
func TestMySQLPassthrough(t *testing.T) {
	info, err := catalog.NewMySQLInfoSchema(catalogtest.InfoSchemas()["mariadb-10.11"])
	if err != nil {
		t.Fatal(err)
	}
	sql := "select/**/* from information_schema.tables order by 8"
	pl, err := planMySQL(t, sql, info)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Class != planner.ClassPassthrough || strings.Contains(pl.SQL, "/*") || !strings.Contains(pl.SQL, "CAST(NULL AS UNSIGNED) AS `TABLE_ROWS`") {
		t.Errorf("forwarded %q", pl.SQL)
	}
	if _, err := planMySQL(t, sql, nil); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("without the column lists: %v", err)
	}
	if _, err := planMySQL(t, "SELECT TABLE_NAME FROM information_schema.TABLES ORDER BY TABLE_ROWS", info); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Errorf("named statistics column: %v", err)
	}
	// Connector/J's getColumns compares EXTRA with the literal
	// 'auto_increment'; a literal is not a column.
	q := "SELECT COLUMN_NAME, IF(EXTRA = 'auto_increment', 'YES', 'NO') IS_AUTOINCREMENT FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'people'"
	if pl, err := planMySQL(t, q, info); err != nil || !strings.Contains(pl.SQL, "'auto_increment'") {
		t.Errorf("%s: %v", q, err)
	}
	// Without information_schema nothing reaches a statistic: no text scan.
	if pl, err := planMySQL(t, "SELECT 1 AS table_rows", info); err != nil || pl.SQL != "SELECT 1 AS table_rows" {
		t.Errorf("SELECT 1 AS table_rows: %v", err)
	}
	// A private or undeclared table whose name starts with pg_ is not
	// PostgreSQL's catalog on MySQL.
	for _, q := range []string{"SELECT * FROM pg_people", "SELECT * FROM pg_catalog.pg_class"} {
		if _, err := planMySQL(t, q, info); !sqlerr.HasCode(err, sqlerr.UndefinedTable) {
			t.Errorf("%s: %v", q, err)
		}
	}
}
