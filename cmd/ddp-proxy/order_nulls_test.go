package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestOrderByNullsFirstLast: ORDER BY … NULLS FIRST / NULLS LAST (which
// Looker and hand-written SQL use, and which was refused) places the NULL
// group of a LEFT JOIN where PostgreSQL would, in both directions; without
// it NULL sorts as PostgreSQL's default (last ascending, first
// descending).
func TestOrderByNullsFirstLast(t *testing.T) {
	pgAddr, _ := startDemoBoth(t)
	ctx := context.Background()
	conn := connectPgxURL(t, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr), pgx.QueryExecModeCacheStatement)
	if _, err := conn.Exec(ctx, "SET ddp.epsilon = 0.05"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT c.borough, COUNT(*) FROM checkins k LEFT JOIN cells c ON k.cell = c.cell GROUP BY 1 ORDER BY 1"
	for _, c := range []struct {
		order     string
		nullFirst bool
	}{
		{"", false}, {" DESC", true},
		{" NULLS FIRST", true}, {" NULLS LAST", false},
		{" DESC NULLS FIRST", true}, {" DESC NULLS LAST", false},
		{" ASC NULLS FIRST", true},
	} {
		rows, err := conn.Query(ctx, q+c.order)
		if err != nil {
			t.Fatalf("ORDER BY 1%s: %v", c.order, err)
		}
		keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*string, error) {
			var k *string
			var n int64
			return k, r.Scan(&k, &n)
		})
		if err != nil {
			t.Fatalf("ORDER BY 1%s: %v", c.order, err)
		}
		if len(keys) < 3 {
			t.Fatalf("ORDER BY 1%s: %d rows, want the boroughs and NULL", c.order, len(keys))
		}
		at := len(keys) - 1
		if c.nullFirst {
			at = 0
		}
		if keys[at] != nil {
			t.Errorf("ORDER BY 1%s: NULL is not %s", c.order, map[bool]string{true: "first", false: "last"}[c.nullFirst])
		}
		// The other keys keep the direction asked for.
		var named []string
		for _, k := range keys {
			if k != nil {
				named = append(named, *k)
			}
		}
		for i := 1; i < len(named); i++ {
			desc := len(c.order) >= 5 && c.order[:5] == " DESC"
			if (named[i-1] > named[i]) != desc && named[i-1] != named[i] {
				t.Errorf("ORDER BY 1%s: %v out of order", c.order, named)
				break
			}
		}
	}
}
