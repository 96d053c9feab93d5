package exprtype

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The date functions' meaning, computed in Go: the range and domain rules
// use it, and the tests compare every backend against it.

// TruncUnits are the units date_trunc accepts, finest last.
var TruncUnits = []string{"year", "quarter", "month", "week", "day", "hour", "minute"}

// ExtractFields are the fields extract/date_part accepts, with their
// ranges (dow: 0 = Sunday, as PostgreSQL numbers it).
var ExtractFields = map[string][2]int64{
	"year": {1, 9999}, "quarter": {1, 4}, "month": {1, 12}, "day": {1, 31},
	"hour": {0, 23}, "minute": {0, 59}, "dow": {0, 6},
	"doy": {1, 366}, "week": {1, 53}, // week: ISO 8601, weeks from Monday, week 1 holds January 4
}

func validUnit(u string) bool {
	for _, x := range TruncUnits {
		if x == u {
			return true
		}
	}
	return false
}

// TruncTime is date_trunc(unit, v) for a date or time value: the start
// of its year, quarter, month, ISO week (Monday), day, hour or minute,
// of v's own kind (a date truncates to a date). ok is false for an
// unknown unit, a non-time value, or a truncation below the year 1 (the
// week of 0001-01-01 starts on 0000-12-31... it is a Monday, so never).
func TruncTime(unit string, v ir.Value) (ir.Value, bool) {
	if !v.IsTime() || !validUnit(unit) {
		return ir.Value{}, false
	}
	t := v.GoTime()
	y, m, d := t.Date()
	switch unit {
	case "year":
		t = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	case "quarter":
		t = time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, time.UTC)
	case "month":
		t = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	case "week":
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		t = time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	case "day":
		t = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case "hour":
		t = t.Truncate(time.Hour)
	case "minute":
		t = t.Truncate(time.Minute)
	}
	if t.Year() < 1 {
		return ir.Value{}, false
	}
	return ir.TimeValue(v.Kind, t), true
}

// EpochSeconds is v's whole seconds since 1970-01-01 00:00:00 UTC (the
// floor: a fraction of a second is dropped, before 1970 too), for a date
// (its midnight) or a time value.
func EpochSeconds(v ir.Value) int64 {
	if v.Kind == ir.KindDate {
		return v.Int * 86400
	}
	return floorDivInt(v.Int, ir.MicrosPerSecond)
}

// ExtractTime is extract(field, v) for a date or time value (in UTC for
// a timestamptz); the field epoch is EpochSeconds.
func ExtractTime(field string, v ir.Value) (int64, bool) {
	if !v.IsTime() {
		return 0, false
	}
	if field == "epoch" {
		return EpochSeconds(v), true
	}
	t := v.GoTime()
	switch field {
	case "year":
		return int64(t.Year()), true
	case "quarter":
		return int64(t.Month()+2) / 3, true
	case "month":
		return int64(t.Month()), true
	case "day":
		return int64(t.Day()), true
	case "hour":
		return int64(t.Hour()), true
	case "minute":
		return int64(t.Minute()), true
	case "dow":
		return int64(t.Weekday()), true
	case "doy":
		return int64(t.YearDay()), true
	case "week":
		_, w := t.ISOWeek()
		return int64(w), true
	}
	return 0, false
}

// nextTrunc is the start of the unit after the truncated value v.
func nextTrunc(unit string, v ir.Value) ir.Value {
	t := v.GoTime()
	switch unit {
	case "year":
		t = t.AddDate(1, 0, 0)
	case "quarter":
		t = t.AddDate(0, 3, 0)
	case "month":
		t = t.AddDate(0, 1, 0)
	case "week":
		t = t.AddDate(0, 0, 7)
	case "day":
		t = t.AddDate(0, 0, 1)
	case "hour":
		t = t.Add(time.Hour)
	case "minute":
		t = t.Add(time.Minute)
	}
	return ir.TimeValue(v.Kind, t)
}

// TruncValues lists date_trunc(unit, t) for every t of kind k (a date or
// time kind) in [lo, hi] — days for a date, microseconds otherwise — in
// ascending order: the finite domain of date_trunc over a bounded column
// (date_trunc('month', t) over t in [2010-01-01, 2011-01-01) has 12
// values). ok is false when there would be more than limit values, or
// for an unknown unit or kind.
func TruncValues(unit string, k ir.Kind, lo, hi int64, limit int) (vals []ir.Value, ok bool) {
	unit = strings.ToLower(unit)
	if !k.IsTime() || !validUnit(unit) || lo > hi || (k == ir.KindDate && (unit == "hour" || unit == "minute")) {
		return nil, false
	}
	v, ok := TruncTime(unit, ir.Value{Kind: k, Int: lo})
	if !ok {
		return nil, false
	}
	for v.Int <= hi {
		if len(vals) == limit {
			return nil, false
		}
		vals = append(vals, v)
		v = nextTrunc(unit, v)
	}
	return vals, true
}

// unitOf reads the constant unit or field argument, lower-cased.
func unitOf(a Info) string { return strings.ToLower(strings.TrimSpace(a.Const.Str)) }

// computedRange refuses a date or time range beyond what every backend
// computes: MySQL's DATE and DATETIME stop below 1000-01-01.
func computedRange(c string, out Info) (Info, error) {
	lo, hi := out.Int.Lo.Int64(), out.Int.Hi.Int64()
	if out.Type != Date {
		lo, hi = floorDivInt(lo, ir.MicrosPerDay), floorDivInt(hi, ir.MicrosPerDay)
	}
	if lo < MinComputedDate || hi > MaxComputedDate {
		return Info{}, sqlerr.New(sqlerr.DatetimeFieldOverflow,
			"%s can reach %s, outside 1000-01-01..9999-12-31, the dates MySQL computes with: the query would fail or differ only for the rows where it happens", c, out).
			WithHint("narrow the declared bounds of the column")
	}
	return out, nil
}

// dateTruncRule: date_trunc(unit, t) has t's type (a date stays a date;
// hour and minute need a timestamp) and the range [trunc(lo), trunc(hi)]
// (truncation is monotone).
func dateTruncRule(c string, args []Info) (Info, error) {
	unit, t := unitOf(args[0]), args[1]
	if !t.Type.IsTime() || args[0].Type != Text {
		return Info{}, noFunction(c, args)
	}
	if !validUnit(unit) {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "unit %q of date_trunc is not supported: %s", unit, c).
			WithHint("use one of %s", strings.Join(TruncUnits, ", "))
	}
	if t.Type == Date && (unit == "hour" || unit == "minute") {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "date_trunc(%q) of a date is the date itself: %s", unit, c).
			WithHint("truncate a date to day or coarser, or cast it to timestamp")
	}
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of date_trunc")
	}
	lo, ok1 := TruncTime(unit, ir.Value{Kind: t.Type.Kind(), Int: t.Int.Lo.Int64()})
	hi, ok2 := TruncTime(unit, ir.Value{Kind: t.Type.Kind(), Int: t.Int.Hi.Int64()})
	if !ok1 || !ok2 {
		return Info{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "%s can reach before the year 1: %s", c, t).
			WithHint("narrow the declared bounds of the column")
	}
	return computedRange(c, timeInfo(t.Type, lo.Int, hi.Int))
}

// extractRule: extract(field, t) is a BIGINT; the year ranges over the
// years of t's range, the other fields over their whole cycle.
func extractRule(c string, args []Info) (Info, error) {
	field, t := unitOf(args[0]), args[1]
	if !t.Type.IsTime() || args[0].Type != Text {
		return Info{}, noFunction(c, args)
	}
	if field == "epoch" {
		return epochRule(c, t)
	}
	r, ok := ExtractFields[field]
	if !ok {
		names := make([]string, 0, len(ExtractFields))
		for n := range ExtractFields {
			names = append(names, n)
		}
		names = append(names, "epoch")
		slices.Sort(names)
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "field %q of extract is not supported: %s", field, c).
			WithHint("use one of %s", strings.Join(names, ", "))
	}
	if t.Type == Date && (field == "hour" || field == "minute") {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "a date has no %s (PostgreSQL refuses it): %s", field, c).
			WithHint("extract it from a timestamp")
	}
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of extract")
	}
	if field == "year" {
		lo, _ := ExtractTime("year", ir.Value{Kind: t.Type.Kind(), Int: t.Int.Lo.Int64()})
		hi, _ := ExtractTime("year", ir.Value{Kind: t.Type.Kind(), Int: t.Int.Hi.Int64()})
		r = [2]int64{lo, hi}
	}
	return intInfo(IntRange{big.NewInt(r[0]), big.NewInt(r[1])}), nil
}

// epochRule: extract(epoch FROM t) is a double of whole seconds since
// 1970-01-01 00:00:00 UTC (EpochSeconds: PostgreSQL's fraction of a
// second is dropped, which leaves Grafana's floor(extract(epoch from
// t)/86400)*86400 buckets as they are), in [epoch(lo), epoch(hi)]
// (monotone). A real, so that / divides as PostgreSQL's numeric does.
// The renderers compute it from the date's day number and the time of
// day, within the dates every backend computes with.
func epochRule(c string, t Info) (Info, error) {
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of extract(epoch)")
	}
	if _, err := computedRange(c, t); err != nil {
		return Info{}, err
	}
	k := t.Type.Kind()
	lo := EpochSeconds(ir.Value{Kind: k, Int: t.Int.Lo.Int64()})
	hi := EpochSeconds(ir.Value{Kind: k, Int: t.Int.Hi.Int64()})
	return realInfo(RealRange{Lo: float64(lo), Hi: float64(hi), Grain: 0}), nil
}

// UnixTimestampMin and UnixTimestampMax are the instants MySQL's
// UNIX_TIMESTAMP counts (it returns 0 before, and 0 or NULL after: the
// proxy refuses a range reaching beyond rather than differ).
const (
	UnixTimestampMin = 0
	UnixTimestampMax = 1<<31 - 1 // 2038-01-19 03:14:07
)

// unixTimestampRule: MySQL's UNIX_TIMESTAMP(t) is the BIGINT of whole
// seconds since 1970-01-01 00:00:00 UTC (EpochSeconds; backend sessions
// are in UTC, so a DATETIME reads as UTC), refused when t's range
// reaches outside UnixTimestampMin..UnixTimestampMax, where MySQL's own
// would return 0 or NULL.
func unixTimestampRule(c string, args []Info) (Info, error) {
	t := args[0]
	if !t.Type.IsTime() {
		return Info{}, noFunction(c, args)
	}
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of unix_timestamp")
	}
	k := t.Type.Kind()
	lo := EpochSeconds(ir.Value{Kind: k, Int: t.Int.Lo.Int64()})
	hi := EpochSeconds(ir.Value{Kind: k, Int: t.Int.Hi.Int64()})
	if lo < UnixTimestampMin || hi > UnixTimestampMax {
		return Info{}, sqlerr.New(sqlerr.DatetimeFieldOverflow,
			"%s can reach outside 1970-01-01 00:00:00..2038-01-19 03:14:07 UTC (%s), where MySQL's UNIX_TIMESTAMP returns 0 or NULL", c, t).
			WithHint("narrow the declared bounds of the column")
	}
	return intInfo(IntRange{big.NewInt(lo), big.NewInt(hi)}), nil
}

// IntervalUnits are the units of a constant interval t ± n unit
// (date_add): months, quarters and years clip to the end of a shorter
// month (2010-01-31 + 1 month = 2010-02-28), as PostgreSQL and MySQL do.
var IntervalUnits = []string{"year", "quarter", "month", "week", "day", "hour", "minute", "second"}

// ParseInterval reads PostgreSQL interval text of one unit — '3 months',
// '-1 day', '2 hours' — into the count and the unit (singular). ok is
// false for anything else ('1 day 2 hours', '1.5 days', 'P1D').
func ParseInterval(s string) (n int64, unit string, ok bool) {
	f := strings.Fields(strings.ToLower(s))
	if len(f) != 2 {
		return 0, "", false
	}
	v, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, "", false
	}
	u := strings.TrimSuffix(f[1], "s")
	switch u {
	case "mon":
		u = "month"
	case "min":
		u = "minute"
	case "sec":
		u = "second"
	case "yr", "y":
		u = "year"
	}
	if !slices.Contains(IntervalUnits, u) {
		return 0, "", false
	}
	return v, u, true
}

// AddInterval is v + n units, for a date or time value (in UTC for a
// timestamptz); ok is false for an unknown unit, a time unit on a date,
// or a result outside the years 1 to 9999.
func AddInterval(v ir.Value, n int64, unit string) (ir.Value, bool) {
	// No result lies more than 10,000 years away: larger counts fail
	// (and cannot overflow the arithmetic below).
	if !v.IsTime() || unit != "hour" && unit != "minute" && unit != "second" && (n > 10_000_000 || n < -10_000_000) {
		return ir.Value{}, false
	}
	t := v.GoTime()
	months := int64(0)
	switch unit {
	case "year":
		months = 12 * n
	case "quarter":
		months = 3 * n
	case "month":
		months = n
	case "week":
		t = t.AddDate(0, 0, int(7*n))
	case "day":
		t = t.AddDate(0, 0, int(n))
	case "hour", "minute", "second":
		if v.Kind == ir.KindDate {
			return ir.Value{}, false
		}
		d := map[string]int64{"hour": 3600, "minute": 60, "second": 1}[unit]
		if n > 400_000_000_000/d || n < -400_000_000_000/d {
			return ir.Value{}, false
		}
		us := v.Int + n*d*ir.MicrosPerSecond
		if us < ir.MinTimestamp || us > ir.MaxTimestamp {
			return ir.Value{}, false
		}
		return ir.Value{Kind: v.Kind, Int: us}, true
	default:
		return ir.Value{}, false
	}
	if months != 0 {
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + months
		ny, nm := int(total/12), time.Month(total%12+1)
		if total < 0 || ny < 1 || ny > 9999 {
			return ir.Value{}, false
		}
		last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day()
		h, mi, s := t.Clock()
		t = time.Date(ny, nm, min(d, last), h, mi, s, t.Nanosecond(), time.UTC)
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return ir.Value{}, false
	}
	return ir.TimeValue(v.Kind, t), true
}

// dateAddRule: date_add(t, n, unit) has t's type and the range
// [lo + n, hi + n] (adding is monotone, clipping too), within the dates
// MySQL computes with.
func dateAddRule(c string, args []Info) (Info, error) {
	t, n, u := args[0], args[1], args[2]
	if !t.Type.IsTime() || n.Type != Integer || n.Const.Kind != ir.KindInt || u.Type != Text {
		return Info{}, noFunction(c, args)
	}
	unit := unitOf(u)
	if !slices.Contains(IntervalUnits, unit) {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "interval unit %q is not supported: %s", unit, c).
			WithHint("use one of %s", strings.Join(IntervalUnits, ", "))
	}
	if t.Type == Date && (unit == "hour" || unit == "minute" || unit == "second") {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "adding %ss to a date makes a timestamp: %s", unit, c).
			WithHint("cast the date to timestamp first, or add days")
	}
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of an interval addition")
	}
	k := t.Type.Kind()
	lo, ok1 := AddInterval(ir.Value{Kind: k, Int: t.Int.Lo.Int64()}, n.Const.Int, unit)
	hi, ok2 := AddInterval(ir.Value{Kind: k, Int: t.Int.Hi.Int64()}, n.Const.Int, unit)
	if !ok1 || !ok2 {
		return Info{}, sqlerr.New(sqlerr.DatetimeFieldOverflow,
			"%s can reach beyond the years 1 to 9999 (%s): the query would fail only for the rows where it happens", c, t).
			WithHint("use a smaller interval, or narrow the declared bounds of the column")
	}
	lo2, hi2 := lo.Int, hi.Int
	if t.Type != Date && (unit == "month" || unit == "quarter" || unit == "year") {
		// Clipping to a month's end maps several dates to one, keeping
		// each value's time of day, so on timestamps the sum is monotone
		// in the date only: widen to the whole first and last days.
		lo2 = floorDivInt(lo2, ir.MicrosPerDay) * ir.MicrosPerDay
		hi2 = (floorDivInt(hi2, ir.MicrosPerDay)+1)*ir.MicrosPerDay - 1
	}
	return computedRange(c, timeInfo(t.Type, lo2, hi2))
}

// CharFormat is one constant format of to_char (PostgreSQL) and
// date_format (MySQL): the spellings of one text rendering of a date or
// time. Only formats every backend writes identically are listed (all
// digits, zero-padded; years of four digits, which the 1000-01-01 lower
// limit on computed dates guarantees).
type CharFormat struct {
	Postgres, MySQL, SQLite string
	// Date: the format reads only the date, so a date argument may use it.
	Date bool
	// Trunc is the date_trunc unit the text names (the text of two values
	// is equal exactly when their truncations are).
	Trunc string
}

// CharFormats lists the accepted formats, by their PostgreSQL spelling.
var CharFormats = []CharFormat{
	{"YYYY", "%Y", "%Y", true, "year"},
	{"YYYY-MM", "%Y-%m", "%Y-%m", true, "month"},
	{"YYYY-MM-01", "%Y-%m-01", "%Y-%m-01", true, "month"},
	{"YYYY-MM-DD", "%Y-%m-%d", "%Y-%m-%d", true, "day"},
	{"YYYY-MM-DD HH24", "%Y-%m-%d %H", "%Y-%m-%d %H", false, "hour"},
	{"YYYY-MM-DD HH24:MI", "%Y-%m-%d %H:%i", "%Y-%m-%d %H:%M", false, "minute"},
}

// Format writes v (a date or time; a timestamptz in UTC, the backend
// sessions' zone) as every backend writes it in this format.
func (f CharFormat) Format(v ir.Value) string {
	layout := map[string]string{"YYYY": "2006", "YYYY-MM": "2006-01", "YYYY-MM-01": "2006-01", "YYYY-MM-DD": "2006-01-02",
		"YYYY-MM-DD HH24": "2006-01-02 15", "YYYY-MM-DD HH24:MI": "2006-01-02 15:04"}[f.Postgres]
	text := v.GoTime().Format(layout)
	if f.Postgres == "YYYY-MM-01" {
		text += "-01" // "01" in a Go layout is the month
	}
	return text
}

// postToChar is to_char (and MySQL's DATE_FORMAT) in post-processing:
// over a date or time grouping key (Looker's TO_CHAR(DATE_TRUNC('month',
// t), 'YYYY-MM') grouped by DATE_TRUNC('month', t)), with a literal
// format of CharFormats, computed by CharFormat.Format exactly as the
// backends write it.
var postToChar = &Post{
	Type: func(call string, ts []Type, args []ir.Expr, _ PostDialect) (Type, error) {
		if (!ts[0].IsTime() && ts[0] != Null) || ts[1] != Text {
			return 0, postArgErr(call, ts)
		}
		l, ok := args[1].(ir.Literal)
		if !ok || l.Value.Kind != ir.KindString {
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "the format of %s must be a literal: %s", fnName(call), call)
		}
		cf, ok := LookupCharFormat(l.Value.Str, false)
		if !ok {
			names := make([]string, len(CharFormats))
			for i, x := range CharFormats {
				names[i] = "'" + x.Postgres + "' ('" + x.MySQL + "')"
			}
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "format %q of %s is not supported: %s", l.Value.Str, fnName(call), call).
				WithHint("use one of %s, which every backend writes alike", strings.Join(names, ", "))
		}
		if ts[0] == Date && !cf.Date {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "a date has no time of day to format: %s", call).
				WithHint("format a timestamp, or use a date format")
		}
		return Text, nil
	},
	Eval: func(a []ir.Value, _ PostDialect) ir.Value {
		cf, _ := LookupCharFormat(a[1].Str, false) // checked by Type
		return ir.String(cf.Format(a[0]))
	},
}

// LookupCharFormat finds a format by its PostgreSQL (to_char) or MySQL
// (date_format) spelling.
func LookupCharFormat(s string, mysql bool) (CharFormat, bool) {
	for _, f := range CharFormats {
		if !mysql && f.Postgres == s || mysql && f.MySQL == s {
			return f, true
		}
	}
	return CharFormat{}, false
}

// toCharRule: to_char(t, format) is text; the format is one of
// CharFormats in its PostgreSQL spelling (parsers translate MySQL's), and
// the argument's years must have four digits.
func toCharRule(c string, args []Info) (Info, error) {
	t, f := args[0], args[1]
	if !t.Type.IsTime() || f.Type != Text {
		return Info{}, noFunction(c, args)
	}
	cf, ok := LookupCharFormat(f.Const.Str, false)
	if !ok {
		names := make([]string, len(CharFormats))
		for i, x := range CharFormats {
			names[i] = "'" + x.Postgres + "' ('" + x.MySQL + "')"
		}
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "format %q of %s is not supported: %s", f.Const.Str, fnName(c), c).
			WithHint("use one of %s, which every backend writes alike", strings.Join(names, ", "))
	}
	if t.Type == Date && !cf.Date {
		return Info{}, sqlerr.New(sqlerr.InvalidParameterValue, "a date has no time of day to format: %s", c).
			WithHint("format a timestamp, or use a date format")
	}
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of to_char")
	}
	if _, err := computedRange(c, t); err != nil {
		return Info{}, err
	}
	return Info{Type: Text}, nil
}

// DateFuncValues is the image of a date function over a bounded date or
// time argument of kind k in [lo, hi] (days or microseconds), sorted
// ascending, for finite-domain inference (GROUP BY date_trunc('month', t)
// returns exactly these keys): date_trunc(arg, t), extract(arg, t),
// to_char(t, arg) (arg in its PostgreSQL spelling), date (the cast,
// arg "") and unix_timestamp (arg "", of a date). ok is false for another function, an unknown argument, or
// more than limit values. extract's values are those some t in [lo, hi]
// takes (not the whole cycle when the range is short).
func DateFuncValues(fn, arg string, k ir.Kind, lo, hi int64, limit int) (vals []ir.Value, ok bool) {
	switch fn {
	case "date_trunc":
		return TruncValues(arg, k, lo, hi, limit)
	case "date":
		if k == ir.KindDate {
			return TruncValues("day", k, lo, hi, limit)
		}
		days, ok := TruncValues("day", k, lo, hi, limit)
		for i, d := range days {
			days[i] = ir.Date(floorDivInt(d.Int, ir.MicrosPerDay))
		}
		return days, ok
	case "to_char":
		cf, known := LookupCharFormat(arg, false)
		if !known {
			return nil, false
		}
		starts, ok := TruncValues(cf.Trunc, k, lo, hi, limit)
		if !ok {
			return nil, false
		}
		for _, s := range starts {
			vals = append(vals, ir.String(cf.Format(s)))
		}
		return vals, true // text order is time order: all digits, fixed width
	case "extract", "unix_timestamp":
		if arg == "epoch" || fn == "unix_timestamp" {
			// Whole seconds of a date: one value a day (a time has
			// too many to list). extract's is a real, unix_timestamp's
			// an integer.
			if k != ir.KindDate {
				return nil, false
			}
			days, ok := TruncValues("day", k, lo, hi, limit)
			for i, d := range days {
				days[i] = ir.Float(float64(EpochSeconds(d)))
				if fn == "unix_timestamp" {
					days[i] = ir.Int(EpochSeconds(d))
				}
			}
			return days, ok
		}
		r, known := ExtractFields[arg]
		if !known {
			return nil, false
		}
		unit := map[string]string{"year": "year", "quarter": "quarter", "month": "month", "day": "day", "dow": "day", "doy": "day", "week": "day", "hour": "hour", "minute": "minute"}[arg]
		if k == ir.KindDate && (unit == "hour" || unit == "minute") {
			return nil, false
		}
		seen := map[int64]bool{}
		// Walk the units in the range, stopping once the cycle is full.
		full := r[1] - r[0] + 1
		if arg == "year" {
			full = 1 << 62
		}
		v, ok := TruncTime(unit, ir.Value{Kind: k, Int: lo})
		if !ok {
			return nil, false
		}
		for v.Int <= hi && int64(len(seen)) < full {
			x, _ := ExtractTime(arg, v)
			seen[x] = true
			if len(seen) > limit {
				return nil, false
			}
			v = nextTrunc(unit, v)
		}
		for x := range seen {
			vals = append(vals, ir.Int(x))
		}
		slices.SortFunc(vals, func(a, b ir.Value) int { return ir.CompareValues(a, b) })
		return vals, true
	}
	return nil, false
}

// dateRangeImage is the RangeImage rule of the date function fn whose
// constant unit, field or format is argument unit and whose date or time
// is argument at: DateFuncValues over the argument's (clamped) range.
func dateRangeImage(fn string, unit, at int) func(args []ir.Expr, infos []Info) []ir.Value {
	return func(args []ir.Expr, infos []Info) []ir.Value {
		l, ok := args[unit].(ir.Literal)
		if !ok || l.Value.Kind != ir.KindString {
			return nil
		}
		in := infos[at]
		k := in.Type.Kind()
		if !k.IsTime() || !in.Bounded || in.Int.Lo == nil || in.Int.Hi == nil || !in.Int.Lo.IsInt64() || !in.Int.Hi.IsInt64() {
			return nil
		}
		arg := l.Value.Str
		if fn != "to_char" {
			arg = strings.ToLower(strings.TrimSpace(arg))
		}
		vals, ok := DateFuncValues(fn, arg, k, in.Int.Lo.Int64(), in.Int.Hi.Int64(), MaxDomain)
		if !ok {
			return nil
		}
		return vals
	}
}

// UTCZones are the names of UTC the parsers accept in t AT TIME ZONE z and
// CONVERT_TZ(t, z1, z2): every backend session runs in UTC, so converting
// to or from it is exact everywhere, while other zones would need the
// time-zone database, which the backends do not share (SQLite has none).
var UTCZones = []string{"utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "+00", "+00:00", "-00:00", "universal"}

// IsUTCZone reports whether z names UTC (case and spaces ignored).
func IsUTCZone(z string) bool {
	return slices.Contains(UTCZones, strings.ToLower(strings.TrimSpace(z)))
}

// atUTCKind is the kind t AT TIME ZONE 'UTC' has for a t of kind k.
func atUTCKind(k ir.Kind) (ir.Kind, bool) {
	switch k {
	case ir.KindTimestamp:
		return ir.KindTimestampTZ, true
	case ir.KindTimestampTZ:
		return ir.KindTimestamp, true
	}
	return k, false
}

// atUTCRule: at_utc(t) of a bounded timestamp or timestamptz is the other
// type over the same range (a date is refused: PostgreSQL would read it as
// a midnight first; cast it).
func atUTCRule(c string, args []Info) (Info, error) {
	t := args[0]
	k, ok := atUTCKind(t.Type.Kind())
	if !ok {
		return Info{}, noFunction(c, args)
	}
	if !t.Bounded {
		return Info{}, internalErr("unbounded argument of AT TIME ZONE")
	}
	return computedRange(c, timeInfo(TimeType(k), t.Int.Lo.Int64(), t.Int.Hi.Int64()))
}

// unixTimestampRangeImage is unix_timestamp's RangeImage: of a date, the
// epoch of each day of its (clamped, checked) range.
func unixTimestampRangeImage(_ []ir.Expr, infos []Info) []ir.Value {
	in := infos[0]
	if in.Type != Date || !in.Bounded || in.Int.Lo == nil || in.Int.Hi == nil || !in.Int.Lo.IsInt64() || !in.Int.Hi.IsInt64() {
		return nil
	}
	vals, ok := DateFuncValues("unix_timestamp", "", ir.KindDate, in.Int.Lo.Int64(), in.Int.Hi.Int64(), MaxDomain)
	if !ok {
		return nil
	}
	return vals
}
