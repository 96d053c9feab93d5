package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestCountDistinctOverTheWire asks the demo for distinct counts through
// pgx and the MySQL driver. Every one of the demo's 1500 users has at
// least one check-in (demo/social.go), so COUNT(DISTINCT user_id), the
// number of users, is 1500; at ε = 1 its noise has scale 1 (sensitivity 1
// whatever max_rows_per_unit), so an answer off by more than 40 has
// probability below e^-40. The NOTICE states the column's noise, and
// EXPLAIN shows the distinct count's sensitivity and backend SQL.
func TestCountDistinctOverTheWire(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	ctx := context.Background()
	conn, notices := connectNotices(t, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
	if _, err := conn.Exec(ctx, "SET ddp.epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	var users int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(DISTINCT user_id) AS users FROM checkins").Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users < 1500-40 || users > 1500+40 {
		t.Errorf("COUNT(DISTINCT user_id) = %d, true 1500 with noise scale 1", users)
	}
	last := notices.last()
	if !strings.Contains(last, "users: noise scale 1,") {
		t.Errorf("notice %q does not state the distinct count's noise", last)
	}

	// Grouped by a joined public column, filtered and ordered by the
	// distinct count: one row per borough of the public cells table.
	rows, err := conn.Query(ctx, `SELECT c.borough, COUNT(DISTINCT k.user_id) AS users, COUNT(DISTINCT k.venue_category) AS kinds
		FROM checkins k JOIN cells c ON k.cell = c.cell GROUP BY c.borough HAVING COUNT(DISTINCT k.user_id) > -1000 ORDER BY users DESC`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	prev := int64(1 << 62)
	for rows.Next() {
		var borough string
		var u, kinds int64
		if err := rows.Scan(&borough, &u, &kinds); err != nil {
			t.Fatal(err)
		}
		if u > prev || u > 1500+200 {
			t.Errorf("%s: %d users after %d (ORDER BY users DESC; at most 1500 users plus noise)", borough, u, prev)
		}
		prev = u
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		t.Fatalf("grouped distinct counts: %d rows, %v", n, err)
	}

	lines, err := conn.Query(ctx, "EXPLAIN SELECT COUNT(DISTINCT venue_category) FROM checkins")
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for lines.Next() {
		var line string
		if err := lines.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	// k = 20: one user adds up to 20 categories.
	if !strings.Contains(plan.String(), "sensitivity 20, ε 1") || !strings.Contains(plan.String(), "SELECT COUNT(DISTINCT") {
		t.Errorf("EXPLAIN does not name the distinct count:\n%s", plan.String())
	}

	// SUM(DISTINCT ...) stays refused, with its reason; the session goes on.
	_, err = conn.Exec(ctx, "SELECT SUM(DISTINCT cell) FROM checkins")
	if err == nil || !strings.Contains(err.Error(), "only COUNT takes DISTINCT") {
		t.Errorf("SUM(DISTINCT): %v", err)
	}

	my, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	my.SetMaxOpenConns(1) // SET applies to the one session
	if _, err := my.Exec("SET ddp.epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	if err := my.QueryRow("SELECT COUNT(DISTINCT `user_id`) FROM checkins WHERE cell >= 0").Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users < 1500-40 || users > 1500+40 {
		t.Errorf("MySQL: COUNT(DISTINCT user_id) = %d, true 1500 with noise scale 1", users)
	}
}
