package backends_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// dateRowText writes one date row as a VALUES tuple for a backend: the
// timestamptz as an instant whatever the loading session's time zone.
func dateRowText(dialect string, r dateRow) string {
	q := func(ok bool, s string) string {
		if !ok {
			return "NULL"
		}
		return "'" + s + "'"
	}
	tz := "NULL"
	if r.tzOK {
		switch dialect {
		case "postgres":
			tz = "'" + ir.FormatTime(ir.KindTimestampTZ, r.tz) + "'"
		case "mysql":
			tz = "FROM_UNIXTIME(" + strconv.FormatInt(r.tz/ir.MicrosPerSecond, 10) + "." + fmt.Sprintf("%06d", r.tz%ir.MicrosPerSecond) + ")"
		default:
			tz = "'" + ir.CanonicalText(ir.KindTimestampTZ, r.tz) + "'"
		}
	}
	return q(r.dOK, ir.CanonicalText(ir.KindDate, r.d)) + ", " + q(r.tsOK, ir.CanonicalText(ir.KindTimestamp, r.ts)) + ", " + tz
}

// TestDateGroupKeysOnEveryBackend plans date groupings (date_trunc, a
// cast to date, extract, to_char and their MySQL spellings) over the
// date table with declared bounds [2010-01-01, 2011-01-01), and runs the
// true backend query on SQLite, PostgreSQL and MariaDB: every key a
// backend returns lies in the derived key set (NULL aside: the release
// drops the group of NULL rows), and the count per key equals the count
// computed in Go from the rows with the value clamped to its bounds.
func TestDateGroupKeysOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_datekeys")
	cols := map[string]string{
		"sqlite":   "u INTEGER, d DATE, ts TIMESTAMP, tz TIMESTAMP",
		"postgres": "u BIGINT, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ",
		"mysql":    "u BIGINT, d DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL",
	}
	data := dateRows()
	backends := eachBackendRows(t, table, cols, func(dialect string) []string {
		var out []string
		for i, r := range data {
			out = append(out, fmt.Sprintf("(%d, %s)", i, dateRowText(dialect, r)))
		}
		return out
	})
	t.Setenv("DDP_TEST_DATEKEYS_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(fmt.Sprintf(`
version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_DATEKEYS_PASSWORD
    budgets: {d: {epsilon: 100}}
    max_epsilon: 10
datasets:
  d:
    tables:
      %s:
        unit: u
        columns:
          d: {type: date, bounds: ['2010-01-01', '2011-01-01']}
          ts: {type: timestamp, bounds: ['2010-01-01 00:00:00', '2010-12-31 23:59:59.999999']}
          tz: {type: timestamptz, bounds: ['2010-01-01 00:00:00+00', '2010-12-31 23:59:59.999999+00']}
`, table)))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)
	value := clampedDate
	layouts := map[string]string{"YYYY": "2006", "YYYY-MM": "2006-01", "YYYY-MM-DD": "2006-01-02", "YYYY-MM-DD HH24": "2006-01-02 15"}
	trunc := func(unit string) func(ir.Value) ir.Value {
		return func(v ir.Value) ir.Value { out, _ := exprtype.TruncTime(unit, v); return out }
	}
	extract := func(field string) func(ir.Value) ir.Value {
		return func(v ir.Value) ir.Value { n, _ := exprtype.ExtractTime(field, v); return ir.Int(n) }
	}
	text := func(format string) func(ir.Value) ir.Value {
		return func(v ir.Value) ir.Value { return ir.String(v.GoTime().Format(layouts[format])) }
	}
	day := func(v ir.Value) ir.Value { return ir.Date(floorDiv(v.GoTime().Unix(), 86400)) }
	dayOf := func(f func(ir.Value) ir.Value) func(ir.Value) ir.Value {
		return func(v ir.Value) ir.Value { return day(f(v)) }
	}
	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d   parser.Dialect
		key string
		col string
		f   func(ir.Value) ir.Value
	}{
		{pg, "date_trunc('month', ts)", "ts", trunc("month")},
		{pg, "date_trunc('week', d)", "d", trunc("week")},
		{pg, "date_trunc('quarter', tz)", "tz", trunc("quarter")},
		{pg, "date_trunc('day', ts)", "ts", trunc("day")},
		{pg, "CAST(ts AS date)", "ts", day},
		{pg, "CAST(date_trunc('month', tz) AS date)", "tz", dayOf(trunc("month"))},
		{pg, "tz::date", "tz", day},
		{my, "DATE(ts)", "ts", day},
		{my, "CAST(tz AS DATE)", "tz", day},
		{pg, "extract(month FROM ts)", "ts", extract("month")},
		{pg, "extract(dow FROM d)", "d", extract("dow")},
		{pg, "date_part('hour', tz)", "tz", extract("hour")},
		{my, "MONTH(ts)", "ts", extract("month")},
		{my, "YEAR(d)", "d", extract("year")},
		{pg, "to_char(ts, 'YYYY-MM')", "ts", text("YYYY-MM")},
		{pg, "to_char(d, 'YYYY-MM-DD')", "d", text("YYYY-MM-DD")},
		{pg, "to_char(tz, 'YYYY-MM-DD HH24')", "tz", text("YYYY-MM-DD HH24")},
		{my, "DATE_FORMAT(ts, '%Y-%m')", "ts", text("YYYY-MM")},
		{my, "DATE_FORMAT(d, '%Y')", "d", text("YYYY")},
		// Metabase's MySQL truncations (a date for the date units).
		{my, "str_to_date(date_format(ts, '%Y-%m'), '%Y-%m')", "ts", dayOf(trunc("month"))},
		{my, "str_to_date(concat(date_format(tz, '%Y-%m'), '-01'), '%Y-%m-%d')", "tz", dayOf(trunc("month"))},
		{my, "str_to_date(concat(year(ts), '-', quarter(ts) * 3 - 2, '-01'), '%Y-%m-%d')", "ts", dayOf(trunc("quarter"))},
		{my, "makedate(year(d), 1)", "d", dayOf(trunc("year"))},
		{my, "str_to_date(date_format(ts, '%Y-%m-%d'), '%Y-%m-%d')", "ts", day},
		{my, "str_to_date(date_format(ts, '%Y-%m-%d %H'), '%Y-%m-%d %H')", "ts", trunc("hour")},
		// Superset's MySQL time grains.
		{my, "DATE_ADD(DATE(tz), INTERVAL HOUR(tz) HOUR)", "tz", trunc("hour")},
		{my, "DATE(DATE_SUB(ts, INTERVAL DAYOFWEEK(DATE_SUB(ts, INTERVAL 1 DAY)) - 1 DAY))", "ts", dayOf(trunc("week"))},
		{my, "DATE(DATE_SUB(d, INTERVAL DAYOFMONTH(d) - 1 DAY))", "d", trunc("month")},
		{my, "MAKEDATE(YEAR(ts), 1) + INTERVAL QUARTER(ts) QUARTER - INTERVAL 1 QUARTER", "ts", dayOf(trunc("quarter"))},
		{my, "DATE(DATE_SUB(d, INTERVAL DAYOFYEAR(d) - 1 DAY))", "d", trunc("year")},
		// Grafana's day buckets of the epoch.
		{pg, "floor(extract(epoch from ts)/86400)*86400", "ts", func(v ir.Value) ir.Value {
			return ir.Float(math.Floor(float64(exprtype.EpochSeconds(v))/86400) * 86400)
		}},
		{pg, "floor(extract(epoch from tz) / 3600) * 3600", "tz", func(v ir.Value) ir.Value {
			return ir.Float(math.Floor(float64(exprtype.EpochSeconds(v))/3600) * 3600)
		}},
		{my, "UNIX_TIMESTAMP(ts) DIV 86400 * 86400", "ts", func(v ir.Value) ir.Value { return ir.Int(exprtype.EpochSeconds(v) / 86400 * 86400) }},
		{my, "UNIX_TIMESTAMP(d) DIV 604800", "d", func(v ir.Value) ir.Value { return ir.Int(exprtype.EpochSeconds(v) / 604800) }},
	}
	for _, tc := range tests {
		sql := "SELECT " + tc.key + " AS k, COUNT(*) FROM " + table + " GROUP BY 1"
		pl, ok := planDerivedKeys(t, p, pol, tc.d, sql)
		if !ok {
			continue
		}
		typ := pl.Groups[0].Type
		norm := func(v ir.Value) ir.Value {
			if k, ok := policies.TimeKind(typ); ok {
				return ir.AsTime(v, k)
			}
			return normalizeKey(v, typ)
		}
		want := map[string]int64{}
		for _, r := range data {
			k := ir.Null()
			if v, ok := value(r, tc.col); ok {
				k = tc.f(v)
			}
			want[k.SQL()]++
		}
		if len(want) < 3 {
			t.Errorf("%s: %d keys on the rows: the case tells little", sql, len(want))
		}
		checkKeysOnBackends(t, sql, backends, pl, norm, want)
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// TestEpochOnEveryBackend: extract(epoch) and UNIX_TIMESTAMP are the
// floor of the seconds since 1970-01-01 UTC on SQLite, PostgreSQL and
// MariaDB alike, before 1970 (where truncating a fraction toward zero
// would differ), at the ends of the dates MySQL computes with, and for
// dates; counted by value, against exprtype.EpochSeconds.
func TestEpochOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_epoch")
	cols := map[string]string{
		"sqlite":   "d DATE, ts TIMESTAMP",
		"postgres": "d DATE, ts TIMESTAMP",
		"mysql":    "d DATE, ts DATETIME(6)",
	}
	stamps := []string{"1969-12-31 23:59:59.5", "1969-12-31 23:59:59", "1900-06-15 12:00:00.999999", "1000-01-01 00:00:00",
		"9999-12-31 23:59:59.999999", "1970-01-01 00:00:00.000001", "2010-03-04 05:06:07.25", "1969-07-20 20:17:40"}
	var data []ir.Value
	var rows []string
	for _, s := range stamps {
		v, err := ir.ParseTime(ir.KindTimestamp, s)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, v)
		d := ir.Date(floorDiv(v.Int, ir.MicrosPerDay))
		rows = append(rows, "('"+ir.CanonicalText(ir.KindDate, d.Int)+"', '"+ir.CanonicalText(ir.KindTimestamp, v.Int)+"')")
	}
	backends := eachBackend(t, table, cols, rows)
	columns := func(c ir.ColumnRef) (exprtype.Column, error) {
		lo, _ := ir.ParseTime(ir.KindTimestamp, "1000-01-01 00:00:00")
		hi, _ := ir.ParseTime(ir.KindTimestamp, "9999-12-31 23:59:59.999999")
		ref := ir.ColumnRef{Qualifier: "t", Name: c.Name}
		if c.Name == "d" {
			return exprtype.Column{Ref: ref, Type: exprtype.Date, HasBounds: true, Lo: ir.Date(floorDiv(lo.Int, ir.MicrosPerDay)), Hi: ir.Date(floorDiv(hi.Int, ir.MicrosPerDay))}, nil
		}
		return exprtype.Column{Ref: ref, Type: exprtype.Timestamp, HasBounds: true, Lo: lo, Hi: hi}, nil
	}
	for _, col := range []string{"ts", "d"} {
		for i, v := range data {
			if col == "d" {
				v = ir.Date(floorDiv(v.Int, ir.MicrosPerDay))
			}
			e := exprtype.EpochSeconds(v)
			var want int64
			for _, w := range data {
				if col == "d" {
					w = ir.Date(floorDiv(w.Int, ir.MicrosPerDay))
				}
				if exprtype.EpochSeconds(w) == e {
					want++
				}
			}
			where := fmt.Sprintf("extract(epoch FROM %s) = %d", col, e)
			stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE "+where)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := exprtype.Predicate(stmts[0].Query.Where, columns)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			q := &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Where: pred, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
			for _, b := range backends {
				got, err := backendtest.Collect(context.Background(), b.agg, q)
				if err != nil {
					t.Errorf("%s on %s: %v", where, b.name, err)
					continue
				}
				if len(got) != 1 || got[0].Aggs[0] != want {
					t.Errorf("%s (row %s) on %s: %v, want %d", where, stamps[i], b.name, got, want)
				}
			}
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}

// planDerivedKeys plans a grouped query and requires a derived key set
// (reported and false when there is none).
func planDerivedKeys(t *testing.T, p *planner.Planner, pol *policies.Policy, d parser.Dialect, sql string) (*planner.Plan, bool) {
	t.Helper()
	stmts, err := parser.Parse(d, sql)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("%s: %v", sql, err)
	}
	pl, err := p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]})
	if err != nil {
		t.Errorf("%s: %v", sql, err)
		return nil, false
	}
	if pl.Keys.Mode != planner.KeysDomain || pl.Groups[0].Domain == nil {
		t.Errorf("%s: keys %+v, want a derived key set", sql, pl.Keys)
		return nil, false
	}
	return pl, true
}

// checkKeysOnBackends runs the plan's true backend query on every backend:
// each key it returns (read through norm) other than NULL must lie in the
// derived key set, and the counts per key must equal want (by key SQL).
func checkKeysOnBackends(t *testing.T, sql string, backends []testBackend, pl *planner.Plan, norm func(ir.Value) ir.Value, want map[string]int64) {
	t.Helper()
	dom := pl.Groups[0].Domain
	for _, b := range backends {
		got, err := backendtest.Collect(context.Background(), b.agg, pl.Backend)
		if err != nil {
			t.Errorf("%s on %s: %v", sql, b.name, err)
			continue
		}
		have := map[string]int64{}
		for _, r := range got {
			k := norm(r.Keys[0])
			have[k.SQL()] = r.Aggs[0]
			inDom := slices.ContainsFunc(dom, func(d ir.Value) bool { return d.Kind == k.Kind && ir.CompareValues(d, k) == 0 })
			if !inDom && !k.IsNull() {
				t.Errorf("%s on %s: key %v (%s, returned %v) is not in the derived key set (%d keys, %v...)", sql, b.name, k, k.Kind, r.Keys[0], len(dom), dom[:min(3, len(dom))])
			}
		}
		if fmt.Sprint(have) != fmt.Sprint(want) {
			t.Errorf("%s on %s: counts %v, want %v", sql, b.name, have, want)
		}
	}
}
