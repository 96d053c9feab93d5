package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// Metabase's shape of a LEFT JOIN from the demo's private checkins to the
// public cells, grouped by a column of cells.
const leftJoinQuery = `SELECT "Cells"."borough" AS "Cells__borough", count(*) AS "count" FROM "checkins" LEFT JOIN "cells" "Cells" ON "checkins"."cell" = "Cells"."cell" GROUP BY "Cells"."borough" ORDER BY "Cells"."borough" ASC`

// The boroughs of the demo's cells table, and NULL: the group of the
// check-ins without a cell, released (noised) whether or not it has rows.
var leftJoinKeys = []string{"Bronx", "Brooklyn", "Manhattan", "Outside NYC", "Queens", "Staten Island"}

// checkLeftJoinKeys wants every borough and NULL once, in ascending order
// with NULL where the client's database sorts it: last for PostgreSQL,
// first for MySQL.
func checkLeftJoinKeys(t *testing.T, got []string, nullsLast bool) {
	t.Helper()
	want := append([]string{"NULL"}, leftJoinKeys...)
	if nullsLast {
		want = append(slices.Clone(leftJoinKeys), "NULL")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
}

func TestLeftJoinWithPgx(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	for _, mode := range pgxModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectPgx(t, addr, mode)
			rows, err := conn.Query(ctx, leftJoinQuery)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for rows.Next() {
				var b *string
				var n int64
				if err := rows.Scan(&b, &n); err != nil {
					t.Fatal(err)
				}
				if b == nil {
					keys = append(keys, "NULL")
				} else {
					keys = append(keys, *b)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			checkLeftJoinKeys(t, keys, true)
		})
	}
}

func TestLeftJoinWithMySQLDriver(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := "SELECT `Cells`.`borough` AS `Cells__borough`, COUNT(*) AS `count` FROM `checkins` LEFT OUTER JOIN `cells` `Cells` ON `checkins`.`cell` = `Cells`.`cell` GROUP BY `Cells`.`borough` ORDER BY `Cells`.`borough` ASC"
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var b sql.NullString
		var n int64
		if err := rows.Scan(&b, &n); err != nil {
			t.Fatal(err)
		}
		if !b.Valid {
			keys = append(keys, "NULL")
		} else {
			keys = append(keys, b.String)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	checkLeftJoinKeys(t, keys, false)
}
