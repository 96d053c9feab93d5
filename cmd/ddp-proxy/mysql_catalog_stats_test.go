package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/internal/catalogtest"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

const catalogStatsPassword = "mycat-pw"

// catalogOutcome is what one statement returned: its rows as text, or the
// MySQL error number.
type catalogOutcome struct {
	errno  uint16
	rows   string // every column except the times (tables are recreated between runs)
	signal string // the order of the table names, when the result has them
}

// catalogQuery runs q and records its outcome.
func catalogQuery(t *testing.T, db *sql.DB, q string, args ...any) catalogOutcome {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		var me *gomysql.MySQLError
		if !errors.As(err, &me) {
			t.Fatalf("%s: %v", q, err)
		}
		return catalogOutcome{errno: me.Number}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	nameCol := -1
	for i, c := range cols {
		switch strings.ToLower(c) {
		case "table_name", "c3", "name":
			if nameCol < 0 {
				nameCol = i
			}
		}
	}
	table, err := scanText(rows, "NULL")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out catalogOutcome
	var all, names []string
	for _, vals := range table {
		var row []string
		for i, v := range vals {
			switch strings.ToLower(cols[i]) {
			case "create_time", "update_time", "check_time", "table_id":
				continue
			}
			row = append(row, v)
			if i == nameCol {
				names = append(names, v)
			}
		}
		all = append(all, strings.Join(row, "|"))
	}
	out.rows = strings.Join(all, "\n")
	out.signal = out.rows
	if nameCol >= 0 {
		out.signal = strings.Join(names, ",")
	}
	return out
}

// TestCatalogRules runs the one table of catalog safety rules
// (catalogtest.Cases) against both dialects: each rule's MySQL form
// through the MySQL front end against a real MariaDB, its PostgreSQL form
// through the PostgreSQL front end against a real PostgreSQL. Each runs
// twice: with two private tables of LargeRows and SmallRows rows
// (ANALYZEd, so row counts, sizes and sequence positions are exact), then
// with their sizes swapped. Through the proxy every rule is refused with
// its code (42501 / 1142, or 0A000 / 1235 for what cannot be forwarded
// faithfully) or answers the same in both runs (the statistics it reached
// are blank); sent to the server directly, each one marked Ranks answers
// differently — the attack is real, so the test can fail.
func TestCatalogRules(t *testing.T) {
	t.Run("mysql", catalogRulesMySQL)
	t.Run("postgres", catalogRulesPostgres)
}

func catalogRulesMySQL(t *testing.T) {
	dsn := mariaDSN(t)
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawMariaDB(t)
	names := [2]string{fmt.Sprintf("ddp_mycat_a_%d", os.Getpid()), fmt.Sprintf("ddp_mycat_b_%d", os.Getpid())}
	drop := func() {
		for _, n := range names {
			raw.Exec("DROP TABLE IF EXISTS " + n)
		}
	}
	t.Cleanup(drop)
	pgNamed := fmt.Sprintf("pg_ddp_mycat_%d", os.Getpid())
	if _, err := raw.Exec("CREATE TABLE " + pgNamed + " (secret INT)"); err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", mysqlDSNEnv, err)
	}
	t.Cleanup(func() { raw.Exec("DROP TABLE IF EXISTS " + pgNamed) })
	if _, err := raw.Exec("INSERT INTO " + pgNamed + " VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	var tablesCols []string
	for _, r := range queryRaw(t, raw, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'TABLES' ORDER BY ORDINAL_POSITION") {
		tablesCols = append(tablesCols, r[0])
	}
	fx := catalogtest.Fixture{Database: cfg.DBName, Tables: names, TablesColumns: tablesCols}

	var proxied, direct [2]map[string]catalogOutcome
	var cli [2]string
	for run := range 2 {
		sizes := [2]int{catalogtest.LargeRows, catalogtest.SmallRows}
		if run == 1 {
			sizes[0], sizes[1] = sizes[1], sizes[0]
		}
		drop()
		for i, n := range names {
			if _, err := raw.Exec("CREATE TABLE " + n + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT, KEY v (v)) ENGINE=InnoDB"); err != nil {
				t.Fatalf("%s is set but the server is unusable: %v", mysqlDSNEnv, err)
			}
			vals := make([]string, sizes[i])
			for j := range vals {
				vals[j] = fmt.Sprintf("(%d)", j+1)
			}
			if _, err := raw.Exec("INSERT INTO " + n + " (v) VALUES " + strings.Join(vals, ",")); err != nil {
				t.Fatal(err)
			}
		}
		queryRaw(t, raw, "ANALYZE TABLE "+names[0]+", "+names[1])

		addr := serveMySQL(t, catalogStatsPolicy(t, dsn, names)) // a ledger of its own
		proxy, err := sql.Open("mysql", "analyst:"+catalogStatsPassword+"@tcp("+addr+")/"+cfg.DBName)
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		proxied[run], direct[run] = map[string]catalogOutcome{}, map[string]catalogOutcome{}
		for _, c := range catalogtest.Cases {
			if c.MySQL == "" || c.Params > 0 {
				continue
			}
			q := fx.Expand(c.MySQL)
			proxied[run][c.Name] = catalogQuery(t, proxy, q)
			if c.Ranks {
				direct[run][c.Name] = catalogQuery(t, raw, q)
			}
		}
		// The report, as the mariadb client sends it with --comments.
		out, errOut, ok := mariadbCLI(t, addr, "analyst", catalogStatsPassword, cfg.DBName,
			fx.Expand("select/**/* from information_schema.tables where table_name in ({tables}) order by 8;"), "--comments")
		if !ok {
			t.Fatalf("mariadb --comments: %s", errOut)
		}
		cli[run] = cliNames(t, out)

		// Arguments of a prepared statement keep their order.
		got := catalogQuery(t, proxy, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? LIMIT ?, ?", cfg.DBName, names[1], 0, 5)
		if got.errno != 0 || got.rows != names[1] {
			t.Errorf("prepared information_schema query = %+v, want %s", got, names[1])
		}
		if got := catalogQuery(t, proxy, "SELECT TABLE_NAME FROM information_schema.TABLES LIMIT ? OFFSET ?", 5, 0); got.errno != 1235 {
			t.Errorf("LIMIT ? OFFSET ? = %+v, want error 1235", got)
		}
		// A table named like PostgreSQL's catalog is an ordinary table on
		// MySQL: undeclared, so not readable.
		if got := catalogQuery(t, proxy, "SELECT * FROM "+pgNamed); got.errno != 1146 {
			t.Errorf("SELECT * FROM %s = %+v, want error 1146", pgNamed, got)
		}
	}

	for _, c := range catalogtest.Cases {
		p0, ok := proxied[0][c.Name]
		if !ok {
			continue
		}
		p1 := proxied[1][c.Name]
		wantErr := map[catalogtest.Want]uint16{catalogtest.Refused: 1142, catalogtest.Forwarded: 0, catalogtest.NotForwarded: 1235}[c.MySQLWant]
		if p0.errno != wantErr || p1.errno != wantErr {
			t.Errorf("%s: errors %d, %d through the proxy, want %d", c.Name, p0.errno, p1.errno, wantErr)
		}
		if p0 != p1 {
			t.Errorf("%s: the proxy's answer depends on the tables' sizes:\n%s\n--- after swapping them:\n%s", c.Name, p0.rows, p1.rows)
		}
		if !c.Ranks {
			continue
		}
		d0, d1 := direct[0][c.Name], direct[1][c.Name]
		if d0.errno != 0 || d1.errno != 0 || d0.signal == d1.signal {
			t.Errorf("%s: sent straight to MariaDB the attack does not reveal the sizes (errors %d, %d; %q, %q): the case proves nothing",
				c.Name, d0.errno, d1.errno, d0.signal, d1.signal)
		}
	}
	if cli[0] == "" || cli[0] != cli[1] {
		t.Errorf("mariadb --comments: table order %q, then %q after swapping the sizes", cli[0], cli[1])
	}
}

// cliNames returns the TABLE_NAME column of the mariadb client's batch
// output, after checking that TABLE_ROWS is NULL.
func cliNames(t *testing.T, out string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	header := strings.Split(lines[0], "\t")
	nameCol, rowsCol := slices.Index(header, "TABLE_NAME"), slices.Index(header, "TABLE_ROWS")
	if nameCol < 0 || rowsCol < 0 {
		t.Fatalf("mariadb output:\n%s", out)
	}
	var names []string
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if f[rowsCol] != "NULL" {
			t.Errorf("TABLE_ROWS = %s through the proxy", f[rowsCol])
		}
		names = append(names, f[nameCol])
	}
	return strings.Join(names, ",")
}

func queryRaw(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out, err := scanText(rows, "")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// catalogStatsPolicy declares the two tables private; the analyst's
// password is catalogStatsPassword.
func catalogStatsPolicy(t *testing.T, dsn string, names [2]string) *policies.Policy {
	t.Helper()
	t.Setenv("DDP_TEST_MYCAT_PW", catalogStatsPassword)
	return loadPolicyText(t, t.TempDir(), fmt.Sprintf(`version: 1
backend:
  driver: mysql
  dsn: %q
  statement_timeout: 10s
listen:
  postgres: "off"
  mysql: 127.0.0.1:0
  auth: password
ledger:
  path: ledger.db
users:
  - name: analyst
    password_env: DDP_TEST_MYCAT_PW
    budgets: {stats: {epsilon: 1}}
datasets:
  stats:
    model: dp
    tables:
      %s:
        unit: id
        columns:
          v: {type: integer, bounds: [0, 10000]}
      %s:
        unit: id
        columns:
          v: {type: integer, bounds: [0, 10000]}
`, dsn, names[0], names[1]))
}
