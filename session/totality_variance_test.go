package session

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The variance family at the extremes of its declared bounds: integer
// bounds at ±2^62 and ±(2^63 − 1), real bounds at ±1e300 and ±1.7e308
// (whose half-width squared overflows), a tiny range [0, 1e-300] and a
// narrow range far from 0. The parts (COUNT(x), SUM(x − m),
// SUM(|x − m|·|x − m|)) are evaluated on every row, so each probe must
// either be refused before anything is charged or be answered with a
// finite value in the feasible range, on the ordinary data and with one
// person's value replaced by a hostile one (same outcome).

const varianceTotalityPolicy = totalityPolicyHead + `      nums:
        schema: %q
        unit: id
        columns:
          a: {type: integer, bounds: [-9007199254740992, 9007199254740992]}
          b: {type: integer, bounds: [9007199254740000, 9007199254740992]}
          r: {type: real, bounds: [-1e300, 1e300]}
          w: {type: real, bounds: [-1.7e308, 1.7e308]}
          u: {type: real, bounds: [0, 1e-300]}
          s: {type: real, bounds: [1000000000000000, 1000000000000000.125]}
          g: {type: integer, bounds: [0, 2], domain: {range: [0, 2]}}
          v: {type: real, bounds: [-1e-150, 3e-150]}
`

var varianceTotalityTypes = map[string]string{
	"sqlite":   "id INTEGER, a INTEGER, b INTEGER, r REAL, w REAL, u REAL, s REAL, g INTEGER, v REAL",
	"postgres": "id BIGINT, a BIGINT, b BIGINT, r DOUBLE PRECISION, w DOUBLE PRECISION, u DOUBLE PRECISION, s DOUBLE PRECISION, g BIGINT, v DOUBLE PRECISION",
	"mysql":    "id BIGINT, a BIGINT, b BIGINT, r DOUBLE, w DOUBLE, u DOUBLE, s DOUBLE, g BIGINT, v DOUBLE",
}

var hostileVariance = map[string][][6]string{
	"sqlite": {
		{"9223372036854775807", "-9223372036854775808", "1e308", "-1e308", "1e308", "'x'"},
		{"'x'", "'NaN'", "'Infinity'", "X'ff'", "-1e308", "1e308"},
		{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
		{"-9223372036854775808", "9223372036854775807", "-1e308", "1e308", "1e-320", "-1e308"},
	},
	"postgres": {
		{"9223372036854775807", "-9223372036854775808", "'Infinity'", "'-Infinity'", "'NaN'", "'NaN'"},
		{"-9223372036854775808", "9223372036854775807", "'NaN'", "'NaN'", "'Infinity'", "'-Infinity'"},
		{"NULL", "NULL", "1e308", "-1.7976931348623157e308", "1e-320", "1.7976931348623157e308"},
	},
	"mysql": {
		{"9223372036854775807", "-9223372036854775808", "1.7976931348623157e308", "-1.7976931348623157e308", "2.2250738585072014e-308", "-1.7976931348623157e308"},
		{"-9223372036854775808", "9223372036854775807", "-1.7976931348623157e308", "1.7976931348623157e308", "1.7976931348623157e308", "1.7976931348623157e308"},
		{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
	},
}

func varianceTotalityRows(driver string, variant int) []string {
	var rows []string
	for i := range 60 {
		f := float64(i%9 - 4)
		vals := [6]string{
			fmt.Sprint(int64(i%9-4) * (1 << 51)),
			fmt.Sprint(9007199254740000 + int64(i%9)*100),
			fmt.Sprintf("%g", f*2e299),
			fmt.Sprintf("%g", f*4e307),
			fmt.Sprintf("%g", float64(i%5)*2e-301),
			fmt.Sprintf("%.3f", 1e15+float64(i%5)*0.03125),
		}
		v := fmt.Sprintf("%g", float64(i%5)*1e-150-1e-150)
		if i == 23 && variant > 0 {
			vals = hostileVariance[driver][variant-1]
			// Next to the midpoint m of v's bounds: v − m is ~1e-166, its
			// square underflows.
			v = fmt.Sprint(math.Nextafter((-1e-150+3e-150)/2, 1))
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, %d, %s)", i, strings.Join(vals[:], ", "), i%3, v))
	}
	return rows
}

func varianceTotalityFixture(t *testing.T, driver, dsn string, variant int) *totalityFixture {
	t.Helper()
	be, dsn, schema := loadTestTable(t, driver, dsn, fmt.Sprintf("ddp_review_vtotal_%d_%d", os.Getpid(), variant), testTable{
		name: "nums", columns: varianceTotalityTypes, rows: varianceTotalityRows(driver, variant),
	})
	return totalityProxyPolicy(t, varianceTotalityPolicy, driver, dsn, schema, fmt.Sprint(variant), be)
}

func varianceTotalityProbes() []probe {
	pg, my := parser.Postgres, parser.MySQL
	var ps []probe
	add := func(d parser.Dialect, q string) { ps = append(ps, probe{name: q, dialect: d, sql: q}) }
	for _, c := range []string{"a", "b", "r", "w", "u", "s", "v"} {
		add(pg, fmt.Sprintf("SELECT var_pop(%[1]s), var_samp(%[1]s), stddev_pop(%[1]s), stddev_samp(%[1]s) FROM nums", c))
		add(pg, fmt.Sprintf("SELECT g, variance(%[1]s), stddev(%[1]s) FROM nums GROUP BY g", c))
		add(pg, fmt.Sprintf("SELECT var_samp(%[1]s) FROM nums WHERE %[1]s > 0", c))
		add(my, fmt.Sprintf("SELECT VARIANCE(%[1]s), STD(%[1]s), VAR_SAMP(%[1]s) FROM nums", c))
	}
	for _, q := range []string{
		"SELECT var_pop(a * 2), var_samp(a - b) FROM nums",
		"SELECT var_pop(r * r), stddev_samp(r / 3) FROM nums",
		"SELECT var_samp(w + w), stddev_pop(-w) FROM nums",
		"SELECT var_pop(u * u), stddev_samp(u / 1e300) FROM nums",
		"SELECT var_pop(s - 1000000000000000), var_samp(s * s) FROM nums",
		"SELECT var_pop(CAST(a AS double precision) * 1e300) FROM nums",
		"SELECT stddev_samp(CASE WHEN g = 2 THEN a END) FROM nums",
		"SELECT var_samp(a) FROM nums WHERE g = 2 AND a > 0",
	} {
		add(pg, q)
	}
	return ps
}

// TestVarianceTotalityAttacks: see varianceTotalityPolicy. Besides equal
// outcomes, every probe on the ordinary data is answered with finite
// values in the feasible range, or refused with nothing charged and with
// a reason (not an internal error).
func TestVarianceTotalityAttacks(t *testing.T) {
	probes := varianceTotalityProbes()
	hostileOutcomesEqual(t, probes, func(driver string) int { return len(hostileVariance[driver]) }, varianceTotalityFixture, true)
	for _, tb := range testBackends() {
		driver, dsn := tb.driver, tb.dsn
		for v := 0; v <= len(hostileVariance[driver]); v++ {
			f := varianceTotalityFixture(t, driver, dsn, v)
			for _, pr := range probes {
				res, err, spent := f.run(t, pr)
				if err != nil {
					if spent != 0 {
						t.Errorf("%s/%d: %s: failed after a charge of ε %g: %v", driver, v, pr.sql, spent, err)
					}
					if e := sqlerr.As(err); e == nil || e.Code == sqlerr.Internal {
						t.Errorf("%s/%d: %s: refused without a reason the user can act on: %v", driver, v, pr.sql, err)
					}
					continue
				}
				for _, row := range res.Rows {
					for _, val := range row {
						x, ok := val.AsFloat()
						if val.IsNull() || !ok || !val.IsNumber() {
							continue
						}
						if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
							t.Errorf("%s/%d: %s: released %v", driver, v, pr.sql, x)
						}
					}
				}
			}
		}
	}
}
