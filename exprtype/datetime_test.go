package exprtype_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestDateLiterals: every spelling of a date or timestamp literal in both
// dialects lowers to the typed value (2010-06-01 is day 14761; hand
// computed: 40 years of 365 days, 10 leap days, 151 days of 2010), and a
// literal meeting a column of another time type is converted exactly.
func TestDateLiterals(t *testing.T) {
	const noon = 14761*ir.MicrosPerDay + 12*3600*ir.MicrosPerSecond
	tests := []struct {
		d           parser.Dialect
		where, want string
	}{
		{parser.Postgres, "day = DATE '2010-06-01'", `("t0"."day" = DATE '2010-06-01')`},
		{parser.Postgres, "day = '2010-06-01'::date", `("t0"."day" = DATE '2010-06-01')`},
		{parser.Postgres, "day = CAST('2010-06-01' AS date)", `("t0"."day" = DATE '2010-06-01')`},
		{parser.Postgres, "day = ' 2010-06-01'", `("t0"."day" = DATE '2010-06-01')`},
		{parser.Postgres, "day BETWEEN '2010-06-01' AND DATE '2010-06-30'", `("t0"."day" BETWEEN DATE '2010-06-01' AND DATE '2010-06-30')`},
		{parser.Postgres, "day IN ('2010-06-01', DATE '2010-06-02')", `("t0"."day" IN (DATE '2010-06-01', DATE '2010-06-02'))`},
		{parser.Postgres, "ts >= TIMESTAMP '2010-06-01 12:00:00'", `("t0"."ts" >= TIMESTAMP '2010-06-01 12:00:00')`},
		{parser.Postgres, "ts >= DATE '2010-06-01'", `("t0"."ts" >= TIMESTAMP '2010-06-01 00:00:00')`},
		{parser.Postgres, "DATE '2010-06-01' <= ts", `(TIMESTAMP '2010-06-01 00:00:00' <= "t0"."ts")`},
		{parser.Postgres, "tz < '2010-06-01 14:00+02'", `("t0"."tz" < TIMESTAMPTZ '2010-06-01 12:00:00+00')`},
		{parser.Postgres, "tz < TIMESTAMP '2010-06-01 12:00'", `("t0"."tz" < TIMESTAMPTZ '2010-06-01 12:00:00+00')`},
		{parser.Postgres, "tz < '2010-06-01 12:00'::timestamptz", `("t0"."tz" < TIMESTAMPTZ '2010-06-01 12:00:00+00')`},
		{parser.Postgres, "tz IS NULL OR day IS NOT NULL", `(("t0"."tz" IS NULL) OR ("t0"."day" IS NOT NULL))`},
		{parser.Postgres, "CAST(ts AS date) = '2010-06-01'", `(CAST(clamp("t0"."ts", TIMESTAMP '2010-01-01 00:00:00', TIMESTAMP '2011-01-01 00:00:00') AS date) = DATE '2010-06-01')`},
		{parser.MySQL, "day = DATE '2010-06-01'", "(`t0`.`day` = DATE '2010-06-01')"},
		{parser.MySQL, "day = '2010-06-01'", "(`t0`.`day` = DATE '2010-06-01')"},
		{parser.MySQL, "day = CAST('2010-06-01' AS DATE)", "(`t0`.`day` = DATE '2010-06-01')"},
		{parser.MySQL, "ts < TIMESTAMP '2010-06-01 12:00:00'", "(`t0`.`ts` < TIMESTAMP '2010-06-01 12:00:00')"},
		{parser.MySQL, "ts < CAST('2010-06-01 12:00:00' AS DATETIME)", "(`t0`.`ts` < TIMESTAMP '2010-06-01 12:00:00')"},
		{parser.MySQL, "ts BETWEEN '2010-06-01' AND '2010-06-01 12:00'", "(`t0`.`ts` BETWEEN TIMESTAMP '2010-06-01 00:00:00' AND TIMESTAMP '2010-06-01 12:00:00')"},
		{parser.Postgres, "date_trunc('month', day) = '2010-06-01'", `(CAST(date_trunc('month', clamp("t0"."day", DATE '2010-01-01', DATE '2011-01-01')) AS date) = DATE '2010-06-01')`},
		{parser.Postgres, "extract(year FROM ts) = 2010", `(extract('year', clamp("t0"."ts", TIMESTAMP '2010-01-01 00:00:00', TIMESTAMP '2011-01-01 00:00:00')) = 2010)`},
		{parser.Postgres, "day - INTERVAL '1 month' < '2010-06-01'", `(CAST(date_add(clamp("t0"."day", DATE '2010-01-01', DATE '2011-01-01'), -1, 'month') AS date) < DATE '2010-06-01')`},
		{parser.MySQL, "day + INTERVAL 2 WEEK < '2010-06-01'", "(CAST(date_add(clamp(`t0`.`day`, DATE '2010-01-01', DATE '2011-01-01'), 2, 'week') AS date) < DATE '2010-06-01')"},
		{parser.MySQL, "DATE_FORMAT(day, '%Y-%m') = '2010-06'", "(to_char(clamp(`t0`.`day`, DATE '2010-01-01', DATE '2011-01-01'), 'YYYY-MM') = '2010-06')"},
		{parser.MySQL, "MONTH(ts) = 6", "(extract('month', clamp(`t0`.`ts`, TIMESTAMP '2010-01-01 00:00:00', TIMESTAMP '2011-01-01 00:00:00')) = 6)"},
	}
	for _, tc := range tests {
		got, err := exprtype.Predicate(where(t, tc.d, tc.where), testColumns)
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		s := ir.FormatExpr(got)
		if tc.d == parser.MySQL {
			s = strings.ReplaceAll(s, `"`, "`")
		}
		if s != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.where, s, tc.want)
		}
	}
	// The values themselves, not only their text.
	got, err := exprtype.Predicate(where(t, parser.Postgres, "ts = '2010-06-01 12:00'"), testColumns)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.(ir.Compare).R.(ir.Literal).Value; v != ir.Timestamp(noon) {
		t.Errorf("literal %v, want timestamp %d", v, int64(noon))
	}
}

// TestDateRefusals: invalid literals and mixed types are refused at plan
// time with the SQLSTATE PostgreSQL gives them.
func TestDateRefusals(t *testing.T) {
	tests := []struct {
		d     parser.Dialect
		where string
		want  sqlerr.Code
		msg   string
	}{
		{parser.Postgres, "day = DATE '2010-13-45'", sqlerr.DatetimeFieldOverflow, "out of range"},
		{parser.Postgres, "day = '2010-02-30'", sqlerr.DatetimeFieldOverflow, "out of range"},
		{parser.Postgres, "day = 'yesterday'", sqlerr.InvalidDatetimeFormat, "type date"},
		{parser.Postgres, "day = '2010-06-01 10:00'", sqlerr.InvalidDatetimeFormat, "type date"},
		{parser.Postgres, "ts = '2010-06-01 10:00 CEST'", sqlerr.InvalidDatetimeFormat, "timestamp"},
		{parser.MySQL, "day = DATE '2010-13-45'", sqlerr.DatetimeFieldOverflow, "out of range"},
		{parser.MySQL, "ts < CAST('noon' AS DATETIME)", sqlerr.InvalidDatetimeFormat, "timestamp"},
		{parser.Postgres, "day = TIMESTAMP '2010-06-01 10:00'", sqlerr.UndefinedFunction, "date column"},
		{parser.Postgres, "day = ts", sqlerr.UndefinedFunction, "operator does not exist"},
		{parser.Postgres, "day = 5", sqlerr.UndefinedFunction, "operator does not exist"},
		{parser.Postgres, "day = note", sqlerr.UndefinedFunction, "operator does not exist"},
		{parser.Postgres, "day + 1 > day", sqlerr.UndefinedFunction, "operator does not exist"},
		{parser.Postgres, "CAST(note AS date) = day", sqlerr.FeatureNotSupported, "text to date"},
		{parser.Postgres, "CAST(day AS text) = '2010-06-01'", sqlerr.FeatureNotSupported, "dates and times"},
		{parser.Postgres, "CAST(tz AS date) = day", sqlerr.FeatureNotSupported, "no declared bounds"},
		{parser.Postgres, "lower(day) = 'x'", sqlerr.UndefinedFunction, "function lower"},
		{parser.Postgres, "day + INTERVAL '2 hours' > ts", sqlerr.InvalidParameterValue, "makes a timestamp"},
		{parser.Postgres, "ts + INTERVAL '8000 years' > ts", sqlerr.DatetimeFieldOverflow, "9999"},
		{parser.MySQL, "DATE_SUB(day, INTERVAL 1100 YEAR) < day", sqlerr.DatetimeFieldOverflow, "1000-01-01"},
		{parser.Postgres, "date_trunc('decade', ts) = ts", sqlerr.InvalidParameterValue, "unit"},
		{parser.Postgres, "date_trunc('hour', day) = day", sqlerr.InvalidParameterValue, "date itself"},
		{parser.Postgres, "date_trunc(note, ts) = ts", sqlerr.FeatureNotSupported, "constant text"},
		{parser.Postgres, "extract(hour FROM day) = 1", sqlerr.InvalidParameterValue, "no hour"},
		{parser.Postgres, "extract(millennium FROM ts) = 1", sqlerr.InvalidParameterValue, "not supported"},
		{parser.Postgres, "date_trunc('month', tz) = tz", sqlerr.FeatureNotSupported, "no declared bounds"},
		{parser.Postgres, "to_char(ts, 'Mon YYYY') = 'x'", sqlerr.InvalidParameterValue, "every backend writes alike"},
		{parser.Postgres, "to_char(day, 'YYYY-MM-DD HH24') = 'x'", sqlerr.InvalidParameterValue, "no time of day"},
		{parser.Postgres, "to_char(ts, note) = 'x'", sqlerr.FeatureNotSupported, "constant text"},
		{parser.MySQL, "DATE_FORMAT(ts, '%Y-%m') = 2010", sqlerr.UndefinedFunction, "operator does not exist"},
	}
	for _, tc := range tests {
		_, err := exprtype.Predicate(where(t, tc.d, tc.where), testColumns)
		if !sqlerr.HasCode(err, tc.want) {
			t.Errorf("%s: got %v, want %s", tc.where, err, tc.want.SQLState)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: message %q does not mention %q", tc.where, err, tc.msg)
		}
	}
}
