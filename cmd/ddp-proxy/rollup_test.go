package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// TestRollupWithPgx: a Metabase-style ROLLUP over its "source" subquery,
// through pgx in both protocols: every cell, subtotal and total row, in
// PostgreSQL's order (NULL last), GROUPING telling them apart, and each
// subtotal the sum of its noisy cells (both keys have declared domains:
// the summed strategy).
func TestRollupWithPgx(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	q := `SELECT "source"."sex" AS "sex", "source"."income" AS "income", GROUPING("source"."sex", "source"."income") AS "g", count(*) AS "count" ` +
		`FROM (SELECT "public"."people"."sex" AS "sex", "public"."people"."income" AS "income" FROM "public"."people") AS "source" ` +
		`GROUP BY ROLLUP("source"."sex", "source"."income") ORDER BY "source"."sex" ASC, "source"."income" ASC`
	want := []string{"Female/<=50K/0", "Female/>50K/0", "Female/NULL/1", "Male/<=50K/0", "Male/>50K/0", "Male/NULL/1", "NULL/NULL/3"}
	for _, mode := range pgxModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectPgx(t, addr, mode)
			rows, err := conn.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var counts []int64
			for rows.Next() {
				var sex, income *string
				var g int64
				var n int64
				if err := rows.Scan(&sex, &income, &g, &n); err != nil {
					t.Fatal(err)
				}
				str := func(s *string) string {
					if s == nil {
						return "NULL"
					}
					return *s
				}
				got = append(got, fmt.Sprintf("%s/%s/%d", str(sex), str(income), g))
				counts = append(counts, n)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rows %q, want %q", got, want)
			}
			if counts[2] != counts[0]+counts[1] || counts[5] != counts[3]+counts[4] || counts[6] != counts[2]+counts[5] {
				t.Errorf("counts %v: subtotals are not the sums of their cells", counts)
			}
		})
	}
}

// TestRollupWithMySQLDriver: MySQL's GROUP BY ... WITH ROLLUP and
// GROUPING() through the MySQL front end.
func TestRollupWithMySQLDriver(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(),
		"SELECT sex, income, GROUPING(income) AS g, COUNT(*) AS n FROM people GROUP BY sex, income WITH ROLLUP ORDER BY sex, income")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	var counts []int64
	for rows.Next() {
		var sex, income sql.NullString
		var g, n int64
		if err := rows.Scan(&sex, &income, &g, &n); err != nil {
			t.Fatal(err)
		}
		str := func(s sql.NullString) string {
			if !s.Valid {
				return "NULL"
			}
			return s.String
		}
		got = append(got, fmt.Sprintf("%s/%s/%d", str(sex), str(income), g))
		counts = append(counts, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// MySQL sorts NULL first ascending.
	want := []string{"NULL/NULL/1", "Female/NULL/1", "Female/<=50K/0", "Female/>50K/0", "Male/NULL/1", "Male/<=50K/0", "Male/>50K/0"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if counts[1] != counts[2]+counts[3] || counts[4] != counts[5]+counts[6] || counts[0] != counts[1]+counts[4] {
		t.Errorf("counts %v: subtotals are not the sums of their cells", counts)
	}
}

// TestRollupDefaultOrderMySQL: without ORDER BY, WITH ROLLUP rows come as
// MySQL returns them: each subtotal right after its group, the total last.
func TestRollupDefaultOrderMySQL(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), "SELECT sex, income, COUNT(*) FROM people GROUP BY sex, income WITH ROLLUP")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var sex, income sql.NullString
		var n int64
		if err := rows.Scan(&sex, &income, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, sex.String+"/"+income.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"Female/<=50K", "Female/>50K", "Female/", "Male/<=50K", "Male/>50K", "Male/", "/"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}
