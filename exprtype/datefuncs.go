package exprtype

import (
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
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
