package exprtype_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func mustTime(t *testing.T, k ir.Kind, s string) ir.Value {
	t.Helper()
	v, err := ir.ParseTime(k, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTruncValuesByHand: the example and a few hand-counted ones.
func TestTruncValuesByHand(t *testing.T) {
	lo, hi := mustTime(t, ir.KindTimestamp, "2010-01-01"), mustTime(t, ir.KindTimestamp, "2011-01-01")
	vals, ok := exprtype.TruncValues("month", ir.KindTimestamp, lo.Int, hi.Int-1, 100)
	if !ok || len(vals) != 12 || vals[0] != lo || vals[11] != mustTime(t, ir.KindTimestamp, "2010-12-01") {
		t.Fatalf("months of 2010: %v %v", vals, ok)
	}
	// [2010-01-01, 2011-01-01] closed: 13 months.
	if vals, ok := exprtype.TruncValues("month", ir.KindTimestamp, lo.Int, hi.Int, 100); !ok || len(vals) != 13 {
		t.Fatalf("closed range: %d %v", len(vals), ok)
	}
	// 2010-01-01 is a Friday: its ISO week starts on Monday 2009-12-28;
	// 2010 then has weeks starting 2009-12-28 ... 2010-12-27: 53.
	d0, d1 := mustTime(t, ir.KindDate, "2010-01-01"), mustTime(t, ir.KindDate, "2010-12-31")
	vals, ok = exprtype.TruncValues("week", ir.KindDate, d0.Int, d1.Int, 100)
	if !ok || len(vals) != 53 || vals[0] != mustTime(t, ir.KindDate, "2009-12-28") {
		t.Fatalf("weeks of 2010: %d %v %v", len(vals), vals[:1], ok)
	}
	if vals, ok := exprtype.TruncValues("quarter", ir.KindDate, d0.Int, d1.Int, 4); !ok || len(vals) != 4 {
		t.Fatalf("quarters: %v %v", vals, ok)
	}
	if _, ok := exprtype.TruncValues("day", ir.KindDate, d0.Int, d1.Int, 364); ok {
		t.Fatal("365 days fit a limit of 364")
	}
	if _, ok := exprtype.TruncValues("hour", ir.KindDate, d0.Int, d1.Int, 1000); ok {
		t.Fatal("hours of a date")
	}
	if _, ok := exprtype.TruncValues("fortnight", ir.KindDate, d0.Int, d1.Int, 1000); ok {
		t.Fatal("unknown unit")
	}
}

// TestTruncValuesOracle: over random small ranges, TruncValues is exactly
// the set of TruncTime of every value in the range (every day; every
// minute of short timestamp ranges), sorted.
func TestTruncValuesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 400 {
		k := []ir.Kind{ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ}[i%3]
		unit := exprtype.TruncUnits[rng.IntN(len(exprtype.TruncUnits))]
		if k == ir.KindDate && (unit == "hour" || unit == "minute") {
			continue
		}
		var lo, hi, step int64
		if k == ir.KindDate {
			lo = ir.MinDate + 7 + rng.Int64N(ir.MaxDate-ir.MinDate-1000)
			hi, step = lo+rng.Int64N(800), 1
		} else {
			lo = ir.MinTimestamp + 7*ir.MicrosPerDay + rng.Int64N(ir.MaxTimestamp-ir.MinTimestamp-1000*ir.MicrosPerDay)
			step = 60 * ir.MicrosPerSecond
			if unit == "minute" || unit == "hour" {
				hi = lo + rng.Int64N(3*ir.MicrosPerDay)
			} else {
				step = 3600 * ir.MicrosPerSecond
				hi = lo + rng.Int64N(400*ir.MicrosPerDay)
			}
		}
		set := map[ir.Value]bool{}
		for x := lo; x <= hi; x += step {
			v, ok := exprtype.TruncTime(unit, ir.Value{Kind: k, Int: x})
			if !ok {
				t.Fatalf("TruncTime(%s, %d) failed", unit, x)
			}
			set[v] = true
		}
		if v, _ := exprtype.TruncTime(unit, ir.Value{Kind: k, Int: hi}); !set[v] {
			set[v] = true // the last step may have jumped over hi's unit
		}
		var want []ir.Value
		for v := range set {
			want = append(want, v)
		}
		slices.SortFunc(want, func(a, b ir.Value) int { return ir.CompareValues(a, b) })
		got, ok := exprtype.TruncValues(unit, k, lo, hi, 100000)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("%s %s [%d, %d]: got %d values %v, want %d", unit, k, lo, hi, len(got), ok, len(want))
		}
	}
}

// TestExtractTimeByHand checks the fields on hand-known dates.
func TestExtractTimeByHand(t *testing.T) {
	v := mustTime(t, ir.KindTimestamp, "2010-08-15 13:45:30") // a Sunday
	want := map[string]int64{"year": 2010, "quarter": 3, "month": 8, "day": 15, "hour": 13, "minute": 45, "dow": 0}
	for f, w := range want {
		if got, ok := exprtype.ExtractTime(f, v); !ok || got != w {
			t.Errorf("extract(%s) = %d, want %d", f, got, w)
		}
	}
	if w, _ := exprtype.TruncTime("week", v); w != mustTime(t, ir.KindTimestamp, "2010-08-09") {
		t.Errorf("week of a Sunday: %v", w)
	}
}

// TestAddIntervalByHand: month arithmetic clips to the end of a shorter
// month (PostgreSQL and MySQL), leap days included.
func TestAddIntervalByHand(t *testing.T) {
	cases := []struct {
		from string
		n    int64
		unit string
		want string
	}{
		{"2010-01-31", 1, "month", "2010-02-28"},
		{"2012-01-31", 1, "month", "2012-02-29"},
		{"2012-02-29", 1, "year", "2013-02-28"},
		{"2010-03-31", -1, "month", "2010-02-28"},
		{"2010-05-31", 1, "quarter", "2010-08-31"},
		{"2010-11-30", 1, "quarter", "2011-02-28"},
		{"2010-12-31", 1, "day", "2011-01-01"},
		{"2010-01-01", -1, "week", "2009-12-25"},
		{"0001-01-01", -1, "day", ""},
		{"9999-12-31", 1, "month", ""},
	}
	for _, c := range cases {
		got, ok := exprtype.AddInterval(mustTime(t, ir.KindDate, c.from), c.n, c.unit)
		if c.want == "" {
			if ok {
				t.Errorf("%s + %d %s = %v, want a failure", c.from, c.n, c.unit, got)
			}
			continue
		}
		if !ok || got != mustTime(t, ir.KindDate, c.want) {
			t.Errorf("%s + %d %s = %v, want %s", c.from, c.n, c.unit, got, c.want)
		}
	}
	ts := mustTime(t, ir.KindTimestamp, "2010-01-31 23:59:59.5")
	if got, _ := exprtype.AddInterval(ts, 1, "month"); got != mustTime(t, ir.KindTimestamp, "2010-02-28 23:59:59.5") {
		t.Errorf("timestamp + 1 month = %v", got)
	}
	if got, _ := exprtype.AddInterval(ts, 1, "second"); got != mustTime(t, ir.KindTimestamp, "2010-02-01 00:00:00.5") {
		t.Errorf("timestamp + 1 second = %v", got)
	}
	if _, ok := exprtype.AddInterval(mustTime(t, ir.KindDate, "2010-01-01"), 1, "hour"); ok {
		t.Error("a date plus an hour")
	}
	for s, want := range map[string]string{"3 months": "3 month", "-1 day": "-1 day", "2 HOURS": "2 hour", "1 mon": "1 month"} {
		n, u, ok := exprtype.ParseInterval(s)
		if !ok || fmt.Sprintf("%d %s", n, u) != want {
			t.Errorf("ParseInterval(%q) = %d %s %v", s, n, u, ok)
		}
	}
	for _, s := range []string{"1 day 2 hours", "1.5 days", "P1D", "day", "3 fortnights"} {
		if _, _, ok := exprtype.ParseInterval(s); ok {
			t.Errorf("ParseInterval(%q) accepted", s)
		}
	}
}

// TestDateFuncValuesOracle: the image of each date function over random
// small ranges is exactly the set of its values at every point (every
// day; every 13 minutes of short timestamp ranges, plus the ends).
func TestDateFuncValuesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type fn struct{ name, arg string }
	var fns []fn
	for _, u := range exprtype.TruncUnits {
		fns = append(fns, fn{"date_trunc", u})
	}
	for f := range exprtype.ExtractFields {
		fns = append(fns, fn{"extract", f})
	}
	for _, cf := range exprtype.CharFormats {
		fns = append(fns, fn{"to_char", cf.Postgres})
	}
	fns = append(fns, fn{"date", ""})
	checked := 0
	for i := range 600 {
		k := []ir.Kind{ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ}[i%3]
		f := fns[rng.IntN(len(fns))]
		var lo, hi, step int64
		if k == ir.KindDate {
			lo = -354000 + rng.Int64N(2_900_000)
			hi, step = lo+rng.Int64N(900), 1
		} else {
			lo = (-354000+rng.Int64N(2_900_000))*ir.MicrosPerDay + rng.Int64N(ir.MicrosPerDay)
			// Every minute: the finest unit an image can distinguish.
			hi, step = lo+rng.Int64N(2*ir.MicrosPerDay), 60*ir.MicrosPerSecond
		}
		got, ok := exprtype.DateFuncValues(f.name, f.arg, k, lo, hi, 100000)
		dateOnly := k == ir.KindDate && (f.arg == "hour" || f.arg == "minute")
		if cf, known := exprtype.LookupCharFormat(f.arg, false); f.name == "to_char" && known && !cf.Date && k == ir.KindDate {
			dateOnly = true
		}
		if dateOnly {
			if ok && f.name != "to_char" {
				t.Fatalf("%s(%s) of a date has an image", f.name, f.arg)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s(%s) over %s [%d, %d]: no image", f.name, f.arg, k, lo, hi)
		}
		set := map[ir.Value]bool{}
		point := func(x int64) {
			v := ir.Value{Kind: k, Int: x}
			var out ir.Value
			switch f.name {
			case "date_trunc":
				out, _ = exprtype.TruncTime(f.arg, v)
			case "extract":
				n, _ := exprtype.ExtractTime(f.arg, v)
				out = ir.Int(n)
			case "date":
				d, _ := exprtype.TruncTime("day", v)
				out = ir.Date(d.GoTime().Unix() / 86400)
			case "to_char":
				layout := map[string]string{"YYYY": "2006", "YYYY-MM": "2006-01", "YYYY-MM-01": "2006-01", "YYYY-MM-DD": "2006-01-02",
					"YYYY-MM-DD HH24": "2006-01-02 15", "YYYY-MM-DD HH24:MI": "2006-01-02 15:04"}[f.arg]
				s := v.GoTime().Format(layout)
				if f.arg == "YYYY-MM-01" {
					s += "-01"
				}
				out = ir.String(s)
			}
			set[out] = true
		}
		for x := lo; x <= hi; x += step {
			point(x)
		}
		point(hi)
		var want []ir.Value
		for v := range set {
			want = append(want, v)
		}
		slices.SortFunc(want, func(a, b ir.Value) int { return ir.CompareValues(a, b) })
		if !slices.Equal(got, want) {
			t.Fatalf("%s(%s) over %s [%d, %d]: image of %d values, want %d (first %v, want %v)", f.name, f.arg, k, lo, hi, len(got), len(want), got[:min(len(got), 3)], want[:min(len(want), 3)])
		}
		checked++
	}
	if checked < 300 {
		t.Fatalf("only %d images checked", checked)
	}
	if _, ok := exprtype.DateFuncValues("date_trunc", "day", ir.KindDate, 0, 400, 365); ok {
		t.Error("401 days fit a limit of 365")
	}
}

// TestEpochByHand: extract(epoch) and unix_timestamp are whole seconds
// since 1970-01-01 UTC, floored (before 1970 too), typed and ranged from
// the clamped argument; unix_timestamp is refused where MySQL's returns 0.
func TestEpochByHand(t *testing.T) {
	for _, c := range []struct {
		k    ir.Kind
		s    string
		want int64
	}{
		{ir.KindTimestamp, "1970-01-01 00:00:00", 0},
		{ir.KindTimestamp, "1970-01-02 00:00:01.999999", 86401},
		{ir.KindTimestamp, "1969-12-31 23:59:59.5", -1},
		{ir.KindTimestamp, "2010-01-01 00:00:00", 1262304000},
		{ir.KindDate, "2010-01-02", 1262390400},
		{ir.KindTimestampTZ, "2010-01-01 01:00:00+01", 1262304000},
	} {
		v, err := ir.ParseTime(c.k, c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := exprtype.EpochSeconds(v); got != c.want {
			t.Errorf("epoch of %s %s = %d, want %d", c.k, c.s, got, c.want)
		}
	}
	cols := func(lo, hi string) exprtype.Columns {
		return func(c ir.ColumnRef) (exprtype.Column, error) {
			l, _ := ir.ParseTime(ir.KindTimestamp, lo)
			h, _ := ir.ParseTime(ir.KindTimestamp, hi)
			return exprtype.Column{Ref: ir.ColumnRef{Name: "c"}, Type: exprtype.Timestamp, HasBounds: true, Lo: l, Hi: h}, nil
		}
	}
	key := func(d parser.Dialect, sql string, c exprtype.Columns) (exprtype.Info, error) {
		stmts, err := parser.Parse(d, "SELECT COUNT(*) FROM t GROUP BY "+sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		_, info, err := exprtype.GroupKey(stmts[0].Query.GroupBy[0], c)
		return info, err
	}
	in2010 := cols("2010-01-01 00:00:00", "2010-01-10 12:00:00")
	info, err := key(parser.Postgres, "extract(epoch FROM c)", in2010)
	if err != nil || info.Type != exprtype.Real || info.Real.Lo != 1262304000 || info.Real.Hi != 1262304000+9*86400+12*3600 {
		t.Errorf("extract(epoch): %v %v", info, err)
	}
	// Grafana's day buckets: the 10 days of the range.
	info, err = key(parser.Postgres, "floor(extract(epoch from c)/86400)*86400", in2010)
	if err != nil || len(info.Domain) != 10 || info.Domain[0] != ir.Float(1262304000) || info.Domain[9] != ir.Float(1262304000+9*86400) {
		t.Errorf("floor(extract(epoch)/86400)*86400: %v %v", info.Domain, err)
	}
	info, err = key(parser.MySQL, "UNIX_TIMESTAMP(c) DIV 86400 * 86400", in2010)
	if err != nil || info.Type != exprtype.Integer || len(info.Domain) != 10 || info.Domain[0] != ir.Int(1262304000) || info.Domain[9] != ir.Int(1262304000+9*86400) {
		t.Errorf("UNIX_TIMESTAMP(c) DIV 86400 * 86400: %v %v", info.Domain, err)
	}
	for _, r := range [][2]string{{"1969-12-31 23:59:59", "1970-01-02 00:00:00"}, {"2038-01-01 00:00:00", "2038-01-19 03:14:08"}} {
		if _, err := key(parser.MySQL, "UNIX_TIMESTAMP(c)", cols(r[0], r[1])); !sqlerr.HasCode(err, sqlerr.DatetimeFieldOverflow) {
			t.Errorf("UNIX_TIMESTAMP over [%s, %s]: %v, want a refusal", r[0], r[1], err)
		}
	}
	if _, err := key(parser.MySQL, "UNIX_TIMESTAMP(c)", cols("1970-01-01 00:00:00", "2038-01-19 03:14:07")); err != nil {
		t.Errorf("UNIX_TIMESTAMP over its whole range: %v", err)
	}
	if stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t GROUP BY unix_timestamp(c)"); err != nil || stmts[0].Query != nil || !strings.Contains(stmts[0].NotAggregate, "extract(epoch") {
		t.Errorf("PostgreSQL unix_timestamp: %v, want a refusal naming extract(epoch)", err)
	}
}

// TestEpochOracle: over random small timestamp and date ranges within
// 1970..2038, extract(epoch) and unix_timestamp of the clamped column
// take, at every step through the range and beyond its bounds, values
// within the inferred range, whose ends are met (both are monotone).
func TestEpochOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := range 400 {
		k := []ir.Kind{ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ}[i%3]
		var lo, hi, step int64
		if k == ir.KindDate {
			lo = rng.Int64N(24000)
			hi, step = lo+rng.Int64N(300), 1
		} else {
			lo = rng.Int64N(24000)*ir.MicrosPerDay + rng.Int64N(ir.MicrosPerDay)
			hi, step = lo+rng.Int64N(2*ir.MicrosPerDay), 7*ir.MicrosPerSecond+12345
		}
		cols := func(c ir.ColumnRef) (exprtype.Column, error) {
			return exprtype.Column{Ref: ir.ColumnRef{Name: "c"}, Type: exprtype.TimeType(k), HasBounds: true, Lo: ir.Value{Kind: k, Int: lo}, Hi: ir.Value{Kind: k, Int: hi}}, nil
		}
		d, src := parser.Postgres, "extract(epoch FROM c)"
		if i%2 == 1 {
			d, src = parser.MySQL, "UNIX_TIMESTAMP(c)"
		}
		stmts, err := parser.Parse(d, "SELECT COUNT(*) FROM t GROUP BY "+src)
		if err != nil {
			t.Fatal(err)
		}
		_, info, err := exprtype.GroupKey(stmts[0].Query.GroupBy[0], cols)
		if err != nil {
			t.Fatalf("%s over %s [%d, %d]: %v", src, k, lo, hi, err)
		}
		rlo, rhi := info.Real.Lo, info.Real.Hi
		if info.Type == exprtype.Integer {
			rlo, rhi = float64(info.Int.Lo.Int64()), float64(info.Int.Hi.Int64())
		}
		seenLo, seenHi := math.Inf(1), math.Inf(-1)
		for x := lo - 3*step; x <= hi+3*step; x += step {
			v := ir.Value{Kind: k, Int: min(max(x, lo), hi)}
			e := float64(exprtype.EpochSeconds(v))
			if e < rlo || e > rhi {
				t.Fatalf("%s over %s [%d, %d]: %v gives %g, outside [%g, %g]", src, k, lo, hi, v, e, rlo, rhi)
			}
			seenLo, seenHi = min(seenLo, e), max(seenHi, e)
		}
		if seenLo != rlo || seenHi != rhi {
			t.Fatalf("%s over %s [%d, %d]: values span [%g, %g], range [%g, %g]", src, k, lo, hi, seenLo, seenHi, rlo, rhi)
		}
	}
}

// TestRangeDomainOfNullableColumn: a key set derived from a range (a
// date function, floor, an integer quotient) holds NULL when the column
// is a LEFT-joined table's, which reads NULL for rows without a match.
func TestRangeDomainOfNullableColumn(t *testing.T) {
	for _, nullable := range []bool{false, true} {
		cols := func(c ir.ColumnRef) (exprtype.Column, error) {
			lo, _ := ir.ParseTime(ir.KindTimestamp, "2010-01-01 00:00:00")
			hi, _ := ir.ParseTime(ir.KindTimestamp, "2010-03-31 23:59:59")
			return exprtype.Column{Ref: ir.ColumnRef{Name: "c"}, Type: exprtype.Timestamp, HasBounds: true, Lo: lo, Hi: hi, Nullable: nullable}, nil
		}
		for _, sql := range []string{"date_trunc('month', c)", "CAST(c AS date)", "floor(extract(epoch FROM c) / 86400)"} {
			stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t GROUP BY "+sql)
			if err != nil {
				t.Fatal(err)
			}
			_, info, err := exprtype.GroupKey(stmts[0].Query.GroupBy[0], cols)
			if err != nil || info.Domain == nil {
				t.Fatalf("%s: %v %v", sql, info.Domain, err)
			}
			if hasNull := slices.ContainsFunc(info.Domain, ir.Value.IsNull); hasNull != nullable {
				t.Errorf("%s (nullable %v): NULL in the key set %v", sql, nullable, hasNull)
			}
		}
	}
}
