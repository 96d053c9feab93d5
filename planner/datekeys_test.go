package planner_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestDateGroupKeys: a date function of a bounded date or time column
// groups by a derived finite domain, the set of values the function takes
// over the declared range, listed here by hand from the calendar (at is
// bounded [2010-01-01, 2010-12-31 23:59:59], dd [2010-01-01, 2010-12-31]).
func TestDateGroupKeys(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	day := func(s string) ir.Value {
		v, err := ir.ParseTime(ir.KindDate, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ts := func(s string) ir.Value {
		v, err := ir.ParseTime(ir.KindTimestamp, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	months := func(mk func(m int) ir.Value) []ir.Value {
		var out []ir.Value
		for m := 1; m <= 12; m++ {
			out = append(out, mk(m))
		}
		return out
	}
	monthStarts := months(func(m int) ir.Value {
		return ts(time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02 15:04:05"))
	})
	// The 365 days of 2010.
	var days2010 []ir.Value
	for d := day("2010-01-01").Int; d <= day("2010-12-31").Int; d++ {
		days2010 = append(days2010, ir.Date(d))
	}
	// Mondays: 2009-12-28 (the week of 2010-01-01, a Friday) to
	// 2010-12-27 (the week of 2010-12-31): 53 weeks.
	var mondays []ir.Value
	for d := day("2009-12-28"); d.Int <= day("2010-12-27").Int; d.Int += 7 {
		mondays = append(mondays, d)
	}
	if len(mondays) != 53 || mondays[0].GoTime().Weekday() != time.Monday {
		t.Fatalf("hand-made weeks: %d, first %v", len(mondays), mondays[0])
	}
	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d    parser.Dialect
		sql  string
		keys []ir.Value
	}{
		{pg, "SELECT date_trunc('month', at) AS m, COUNT(*) FROM visits GROUP BY 1", monthStarts},
		{pg, "SELECT date_trunc('quarter', at), COUNT(*) FROM visits GROUP BY date_trunc('quarter', at)",
			[]ir.Value{ts("2010-01-01 00:00:00"), ts("2010-04-01 00:00:00"), ts("2010-07-01 00:00:00"), ts("2010-10-01 00:00:00")}},
		{pg, "SELECT CAST(at AS date), COUNT(*) FROM visits GROUP BY CAST(at AS date)", days2010},
		{pg, "SELECT at::date AS d, COUNT(*) FROM visits GROUP BY 1", days2010},
		{my, "SELECT DATE(at), COUNT(*) FROM visits GROUP BY DATE(at)", days2010},
		{pg, "SELECT extract(month FROM at), COUNT(*) FROM visits GROUP BY 1", months(func(m int) ir.Value { return ir.Int(int64(m)) })},
		{pg, "SELECT extract(year FROM at), COUNT(*) FROM visits GROUP BY 1", []ir.Value{ir.Int(2010)}},
		{pg, "SELECT extract(dow FROM at), COUNT(*) FROM visits GROUP BY 1", []ir.Value{ir.Int(0), ir.Int(1), ir.Int(2), ir.Int(3), ir.Int(4), ir.Int(5), ir.Int(6)}},
		{my, "SELECT MONTH(at), COUNT(*) FROM visits GROUP BY 1", months(func(m int) ir.Value { return ir.Int(int64(m)) })},
		{pg, "SELECT to_char(at, 'YYYY-MM'), COUNT(*) FROM visits GROUP BY 1",
			months(func(m int) ir.Value {
				return ir.String(time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC).Format("2006-01"))
			})},
		{my, "SELECT DATE_FORMAT(at, '%Y-%m'), COUNT(*) FROM visits GROUP BY 1",
			months(func(m int) ir.Value {
				return ir.String(time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC).Format("2006-01"))
			})},
		{pg, "SELECT date_trunc('week', dd), COUNT(*) FROM visits GROUP BY 1", mondays},
		// Metabase's MySQL truncations: the first days, as dates.
		{my, "SELECT str_to_date(concat(date_format(at, '%Y-%m'), '-01'), '%Y-%m-%d') AS m, COUNT(*) FROM visits GROUP BY str_to_date(concat(date_format(at, '%Y-%m'), '-01'), '%Y-%m-%d')",
			months(func(m int) ir.Value {
				return ir.TimeValue(ir.KindDate, time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
			})},
		{my, "SELECT str_to_date(date_format(at, '%Y-%m'), '%Y-%m'), COUNT(*) FROM visits GROUP BY 1",
			months(func(m int) ir.Value {
				return ir.TimeValue(ir.KindDate, time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
			})},
		{my, "SELECT str_to_date(concat(year(at), '-', quarter(at) * 3 - 2, '-01'), '%Y-%m-%d'), COUNT(*) FROM visits GROUP BY 1",
			[]ir.Value{day("2010-01-01"), day("2010-04-01"), day("2010-07-01"), day("2010-10-01")}},
		{my, "SELECT makedate(year(at), 1), COUNT(*) FROM visits GROUP BY 1", []ir.Value{day("2010-01-01")}},
		{my, "SELECT str_to_date(date_format(at, '%Y-%m-%d'), '%Y-%m-%d'), COUNT(*) FROM visits GROUP BY 1", days2010},
		// A cast of a truncation keeps the truncation's keys (not every
		// day of the range).
		{pg, "SELECT CAST(date_trunc('month', at) AS date), COUNT(*) FROM visits GROUP BY 1",
			months(func(m int) ir.Value {
				return ir.TimeValue(ir.KindDate, time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
			})},
		{pg, "SELECT date_trunc('quarter', at)::date, COUNT(*) FROM visits GROUP BY 1",
			[]ir.Value{day("2010-01-01"), day("2010-04-01"), day("2010-07-01"), day("2010-10-01")}},
		{pg, "SELECT CAST(date_trunc('month', dd) AS timestamp), COUNT(*) FROM visits GROUP BY 1", monthStarts},
		// A date column's own days (the clamp holds them), and a CASE of
		// dates (the key set once merged all dates into one).
		{pg, "SELECT CAST(dd AS date), COUNT(*) FROM visits GROUP BY 1", days2010},
		{pg, "SELECT CASE WHEN amount > 50 THEN DATE '2010-01-01' ELSE DATE '2010-06-01' END AS d, COUNT(*) FROM visits GROUP BY 1",
			[]ir.Value{day("2010-01-01"), day("2010-06-01")}},
		{pg, "SELECT date_trunc('month', dd), COUNT(*) FROM visits GROUP BY 1",
			months(func(m int) ir.Value {
				return ir.TimeValue(ir.KindDate, time.Date(2010, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
			})},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			pl, err := planDates(t, p, pol, tt.d, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Keys.Mode != planner.KeysDomain || len(pl.Groups) != 1 || !pl.Groups[0].Expr {
				t.Fatalf("keys %+v groups %+v, want one derived domain", pl.Keys, pl.Groups)
			}
			dom := pl.Groups[0].Domain
			if len(dom) != len(tt.keys) {
				t.Errorf("%d keys, want %d", len(dom), len(tt.keys))
			}
			for _, k := range tt.keys {
				if !slices.ContainsFunc(dom, func(v ir.Value) bool { return v.Kind == k.Kind && ir.CompareValues(v, k) == 0 }) {
					t.Errorf("key %v (%s) missing from %v", k, k.Kind, dom)
				}
			}
			if pl.Budget.Delta != 0 {
				t.Errorf("δ = %g, want 0 (declared-derived keys)", pl.Budget.Delta)
			}
		})
	}
}

// TestMetabaseTruncRefusals: STR_TO_DATE and MAKEDATE outside Metabase's
// exact truncation forms are refused before anything is charged.
func TestMetabaseTruncRefusals(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	for _, sql := range []string{
		"SELECT COUNT(*) FROM visits GROUP BY str_to_date(date_format(at, '%Y-%m'), '%Y-%m-%d')",
		"SELECT COUNT(*) FROM visits GROUP BY str_to_date(date_format(at, '%d/%m/%Y'), '%d/%m/%Y')",
		"SELECT COUNT(*) FROM visits GROUP BY str_to_date(concat(yearweek(at), ' Monday'), '%X%V %W')",
		"SELECT COUNT(*) FROM visits GROUP BY str_to_date(concat(year(at), '-', quarter(dd) * 3 - 2, '-01'), '%Y-%m-%d')",
		"SELECT COUNT(*) FROM visits GROUP BY makedate(year(at), 2)",
		"SELECT COUNT(*) FROM visits WHERE str_to_date('01/01/2010', '%d/%m/%Y') < at",
	} {
		_, err := planDates(t, p, pol, parser.MySQL, sql)
		if err == nil || !strings.Contains(err.Error(), "Metabase") && !strings.Contains(err.Error(), "STR_TO_DATE") && !strings.Contains(err.Error(), "str_to_date") && !strings.Contains(err.Error(), "makedate") {
			t.Errorf("%s: %v, want a refusal naming the supported forms", sql, err)
		}
	}
}

// TestToCharOfDateKey: to_char (MySQL's DATE_FORMAT) of a date or time
// grouping key is post-processing over the key, with the text written
// here by hand for each key (Looker's month labels).
func TestToCharOfDateKey(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	ts := func(s string) ir.Value { v, _ := ir.ParseTime(ir.KindTimestamp, s); return v }
	day := func(s string) ir.Value { v, _ := ir.ParseTime(ir.KindDate, s); return v }
	tests := []struct {
		d    parser.Dialect
		sql  string
		keys map[ir.Value]string // key → the text, by hand
	}{
		{parser.Postgres, "SELECT TO_CHAR(DATE_TRUNC('month', visits.at), 'YYYY-MM') AS \"visits.month\", COUNT(*) AS \"visits.count\" FROM visits GROUP BY DATE_TRUNC('month', visits.at) ORDER BY 1 DESC LIMIT 500",
			map[ir.Value]string{ts("2010-03-01 00:00:00"): "2010-03", ts("2010-12-01 00:00:00"): "2010-12"}},
		{parser.Postgres, "SELECT to_char(date_trunc('hour', at), 'YYYY-MM-DD HH24:MI'), COUNT(*) FROM visits GROUP BY date_trunc('hour', at)",
			map[ir.Value]string{ts("2010-03-01 07:00:00"): "2010-03-01 07:00", ts("2010-12-31 23:00:00"): "2010-12-31 23:00"}},
		{parser.Postgres, "SELECT to_char(date_trunc('week', dd), 'YYYY-MM-DD') AS w, to_char(date_trunc('week', dd), 'YYYY-MM-01') AS m, COUNT(*) FROM visits GROUP BY date_trunc('week', dd)",
			map[ir.Value]string{day("2009-12-28"): "2009-12-28", day("2010-02-01"): "2010-02-01"}},
		{parser.MySQL, "SELECT DATE_FORMAT(DATE(at), '%Y-%m-%d') AS d, COUNT(*) FROM visits GROUP BY DATE(at)",
			map[ir.Value]string{day("2010-01-01"): "2010-01-01", day("2010-07-04"): "2010-07-04"}},
		{parser.MySQL, "SELECT DATE_FORMAT(str_to_date(concat(date_format(at, '%Y-%m'), '-01'), '%Y-%m-%d'), '%Y') AS y, COUNT(*) FROM visits GROUP BY str_to_date(concat(date_format(at, '%Y-%m'), '-01'), '%Y-%m-%d')",
			map[ir.Value]string{day("2010-05-01"): "2010"}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			pl, err := planDates(t, p, pol, tt.d, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			o := pl.Outputs[0]
			if o.Kind != planner.OutExpr || o.Type != "text" {
				t.Fatalf("output %+v, want a text expression", o)
			}
			key := -1
			for i, x := range pl.Outputs {
				if x.Kind == planner.OutGroup {
					key = i
				}
			}
			if key < 0 {
				t.Fatalf("no key output in %+v", pl.Outputs)
			}
			for k, want := range tt.keys {
				row := make([]ir.Value, len(pl.Outputs))
				row[key] = k
				got, err := exprtype.Eval(o.Expr, row, pl.Post)
				if err != nil || got != ir.String(want) {
					t.Errorf("key %v: %v %v, want %q", k, got, err, want)
				}
				if strings.Contains(tt.sql, "YYYY-MM-01") {
					got, _ := exprtype.Eval(pl.Outputs[1].Expr, row, pl.Post)
					if want := ir.String(k.GoTime().Format("2006-01") + "-01"); got != want {
						t.Errorf("key %v: %v, want %v", k, got, want)
					}
				}
			}
			row := make([]ir.Value, len(pl.Outputs))
			row[key] = ir.Null()
			if got, err := exprtype.Eval(o.Expr, row, pl.Post); err != nil || !got.IsNull() {
				t.Errorf("NULL key: %v %v, want NULL", got, err)
			}
		})
	}
	for _, sql := range []string{
		"SELECT to_char(date_trunc('week', dd), 'YYYY-MM-DD HH24'), COUNT(*) FROM visits GROUP BY date_trunc('week', dd)",
		"SELECT to_char(date_trunc('month', at), 'Mon YYYY'), COUNT(*) FROM visits GROUP BY date_trunc('month', at)",
	} {
		if _, err := planDates(t, p, pol, parser.Postgres, sql); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
			t.Errorf("%s: %v, want 22023", sql, err)
		}
	}
}
