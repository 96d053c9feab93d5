package exprtype

import (
	"math/big"
	"slices"
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

// ExtractTime is extract(field, v) for a date or time value (in UTC for
// a timestamptz).
func ExtractTime(field string, v ir.Value) (int64, bool) {
	if !v.IsTime() {
		return 0, false
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
	r, ok := ExtractFields[field]
	if !ok {
		names := make([]string, 0, len(ExtractFields))
		for n := range ExtractFields {
			names = append(names, n)
		}
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
