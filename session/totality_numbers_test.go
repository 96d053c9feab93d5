package session

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

// The expression attacks on numbers: one person's stored value is at the
// storage type's extreme or not a number at all (PostgreSQL's NaN and
// infinities, the int4 and int64 limits, MySQL's unsigned maximum,
// SQLite text in a numeric column). The expression language of issue 11
// (width_bucket, floor/round of reals, casts, real division, GROUP BY
// expressions, FILTER) must give the same outcome with the ordinary
// value and the hostile one.

const numberTotalityPolicy = totalityPolicyHead + `      nums:
        schema: %q
        unit: id
        columns:
          a: {type: integer, bounds: [0, 120]}
          b: {type: integer, bounds: [-1000000, 1000000]}
          r: {type: real, bounds: [-1000, 1000]}
          u: {type: integer, bounds: [0, 100]}
          s: {type: text}
`

var numberTotalityTypes = map[string]string{
	"sqlite":   "id INTEGER, a INTEGER, b INTEGER, r REAL, u INTEGER, s TEXT",
	"postgres": "id BIGINT, a INTEGER, b BIGINT, r DOUBLE PRECISION, u SMALLINT, s TEXT",
	"mysql":    "id BIGINT, a INT, b BIGINT, r DOUBLE, u BIGINT UNSIGNED, s TEXT",
}

var hostileNumbers = map[string][][5]string{
	"sqlite": {
		{"'x'", "'9223372036854775807x'", "'NaN'", "X'ff'", "NULL"},
		{"9223372036854775807", "-9223372036854775808", "1e308", "-1", "'a'"},
		{"2.5", "1e30", "-1e308", "1e-320", "''"},
	},
	"postgres": {
		{"2147483647", "9223372036854775807", "'NaN'", "32767", "NULL"},
		{"-2147483648", "-9223372036854775808", "'Infinity'", "-32768", "''"},
		{"0", "0", "'-Infinity'", "0", "'é'"},
		{"1", "1", "1e-320", "1", "'x'"},
	},
	"mysql": {
		{"2147483647", "9223372036854775807", "1.7976931348623157e308", "18446744073709551615", "NULL"},
		{"-2147483648", "-9223372036854775808", "-1.7976931348623157e308", "0", "''"},
		{"0", "0", "2.2250738585072014e-308", "9223372036854775808", "'é'"},
	},
}

func numberTotalityRows(driver string, variant int) []string {
	var rows []string
	for i := range 60 {
		vals := [5]string{fmt.Sprint(20 + i%50), fmt.Sprint(i*1000 - 30000), fmt.Sprintf("%g", float64(i%7-3)*1.5), fmt.Sprint(i % 10), fmt.Sprintf("'v%d'", i%3)}
		if i == 23 && variant > 0 {
			vals = hostileNumbers[driver][variant-1]
		}
		rows = append(rows, fmt.Sprintf("(%d, %s)", i, strings.Join(vals[:], ", ")))
	}
	return rows
}

func numberTotalityFixture(t *testing.T, driver, dsn string, variant int) *totalityFixture {
	t.Helper()
	be, dsn, schema := loadTestTable(t, driver, dsn, fmt.Sprintf("ddp_ntotal_%d_%d", os.Getpid(), variant), testTable{
		name: "nums", columns: numberTotalityTypes, rows: numberTotalityRows(driver, variant),
	})
	return totalityProxyPolicy(t, numberTotalityPolicy, driver, dsn, schema, fmt.Sprint(variant), be)
}

func numberTotalityProbes() []probe {
	pg, my := parser.Postgres, parser.MySQL
	var ps []probe
	add := func(d parser.Dialect, q string) { ps = append(ps, probe{name: q, dialect: d, sql: q}) }
	for _, q := range []string{
		"SELECT width_bucket(a, 0, 120, 12) AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT width_bucket(b, -1000000, 1000000, 2147483646) AS k, COUNT(*) FROM nums WHERE b > 0 GROUP BY 1",
		"SELECT width_bucket(u, 0, 100, 7) AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT width_bucket(CAST(floor(r) AS bigint), -1000, 1000, 10) AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT floor(r / 100) * 100 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT round(r / 100) AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT ceil(r) AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT CAST(floor(r) AS integer) AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT a / 10 * 10 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT a % 7 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT b % 7 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT u - 50 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT CASE WHEN r > 0 THEN 'pos' WHEN r < 0 THEN 'neg' ELSE 'zero' END AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT COUNT(*) FROM nums WHERE r / (a - 20) > 1",
		"SELECT COUNT(*) FROM nums WHERE b / (a - 43) > 1",
		"SELECT COUNT(*) FROM nums WHERE b % (u - 3) > 1",
		"SELECT COUNT(*) FROM nums WHERE r * r * r > 1",
		"SELECT COUNT(*) FROM nums WHERE r * 1e-300 * 1e-10 > 0",
		"SELECT COUNT(*) FROM nums WHERE abs(b) * 1000000000 > 5",
		"SELECT COUNT(*) FROM nums WHERE CAST(a AS double precision) / 3 > 5",
		"SELECT COUNT(*) FROM nums WHERE CAST(b AS text) = '5'",
		"SELECT COUNT(*) FROM nums WHERE CAST(a AS text) LIKE '2%'",
		"SELECT COUNT(*) FROM nums WHERE length(s) * 1000000 > 5",
		"SELECT COUNT(*) FROM nums WHERE lower(s) = 'v1' AND upper(s) = 'V1'",
		"SELECT COUNT(*) FROM nums WHERE substr(s, 2, 1) = '1' AND left(s, 1) = 'v' AND right(s, 1) = '1'",
		"SELECT COUNT(*) FILTER (WHERE r / a > 0.1), SUM(b) FILTER (WHERE a > 30) FROM nums",
		"SELECT SUM(CASE WHEN r > 0 THEN 1 ELSE 0 END), AVG(r), SUM(b / 1000) FROM nums",
		"SELECT AVG(r * 1e200) FROM nums",
		"SELECT SUM(abs(b)), AVG(a * a) FROM nums",
		"SELECT COUNT(*) FROM nums WHERE coalesce(nullif(a, 90), 0) + greatest(b, 0) > least(u, 5)",
		"SELECT COUNT(*) FROM nums WHERE s || 'x' = 'v1x' AND concat(s, a) = 'v120'",
	} {
		add(pg, q)
	}
	for _, q := range []string{
		"SELECT a DIV 10 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT u - 50 AS k, COUNT(*) FROM nums GROUP BY 1",
		"SELECT COUNT(*) FROM nums WHERE u - 5 > 0",
		"SELECT COUNT(*) FROM nums WHERE b MOD (u - 3) > 1",
		"SELECT COUNT(*) FROM nums WHERE r / (a - 20) > 1",
		"SELECT ROUND(r, 1) AS k, COUNT(*) FROM nums WHERE r BETWEEN -2 AND 2 GROUP BY 1",
		"SELECT COUNT(*) FROM nums WHERE CHAR_LENGTH(s) * 1000000 > 5",
		"SELECT COUNT(*) FROM nums WHERE CONCAT(s, 'x') = 'v1x'",
	} {
		add(my, q)
	}
	return ps
}

// TestNumberTotalityAttacks: see numberTotalityPolicy.
func TestNumberTotalityAttacks(t *testing.T) {
	hostileOutcomesEqual(t, numberTotalityProbes(), func(driver string) int { return len(hostileNumbers[driver]) }, numberTotalityFixture, true)
}
