package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// windowQuery is the BI shapes of issue 11 over one grouped result: share
// of total, a running total and a top-N rank, computed by the proxy after
// the noise, plus a CASE label and a cast over the noisy values.
const windowQuery = `SELECT workclass, COUNT(*) AS n,
	COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () AS share,
	SUM(COUNT(*)) OVER (ORDER BY workclass) AS running,
	RANK() OVER (ORDER BY COUNT(*) DESC) AS r,
	CASE WHEN COUNT(*) > 1000 THEN 'big' ELSE 'small' END AS size,
	CAST(AVG(age) AS %s) AS age
	FROM people GROUP BY workclass ORDER BY workclass`

type windowRow struct {
	key              string
	n, running, rank int64
	ag               *int64 // NULL when the noisy count is not positive
	share            float64
	size             string
}

// checkWindowRows checks the window columns against the noisy counts the
// same answer carries, by their definitions.
func checkWindowRows(t *testing.T, rows []windowRow) {
	t.Helper()
	if len(rows) != 8 {
		t.Fatalf("%d rows, want the 8 declared workclasses: %+v", len(rows), rows)
	}
	var total, run int64
	for _, r := range rows {
		total += r.n
	}
	var shares float64
	for i, r := range rows {
		if i > 0 && rows[i-1].key >= r.key {
			t.Errorf("not ordered by workclass: %+v", rows)
		}
		run += r.n
		if r.running != run {
			t.Errorf("%s: running %d, want %d", r.key, r.running, run)
		}
		if want := float64(r.n) * 100 / float64(total); math.Abs(r.share-want) > 1e-9 {
			t.Errorf("%s: share %v, want %v", r.key, r.share, want)
		}
		shares += r.share
		rank := int64(1)
		for _, o := range rows {
			if o.n > r.n {
				rank++
			}
		}
		if r.rank != rank {
			t.Errorf("%s: rank %d, want %d", r.key, r.rank, rank)
		}
		if want := map[bool]string{true: "big", false: "small"}[r.n > 1000]; r.size != want {
			t.Errorf("%s: size %q with n %d", r.key, r.size, r.n)
		}
		if r.ag != nil && (*r.ag < 17 || *r.ag > 90) {
			t.Errorf("%s: age %d outside the declared bounds", r.key, *r.ag)
		}
	}
	if math.Abs(shares-100) > 1e-9 {
		t.Errorf("shares sum to %v", shares)
	}
}

func TestWindowsWithPgx(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	for _, mode := range pgxModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectPgx(t, addr, mode)
			rows, err := conn.Query(ctx, fmt.Sprintf(windowQuery, "bigint"))
			if err != nil {
				t.Fatal(err)
			}
			var got []windowRow
			for rows.Next() {
				var r windowRow
				if err := rows.Scan(&r.key, &r.n, &r.share, &r.running, &r.rank, &r.size, &r.ag); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			checkWindowRows(t, got)
		})
	}
}

func TestWindowsWithMySQLDriver(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), fmt.Sprintf(windowQuery, "SIGNED"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []windowRow
	for rows.Next() {
		var r windowRow
		var ag sql.NullInt64
		if err := rows.Scan(&r.key, &r.n, &r.share, &r.running, &r.rank, &r.size, &ag); err != nil {
			t.Fatal(err)
		}
		if ag.Valid {
			r.ag = &ag.Int64
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	checkWindowRows(t, got)
}

// TestIdentifierCaseOverTheWire: PostgreSQL clients' quoted names keep
// their case ("PEOPLE" is not people: 42P01 with the name that exists),
// unquoted ones fold; MySQL clients' names are case-insensitive on the
// demo (embedded SQLite: lower_case_table_names = 1).
func TestIdentifierCaseOverTheWire(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM PEOPLE WHERE AGE > 30`).Scan(&n); err != nil {
		t.Errorf("unquoted upper case: %v", err)
	}
	for q, want := range map[string]string{
		`SELECT COUNT(*) FROM "PEOPLE"`:               `did you mean "people"?`,
		`SELECT COUNT(*) FROM people WHERE "Age" > 3`: `did you mean "age"?`,
	} {
		err := conn.QueryRow(ctx, q).Scan(&n)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "42P01" && pe.Code != "42703") || !strings.Contains(pe.Hint, want) {
			t.Errorf("%s: %v, want 42P01/42703 with hint %q", q, err, want)
		}
	}
	maddr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", maddr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("SELECT COUNT(*) FROM PEOPLE WHERE `Age` > 30").Scan(&n); err != nil {
		t.Errorf("MySQL names in another case: %v", err)
	}
}
