package backends_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// dateRow is one row of the date table: NULL where ok is false.
type dateRow struct {
	d, ts, tz       int64 // days; microseconds
	dOK, tsOK, tzOK bool
}

// dateRows spreads dates over 2010 and 2011 (both sides of the bounds),
// timestamps over the hours of the day with and without fractions, and
// leaves some values NULL.
func dateRows() []dateRow {
	var out []dateRow
	const jan1 = 14610 // 2010-01-01
	for i := int64(0); i < 90; i++ {
		r := dateRow{d: jan1 - 10 + i*9, dOK: i%11 != 5, tsOK: i%13 != 7, tzOK: i%7 != 3}
		r.ts = (jan1+i*5)*ir.MicrosPerDay + (i%24)*3600*ir.MicrosPerSecond + (i%3)*250_000
		if i%10 == 0 {
			r.ts = (jan1 + i*5) * ir.MicrosPerDay // midnights
		}
		r.tz = r.ts + (i%5)*ir.MicrosPerSecond + 17
		out = append(out, r)
	}
	// Month ends, where adding months clips (2010-01-31 + 1 month is
	// 2010-02-28), the last microsecond of the day.
	for _, s := range []string{"2010-01-31", "2010-03-31", "2010-05-31", "2010-08-31", "2010-10-31", "2010-12-31"} {
		d, _ := ir.ParseTime(ir.KindDate, s)
		end := (d.Int+1)*ir.MicrosPerDay - 1
		out = append(out, dateRow{d: d.Int, ts: end, tz: end, dOK: true, tsOK: true, tzOK: true})
	}
	return out
}

// TestDatesOnEveryBackend: date, timestamp and timestamptz comparisons,
// BETWEEN, IN and casts in WHERE, written by a PostgreSQL or a MySQL
// client with every literal spelling, count on SQLite (text in
// ir.CanonicalText form), PostgreSQL (DATE, TIMESTAMP, TIMESTAMPTZ) and
// MariaDB (DATE, DATETIME(6), TIMESTAMP(6)) the rows Go counts from the
// same values.
func TestDatesOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_dates")
	cols := map[string]string{
		"sqlite":   "d DATE, ts TIMESTAMP, tz TIMESTAMP",
		"postgres": "d DATE, ts TIMESTAMP, tz TIMESTAMPTZ",
		"mysql":    "d DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL",
	}
	data := dateRows()
	lit := func(ok bool, s string) string {
		if !ok {
			return "NULL"
		}
		return s
	}
	rowsFor := func(dialect string) []string {
		var out []string
		for _, r := range data {
			d := ir.CanonicalText(ir.KindDate, r.d)
			ts := ir.CanonicalText(ir.KindTimestamp, r.ts)
			tz := "'" + ir.CanonicalText(ir.KindTimestampTZ, r.tz) + "'"
			switch dialect {
			case "postgres":
				tz = "'" + ir.FormatTime(ir.KindTimestampTZ, r.tz) + "'"
			case "mysql":
				// An instant whatever the loading session's time_zone.
				tz = "FROM_UNIXTIME(" + strconv.FormatInt(r.tz/ir.MicrosPerSecond, 10) + "." + fmt.Sprintf("%06d", r.tz%ir.MicrosPerSecond) + ")"
			}
			out = append(out, "("+lit(r.dOK, "'"+d+"'")+", "+lit(r.tsOK, "'"+ts+"'")+", "+lit(r.tzOK, tz)+")")
		}
		return out
	}
	columns := dateColumns
	day := func(s string) int64 { v, _ := ir.ParseTime(ir.KindDate, s); return v.Int }
	at := func(s string) int64 { v, _ := ir.ParseTime(ir.KindTimestamp, s); return v.Int }
	clampTS := func(x int64) int64 { return min(max(x, 14610*ir.MicrosPerDay), 14975*ir.MicrosPerDay-1) }
	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d     parser.Dialect
		where string
		keep  func(r dateRow) bool
	}{
		{pg, "d = DATE '2010-02-14'", func(r dateRow) bool { return r.dOK && r.d == day("2010-02-14") }},
		{my, "d = '2010-02-14'", func(r dateRow) bool { return r.dOK && r.d == day("2010-02-14") }},
		{pg, "d < '2010-06-01'::date", func(r dateRow) bool { return r.dOK && r.d < day("2010-06-01") }},
		{my, "d >= CAST('2010-06-01' AS DATE)", func(r dateRow) bool { return r.dOK && r.d >= day("2010-06-01") }},
		{pg, "d BETWEEN '2010-03-01' AND '2010-09-30'", func(r dateRow) bool {
			return r.dOK && r.d >= day("2010-03-01") && r.d <= day("2010-09-30")
		}},
		{my, "d NOT BETWEEN DATE '2010-03-01' AND DATE '2010-09-30'", func(r dateRow) bool {
			return r.dOK && (r.d < day("2010-03-01") || r.d > day("2010-09-30"))
		}},
		{pg, "d IN ('2010-02-14', DATE '2010-02-21', '2011-01-04')", func(r dateRow) bool {
			return r.dOK && (r.d == day("2010-02-14") || r.d == day("2010-02-21") || r.d == day("2011-01-04"))
		}},
		{pg, "d IS NULL", func(r dateRow) bool { return !r.dOK }},
		{pg, "ts >= TIMESTAMP '2010-03-01 12:00:00'", func(r dateRow) bool { return r.tsOK && r.ts >= at("2010-03-01 12:00:00") }},
		{my, "ts < TIMESTAMP '2010-03-01 12:00:00.25'", func(r dateRow) bool { return r.tsOK && r.ts < at("2010-03-01 12:00:00.25") }},
		{pg, "ts = '2010-01-06 01:00:00.25'", func(r dateRow) bool { return r.tsOK && r.ts == at("2010-01-06 01:00:00.25") }},
		{pg, "ts > DATE '2010-06-05'", func(r dateRow) bool { return r.tsOK && r.ts > at("2010-06-05 00:00:00") }},
		{my, "ts >= '2010-06-05' AND ts < '2010-07-05'", func(r dateRow) bool {
			return r.tsOK && r.ts >= at("2010-06-05 00:00:00") && r.ts < at("2010-07-05 00:00:00")
		}},
		{pg, "ts = '2010-02-20'", func(r dateRow) bool { return r.tsOK && r.ts == at("2010-02-20 00:00:00") }},
		{pg, "tz < '2010-04-01 00:00:00+02'", func(r dateRow) bool { return r.tzOK && r.tz < at("2010-03-31 22:00:00") }},
		{pg, "tz >= TIMESTAMPTZ '2010-04-01 10:00:00Z'", func(r dateRow) bool { return r.tzOK && r.tz >= at("2010-04-01 10:00:00") }},
		{my, "tz BETWEEN '2010-02-01' AND TIMESTAMP '2010-05-01 00:00:00'", func(r dateRow) bool {
			return r.tzOK && r.tz >= at("2010-02-01 00:00:00") && r.tz <= at("2010-05-01 00:00:00")
		}},
		{pg, "CAST(ts AS date) = '2010-03-02'", func(r dateRow) bool {
			return r.tsOK && clampTS(r.ts)/ir.MicrosPerDay == day("2010-03-02")
		}},
		{my, "CAST(ts AS DATE) IN ('2010-03-02', '2010-05-01')", func(r dateRow) bool {
			x := clampTS(r.ts) / ir.MicrosPerDay
			return r.tsOK && (x == day("2010-03-02") || x == day("2010-05-01"))
		}},
		{pg, "CAST(d AS timestamp) < ts", func(r dateRow) bool {
			dd := min(max(r.d, 14610), 14975)
			return r.dOK && r.tsOK && dd*ir.MicrosPerDay < r.ts
		}},
	}
	backends := eachBackendRows(t, table, cols, rowsFor)
	for _, tc := range tests {
		stmts, err := parser.Parse(tc.d, "SELECT COUNT(*) FROM t WHERE "+tc.where)
		if err != nil || stmts[0].Query == nil {
			t.Fatalf("%s: %v %v", tc.where, err, stmts)
		}
		where, err := exprtype.Predicate(stmts[0].Query.Where, columns)
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		var want int64
		for _, r := range data {
			if tc.keep(r) {
				want++
			}
		}
		if want == 0 || want == int64(len(data)) {
			t.Errorf("%s: %d of %d rows: the case tells nothing", tc.where, want, len(data))
		}
		q := &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Where: where, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
		for _, b := range backends {
			got, err := backendtest.Collect(context.Background(), b.agg, q)
			if err != nil {
				t.Errorf("%s (%v client) on %s: %v", tc.where, tc.d, b.name, err)
				continue
			}
			if len(got) != 1 || fmt.Sprint(got[0].Aggs) != fmt.Sprint([]int64{want}) {
				t.Errorf("%s (%v client) on %s: %v, want %d rows", tc.where, tc.d, b.name, got, want)
			}
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}

// dateColumns declares the date table's columns with bounds [2010-01-01,
// 2011-01-01) (d: the closed [2010-01-01, 2011-01-01]).
func dateColumns(c ir.ColumnRef) (exprtype.Column, error) {
	ref := ir.ColumnRef{Qualifier: "t", Name: c.Name}
	switch c.Name {
	case "d":
		return exprtype.Column{Ref: ref, Type: exprtype.Date, HasBounds: true, Lo: ir.Date(14610), Hi: ir.Date(14975)}, nil
	case "ts":
		return exprtype.Column{Ref: ref, Type: exprtype.Timestamp, HasBounds: true,
			Lo: ir.Timestamp(14610 * ir.MicrosPerDay), Hi: ir.Timestamp(14975*ir.MicrosPerDay - 1)}, nil
	case "tz":
		return exprtype.Column{Ref: ref, Type: exprtype.TimestampTZ, HasBounds: true,
			Lo: ir.TimestampTZ(14610 * ir.MicrosPerDay), Hi: ir.TimestampTZ(14975*ir.MicrosPerDay - 1)}, nil
	}
	return exprtype.Column{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s does not exist", c.Name)
}

// TestDateFunctionsOnEveryBackend: date_trunc for every unit and extract
// for every field, on date, timestamp and timestamptz columns, from both
// clients: for a sample of the values each takes on the rows (and one it
// never takes), the number of rows where the function equals it is the
// number Go counts with the clamped value, on SQLite, PostgreSQL and
// MariaDB alike.
func TestDateFunctionsOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_datefn")
	cols := map[string]string{
		"sqlite":   "d DATE, ts TIMESTAMP, tz TIMESTAMP",
		"postgres": "d DATE, ts TIMESTAMP, tz TIMESTAMPTZ",
		"mysql":    "d DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL",
	}
	data := dateRows()
	rowsFor := func(dialect string) []string {
		var out []string
		for _, r := range data {
			tz := "'" + ir.CanonicalText(ir.KindTimestampTZ, r.tz) + "'"
			switch dialect {
			case "postgres":
				tz = "'" + ir.FormatTime(ir.KindTimestampTZ, r.tz) + "'"
			case "mysql":
				tz = "FROM_UNIXTIME(" + strconv.FormatInt(r.tz/ir.MicrosPerSecond, 10) + "." + fmt.Sprintf("%06d", r.tz%ir.MicrosPerSecond) + ")"
			}
			q := func(ok bool, s string) string {
				if !ok {
					return "NULL"
				}
				return "'" + s + "'"
			}
			tzs := "NULL"
			if r.tzOK {
				tzs = tz
			}
			out = append(out, "("+q(r.dOK, ir.CanonicalText(ir.KindDate, r.d))+", "+q(r.tsOK, ir.CanonicalText(ir.KindTimestamp, r.ts))+", "+tzs+")")
		}
		return out
	}
	backends := eachBackendRows(t, table, cols, rowsFor)
	value := clampedDate
	literal := func(d parser.Dialect, v ir.Value) string {
		switch {
		case v.Kind == ir.KindInt:
			return strconv.FormatInt(v.Int, 10)
		case v.Kind == ir.KindString:
			return "'" + v.Str + "'"
		case v.Kind == ir.KindDate:
			return "DATE '" + v.Text() + "'"
		case v.Kind == ir.KindTimestampTZ && d == parser.Postgres:
			return "TIMESTAMPTZ '" + v.Text() + "'"
		}
		return "TIMESTAMP '" + ir.CanonicalText(v.Kind, v.Int) + "'"
	}
	type check struct {
		d     parser.Dialect
		where string
		want  int64
	}
	var checks []check
	add := func(d parser.Dialect, call string, col string, f func(ir.Value) ir.Value) {
		counts := map[ir.Value]int64{}
		var seen []ir.Value
		for _, r := range data {
			if v, ok := value(r, col); ok {
				out := f(v)
				if counts[out] == 0 {
					seen = append(seen, out)
				}
				counts[out]++
			}
		}
		picks := seen // every value the rows take, or an even sample of 16
		if len(seen) > 16 {
			picks = nil
			for j := range 16 {
				picks = append(picks, seen[j*(len(seen)-1)/15])
			}
		}
		never := seen[0]
		never.Int-- // a value taken by no row (one day, microsecond or unit before the first)
		if counts[never] == 0 && never.Kind != ir.KindString {
			picks = append(picks, never)
		}
		for _, p := range picks {
			checks = append(checks, check{d, call + " = " + literal(d, p), counts[p]})
		}
	}
	i := 0
	for _, col := range []string{"d", "ts", "tz"} {
		for _, unit := range exprtype.TruncUnits {
			if col == "d" && (unit == "hour" || unit == "minute") {
				continue
			}
			d := []parser.Dialect{parser.Postgres, parser.MySQL}[i%2]
			i++
			if d == parser.MySQL {
				continue // MySQL has no date_trunc: its clients write the fields
			}
			add(d, "date_trunc('"+unit+"', "+col+")", col, func(v ir.Value) ir.Value { out, _ := exprtype.TruncTime(unit, v); return out })
		}
		for field := range exprtype.ExtractFields {
			if col == "d" && (field == "hour" || field == "minute") {
				continue
			}
			get := func(v ir.Value) ir.Value { n, _ := exprtype.ExtractTime(field, v); return ir.Int(n) }
			add(parser.Postgres, "extract("+field+" FROM "+col+")", col, get)
			add(parser.Postgres, "date_part('"+field+"', "+col+")", col, get)
			if my := map[string]string{"year": "YEAR", "quarter": "QUARTER", "month": "MONTH", "day": "DAYOFMONTH", "hour": "HOUR", "minute": "MINUTE",
				"doy": "DAYOFYEAR", "week": "WEEKOFYEAR"}[field]; my != "" {
				add(parser.MySQL, my+"("+col+")", col, get)
				if field != "doy" && field != "week" { // no such EXTRACT units in MySQL (WEEK is another week)
					add(parser.MySQL, "EXTRACT("+strings.ToUpper(field)+" FROM "+col+")", col, get)
				}
			}
		}
		// The renumbered days of the week (parser.weekday).
		wd := func(v ir.Value) int64 { return int64(v.GoTime().Weekday()) } // Sunday 0
		add(parser.Postgres, "extract(isodow FROM "+col+")", col, func(v ir.Value) ir.Value { return ir.Int((wd(v)+6)%7 + 1) })
		add(parser.MySQL, "DAYOFWEEK("+col+")", col, func(v ir.Value) ir.Value { return ir.Int(wd(v) + 1) })
		add(parser.MySQL, "WEEKDAY("+col+")", col, func(v ir.Value) ir.Value { return ir.Int((wd(v) + 6) % 7) })
		// Weeks from Sunday (Superset's and Metabase's MySQL grains): the
		// Sunday on or before the day.
		sunday := func(v ir.Value) ir.Value {
			return ir.AsTime(ir.Date(v.GoTime().Unix()/86400-wd(v)), ir.KindDate)
		}
		add(parser.MySQL, "DATE(DATE_SUB("+col+", INTERVAL DAYOFWEEK("+col+") - 1 DAY))", col, sunday)
		add(parser.MySQL, "STR_TO_DATE(CONCAT(YEARWEEK("+col+"), ' Sunday'), '%X%V %W')", col, sunday)
		if col == "d" {
			// PostgreSQL's spelling (Metabase's, Superset's), on a date:
			// a timestamp at the Sunday's midnight there, a date here.
			add(parser.Postgres, "CAST(date_trunc('week', "+col+" + INTERVAL '1 day') + INTERVAL '-1 day' AS date)", col, sunday)
			add(parser.Postgres, "CAST(date_trunc('week', "+col+" + INTERVAL '1 day') - INTERVAL '1 day' AS date)", col, sunday)
		} else {
			// On a timestamp: the Sunday's midnight, of the column's type.
			midnight := func(v ir.Value) ir.Value {
				return ir.Value{Kind: v.Kind, Int: sunday(v).Int * ir.MicrosPerDay}
			}
			add(parser.Postgres, "(date_trunc('week', ("+col+" + INTERVAL '1 day')) + INTERVAL '-1 day')", col, midnight)
		}
		goLayout := map[string]string{"YYYY": "2006", "YYYY-MM": "2006-01", "YYYY-MM-01": "2006-01-01", "YYYY-MM-DD": "2006-01-02",
			"YYYY-MM-DD HH24": "2006-01-02 15", "YYYY-MM-DD HH24:MI": "2006-01-02 15:04"}
		for _, cf := range exprtype.CharFormats {
			if col == "d" && !cf.Date {
				continue
			}
			layout := goLayout[cf.Postgres] // "01" in a Go layout is the month: written out below
			text := func(v ir.Value) ir.Value {
				if cf.Postgres == "YYYY-MM-01" {
					return ir.String(v.GoTime().Format("2006-01") + "-01")
				}
				return ir.String(v.GoTime().Format(layout))
			}
			add(parser.Postgres, "to_char("+col+", '"+cf.Postgres+"')", col, text)
			add(parser.MySQL, "DATE_FORMAT("+col+", '"+cf.MySQL+"')", col, text)
		}
		if col != "d" {
			// UTC only: the same instant with the other type (MySQL's
			// CONVERT_TZ between UTC names is the column itself: parser tests).
			flip := func(v ir.Value) ir.Value {
				k := map[ir.Kind]ir.Kind{ir.KindTimestamp: ir.KindTimestampTZ, ir.KindTimestampTZ: ir.KindTimestamp}[v.Kind]
				return ir.Value{Kind: k, Int: v.Int}
			}
			add(parser.Postgres, "("+col+" AT TIME ZONE 'UTC')", col, flip)
			add(parser.Postgres, "date_trunc('month', "+col+" AT TIME ZONE 'Etc/UTC')", col, func(v ir.Value) ir.Value { out, _ := exprtype.TruncTime("month", flip(v)); return out })
		}
		epoch := func(v ir.Value) ir.Value { return ir.Int(exprtype.EpochSeconds(v)) }
		add(parser.Postgres, "extract(epoch FROM "+col+")", col, epoch)
		add(parser.MySQL, "UNIX_TIMESTAMP("+col+")", col, epoch)
		add(parser.MySQL, "DATE("+col+")", col, func(v ir.Value) ir.Value { return ir.AsTime(ir.Date(v.GoTime().Unix()/86400), ir.KindDate) })
		for _, iv := range []struct {
			n    int64
			unit string
		}{{1, "month"}, {-1, "month"}, {2, "quarter"}, {1, "year"}, {-3, "week"}, {10, "day"}, {5, "hour"}, {-90, "minute"}, {3601, "second"}} {
			if col == "d" && (iv.unit == "hour" || iv.unit == "minute" || iv.unit == "second") {
				continue
			}
			shift := func(v ir.Value) ir.Value {
				out, ok := exprtype.AddInterval(v, iv.n, iv.unit)
				if !ok {
					t.Fatalf("%v + %d %s", v, iv.n, iv.unit)
				}
				return out
			}
			op, abs := "+", iv.n
			if iv.n < 0 {
				op, abs = "-", -iv.n
			}
			add(parser.Postgres, fmt.Sprintf("%s %s INTERVAL '%d %ss'", col, op, abs, iv.unit), col, shift)
			add(parser.MySQL, fmt.Sprintf("%s %s INTERVAL %d %s", col, op, abs, strings.ToUpper(iv.unit)), col, shift)
			add(parser.MySQL, fmt.Sprintf("DATE_ADD(%s, INTERVAL %d %s)", col, iv.n, strings.ToUpper(iv.unit)), col, shift)
		}
	}
	for _, tc := range checks {
		stmts, err := parser.Parse(tc.d, "SELECT COUNT(*) FROM t WHERE "+tc.where)
		if err != nil || stmts[0].Query == nil {
			t.Fatalf("%s: %v %v", tc.where, err, stmts)
		}
		where, err := exprtype.Predicate(stmts[0].Query.Where, dateColumns)
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		q := &ir.BackendQuery{From: ir.TableRef{Name: table, Alias: "t"}, Where: where, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
		for _, b := range backends {
			got, err := backendtest.Collect(context.Background(), b.agg, q)
			if err != nil {
				t.Errorf("%s (%v client) on %s: %v", tc.where, tc.d, b.name, err)
				continue
			}
			if len(got) != 1 || fmt.Sprint(got[0].Aggs) != fmt.Sprint([]int64{tc.want}) {
				t.Errorf("%s (%v client) on %s: %v, want %d rows", tc.where, tc.d, b.name, got, tc.want)
			}
		}
	}
	t.Logf("%d checks on %d backends", len(checks), len(backends))
}

// clampedDate is column col's value in row r (d, ts or tz), clamped to the
// column's bounds as an expression computes with it; false for NULL.
func clampedDate(r dateRow, col string) (ir.Value, bool) {
	c, _ := dateColumns(ir.ColumnRef{Name: col})
	var v ir.Value
	var ok bool
	switch col {
	case "d":
		v, ok = ir.Date(r.d), r.dOK
	case "ts":
		v, ok = ir.Timestamp(r.ts), r.tsOK
	default:
		v, ok = ir.TimestampTZ(r.tz), r.tzOK
	}
	v.Int = min(max(v.Int, c.Lo.Int), c.Hi.Int)
	return v, ok
}
