package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// boundWhere parses "SELECT COUNT(*) FROM t WHERE d >= <expr>" in dialect
// d, binds its time at now and returns the right side of the comparison
// (constants without the current time are folded by the parser).
func boundWhere(t *testing.T, d parser.Dialect, expr string, now time.Time) ir.Expr {
	t.Helper()
	stmts, err := parser.Parse(d, "SELECT COUNT(*) FROM t WHERE d >= "+expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	if stmts[0].Query == nil {
		t.Fatalf("%s: not an aggregate: %s", expr, stmts[0].NotAggregate)
	}
	st, err := BindTime(&stmts[0], now, d == parser.MySQL)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return st.Query.Where.(ir.Compare).R
}

// TestBindTimeValues: each spelling of the current time reads the given
// instant in UTC, with its type and precision, and the cached statement
// is left as parsed.
func TestBindTimeValues(t *testing.T) {
	now := time.Date(2026, 11, 29, 23, 59, 58, 123456789, time.FixedZone("CET", 3600))
	us := now.UTC().Truncate(time.Microsecond)
	for _, tc := range []struct {
		d    parser.Dialect
		expr string
		want ir.Value
	}{
		{parser.Postgres, "now()", ir.TimeValue(ir.KindTimestampTZ, us)},
		{parser.Postgres, "pg_catalog.now()", ir.TimeValue(ir.KindTimestampTZ, us)},
		{parser.Postgres, "CURRENT_TIMESTAMP", ir.TimeValue(ir.KindTimestampTZ, us)},
		{parser.Postgres, "CURRENT_TIMESTAMP(0)", ir.TimeValue(ir.KindTimestampTZ, us.Truncate(time.Second))},
		{parser.Postgres, "transaction_timestamp()", ir.TimeValue(ir.KindTimestampTZ, us)},
		{parser.Postgres, "LOCALTIMESTAMP", ir.TimeValue(ir.KindTimestamp, us)},
		{parser.Postgres, "CURRENT_DATE", ir.Date(20786)},
		{parser.MySQL, "NOW()", ir.TimeValue(ir.KindTimestamp, us.Truncate(time.Second))},
		{parser.MySQL, "NOW(3)", ir.TimeValue(ir.KindTimestamp, us.Truncate(time.Millisecond))},
		{parser.MySQL, "CURRENT_TIMESTAMP", ir.TimeValue(ir.KindTimestamp, us.Truncate(time.Second))},
		{parser.MySQL, "UTC_TIMESTAMP()", ir.TimeValue(ir.KindTimestamp, us.Truncate(time.Second))},
		{parser.MySQL, "CURDATE()", ir.Date(20786)},
		{parser.MySQL, "CURRENT_DATE", ir.Date(20786)},
	} {
		got := boundWhere(t, tc.d, tc.expr, now)
		if l, ok := got.(ir.Literal); !ok || l.Value != tc.want {
			t.Errorf("%v %s = %#v, want %s %s", tc.d, tc.expr, got, tc.want.Kind, tc.want.Text())
		}
	}
	if ir.Date(20786).Text() != "2026-11-29" {
		t.Fatalf("day 20786 is %s", ir.Date(20786).Text())
	}
	// A statement without the current time is not copied.
	stmts, _ := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE d >= DATE '2024-01-01'")
	if st, _ := BindTime(&stmts[0], now, false); st != &stmts[0] {
		t.Error("a statement without the current time was copied")
	}
	for _, refused := range []string{"clock_timestamp()", "CURRENT_TIME", "now(1)"} {
		stmts, _ := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE d >= "+refused)
		if stmts[0].Query != nil {
			t.Errorf("%s was accepted", refused)
		}
	}
}

// TestBindTimeFoldsLikePostgres compares the folded relative dates
// Metabase, Superset and analysts write — t ± INTERVAL, date_trunc of
// it, CURRENT_DATE ± days, casts to date — with PostgreSQL computing the
// same expressions, the current time written as a literal, at random
// instants (month ends and leap days among them). The session's and the
// backend's time zone is UTC.
func TestBindTimeFoldsLikePostgres(t *testing.T) {
	dsn := pgtest.DSN(t, "the relative date comparison with PostgreSQL")
	conn := pgtest.Connect(t, dsn)
	ctx := context.Background()
	pgtest.Exec(t, conn, "SET TimeZone = 'UTC'")
	rng := rand.New(rand.NewPCG(11, 29))
	units := []string{"year", "month", "week", "day", "hour", "minute", "second"} // PostgreSQL has no interval of quarters
	forms := []string{
		"now() %[1]s INTERVAL '%[2]d %[3]s'",
		"date_trunc('%[4]s', now() %[1]s INTERVAL '%[2]d %[3]s')",
		"date_trunc('%[4]s', now())",
		"CURRENT_DATE %[1]s %[2]d",
		"CURRENT_DATE %[1]s INTERVAL '%[2]d %[3]s'",
		"CAST(now() %[1]s INTERVAL '%[2]d %[3]s' AS date)",
		"(now() %[1]s INTERVAL '%[2]d %[3]s')::date",
		"date_trunc('%[4]s', CURRENT_DATE %[1]s %[2]d)",
		"LOCALTIMESTAMP %[1]s INTERVAL '%[2]d %[3]s'",
		"(now() AT TIME ZONE 'UTC') %[1]s INTERVAL '%[2]d %[3]s'",
		// Looker's bounds: a FROM-less scalar subquery, a concatenated interval.
		"((SELECT (DATE_TRUNC('%[4]s', CURRENT_TIMESTAMP) + (%[5]s%[2]d || ' %[3]s')::INTERVAL)))",
		"date_trunc('%[4]s', (now() AT TIME ZONE 'UTC') %[1]s INTERVAL '%[2]d %[3]s') AT TIME ZONE 'UTC'",
		"date_trunc('%[4]s', TIMESTAMP '2024-02-29 13:14:15' %[1]s INTERVAL '%[2]d %[3]s') %[1]s INTERVAL '%[2]d day'",
	}
	checked := 0
	for i := 0; i < 400; i++ {
		// Instants from 1990 to 2040, a quarter of them at a month's
		// last day or a leap day.
		now := time.Unix(631152000+rng.Int64N(1_600_000_000), rng.Int64N(1e9)).UTC()
		if rng.IntN(4) == 0 {
			now = time.Date(1990+rng.IntN(50), time.Month(1+rng.IntN(12)+1), 0, rng.IntN(24), rng.IntN(60), 0, 0, time.UTC)
		}
		sign := []string{"+", "-"}[rng.IntN(2)]
		n := rng.IntN(400)
		unit := units[rng.IntN(len(units))]
		trunc := []string{"year", "quarter", "month", "week", "day", "hour", "minute"}[rng.IntN(7)]
		form := forms[rng.IntN(len(forms))]
		expr := fmt.Sprintf(form, sign, n, unit, trunc, map[string]string{"+": "", "-": "-"}[sign])
		got := boundWhere(t, parser.Postgres, expr, now)
		lit, folded := got.(ir.Literal)
		if !folded {
			// Not folded (a time unit on a date): the checker decides.
			if !strings.Contains(expr, "CURRENT_DATE") || unit != "hour" && unit != "minute" && unit != "second" {
				t.Errorf("%s at %s was not folded: %#v", expr, now, got)
			}
			continue
		}
		ts := "TIMESTAMPTZ '" + now.Truncate(time.Microsecond).Format("2006-01-02 15:04:05.999999Z07:00") + "'"
		oracle := strings.NewReplacer("now()", ts, "CURRENT_TIMESTAMP", ts, "LOCALTIMESTAMP", "("+ts+")::timestamp", "CURRENT_DATE", "("+ts+")::date").Replace(expr)
		var want int64
		if err := conn.QueryRow(ctx, "SELECT (extract(epoch FROM ("+oracle+")::timestamp) * 1000000)::bigint").Scan(&want); err != nil {
			t.Fatalf("%s: %v", oracle, err)
		}
		gotUS := lit.Value.Int
		if lit.Value.Kind == ir.KindDate {
			gotUS *= ir.MicrosPerDay
		}
		if gotUS != want {
			t.Errorf("%s at %s: the proxy folds it to %s, PostgreSQL says %s", expr, now, lit.Value.Text(), ir.Timestamp(want).Text())
		}
		checked++
	}
	if checked < 250 {
		t.Errorf("only %d expressions compared", checked)
	}
}
