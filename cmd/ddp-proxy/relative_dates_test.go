package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestRelativeDateFilters: the relative date filters BI tools send —
// Metabase's "previous N days" (date_trunc('day', NOW() + INTERVAL '-N
// day') ≤ t < date_trunc('day', NOW())), CURRENT_DATE - N, MySQL's NOW() -
// INTERVAL N DAY and CURDATE() — are answered (they were refused:
// "function now is not allowed in predicates"). The time is read once per
// statement and becomes a literal of the backend query, so a filter
// truncated to the day is the same release all day: its repeat is free,
// while NOW() - INTERVAL, different at each call, is charged each time.
func TestRelativeDateFilters(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	ctx := context.Background()
	conn, notices := connectNotices(t, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
	// The demo's check-ins are from 2009 and 2010: 20,000 days (55
	// years) back from any day until the 2060s reaches them.
	metabase := `SELECT COUNT(*) FROM "checkins" WHERE "checkins"."checkin_time" >= date_trunc('day', (NOW() + INTERVAL '-20000 day')) AND "checkins"."checkin_time" < date_trunc('day', NOW())`
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		day := time.Now().UTC().Format(time.DateOnly)
		var first, second int64
		k := notices.count()
		if err := conn.QueryRow(ctx, metabase, mode).Scan(&first); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if strings.Contains(notices.since(k), "reads the current time") {
			t.Errorf("%v: a filter truncated to the day was warned about: %s", mode, notices.since(k))
		}
		if err := conn.QueryRow(ctx, metabase, mode).Scan(&second); err != nil {
			t.Fatal(err)
		}
		if time.Now().UTC().Format(time.DateOnly) != day {
			t.Skip("the day changed during the test")
		}
		if first != second || !strings.Contains(notices.last(), "answered from the earlier release at no cost") {
			t.Errorf("%v: the same day's filter gave %d then %d (notice %q): want the repeat answered from the release", mode, first, second, notices.last())
		}
		if first < 1000 {
			t.Errorf("%v: %d check-ins in the previous 20000 days: the filter should reach the demo's 2009–2010 data", mode, first)
		}
	}
	// Read to the microsecond, a new release each time: charged, and the
	// analyst is told why and how to avoid it; truncated to the hour, the
	// same within the hour.
	var n int64
	for q, step := range map[string]string{
		"SELECT COUNT(*) FROM checkins WHERE checkin_time >= NOW() - INTERVAL '20000 days'":                     "second",
		"SELECT COUNT(*) FROM checkins WHERE checkin_time >= date_trunc('hour', NOW()) - INTERVAL '20000 days'": "hour",
	} {
		k := notices.count()
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if got := notices.since(k); !strings.Contains(got, "spent") || !strings.Contains(got, "reads the current time to the "+step+", so asked again a "+step+" later") {
			t.Errorf("%s: notices %q, want a charge and the warning that the time is read to the %s", q, got, step)
		}
	}
	// The time in the select list only is post-processing: the release
	// is the same whenever it is asked, and no warning says otherwise.
	k := notices.count()
	var at string // a time constant of the select list comes back as text (README)
	if err := conn.QueryRow(ctx, "SELECT COUNT(*), now() FROM checkins WHERE checkin_time >= DATE '2010-02-01'").Scan(&n, &at); err != nil {
		t.Fatal(err)
	}
	if got := notices.since(k); !strings.Contains(got, "spent") || strings.Contains(got, "reads the current time") {
		t.Errorf("now() in the select list: notices %q, want a charge and no warning about the time", got)
	}
	if ts, err := time.Parse("2006-01-02 15:04:05.999999-07", at); err != nil || time.Since(ts) < 0 || time.Since(ts) > time.Minute {
		t.Errorf("now() in the select list is %q (%v): want the statement's time", at, err)
	}
	// CURRENT_DATE and date arithmetic of literals, in EXPLAIN: the
	// backend gets the date as an argument.
	rows, err := conn.Query(ctx, "EXPLAIN SELECT COUNT(*) FROM checkins WHERE checkin_time >= CURRENT_DATE - 7 AND checkin_time < DATE '2027-01-01' - 1", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	week := time.Now().UTC().AddDate(0, 0, -7).Format(time.DateOnly)
	if text := strings.Join(plan, "\n"); !strings.Contains(text, "args: "+week) || !strings.Contains(text, "2026-12-31") {
		t.Errorf("EXPLAIN of CURRENT_DATE - 7 and DATE '2027-01-01' - 1:\n%s\nwant the arguments %s and 2026-12-31", text, week)
	}
	if _, err := conn.Exec(ctx, "SELECT COUNT(*) FROM checkins WHERE checkin_time >= clock_timestamp()"); err == nil || !strings.Contains(err.Error(), "changes during the statement") {
		t.Errorf("clock_timestamp(): %v, want a refusal that says why", err)
	}

	// In another session time zone the day boundaries of CURRENT_DATE and
	// date_trunc('day', now()) would be that zone's, while every date is
	// computed in UTC here: refused, before any charge, until the zone is
	// UTC again.
	before := showBudget(t, conn)
	if _, err := conn.Exec(ctx, "SET TIME ZONE 'Europe/Paris'"); err != nil {
		t.Fatal(err)
	}
	var pe *pgconn.PgError
	if err := conn.QueryRow(ctx, metabase).Scan(&n); !errors.As(err, &pe) || pe.Code != "0A000" || !strings.Contains(pe.Message, "Europe/Paris") {
		t.Errorf("the Metabase filter in Europe/Paris: %v, want 0A000 naming the zone", err)
	}
	if after := showBudget(t, conn); after != before {
		t.Errorf("budget %q after the refusal, was %q", after, before)
	}
	if _, err := conn.Exec(ctx, "SET TIME ZONE 'UTC'"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, metabase).Scan(&n); err != nil {
		t.Errorf("the Metabase filter back in UTC: %v", err)
	}

	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A pool: one connection, so that SET time_zone applies to the next
	// statements.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET time_zone = '+02:00'"); err != nil {
		t.Fatal(err)
	}
	var me *gomysql.MySQLError
	if err := db.QueryRow("SELECT COUNT(*) FROM checkins WHERE checkin_time >= CURDATE() - INTERVAL 20000 DAY").Scan(&n); !errors.As(err, &me) || !strings.Contains(me.Message, "+02:00") {
		t.Errorf("MySQL CURDATE() at time_zone +02:00: %v, want a refusal naming the zone", err)
	}
	if _, err := db.Exec("SET time_zone = '+00:00'"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM checkins WHERE checkin_time >= NOW() - INTERVAL 20000 DAY",
		"SELECT COUNT(*) FROM checkins WHERE checkin_time >= date_add(CURDATE(), INTERVAL -20000 day) AND DATE(checkin_time) < CURDATE()",
	} {
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Errorf("MySQL %s: %v", q, err)
		} else if n < 1000 {
			t.Errorf("MySQL %s = %d: the filter should reach the demo's data", q, n)
		}
	}
}
