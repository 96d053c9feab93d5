package planner_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func datesPolicy(tb testing.TB) *policies.Policy {
	tb.Helper()
	src := `version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    budgets:
      d: {epsilon: 10}
datasets:
  d:
    tables:
      visits:
        unit: person_id
        columns:
          at: {type: timestamp, bounds: ['2010-01-01 00:00:00', '2010-12-31 23:59:59']}
          day: {type: date, domain: {values: ['2010-01-01', '2010-01-02', '2010-01-03']}}
          dd: {type: date, bounds: ['2010-01-01', '2010-12-31']}
          open: {type: timestamptz}
          amount: {type: integer, bounds: [0, 100]}
`
	pol, err := policies.LoadBytes("dates.yaml", []byte(src))
	if err != nil {
		tb.Fatalf("loading policy: %v", err)
	}
	return pol
}

func planDates(tb testing.TB, p *planner.Planner, pol *policies.Policy, d parser.Dialect, sql string) (*planner.Plan, error) {
	tb.Helper()
	stmts, err := parser.Parse(d, sql)
	if err != nil {
		tb.Fatalf("%q: %v", sql, err)
	}
	return p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: d.String(), Statement: &stmts[0]})
}

// TestDatePlans: date predicates and functions plan on both dialects; a
// date group key keeps its type; what cannot be total is refused at plan
// time (before anything is charged).
func TestDatePlans(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	ok := []struct {
		d   parser.Dialect
		sql string
	}{
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE at >= DATE '2010-03-01' AND at < '2010-04-01'"},
		{parser.Postgres, "SELECT SUM(amount) FROM visits WHERE date_trunc('month', at) = '2010-03-01' AND extract(dow FROM at) IN (0, 6)"},
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE at + INTERVAL '1 month' < TIMESTAMP '2010-06-01' AND open > '2010-01-01 00:00+02'"},
		{parser.MySQL, "SELECT COUNT(*) FROM visits WHERE YEAR(at) = 2010 AND DATE(at) BETWEEN '2010-03-01' AND '2010-03-31'"},
		{parser.MySQL, "SELECT COUNT(*) FROM visits WHERE DATE_ADD(at, INTERVAL 2 WEEK) < '2010-06-01'"},
	}
	for _, c := range ok {
		if _, err := planDates(t, p, pol, c.d, c.sql); err != nil {
			t.Errorf("%s: %v", c.sql, err)
		}
	}
	if _, err := planDates(t, p, pol, parser.Postgres, "SELECT day, COUNT(*) FROM visits GROUP BY day HAVING day IS NOT NULL AND COUNT(*) > 3 ORDER BY day DESC"); err != nil {
		t.Errorf("HAVING and ORDER BY on a date key: %v", err)
	}
	// An IN list in HAVING (the type check once compared ir.In values
	// with ==, which panics on their slice).
	if _, err := planDates(t, p, pol, parser.Postgres, "SELECT day, COUNT(*) FROM visits GROUP BY day HAVING COUNT(*) IN (1, 2, 3)"); err != nil {
		t.Errorf("HAVING COUNT(*) IN (...): %v", err)
	}
	pl, err := planDates(t, p, pol, parser.Postgres, "SELECT day, COUNT(*) FROM visits GROUP BY day")
	if err != nil {
		t.Fatal(err)
	}
	if pl.Outputs[0].Type != policies.TypeDate || pl.Groups[0].Type != policies.TypeDate {
		t.Errorf("group key type %q / %q, want date", pl.Outputs[0].Type, pl.Groups[0].Type)
	}
	refused := []struct {
		d    parser.Dialect
		sql  string
		code sqlerr.Code
	}{
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE at < '2010-02-30'", sqlerr.DatetimeFieldOverflow},
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE at < 'noon'", sqlerr.InvalidDatetimeFormat},
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE date_trunc('month', open) = '2010-03-01'", sqlerr.FeatureNotSupported},
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE at - INTERVAL '1011 years' < at", sqlerr.DatetimeFieldOverflow},
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE day = at", sqlerr.UndefinedFunction},
		{parser.MySQL, "SELECT COUNT(*) FROM visits WHERE amount = DATE '2010-01-01'", sqlerr.UndefinedFunction},
		// A quoted value met by a date key in HAVING is read as a date, as
		// in WHERE; one that is no date is refused before the charge.
		{parser.Postgres, "SELECT day, COUNT(*) FROM visits GROUP BY day HAVING day > '2010-02-30'", sqlerr.DatatypeMismatch},
	}
	for _, c := range []struct {
		d   parser.Dialect
		sql string
	}{
		{parser.Postgres, "SELECT day, COUNT(*) FROM visits GROUP BY day HAVING day > '2010-01-01'"},
		{parser.MySQL, "SELECT day, COUNT(*) FROM visits GROUP BY day HAVING day IN ('2010-01-01', '2010-01-02')"},
	} {
		pl, err := planDates(t, p, pol, c.d, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		dates := 0
		ir.Walk(pl.Having, func(n ir.Expr) bool {
			if l, ok := n.(ir.Literal); ok {
				if l.Value.Kind != ir.KindDate {
					t.Errorf("%s: HAVING literal %v is not a date", c.sql, l.Value)
				}
				dates++
			}
			return true
		})
		if dates == 0 {
			t.Errorf("%s: no date literal in HAVING %s", c.sql, ir.FormatExpr(pl.Having))
		}
	}
	for _, c := range refused {
		_, err := planDates(t, p, pol, c.d, c.sql)
		if !sqlerr.HasCode(err, c.code) {
			t.Errorf("%s: %v, want %s", c.sql, err, c.code.SQLState)
		}
	}
}

// BenchmarkParsePlanDates: a BI-style date-range count with a date
// function, parsed and planned (the budget is 100 µs).
func BenchmarkParsePlanDates(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(b)
	p := planner.New(pol)
	const sql = `SELECT COUNT(*) AS "count" FROM "visits" WHERE "visits"."at" >= TIMESTAMP '2010-03-01 00:00:00' AND "visits"."at" < TIMESTAMP '2010-04-01 00:00:00' AND extract(dow FROM "visits"."at") IN (1, 2, 3, 4, 5)`
	b.ReportAllocs()
	for b.Loop() {
		stmts, err := parser.Parse(parser.Postgres, sql)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConstantTimeCalls: the calls BI tools write for a constant time
// (Superset's TO_TIMESTAMP / STR_TO_DATE with an ISO format, Grafana's
// to_timestamp(epoch) / FROM_UNIXTIME) plan exactly as the literal they
// denote — the same backend query and release — and a text that is no
// time, or a format that is not ISO, is refused before any charge.
func TestConstantTimeCalls(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	same := []struct {
		d         parser.Dialect
		call, lit string
	}{
		{parser.Postgres, "TO_TIMESTAMP('2010-03-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')", "TIMESTAMP '2010-03-01 00:00:00'"},
		{parser.Postgres, "to_timestamp('2010-03-01 12:30:00', 'YYYY-MM-DD HH24:MI:SS')", "'2010-03-01 12:30:00'"},
		{parser.Postgres, "to_date('2010-03-01', 'YYYY-MM-DD')", "DATE '2010-03-01'"},
		{parser.Postgres, "to_timestamp(1267401600)", "'2010-03-01 00:00:00'"},
		{parser.MySQL, "STR_TO_DATE('2010-03-01 00:00:00.000000', '%Y-%m-%d %H:%i:%s.%f')", "'2010-03-01 00:00:00'"},
		{parser.MySQL, "STR_TO_DATE('2010-03-01', '%Y-%m-%d')", "DATE '2010-03-01'"},
		{parser.MySQL, "FROM_UNIXTIME(1267401600)", "'2010-03-01'"},
		{parser.MySQL, "TIMESTAMP('2010-03-01 00:00:00')", "'2010-03-01'"},
	}
	for _, c := range same {
		a, err := planDates(t, p, pol, c.d, "SELECT COUNT(*) FROM visits WHERE at >= "+c.call)
		if err != nil {
			t.Errorf("%s: %v", c.call, err)
			continue
		}
		b, err := planDates(t, p, pol, c.d, "SELECT COUNT(*) FROM visits WHERE at >= "+c.lit)
		if err != nil {
			t.Fatalf("%s: %v", c.lit, err)
		}
		if a.CacheKey != b.CacheKey {
			t.Errorf("%s plans apart from %s:\n%s\n%s", c.call, c.lit, ir.FormatExpr(a.Backend.Where), ir.FormatExpr(b.Backend.Where))
		}
	}
	refused := []struct {
		d    parser.Dialect
		call string
		code sqlerr.Code
	}{
		{parser.Postgres, "TO_TIMESTAMP('2010-02-30 00:00:00', 'YYYY-MM-DD HH24:MI:SS')", sqlerr.DatetimeFieldOverflow},
		{parser.Postgres, "TO_TIMESTAMP('yesterday', 'YYYY-MM-DD HH24:MI:SS')", sqlerr.InvalidDatetimeFormat},
		{parser.Postgres, "TO_TIMESTAMP('01/03/2010', 'DD/MM/YYYY')", sqlerr.InsufficientPrivilege},
		{parser.MySQL, "STR_TO_DATE('01/03/2010', '%d/%m/%Y')", sqlerr.InsufficientPrivilege},
		{parser.MySQL, "FROM_UNIXTIME(amount)", sqlerr.InsufficientPrivilege},
	}
	for _, c := range refused {
		_, err := planDates(t, p, pol, c.d, "SELECT COUNT(*) FROM visits WHERE at >= "+c.call)
		if !sqlerr.HasCode(err, c.code) {
			t.Errorf("%s: %v, want %s", c.call, err, c.code.SQLState)
		}
	}
}

// TestAtTimeZoneUTC: t AT TIME ZONE 'UTC' (Metabase and Looker with a
// UTC report zone) is the same instant with the other type — so a month
// bucket of it has the 12 keys of the declared year, as timestamptz — and
// MySQL's CONVERT_TZ between names of UTC is the column itself (the same
// release); another zone, or a date, is refused before any charge.
func TestAtTimeZoneUTC(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := datesPolicy(t)
	p := planner.New(pol)
	pl, err := planDates(t, p, pol, parser.Postgres, "SELECT date_trunc('month', at AT TIME ZONE 'UTC') AS m, COUNT(*) FROM visits GROUP BY 1")
	if err != nil {
		t.Fatal(err)
	}
	keys := pl.Groups[0].Domain
	if len(keys) != 12 || keys[0] != ir.TimestampTZ(1262304000*1_000_000) || pl.Groups[0].Type != policies.TypeTimestampTZ {
		t.Fatalf("keys %v (%s), want the 12 month starts of 2010 as timestamptz", keys, pl.Groups[0].Type)
	}
	a, err := planDates(t, p, pol, parser.MySQL, "SELECT COUNT(*) FROM visits WHERE CONVERT_TZ(at, 'UTC', '+00:00') >= '2010-03-01'")
	if err != nil {
		t.Fatal(err)
	}
	b, err := planDates(t, p, pol, parser.MySQL, "SELECT COUNT(*) FROM visits WHERE at >= '2010-03-01'")
	if err != nil {
		t.Fatal(err)
	}
	if a.CacheKey != b.CacheKey {
		t.Errorf("CONVERT_TZ between UTC names plans apart from the column: %s", ir.FormatExpr(a.Backend.Where))
	}
	for _, c := range []struct {
		d   parser.Dialect
		sql string
	}{
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE (at AT TIME ZONE 'America/New_York') > '2010-03-01'"},
		{parser.Postgres, "SELECT COUNT(*) FROM visits WHERE (day AT TIME ZONE 'UTC') > '2010-03-01'"},
		{parser.MySQL, "SELECT COUNT(*) FROM visits WHERE CONVERT_TZ(at, 'UTC', 'Europe/Paris') > '2010-03-01'"},
	} {
		if _, err := planDates(t, p, pol, c.d, c.sql); err == nil {
			t.Errorf("%s: planned, want a refusal", c.sql)
		}
	}
}
