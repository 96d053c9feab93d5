package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/internal/mysqltest"
)

// TestMySQLColumnNamesMatchMariaDB: a MySQL client gets the column names
// MariaDB itself gives the same un-aliased select items (the item's text
// as written, case and inner spacing kept; a column's own name; an
// alias). The oracle is MariaDB: each query runs on a throwaway table with
// the demo's column names and through go-sql-driver against the demo.
func TestMySQLColumnNamesMatchMariaDB(t *testing.T) {
	backend := mysqltest.Open(t, mysqltest.DSN(t, "the MySQL column-name comparison with MariaDB"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tbl := mysqltest.Name("ddp_colnames_")
	if _, err := backend.ExecContext(ctx, "CREATE TABLE "+tbl+" (sex VARCHAR(16), age INT)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = backend.Exec("DROP TABLE IF EXISTS " + tbl) })
	if _, err := backend.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES ('Male', 30), ('Female', 41)"); err != nil {
		t.Fatal(err)
	}

	_, myAddr, _ := startNamesDemo(t)
	proxy, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()

	// %s is the table: people on the proxy, the throwaway table on MariaDB.
	queries := []string{
		"SELECT COUNT(*) FROM %s",
		"select count( * ),  AVG(age) ,sex FROM %s GROUP BY sex",
		"SELECT  COUNT(*)\n\tFROM %s",
		"SELECT sex, (sex), COUNT(*) * 2, (COUNT(*)), SUM(age) AS total FROM %s GROUP BY sex",
		"SELECT age DIV 10, count(*) FROM %s WHERE age BETWEEN 20 AND 59 GROUP BY age DIV 10",
		"SELECT sex, COUNT(*), STD(age) FROM %s GROUP BY sex WITH ROLLUP",
		"SELECT sex, ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC) FROM %s GROUP BY sex",
		"SELECT COUNT(*) FROM %s WHERE 0",
	}
	names := func(db *sql.DB, q string) ([]string, error) {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return rows.Columns()
	}
	for _, q := range queries {
		want, err := names(backend, fmt.Sprintf(q, tbl))
		if err != nil {
			t.Fatalf("MariaDB: %s: %v", q, err)
		}
		got, err := names(proxy, fmt.Sprintf(q, "people"))
		if err != nil {
			t.Errorf("proxy: %s: %v", q, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: proxy names %q, MariaDB names %q", strings.ReplaceAll(q, "\n", `\n`), got, want)
		}
	}
}
