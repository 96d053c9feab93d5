package session

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

// The date totality attacks: one person's stored date, timestamp or
// timestamptz is a value at or beyond what the policy declares (outside
// the bounds, at a backend's extreme, PostgreSQL's infinity, MariaDB's
// zero dates, SQLite text that is not a date at all). Every date
// construct evaluated on the rows must give the same outcome (answered
// or refused, with the same keys) on the database where that person's
// value is ordinary and on the one where it is hostile.

// totalityPolicyHead is the start of the totality probes' policies: the
// backend, a ledger and one user with a large budget on dataset hr, whose
// tables each probe file declares after it.
const totalityPolicyHead = `
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
`

const dateTotalityPolicy = totalityPolicyHead + `      events:
        schema: %q
        unit: id
        columns:
          d:  {type: date, bounds: ['2010-01-01', '2010-12-31']}
          ts: {type: timestamp, bounds: ['2010-01-01 00:00:00', '2010-12-31 23:59:59.999999']}
          tz: {type: timestamptz, bounds: ['2010-01-01 00:00:00Z', '2010-12-31 23:59:59.999999Z']}
          wd: {type: date, bounds: ['1000-01-06', '9999-12-31']}
          wts: {type: timestamp, bounds: ['1000-01-06 00:00:00', '9999-12-31 23:59:59.999999']}
          ud: {type: date, bounds: ['1970-01-01', '2038-01-19']}
          ue: {type: timestamp, bounds: ['1970-01-01 00:00:00', '2038-01-19 03:14:07.999999']}
          ut: {type: timestamptz, bounds: ['1970-01-01 00:00:01Z', '2038-01-19 03:14:07.999999Z']}
          pe: {type: timestamp, bounds: ['1969-12-31 23:59:58.5', '1970-01-02 00:00:00']}
          n:  {type: integer, bounds: [0, 100]}
`

var dateTotalityTypes = map[string]string{
	"sqlite":   "id INTEGER, d DATE, ts TIMESTAMP, tz TIMESTAMP, wd DATE, wts TIMESTAMP, ud DATE, ue TIMESTAMP, ut TIMESTAMP, pe TIMESTAMP, n INTEGER",
	"postgres": "id BIGINT, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, wd DATE, wts TIMESTAMP, ud DATE, ue TIMESTAMP, ut TIMESTAMPTZ, pe TIMESTAMP, n INTEGER",
	"mysql":    "id BIGINT, d DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL, wd DATE, wts DATETIME(6), ud DATE, ue DATETIME(6), ut TIMESTAMP(6) NULL, pe DATETIME(6), n INT",
}

// hostileDates are values of person 123 (d, ts, tz, wd, wts, and the
// 1970..2038 columns ud, ue, ut, pe as SQL literals) per backend; the
// baseline is ordinary.
var hostileDates = map[string][][9]string{
	"sqlite": {
		{"'garbage'", "'2010-06-01T10:00:00Z'", "'2010-06-01 10:00:00+02:00'", "'x'", "'y'", "'garbage'", "'1969-12-31 23:59:59.5'", "'2038-01-19 03:14:08'", "'z'"},
		{"'2010-6-1'", "'2010-06-01 25:61:61'", "12345", "'10000-01-01'", "'0999-12-31 23:59:59'", "'1969-12-31'", "'2038-01-19 03:14:07.9999999'", "'1970-01-01 00:00:00'", "'1969-12-31 23:59:58.4'"},
		{"X'00ff'", "2455000.5", "'2010-06-01 10:00:00.1234567891'", "-5", "'9999-12-31 23:59:59.9999999'", "-1", "X'00'", "2147483648", "'1970-01-02 00:00:00.000001'"},
		{"'2010-02-30'", "'2010-06-31 10:00:00'", "''", "'0000-01-01'", "'2010-06-01 10:00:00 garbage'", "'2038-01-20'", "'1970-01-01 00:00:00 x'", "''", "1e300"},
	},
	"postgres": {
		{"'infinity'", "'infinity'", "'infinity'", "'infinity'", "'infinity'", "'infinity'", "'infinity'", "'infinity'", "'infinity'"},
		{"'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'", "'-infinity'"},
		{"'4713-01-01 BC'", "'294276-12-31 23:59:59'", "'4713-01-01 00:00:00+00 BC'", "'5874897-12-31'", "'294276-12-31 23:59:59.999999'", "'1969-12-31'", "'1969-12-31 23:59:59.999999'", "'1970-01-01 00:00:00+00'", "'1969-12-31 23:59:58.499999'"},
		{"'0001-01-01'", "'9999-12-31 23:59:59.999999'", "'2010-12-31 23:59:59.999999+00'", "'0001-01-01'", "'0001-01-01 00:00:00'", "'2038-01-20'", "'2038-01-19 03:14:08'", "'2038-01-19 03:14:08+00'", "'1970-01-02 00:00:00.000001'"},
	},
	"mysql": {
		{"'0000-00-00'", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'", "'0000-00-00'", "'0000-00-00 00:00:00'", "'0000-00-00'", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'", "'0000-00-00 00:00:00'"},
		{"'2010-02-00'", "'2010-00-00 10:00:00'", "NULL", "'2010-00-05'", "'2010-06-00 10:00:00'", "'2038-01-00'", "'1970-00-00 00:00:00'", "NULL", "'1969-12-00 23:59:59'"},
		{"'2010-00-00'", "'2010-06-00 23:59:59.999999'", "'2038-01-19 03:14:07.999999'", "'0001-01-01'", "'0001-01-01 00:00:00'", "'1969-12-31'", "'1969-12-31 23:59:59.999999'", "'1970-01-01 00:00:01'", "'1969-12-31 23:59:58.499999'"},
		{"'9999-12-31'", "'9999-12-31 23:59:59.999999'", "'1970-01-01 00:00:01'", "'9999-12-31'", "'9999-12-31 23:59:59.999999'", "'2038-01-20'", "'2038-01-19 03:14:08'", "'2038-01-19 03:14:07.999999'", "'9999-12-31 23:59:59.999999'"},
	},
}

func dateTotalityRows(driver string, variant int) []string {
	var rows []string
	for i := range 60 {
		day := fmt.Sprintf("2010-%02d-%02d", 1+i%12, 1+i%28)
		at := fmt.Sprintf("%s %02d:%02d:%02d.%06d", day, i%24, i%60, i%60, i*1001)
		// The 1970..2038 columns: one row a year from 1970, and the
		// first and last second MySQL's TIMESTAMP holds.
		uday := fmt.Sprintf("%04d-%02d-%02d", 1970+i, 1+i%12, 1+i%28)
		uat := fmt.Sprintf("%s %02d:%02d:%02d.%06d", uday, i%24, i%60, i%60, i*1001)
		pat := fmt.Sprintf("1970-01-01 %02d:%02d:%02d.%06d", i%24, i%60, i%60, i*1001)
		switch i {
		case 0:
			uday, uat, pat = "1970-01-01", "1970-01-01 00:00:01", "1969-12-31 23:59:58.5"
		case 59:
			uday, uat = "2038-01-19", "2038-01-19 03:14:07.999999"
		}
		q := func(s string) string { return "'" + s + "'" }
		vals := [9]string{q(day), q(at), q(at), q(day), q(at), q(uday), q(uat), q(uat), q(pat)}
		if driver == "postgres" {
			vals[2], vals[7] = q(at+"+00"), q(uat+"+00")
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
	be, dsn, schema := loadTestTable(t, driver, dsn, fmt.Sprintf("ddp_dtotal_%d_%d", os.Getpid(), variant), testTable{
		name: "events", columns: dateTotalityTypes, rows: dateTotalityRows(driver, variant),
		before: map[string][]string{
			// Zero dates and zero parts are what a lax server stores.
			"mysql":    {"SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'"},
			"postgres": {"SET TIME ZONE 'UTC'"},
		},
	})
	return totalityProxyPolicy(t, dateTotalityPolicy, driver, dsn, schema, fmt.Sprint(variant), be)
}

func dateTotalityProbes() []probe {
	pg, my := parser.Postgres, parser.MySQL
	var ps []probe
	add := func(d parser.Dialect, q string) { ps = append(ps, probe{name: q, dialect: d, sql: q}) }
	for _, c := range []string{"d", "ts", "tz", "wd", "wts", "ud", "ue", "ut", "pe"} {
		for _, u := range []string{"year", "quarter", "month", "week", "day", "hour", "minute"} {
			add(pg, fmt.Sprintf("SELECT date_trunc('%s', %s) AS k, COUNT(*) FROM events GROUP BY 1", u, c))
			add(pg, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE date_trunc('%s', %s) >= '2010-03-01'", u, c))
		}
		for _, f := range []string{"year", "quarter", "month", "day", "hour", "minute", "dow", "isodow", "doy", "week"} {
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
		// Weeks from Sunday (Metabase's, Superset's).
		add(pg, fmt.Sprintf("SELECT date_trunc('week', %s + INTERVAL '1 day') + INTERVAL '-1 day' AS k, COUNT(*) FROM events GROUP BY 1", c))
		add(pg, fmt.Sprintf("SELECT CAST(%s AS date) AS k, COUNT(*) FROM events GROUP BY 1", c))
		add(pg, fmt.Sprintf("SELECT CAST(%s AS timestamp) AS k, COUNT(*) FROM events GROUP BY 1", c))
		add(pg, fmt.Sprintf("SELECT %s AS k, COUNT(*) FROM events WHERE %s BETWEEN '2010-03-01' AND '2010-03-05' GROUP BY 1", c, c))
		add(pg, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE %s::date = '2010-03-03'", c))
		add(pg, fmt.Sprintf("SELECT width_bucket(CAST(extract(month FROM %s) AS bigint), 1, 13, 4) AS k, COUNT(*) FROM events GROUP BY 1", c))
		for _, fn := range []string{"YEAR", "MONTH", "DAY", "QUARTER", "DATE", "HOUR", "MINUTE", "DAYOFWEEK", "WEEK", "WEEKDAY", "DAYOFMONTH", "DAYOFYEAR", "WEEKOFYEAR"} {
			add(my, fmt.Sprintf("SELECT %s(%s) AS k, COUNT(*) FROM events GROUP BY 1", fn, c))
		}
		for _, f := range []string{"%Y", "%Y-%m", "%Y-%m-01", "%Y-%m-%d", "%H", "%H:%i"} {
			add(my, fmt.Sprintf("SELECT DATE_FORMAT(%s, '%s') AS k, COUNT(*) FROM events GROUP BY 1", c, f))
		}
		add(my, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE DATE_ADD(%s, INTERVAL 1 MONTH) < '2010-06-01'", c))
		add(my, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE DATE_SUB(%s, INTERVAL 1 QUARTER) < '2010-06-01'", c))
		add(my, fmt.Sprintf("SELECT COUNT(*) FROM events WHERE %s - INTERVAL 2 DAY < '2010-06-01'", c))
		// The epoch (PostgreSQL) and UNIX_TIMESTAMP (MySQL): keys,
		// Grafana's buckets, integer quotients, sums and filters.
		for _, e := range []string{"extract(epoch FROM %s)", "date_part('epoch', %s)"} {
			e = fmt.Sprintf(e, c)
			add(pg, "SELECT "+e+" AS k, COUNT(*) FROM events GROUP BY 1")
			add(pg, "SELECT floor("+e+"/86400)*86400 AS k, COUNT(*) FROM events GROUP BY 1")
			add(pg, "SELECT floor("+e+" / 3600) * 3600 AS \"time\", COUNT(*) FROM events GROUP BY 1 ORDER BY 1")
			add(pg, "SELECT CAST("+e+" AS bigint) / 86400 AS k, COUNT(*) FROM events GROUP BY 1")
			add(pg, "SELECT SUM("+e+") FROM events")
			add(pg, "SELECT AVG("+e+") FROM events")
			add(pg, "SELECT SUM("+e+" * 1000000) FROM events")
			add(pg, "SELECT SUM(CAST("+e+" AS bigint) % 7) FROM events")
			add(pg, "SELECT COUNT(*) FROM events WHERE "+e+" >= 1267401600")
			add(pg, "SELECT COUNT(*) FROM events WHERE "+e+" BETWEEN -1 AND 2147483647")
			add(pg, "SELECT COUNT(*) FROM events WHERE floor("+e+"/86400) = 14700")
		}
		for _, e := range []string{"UNIX_TIMESTAMP(%s)"} {
			e = fmt.Sprintf(e, c)
			add(my, "SELECT "+e+" AS k, COUNT(*) FROM events GROUP BY 1")
			add(my, "SELECT "+e+" DIV 86400 * 86400 AS time, COUNT(*) FROM events GROUP BY 1 ORDER BY 1")
			add(my, "SELECT "+e+" DIV 604800 AS k, COUNT(*) FROM events GROUP BY 1")
			add(my, "SELECT FLOOR("+e+" / 3600) * 3600 AS k, COUNT(*) FROM events GROUP BY 1")
			add(my, "SELECT SUM("+e+") FROM events")
			add(my, "SELECT AVG("+e+") FROM events")
			add(my, "SELECT SUM("+e+" * 1000000) FROM events")
			add(my, "SELECT COUNT(*) FROM events WHERE "+e+" >= 1267401600")
			add(my, "SELECT COUNT(*) FROM events WHERE "+e+" = 0 OR "+e+" IS NULL")
			add(my, "SELECT COUNT(*) FROM events WHERE "+e+" MOD 86400 = 0")
		}
		// Metabase's and Superset's MySQL truncations.
		for _, f := range []string{
			"str_to_date(date_format(%[1]s, '%%Y-%%m-%%d %%H:%%i'), '%%Y-%%m-%%d %%H:%%i')",
			"str_to_date(date_format(%[1]s, '%%Y-%%m-%%d %%H'), '%%Y-%%m-%%d %%H')",
			"str_to_date(date_format(%[1]s, '%%Y-%%m-%%d'), '%%Y-%%m-%%d')",
			"str_to_date(date_format(%[1]s, '%%Y-%%m'), '%%Y-%%m')",
			"str_to_date(date_format(%[1]s, '%%Y'), '%%Y')",
			"str_to_date(concat(date_format(%[1]s, '%%Y-%%m'), '-01'), '%%Y-%%m-%%d')",
			"str_to_date(concat(year(%[1]s), '-', quarter(%[1]s) * 3 - 2, '-01'), '%%Y-%%m-%%d')",
			"makedate(year(%[1]s), 1)",
			"DATE_ADD(DATE(%[1]s), INTERVAL (HOUR(%[1]s)*60 + MINUTE(%[1]s)) MINUTE)",
			"DATE_ADD(DATE(%[1]s), INTERVAL HOUR(%[1]s) HOUR)",
			"DATE(DATE_SUB(%[1]s, INTERVAL DAYOFWEEK(DATE_SUB(%[1]s, INTERVAL 1 DAY)) - 1 DAY))",
			"DATE(DATE_SUB(%[1]s, INTERVAL DAYOFMONTH(%[1]s) - 1 DAY))",
			"MAKEDATE(YEAR(%[1]s), 1) + INTERVAL QUARTER(%[1]s) QUARTER - INTERVAL 1 QUARTER",
			"DATE(DATE_SUB(%[1]s, INTERVAL DAYOFYEAR(%[1]s) - 1 DAY))",
			"DATE(DATE_SUB(%[1]s, INTERVAL DAYOFWEEK(%[1]s) - 1 DAY))",
			"str_to_date(concat(yearweek(%[1]s), ' Sunday'), '%%X%%V %%W')",
		} {
			e := fmt.Sprintf(f, c)
			add(my, "SELECT "+e+" AS k, COUNT(*) FROM events GROUP BY 1 ORDER BY 1")
			add(my, "SELECT COUNT(*) FROM events WHERE "+e+" >= '2010-03-01'")
			add(my, "SELECT UNIX_TIMESTAMP("+e+") AS k, COUNT(*) FROM events GROUP BY 1")
		}
		// Constant times (Superset's and Grafana's filters) are literals.
		for _, w := range []string{
			"%s >= TO_TIMESTAMP('2010-03-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')",
			"%s < to_date('2010-03-01', 'YYYY-MM-DD')",
			"%s BETWEEN to_timestamp(0) AND to_timestamp(2147483647)",
			"%s >= to_timestamp(253402300799)",
		} {
			add(pg, "SELECT COUNT(*) FROM events WHERE "+fmt.Sprintf(w, c))
		}
		for _, w := range []string{
			"%s >= STR_TO_DATE('2010-03-01 00:00:00.000000', '%%Y-%%m-%%d %%H:%%i:%%s.%%f')",
			"%s < STR_TO_DATE('2010-03-01', '%%Y-%%m-%%d')",
			"%s BETWEEN FROM_UNIXTIME(0) AND FROM_UNIXTIME(2147483647)",
			"%s >= TIMESTAMP('2010-03-01 00:00:00')",
		} {
			add(my, "SELECT COUNT(*) FROM events WHERE "+fmt.Sprintf(w, c))
		}
	}
	return ps
}

// TestDateTotalityAttacks: see dateTotalityPolicy.
func TestDateTotalityAttacks(t *testing.T) {
	hostileOutcomesEqual(t, dateTotalityProbes(), func(driver string) int { return len(hostileDates[driver]) }, dateTotalityFixture, false)
}
