package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// TestGroupByExpressionsWithPgx: BI-style histogram and bucket queries
// over the demo's census.people (age bounds [17, 90]) through pgx, in the
// simple and the extended protocol. The keys are the derived ones, every
// key listed (zero groups noised), in order.
func TestGroupByExpressionsWithPgx(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	// The decades of ages 17..90, by brute force: 10 (17-19) ... 90.
	var decades []string
	for a := 17; a <= 90; a++ {
		if d := fmt.Sprint(a / 10 * 10); !slices.Contains(decades, d) {
			decades = append(decades, d)
		}
	}
	tests := []struct {
		sql  string
		want []string
		args []any
	}{
		{"SELECT floor(age / 10) * 10 AS bin, COUNT(*) AS n FROM people GROUP BY 1 ORDER BY 1", decades, nil},
		// A parameter inside the grouping expression, bound in the key and
		// the select item alike.
		{"SELECT CASE WHEN age < $1 THEN 'young' ELSE 'old' END AS band, COUNT(*) FROM people GROUP BY 1 ORDER BY 1", []string{"old", "young"}, []any{30}},
		{`SELECT width_bucket("people"."age", 20, 80, 3) AS b, count(*) FROM "public"."people" GROUP BY width_bucket("people"."age", 20, 80, 3) ORDER BY b`,
			[]string{"0", "1", "2", "3", "4"}, nil},
		{"SELECT CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'middle' ELSE 'old' END AS band, COUNT(*) FROM people GROUP BY band ORDER BY band",
			[]string{"middle", "old", "young"}, nil},
		{"SELECT age, COUNT(*) FROM people WHERE age BETWEEN 30 AND 33 GROUP BY age ORDER BY age", []string{"30", "31", "32", "33"}, nil},
		// No aggregate: the public key set, narrowed by WHERE, for free.
		{"SELECT sex FROM people WHERE sex = 'Female' GROUP BY sex", []string{"Female"}, nil},
	}
	for _, mode := range pgxModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectPgx(t, addr, mode)
			for _, tt := range tests {
				rows, err := conn.Query(ctx, tt.sql, tt.args...)
				if err != nil {
					t.Fatalf("%s: %v", tt.sql, err)
				}
				var keys []string
				total := int64(0)
				for rows.Next() {
					vals, err := rows.Values()
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, fmt.Sprint(vals[0]))
					if len(vals) > 1 {
						total += vals[1].(int64)
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s: %v", tt.sql, err)
				}
				if !slices.Equal(keys, tt.want) {
					t.Errorf("%s: keys %q, want %q", tt.sql, keys, tt.want)
				}
				// 5,000 people, none with a NULL age: the noisy counts of
				// a whole histogram add up to about that.
				if len(tt.want) > 2 && tt.want[0] != "30" && (total < 4000 || total > 6000) {
					t.Errorf("%s: counts add up to %d, want about 5000", tt.sql, total)
				}
			}
		})
	}
}

// TestGroupByExpressionsWithMySQLDriver: the same through the MySQL front
// end, where / divides reals: the bins are doubles.
func TestGroupByExpressionsWithMySQLDriver(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct {
		sql  string
		want []string
	}{
		{"SELECT FLOOR(age / 10) * 10 AS bin, COUNT(*) FROM people GROUP BY bin ORDER BY bin",
			[]string{"10", "20", "30", "40", "50", "60", "70", "80", "90"}},
		{"SELECT CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'middle' END AS band, COUNT(*) FROM people GROUP BY 1 ORDER BY 1",
			[]string{"NULL", "middle", "young"}},
		{"SELECT sex FROM people GROUP BY sex ORDER BY sex", []string{"Female", "Male"}},
	}
	for _, tt := range tests {
		rows, err := db.QueryContext(context.Background(), tt.sql)
		if err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		cols, _ := rows.Columns()
		var keys []string
		for rows.Next() {
			var k sql.NullString
			dest := []any{&k}
			if len(cols) > 1 {
				var n int64
				dest = append(dest, &n)
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			if !k.Valid {
				keys = append(keys, "NULL")
			} else {
				keys = append(keys, k.String)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		rows.Close()
		if !slices.Equal(keys, tt.want) {
			t.Errorf("%s: keys %q, want %q", tt.sql, keys, tt.want)
		}
	}
}
