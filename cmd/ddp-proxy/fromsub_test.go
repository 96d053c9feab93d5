package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestWrappedQueriesOverTheWire sends the demo the shapes BI tools wrap
// their queries in — Metabase's "source" subquery, Superset's
// virtual_table, a CTE — through pgx and go-sql-driver/mysql. Each is
// answered with the flat query's columns and from the flat query's
// release: the same noisy rows, and nothing more charged.
func TestWrappedQueriesOverTheWire(t *testing.T) {
	pgAddr, myAddr, sexes := startNamesDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := slices.Sorted(slices.Values(sexes))

	type shape struct {
		name, flat string
		wrapped    []string // PostgreSQL text; the MySQL test swaps the quotes
		cols       []string
	}
	shapes := []shape{
		{"metabase",
			`SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC`,
			[]string{
				`SELECT "source"."sex" AS "sex", count(*) AS "count" FROM (SELECT "public"."people"."sex" AS "sex", "public"."people"."age" AS "age" FROM "public"."people") AS "source" GROUP BY "source"."sex" ORDER BY "source"."sex" ASC`,
				`SELECT sex AS sex, COUNT(*) AS count FROM (SELECT * FROM people) AS virtual_table GROUP BY sex ORDER BY sex LIMIT 1000`,
				// Metabase's filter on a summarised column: a query over the aggregate.
				`SELECT "source"."sex" AS "sex", "source"."count" AS "count" FROM (SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC) "source" WHERE "source"."count" > 10 LIMIT 2000`,
			},
			[]string{"sex", "count"}},
		{"cte",
			`SELECT sex, count(*) AS n FROM people WHERE age > 30 GROUP BY sex ORDER BY sex`,
			[]string{`WITH t AS (SELECT sex, age FROM people WHERE age > 30) SELECT sex, count(*) AS n FROM t GROUP BY sex ORDER BY sex`},
			[]string{"sex", "n"}},
	}

	var pgRows = map[string][]string{}
	t.Run("pgx", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		query := func(q string, mode pgx.QueryExecMode, cols []string) []string {
			t.Helper()
			rows, err := conn.Query(ctx, q, mode)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			var names []string
			for _, f := range rows.FieldDescriptions() {
				names = append(names, f.Name)
			}
			var got, keys []string
			for rows.Next() {
				var sex string
				var n int64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatalf("%s: scan: %v", q, err)
				}
				got = append(got, fmt.Sprint(sex, "=", n))
				keys = append(keys, sex)
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%s (%v): %v", q, mode, err)
			}
			t.Logf("%s (%v): %v", q, mode, got)
			if !slices.Equal(names, cols) {
				t.Errorf("%s: columns %v, want %v", q, names, cols)
			}
			if !slices.Equal(keys, want) {
				t.Errorf("%s: groups %v, want %v", q, keys, want)
			}
			return got
		}
		for _, s := range shapes {
			fresh := showBudget(t, conn)
			flat := query(s.flat, pgx.QueryExecModeSimpleProtocol, s.cols)
			pgRows[s.name] = flat
			before := showBudget(t, conn)
			if before == fresh {
				t.Fatalf("%s: the flat query charged nothing (budget %s): the test would prove nothing", s.name, before)
			}
			for _, w := range s.wrapped {
				for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
					if got := query(w, mode, s.cols); !slices.Equal(got, flat) {
						t.Errorf("%s (%v): %v, want the flat query's release %v", w, mode, got, flat)
					}
				}
			}
			if after := showBudget(t, conn); after != before {
				t.Errorf("%s: budget %s after the wrapped queries, was %s: they must share the flat release", s.name, after, before)
			}
		}
	})

	t.Run("mysql", func(t *testing.T) {
		_, conn := mysqlConn(t, fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
		// The same text with MySQL's quotes, and the schema the MySQL
		// catalog shows the table in (the session's database).
		mysqlText := func(q string) string {
			return strings.ReplaceAll(strings.ReplaceAll(q, `"`, "`"), "`public`", "`demo`")
		}
		for _, s := range shapes {
			before := queryStrings(t, conn, "SELECT * FROM ddp.budget")
			for _, w := range append([]string{s.flat}, s.wrapped...) {
				w = mysqlText(w)
				for _, prepared := range []bool{false, true} {
					rows := queryStrings(t, conn, w)
					if prepared {
						rows = preparedStrings(t, conn, w)
					}
					if len(rows) != len(want) {
						t.Fatalf("%s: %d rows, want %d", w, len(rows), len(want))
					}
					var got []string
					for _, r := range rows {
						got = append(got, r[0]+"="+r[1])
					}
					if pg := pgRows[s.name]; pg != nil && !slices.Equal(got, pg) {
						t.Errorf("%s: %v, want the release the PostgreSQL client got %v", w, got, pg)
					}
				}
			}
			if after := queryStrings(t, conn, "SELECT * FROM ddp.budget"); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("%s: budget %v after the MySQL queries, was %v: one release across front ends", s.name, after, before)
			}
		}
	})
}

// preparedStrings runs q as a server-side prepared statement (the binary
// protocol) and returns its rows as text.
func preparedStrings(t *testing.T, conn *sql.Conn, q string) [][]string {
	t.Helper()
	st, err := conn.PrepareContext(context.Background(), q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	defer st.Close()
	rows, err := st.QueryContext(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out, err := scanText(rows, "")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}
