package backends_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestEpochKeysAtTheEdges: the derived key sets of Grafana's epoch
// buckets (floor(extract(epoch from t)/N)*N), integer quotients of the
// epoch and MySQL's UNIX_TIMESTAMP(t) DIV N * N hold every key SQLite,
// PostgreSQL and MariaDB return when the bounds reach across 1970 (a
// fractional lower bound, negative epochs, where a quotient truncates
// toward zero and floor rounds down) and up to MySQL's last TIMESTAMP
// second in 2038; the count per key is the count Go computes from the
// clamped values (EpochSeconds, floor and truncating division written
// here by hand). A key outside the derived set would be dropped without
// a word. UNIX_TIMESTAMP over bounds before 1970 is refused at plan time.
func TestEpochKeysAtTheEdges(t *testing.T) {
	table := uniqueTable("ddp_epochkeys")
	cols := map[string]string{
		"sqlite":   "u INTEGER, pe TIMESTAMP, pd DATE, ue TIMESTAMP, ut TIMESTAMP, ud DATE",
		"postgres": "u BIGINT, pe TIMESTAMP, pd DATE, ue TIMESTAMP, ut TIMESTAMPTZ, ud DATE",
		"mysql":    "u BIGINT, pe DATETIME(6), pd DATE, ue DATETIME(6), ut TIMESTAMP(6) NULL, ud DATE",
	}
	bounds := map[string][2]string{
		"pe": {"1969-12-29 12:00:00.25", "1970-01-04 06:00:00"},
		"pd": {"1969-12-01", "1970-02-01"},
		"ue": {"2038-01-12 00:00:00", "2038-01-19 03:14:07.999999"},
		"ut": {"2038-01-12 00:00:00", "2038-01-19 03:14:07.999999"},
		"ud": {"2038-01-01", "2038-01-19"},
	}
	kinds := map[string]ir.Kind{"pe": ir.KindTimestamp, "pd": ir.KindDate, "ue": ir.KindTimestamp, "ut": ir.KindTimestampTZ, "ud": ir.KindDate}
	parse := func(k ir.Kind, s string) ir.Value {
		v, err := ir.ParseTime(k, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Rows: every 97 minutes and a quarter second from before the lower
	// bounds to past the upper ones (the clamp moves those), and the
	// instants at the edges.
	pe0, ue0 := parse(ir.KindTimestamp, "1969-12-28 00:00:00"), parse(ir.KindTimestamp, "2038-01-10 00:00:00")
	utMax := parse(ir.KindTimestamp, "2038-01-19 03:14:07.999999").Int
	type row map[string]ir.Value
	var data []row
	for i := int64(0); i < 150; i++ {
		step := i*97*60*ir.MicrosPerSecond + (i%4)*250_000
		ue := ue0.Int + step
		data = append(data, row{
			"pe": ir.Timestamp(pe0.Int + step), "pd": ir.Date(-40 + i*3),
			"ue": ir.Timestamp(ue), "ut": ir.TimestampTZ(min(ue, utMax)), "ud": ir.Date(24835 + i%40),
		})
	}
	for _, s := range []string{"1969-12-31 23:59:59.5", "1969-12-31 23:59:59", "1970-01-01 00:00:00", "1969-12-29 12:00:00.25", "1969-12-31 23:00:00.000001"} {
		v := parse(ir.KindTimestamp, s)
		data = append(data, row{"pe": v, "pd": ir.Date(-1), "ue": ir.Timestamp(utMax), "ut": ir.TimestampTZ(utMax), "ud": ir.Date(24855)})
	}
	backends := eachBackendRows(t, table, cols, func(dialect string) []string {
		var out []string
		for i, r := range data {
			vals := []string{strconv.Itoa(i)}
			for _, c := range []string{"pe", "pd", "ue", "ut", "ud"} {
				v := r[c]
				switch {
				case c == "ut" && dialect == "mysql":
					vals = append(vals, fmt.Sprintf("FROM_UNIXTIME(%d.%06d)", v.Int/ir.MicrosPerSecond, v.Int%ir.MicrosPerSecond))
				case c == "ut" && dialect == "postgres":
					vals = append(vals, "'"+ir.FormatTime(ir.KindTimestampTZ, v.Int)+"'")
				default:
					vals = append(vals, "'"+ir.CanonicalText(v.Kind, v.Int)+"'")
				}
			}
			out = append(out, "("+strings.Join(vals, ", ")+")")
		}
		return out
	})
	colYAML := ""
	for _, c := range []string{"pe", "pd", "ue", "ut", "ud"} {
		typ := map[ir.Kind]string{ir.KindTimestamp: "timestamp", ir.KindDate: "date", ir.KindTimestampTZ: "timestamptz"}[kinds[c]]
		suffix := ""
		if typ == "timestamptz" {
			suffix = "Z"
		}
		colYAML += fmt.Sprintf("          %s: {type: %s, bounds: ['%s%s', '%s%s']}\n", c, typ, bounds[c][0], suffix, bounds[c][1], suffix)
	}
	t.Setenv("DDP_TEST_EPOCHKEYS_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(fmt.Sprintf(`
version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_EPOCHKEYS_PASSWORD
    budgets: {d: {epsilon: 100}}
    max_epsilon: 10
datasets:
  d:
    tables:
      %s:
        unit: u
        columns:
%s`, table, colYAML)))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)
	clamped := func(r row, c string) ir.Value {
		v := r[c]
		lo, hi := parse(kinds[c], bounds[c][0]), parse(kinds[c], bounds[c][1])
		v.Int = min(max(v.Int, lo.Int), hi.Int)
		return v
	}
	// epoch is the whole seconds since 1970, floored (by hand, not
	// exprtype.EpochSeconds).
	epoch := func(v ir.Value) int64 {
		if v.Kind == ir.KindDate {
			return v.Int * 86400
		}
		s := v.Int / ir.MicrosPerSecond
		if v.Int%ir.MicrosPerSecond < 0 {
			s--
		}
		return s
	}
	floorBucket := func(n float64) func(ir.Value) ir.Value {
		return func(v ir.Value) ir.Value { return ir.Float(math.Floor(float64(epoch(v))/n) * n) }
	}
	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d   parser.Dialect
		key string
		col string
		f   func(ir.Value) ir.Value
	}{
		{pg, "floor(extract(epoch from pe)/3600)*3600", "pe", floorBucket(3600)},
		{pg, "floor(extract(epoch from pe)/86400)*86400", "pe", floorBucket(86400)},
		{pg, "floor(extract(epoch from pd)/86400)*86400", "pd", floorBucket(86400)},
		{pg, "extract(epoch from pd)", "pd", func(v ir.Value) ir.Value { return ir.Float(float64(epoch(v))) }},
		{my, "UNIX_TIMESTAMP(ud)", "ud", func(v ir.Value) ir.Value { return ir.Int(epoch(v)) }},
		{my, "UNIX_TIMESTAMP(DATE(ut))", "ut", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 86400 * 86400) }},
		{pg, "floor(extract(epoch from pd)/604800)", "pd", func(v ir.Value) ir.Value { return ir.Float(math.Floor(float64(epoch(v)) / 604800)) }},
		// Integer quotients truncate toward zero on every backend.
		{pg, "CAST(extract(epoch FROM pe) AS bigint) / 3600", "pe", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 3600) }},
		{pg, "CAST(extract(epoch FROM pe) AS bigint) / 3600 * 3600", "pe", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 3600 * 3600) }},
		{pg, "floor(extract(epoch from ut)/3600)*3600", "ut", floorBucket(3600)},
		{pg, "floor(extract(epoch from ue)/86400)*86400", "ue", floorBucket(86400)},
		{my, "UNIX_TIMESTAMP(ue) DIV 86400 * 86400", "ue", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 86400 * 86400) }},
		{my, "UNIX_TIMESTAMP(ut) DIV 3600 * 3600", "ut", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 3600 * 3600) }},
		{my, "UNIX_TIMESTAMP(ud) DIV 86400 * 86400", "ud", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 86400 * 86400) }},
		{my, "FLOOR(UNIX_TIMESTAMP(ut) / 3600) * 3600", "ut", floorBucket(3600)},
		{my, "UNIX_TIMESTAMP(DATE(ue)) DIV 86400", "ue", func(v ir.Value) ir.Value { return ir.Int(epoch(v) / 86400) }},
	}
	for _, tc := range tests {
		sql := "SELECT " + tc.key + " AS k, COUNT(*) FROM " + table + " GROUP BY 1"
		pl, ok := planDerivedKeys(t, p, pol, tc.d, sql)
		if !ok {
			continue
		}
		typ := pl.Groups[0].Type
		want := map[string]int64{}
		for _, r := range data {
			want[tc.f(clamped(r, tc.col)).SQL()]++
		}
		if len(want) < 3 {
			t.Errorf("%s: %d keys on the rows: the case tells little", sql, len(want))
		}
		checkKeysOnBackends(t, sql, backends, pl, func(v ir.Value) ir.Value { return normalizeKey(v, typ) }, want)
	}
	// Before 1970 MySQL's UNIX_TIMESTAMP returns 0: refused, not sent.
	for _, key := range []string{"UNIX_TIMESTAMP(pe) DIV 3600", "UNIX_TIMESTAMP(pd)"} {
		stmts, err := parser.Parse(my, "SELECT "+key+" AS k, COUNT(*) FROM "+table+" GROUP BY 1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: my.String(), Statement: &stmts[0]})
		if !sqlerr.HasCode(err, sqlerr.DatetimeFieldOverflow) {
			t.Errorf("%s over bounds before 1970: %v, want a refusal (22008)", key, err)
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}
