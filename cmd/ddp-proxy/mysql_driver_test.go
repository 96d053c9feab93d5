package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	_ "github.com/ncruces/go-sqlite3/driver"
)

// wantMySQLError checks that err is an ERR packet with errno and state.
func wantMySQLError(t *testing.T, err error, errno uint16, state string) {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v (%T), want MySQL error %d", err, err, errno)
	}
	if me.Number != errno || string(me.SQLState[:]) != state {
		t.Fatalf("error %d (%s) %q; want %d (%s)", me.Number, me.SQLState, me.Message, errno, state)
	}
}

// queryStrings runs q on conn and returns every row's columns as text.
func queryStrings(t *testing.T, conn *sql.Conn, q string, args ...any) [][]string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q, args...)
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

func joined(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\t") + "\n")
	}
	return b.String()
}

// driverScenario is what every go-sql-driver test checks against one
// proxy: connector handshake queries, a noisy GROUP BY with a bound
// parameter (text protocol with interpolateParams, binary protocol
// without), SHOW WARNINGS, a refusal that leaves the connection usable,
// EXPLAIN, the budget view, SHOW TABLES and DESCRIBE.
type driverScenario struct {
	dsn     string           // without interpolateParams
	table   string           // private table
	truth   map[string]int64 // true COUNT(*) per sex
	dataset string           // the table's dataset
}

func (sc driverScenario) run(t *testing.T) {
	for _, interpolate := range []bool{false, true} {
		t.Run(fmt.Sprintf("interpolateParams=%v", interpolate), func(t *testing.T) {
			sep := "?"
			if strings.Contains(sc.dsn, "?") {
				sep = "&"
			}
			ctx := context.Background()
			_, conn := mysqlConn(t, fmt.Sprintf("%s%sinterpolateParams=%v", sc.dsn, sep, interpolate))

			// What connectors send on connect.
			for _, q := range []string{"SET NAMES utf8mb4", "SET autocommit=1", "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'"} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if got := queryStrings(t, conn, "SELECT @@version_comment LIMIT 1"); len(got) != 1 || !strings.Contains(got[0][0], "ddp-proxy") {
				t.Errorf("@@version_comment = %v", got)
			}
			if got := queryStrings(t, conn, "SELECT @@session.transaction_isolation, @@sql_mode, @@autocommit"); got[0][0] != "REPEATABLE-READ" || got[0][1] != "STRICT_TRANS_TABLES" || got[0][2] != "1" {
				t.Errorf("session variables = %v", got)
			}
			if got := queryStrings(t, conn, "SHOW VARIABLES LIKE 'max_allowed%'"); len(got) != 1 || got[0][0] != "max_allowed_packet" {
				t.Errorf("SHOW VARIABLES LIKE = %v", got)
			}

			// A noisy histogram at ε = 0.5: scale 2, so |noise| > 40 has
			// probability e^-20 per group.
			if _, err := conn.ExecContext(ctx, "SET @ddp_epsilon = 0.5"); err != nil {
				t.Fatal(err)
			}
			if got := queryStrings(t, conn, "SELECT @ddp_epsilon"); got[0][0] != "0.5" {
				t.Errorf("@ddp_epsilon = %v", got)
			}
			// A different (equivalent) bound per mode, so the second mode is
			// not answered from the release cache.
			minAge := 0
			if interpolate {
				minAge = -1
			}
			rows, err := conn.QueryContext(ctx, "SELECT sex, COUNT(*) FROM "+sc.table+" WHERE age >= ? GROUP BY sex", minAge)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for rows.Next() {
				var sex string
				var n int64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatal(err)
				}
				want, ok := sc.truth[sex]
				if !ok {
					continue // a declared group with no rows: noise around 0
				}
				seen++
				if math.Abs(float64(n-want)) > 40 {
					t.Errorf("COUNT for %s = %d, true %d: noise far beyond scale 2", sex, n, want)
				}
			}
			rows.Close()
			if seen != len(sc.truth) {
				t.Errorf("saw %d of the %d groups", seen, len(sc.truth))
			}
			w := joined(queryStrings(t, conn, "SHOW WARNINGS"))
			if !strings.Contains(w, "spent ε = 0.5 on "+sc.dataset) || !strings.Contains(w, "noise scale 2") || !strings.Contains(w, "ε left") {
				t.Errorf("SHOW WARNINGS after a private query:\n%s", w)
			}
			if got := queryStrings(t, conn, "SELECT @@warning_count"); got[0][0] == "0" {
				t.Errorf("@@warning_count = 0 after a private query")
			}

			var sex string
			for s := range sc.truth {
				sex = s
			}
			var avg sql.NullFloat64
			if err := conn.QueryRowContext(ctx, "SELECT AVG(age) FROM "+sc.table+" WHERE sex = ?", sex).Scan(&avg); err != nil {
				t.Fatal(err)
			}
			if !avg.Valid || avg.Float64 < 0 || avg.Float64 > 100 {
				t.Errorf("AVG(age) for %s = %v: want a value within the bounds", sex, avg)
			}

			// A row-level read is refused with 1142 (42000) and the
			// connection stays usable.
			_, err = conn.QueryContext(ctx, "SELECT * FROM "+sc.table)
			wantMySQLError(t, err, 1142, "42000")
			if got := queryStrings(t, conn, "SHOW ERRORS"); len(got) != 1 || got[0][1] != "1142" {
				t.Errorf("SHOW ERRORS after the refusal = %v", got)
			}
			if got := queryStrings(t, conn, "SELECT 1"); got[0][0] != "1" {
				t.Errorf("SELECT 1 after an error = %v", got)
			}
			_, err = conn.ExecContext(ctx, "DELETE FROM "+sc.table)
			wantMySQLError(t, err, 1792, "25006")

			x := joined(queryStrings(t, conn, "EXPLAIN SELECT COUNT(*) FROM "+sc.table+" WHERE age > ?", 30))
			if !strings.Contains(x, "private_aggregate") || !strings.Contains(x, "ε = 0.5") {
				t.Errorf("EXPLAIN:\n%s", x)
			}
			b := queryStrings(t, conn, "SELECT * FROM ddp.budget")
			found := false
			for _, r := range b {
				if r[0] == sc.dataset {
					found = true
					if r[2] == "0" {
						t.Errorf("budget view shows nothing spent: %v", r)
					}
				}
			}
			if !found {
				t.Errorf("budget view %v has no row for %s", b, sc.dataset)
			}
			if tables := joined(queryStrings(t, conn, "SHOW TABLES")); !strings.Contains(tables, sc.table+"\n") {
				t.Errorf("SHOW TABLES:\n%s", tables)
			}
			d := queryStrings(t, conn, "DESCRIBE "+sc.table)
			if len(d) == 0 || !strings.Contains(joined(d), "age\tbigint") {
				t.Errorf("DESCRIBE:\n%s", joined(d))
			}
		})
	}
}

func TestMySQLDriverDemo(t *testing.T) {
	addr, dbPath := startMySQLDemo(t)
	lite, err := sql.Open("sqlite3", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	truth := map[string]int64{}
	rows, err := lite.Query("SELECT sex, COUNT(*) FROM people WHERE sex IS NOT NULL AND age >= 0 GROUP BY sex")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		var n int64
		rows.Scan(&s, &n)
		truth[s] = n
	}
	rows.Close()
	driverScenario{dsn: "analyst:anything@tcp(" + addr + ")/demo", table: "people", truth: truth, dataset: "census"}.run(t)
}

func TestMySQLDriverMariaDB(t *testing.T) {
	f := newMariaFixture(t, 300, 50)
	addr := serveMySQL(t, f.pol)
	driverScenario{dsn: "analyst:" + f.password + "@tcp(" + addr + ")/test", table: f.table, truth: f.count, dataset: "people"}.run(t)
}
