package session

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The date totality attacks: one person's stored date, timestamp or
// timestamptz is a value at or beyond what the policy declares (outside
// the bounds, at a backend's extreme, PostgreSQL's infinity, MariaDB's
// zero dates, SQLite text that is not a date at all). Every date
// construct evaluated on the rows must give the same outcome (answered
// or refused, with the same keys) on the database where that person's
// value is ordinary and on the one where it is hostile.

const dateTotalityPolicy = `
version: 1
backend: {driver: %s, dsn: %q}
ledger: {path: %q}
users:
  - name: eve
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {hr: {epsilon: 100000}}
    max_epsilon: 1
datasets:
  hr:
    tables:
      events:
        schema: %q
        unit: id
        columns:
          d:  {type: date, bounds: ['2010-01-01', '2010-12-31']}
          ts: {type: timestamp, bounds: ['2010-01-01 00:00:00', '2010-12-31 23:59:59.999999']}
          tz: {type: timestamptz, bounds: ['2010-01-01 00:00:00Z', '2010-12-31 23:59:59.999999Z']}
          wd: {type: date, bounds: ['1000-01-06', '9999-12-31']}
          wts: {type: timestamp, bounds: ['1000-01-06 00:00:00', '9999-12-31 23:59:59.999999']}
          n:  {type: integer, bounds: [0, 100]}
`

var dateTotalityTypes = map[string]string{
	"sqlite":   "id INTEGER, d DATE, ts TIMESTAMP, tz TIMESTAMP, wd DATE, wts TIMESTAMP, n INTEGER",
	"postgres": "id BIGINT, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, wd DATE, wts TIMESTAMP, n INTEGER",
	"mysql":    "id BIGINT, d DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL, wd DATE, wts DATETIME(6), n INT",
}

// hostileDates are values of person 123 (d, ts, tz, wd, wts as SQL
// literals) per backend; the baseline is ordinary.
var hostileDates = map[string][][5]string{
	"sqlite": {
		{"'garbage'", "'2010-06-01T10:00:00Z'", "'2010-06-01 10:00:00+02:00'", "'x'", "'y'"},
		{"'2010-6-1'", "'2010-06-01 25:61:61'", "12345", "'10000-01-01'", "'0999-12-31 23:59:59'"},
		{"X'00ff'", "2455000.5", "'2010-06-01 10:00:00.1234567891'", "-5", "'9999-12-31 23:59:59.9999999'"},
		{"'2010-02-30'", "'2010-06-31 10:00:00'", "''", "'0000-01-01'", "'2010-06-01 10:00:00 garbage'"},
	},
	"postgres": {
		{"'infinity'", "'infinity'", "'infinity'", "'infinity'", "'infinity'"},
		{"'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'"},
		{"'4713-01-01 BC'", "'294276-12-31 23:59:59'", "'4713-01-01 00:00:00+00 BC'", "'5874897-12-31'", "'294276-12-31 23:59:59.999999'"},
		{"'0001-01-01'", "'9999-12-31 23:59:59.999999'", "'2010-12-31 23:59:59.999999+00'", "'0001-01-01'", "'0001-01-01 00:00:00'"},
	},
	"mysql": {
		{"'0000-00-00'", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'", "'0000-00-00'", "'0000-00-00 00:00:00'"},
		{"'2010-02-00'", "'2010-00-00 10:00:00'", "NULL", "'2010-00-05'", "'2010-06-00 10:00:00'"},
		{"'2010-00-00'", "'2010-06-00 23:59:59.999999'", "'2038-01-19 03:14:07.999999'", "'0001-01-01'", "'0001-01-01 00:00:00'"},
		{"'9999-12-31'", "'9999-12-31 23:59:59.999999'", "'1970-01-01 00:00:01'", "'9999-12-31'", "'9999-12-31 23:59:59.999999'"},
	},
}

func dateTotalityRows(driver string, variant int) []string {
	var rows []string
	for i := range 60 {
		day := fmt.Sprintf("2010-%02d-%02d", 1+i%12, 1+i%28)
		at := fmt.Sprintf("%s %02d:%02d:%02d.%06d", day, i%24, i%60, i%60, i*1001)
		vals := [5]string{"'" + day + "'", "'" + at + "'", "'" + at + "'", "'" + day + "'", "'" + at + "'"}
		if driver == "postgres" {
			vals[2] = "'" + at + "+00'"
		}
		if i == 23 && variant > 0 {
			vals = hostileDates[driver][variant-1]
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, %d)", i, strings.Join(vals[:], ", "), i%100))
	}
	return rows
}

func dateTotalityFixture(t *testing.T, driver, dsn string, variant int) *totalityFixture {
	t.Helper()
	ctx := context.Background()
	var be Backend
	schema := ""
	rows := "INSERT INTO events VALUES " + strings.Join(dateTotalityRows(driver, variant), ", ")
	switch driver {
	case "sqlite":
		dsn = filepath.Join(t.TempDir(), "hr.db")
		db, err := sql.Open("sqlite3", "file:"+dsn)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"CREATE TABLE events (" + dateTotalityTypes["sqlite"] + ")", rows} {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		db.Close()
		if be, err = sqlite.Open(ctx, dsn, backends.Options{}); err != nil {
			t.Fatal(err)
		}
	default:
		schema = fmt.Sprintf("ddp_dtotal_%d_%d", os.Getpid(), variant)
		create, drop := "CREATE SCHEMA "+schema, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"
		if driver == "mysql" {
			create, drop = "CREATE DATABASE "+schema, "DROP DATABASE IF EXISTS "+schema
		}
		raw, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Exec(drop); raw.Close() })
		conn, err := raw.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		setup := []string{drop, create, "CREATE TABLE " + schema + ".events (" + dateTotalityTypes[driver] + ")",
			strings.Replace(rows, "INTO events", "INTO "+schema+".events", 1)}
		if driver == "mysql" {
			// Zero dates and zero parts are what a lax server stores.
			setup = append([]string{"SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'"}, setup...)
		} else {
			setup = append([]string{"SET TIME ZONE 'UTC'"}, setup...)
		}
		for _, s := range setup {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %s: %v", driver, s, err)
			}
		}
		if driver == "mysql" {
			be, err = mysql.Open(ctx, dsn, backends.Options{})
		} else {
			be, err = postgres.Open(ctx, dsn, backends.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	f := totalityProxyPolicy(t, dateTotalityPolicy, driver, dsn, schema, fmt.Sprint(variant), be)
	return f
}

func dateTotalityProbes() []probe {
	pg, my := parser.Postgres, parser.MySQL
	var ps []probe
	add := func(d parser.Dialect, q string) { ps = append(ps, probe{name: q, dialect: d, sql: q}) }
	for _, c := range []string{"d", "ts", "tz", "wd", "wts"} {
		for _, u := range []string{"year", "quarter", "month", "week", "day", "hour", "minute"} {
			add(pg, fmt.Sprintf("SELECT date_trunc('%s', %s) AS k, COUNT(*) FROM events GROUP BY 1", u, c))
			add(pg, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE date_trunc('%s', %s) >= '2010-03-01'", u, c))
		}
		for _, f := range []string{"year", "quarter", "month", "day", "hour", "minute", "dow"} {
			add(pg, fmt.Sprintf("SELECT extract(%s FROM %s) AS k, COUNT(*) FROM events GROUP BY 1", f, c))
			add(pg, fmt.Sprintf("SELECT SUM(extract(%s FROM %s)) FROM events", f, c))
		}
		for _, f := range []string{"YYYY", "YYYY-MM", "YYYY-MM-01", "YYYY-MM-DD", "HH24", "HH24:MI"} {
			add(pg, fmt.Sprintf("SELECT to_char(%s, '%s') AS k, COUNT(*) FROM events GROUP BY 1", c, f))
		}
		for _, iv := range []string{"1 month", "-1 month", "1 year", "3 days", "-2 hours", "1 week"} {
			add(pg, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE %s + INTERVAL '%s' < '2010-06-01'", c, iv))
			add(pg, fmt.Sprintf("SELECT date_trunc('month', %s + INTERVAL '%s') AS k, COUNT(*) FROM events GROUP BY 1", c, iv))
		}
		add(pg, fmt.Sprintf("SELECT CAST(%s AS date) AS k, COUNT(*) FROM events GROUP BY 1", c))
		add(pg, fmt.Sprintf("SELECT CAST(%s AS timestamp) AS k, COUNT(*) FROM events GROUP BY 1", c))
		add(pg, fmt.Sprintf("SELECT %s AS k, COUNT(*) FROM events WHERE %s BETWEEN '2010-03-01' AND '2010-03-05' GROUP BY 1", c, c))
		add(pg, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE %s::date = '2010-03-03'", c))
		add(pg, fmt.Sprintf("SELECT width_bucket(CAST(extract(month FROM %s) AS bigint), 1, 13, 4) AS k, COUNT(*) FROM events GROUP BY 1", c))
		for _, fn := range []string{"YEAR", "MONTH", "DAY", "QUARTER", "DATE", "HOUR", "MINUTE", "DAYOFWEEK", "WEEK", "WEEKDAY", "DAYOFMONTH"} {
			add(my, fmt.Sprintf("SELECT %s(%s) AS k, COUNT(*) FROM events GROUP BY 1", fn, c))
		}
		for _, f := range []string{"%Y", "%Y-%m", "%Y-%m-01", "%Y-%m-%d", "%H", "%H:%i"} {
			add(my, fmt.Sprintf("SELECT DATE_FORMAT(%s, '%s') AS k, COUNT(*) FROM events GROUP BY 1", c, f))
		}
		add(my, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE DATE_ADD(%s, INTERVAL 1 MONTH) < '2010-06-01'", c))
		add(my, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE DATE_SUB(%s, INTERVAL 1 QUARTER) < '2010-06-01'", c))
		add(my, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE %s - INTERVAL 2 DAY < '2010-06-01'", c))
	}
	return ps
}

// TestDateTotalityAttacks: see dateTotalityPolicy.
func TestDateTotalityAttacks(t *testing.T) {
	drivers := map[string]string{"sqlite": ""}
	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		drivers["postgres"] = dsn
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
		drivers["mysql"] = dsn
	}
	probes := dateTotalityProbes()
	for driver, dsn := range drivers {
		t.Run(driver, func(t *testing.T) {
			base := dateTotalityFixture(t, driver, dsn, 0)
			type outcome struct {
				code string
				keys string
			}
			run := func(f *totalityFixture, pr probe) outcome {
				res, err, _ := f.run(t, pr)
				if err != nil {
					if e := sqlerr.As(err); e != nil {
						return outcome{code: e.Code.SQLState + " " + e.Message}
					}
					return outcome{code: "?? " + err.Error()}
				}
				var keys []string
				if len(res.Columns) > 1 {
					for _, r := range res.Rows {
						keys = append(keys, r[0].SQL())
					}
				}
				return outcome{keys: strings.Join(keys, ",")}
			}
			want := make([]outcome, len(probes))
			answered := 0
			for i, pr := range probes {
				want[i] = run(base, pr)
				if want[i].code == "" {
					answered++
				}
			}
			t.Logf("%s: %d of %d probes answered", driver, answered, len(probes))
			for v := 1; v <= len(hostileDates[driver]); v++ {
				f := dateTotalityFixture(t, driver, dsn, v)
				for i, pr := range probes {
					if got := run(f, pr); got != want[i] {
						t.Errorf("%s hostile %d: %s: %+v, ordinary data: %+v", driver, v, pr.sql, got, want[i])
					}
				}
			}
		})
	}
}
