package parser_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// TestBIDateTruncations: Metabase's and Superset's MySQL date truncations
// are read as the date_trunc a PostgreSQL client writes for the same
// bucket (a date for the date units); near misses are left to the
// general forms, which refuse them.
func TestBIDateTruncations(t *testing.T) {
	key := func(d parser.Dialect, e string) (ir.Expr, string) {
		stmts, err := parser.Parse(d, "SELECT COUNT(*) FROM t GROUP BY "+e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if stmts[0].Query == nil {
			return nil, stmts[0].NotAggregate
		}
		return stmts[0].Query.GroupBy[0], ""
	}
	for _, c := range []struct{ mysql, pg string }{
		{"str_to_date(date_format(t, '%Y-%m-%d %H:%i'), '%Y-%m-%d %H:%i')", "date_trunc('minute', t)"},
		{"str_to_date(date_format(t, '%Y-%m-%d %H'), '%Y-%m-%d %H')", "date_trunc('hour', t)"},
		{"str_to_date(date_format(t, '%Y-%m-%d'), '%Y-%m-%d')", "CAST(t AS date)"},
		{"str_to_date(date_format(t, '%Y-%m'), '%Y-%m')", "date_trunc('month', CAST(t AS date))"},
		{"str_to_date(concat(date_format(t, '%Y-%m'), '-01'), '%Y-%m-%d')", "date_trunc('month', CAST(t AS date))"},
		{"str_to_date(concat(year(t), '-', quarter(t) * 3 - 2, '-01'), '%Y-%m-%d')", "date_trunc('quarter', CAST(t AS date))"},
		{"str_to_date(concat(year(`t`), '-', ((quarter(`t`) * 3) - 2), '-01'), '%Y-%m-%d')", "date_trunc('quarter', CAST(t AS date))"},
		{"(str_to_date((concat((date_format(t, '%Y-%m')), '-01')), '%Y-%m-%d'))", "date_trunc('month', CAST(t AS date))"},
		{"str_to_date(date_format(t, '%Y'), '%Y')", "date_trunc('year', CAST(t AS date))"},
		{"makedate(year(t), 1)", "date_trunc('year', CAST(t AS date))"},
		{"DATE_ADD(DATE(t), INTERVAL (HOUR(t)*60 + MINUTE(t)) MINUTE)", "date_trunc('minute', t)"},
		{"DATE_ADD(DATE(t), INTERVAL HOUR(t) HOUR)", "date_trunc('hour', t)"},
		{"DATE(DATE_SUB(t, INTERVAL DAYOFWEEK(DATE_SUB(t, INTERVAL 1 DAY)) - 1 DAY))", "date_trunc('week', CAST(t AS date))"},
		{"DATE(DATE_SUB(t, INTERVAL DAYOFMONTH(t) - 1 DAY))", "date_trunc('month', CAST(t AS date))"},
		{"MAKEDATE(YEAR(t), 1) + INTERVAL QUARTER(t) QUARTER - INTERVAL 1 QUARTER", "date_trunc('quarter', CAST(t AS date))"},
		{"DATE(DATE_SUB(t, INTERVAL DAYOFYEAR(t) - 1 DAY))", "date_trunc('year', CAST(t AS date))"},
		// Weeks from Sunday: the Monday week of the next day, one day back.
		{"DATE(DATE_SUB(t, INTERVAL DAYOFWEEK(t) - 1 DAY))", "date_trunc('week', CAST(t AS date) + INTERVAL '1 day') + INTERVAL '-1 day'"},
		{"str_to_date(concat(yearweek(t), ' Sunday'), '%X%V %W')", "date_trunc('week', CAST(t AS date) + INTERVAL '1 day') + INTERVAL '-1 day'"},
	} {
		got, why := key(parser.MySQL, c.mysql)
		want, _ := key(parser.Postgres, c.pg)
		if got == nil || ir.FormatExpr(got) != ir.FormatExpr(want) {
			t.Errorf("%s: %v (%s), want %s", c.mysql, got, why, ir.FormatExpr(want))
		}
	}
	for _, e := range []string{
		"str_to_date(date_format(t, '%Y-%m'), '%Y-%m-%d')",
		"str_to_date(concat(yearweek(t), ' Monday'), '%X%V %W')",
		"str_to_date(concat(yearweek(t), ' Sunday'), '%x%v %W')",
		"str_to_date(concat(year(t), '-', quarter(u) * 3 - 2, '-01'), '%Y-%m-%d')",
		"makedate(year(t), 2)",
		"DATE(DATE_SUB(t, INTERVAL DAYOFWEEK(u) - 1 DAY))",
		"DATE(DATE_SUB(t, INTERVAL DAYOFMONTH(u) - 1 DAY))",
		"DATE_ADD(DATE(t), INTERVAL HOUR(u) HOUR)",
		"DATE_ADD(DATE(t), INTERVAL (HOUR(t)*60 + MINUTE(u)) MINUTE)",
		"MAKEDATE(YEAR(t), 1) + INTERVAL QUARTER(t) QUARTER - INTERVAL 2 QUARTER",
	} {
		if got, why := key(parser.MySQL, e); got != nil || why == "" {
			t.Errorf("%s: %v, want a refusal", e, got)
		}
	}
}
