package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestTextCastKeysAreTheColumnsKeys: Tableau writes every text dimension
// as CAST("t"."col" AS TEXT). That cast is the identity, so the key is the
// column's and so are its keys: a column whose domain is a query over a
// public table (venue_category), a public table's column (borough, also
// through a LEFT JOIN, which adds NULL), each released in full without δ,
// the same keys as the bare column — and with the same aggregate the very
// same release (the backend computes the same thing), so free after the
// bare column's. They used to fall back to threshold selection (δ, and at
// small ε no row at all).
func TestTextCastKeysAreTheColumnsKeys(t *testing.T) {
	pgAddr, _ := startDemoBoth(t)
	ctx := context.Background()
	conn, notices := connectNotices(t, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
	if _, err := conn.Exec(ctx, "SET ddp.epsilon = 0.05"); err != nil {
		t.Fatal(err)
	}
	keys := func(sql string) []string {
		t.Helper()
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var k *string
			var n int64
			if err := r.Scan(&k, &n); err != nil {
				return "", err
			}
			if k == nil {
				return "NULL", nil
			}
			return *k, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		slices.Sort(got)
		return got
	}
	for i, pair := range [][2]string{
		{`SELECT venue_category, COUNT(*) FROM checkins GROUP BY venue_category`,
			`SELECT CAST("checkins"."venue_category" AS TEXT) AS "venue_category", SUM(1) AS "cnt:checkins:ok" FROM "public"."checkins" "checkins" GROUP BY 1`},
		{`SELECT c.borough, COUNT(*) FROM checkins k JOIN cells c ON k.cell = c.cell GROUP BY c.borough`,
			`SELECT CAST(c.borough AS TEXT) AS b, COUNT(*) FROM checkins k JOIN cells c ON k.cell = c.cell GROUP BY CAST(c.borough AS TEXT)`},
		{`SELECT c.borough, COUNT(*) FROM checkins k LEFT JOIN cells c ON k.cell = c.cell GROUP BY c.borough`,
			`SELECT c.borough::text AS b, COUNT(*) FROM checkins k LEFT JOIN cells c ON k.cell = c.cell GROUP BY 1`},
	} {
		want := keys(pair[0])
		notices.mu.Lock()
		notices.msgs = nil
		notices.mu.Unlock()
		got := keys(pair[1])
		if len(want) < 2 || !slices.Equal(got, want) {
			t.Errorf("%s: keys %v, want the column's %v", pair[1], got, want)
		}
		notices.mu.Lock()
		text := strings.Join(notices.msgs, "\n")
		notices.mu.Unlock()
		want1 := "spent ε = 0.05 on" // SUM(1) beside COUNT(*): another release
		if i > 0 {
			want1 = "answered from the earlier release at no cost"
		}
		if !strings.Contains(text, want1) || strings.Contains(text, "δ") {
			t.Errorf("%s: notices %q, want %q and no δ (no threshold selection)", pair[1], text, want1)
		}
	}
	// The bare column's LEFT JOIN keys include NULL (rows without a cell).
	if got := keys(`SELECT c.borough::text AS b, COUNT(*) FROM checkins k LEFT JOIN cells c ON k.cell = c.cell GROUP BY 1`); !slices.Contains(got, "NULL") {
		t.Errorf("LEFT JOIN keys %v lack NULL", got)
	}
}
