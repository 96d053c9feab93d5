package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// TestNumericCastsFromClients: the ways psql users and generated SQL
// round a noisy figure to decimals — ROUND(AVG(x)::numeric, 1) (PostgreSQL
// has no round(double precision, int)), CAST(… AS numeric(4,2)), MySQL's
// CAST(… AS DECIMAL(4,1)) — are answered, each value with at most its
// scale's decimals and within its precision; a count cast to numeric
// divides without truncating; a row-level ::numeric inside SUM is a
// double there. They used to be refused ("only casts to bigint, …").
func TestNumericCastsFromClients(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// decimals reports whether v has at most d digits after the point.
	decimals := func(v float64, d int) bool {
		p := math.Pow(10, float64(d))
		return math.Abs(v*p-math.Round(v*p)) < 1e-6
	}
	rows, err := conn.Query(ctx, `SELECT sex, ROUND(AVG(age)::numeric, 1) AS a, CAST(AVG(age) AS numeric(4,2)) AS b,
		COUNT(*) AS n, COUNT(*)::numeric / 2 AS half, AVG(age)::numeric(2,1) AS sat, SUM(age::numeric) AS s
		FROM people GROUP BY sex ORDER BY sex`)
	if err != nil {
		t.Fatal(err)
	}
	var oids []uint32
	for _, fd := range rows.FieldDescriptions() {
		oids = append(oids, fd.DataTypeOID)
	}
	groups := 0
	for rows.Next() {
		var sex string
		var a, b, half, sat, s float64
		var n int64
		if err := rows.Scan(&sex, &a, &b, &n, &half, &sat, &s); err != nil {
			t.Fatal(err)
		}
		groups++
		if !decimals(a, 1) || a < 17 || a > 90 {
			t.Errorf("%s: ROUND(AVG(age)::numeric, 1) = %v: want one decimal, within the ages", sex, a)
		}
		if !decimals(b, 2) || math.Abs(a-b) > 0.051 {
			t.Errorf("%s: CAST(AVG(age) AS numeric(4,2)) = %v beside %v: want two decimals, the same average", sex, b, a)
		}
		if half != float64(n)/2 {
			t.Errorf("%s: COUNT(*)::numeric / 2 = %v with COUNT(*) = %d: want %v (no integer division)", sex, half, n, float64(n)/2)
		}
		// numeric(2,1) holds at most 9.9: an average age saturates there
		// (PostgreSQL would fail the answer after the charge).
		if sat != 9.9 {
			t.Errorf("%s: AVG(age)::numeric(2,1) = %v, want 9.9 (saturated)", sex, sat)
		}
		if s < a*float64(n)/2 || s > a*float64(n)*2 {
			t.Errorf("%s: SUM(age::numeric) = %v, far from AVG × COUNT = %v", sex, s, a*float64(n))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if groups != 2 {
		t.Errorf("%d groups, want 2", groups)
	}
	if want := []uint32{25, 701, 701, 20, 701, 701, 701}; !reflect.DeepEqual(oids, want) {
		t.Errorf("column OIDs %v, want %v (decimals are computed and sent as double precision)", oids, want)
	}
	// Rounding each row is refused before anything is charged.
	before := showBudget(t, conn)
	if _, err := conn.Exec(ctx, "SELECT SUM(age::numeric(5,1)) FROM people"); err == nil {
		t.Error("SUM(age::numeric(5,1)) was answered: it rounds each row")
	}
	if after := showBudget(t, conn); after != before {
		t.Errorf("budget %q after a refusal, was %q", after, before)
	}

	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var m, whole float64
	if err := db.QueryRow("SELECT CAST(AVG(age) AS DECIMAL(4,1)), CAST(AVG(age) AS DECIMAL) FROM people").Scan(&m, &whole); err != nil {
		t.Fatal(err)
	}
	if !decimals(m, 1) || m < 17 || m > 90 || whole != math.Round(whole) || math.Abs(whole-m) > 0.51 {
		t.Errorf("MySQL: CAST(AVG(age) AS DECIMAL(4,1)) = %v, AS DECIMAL = %v: want one decimal and a whole number", m, whole)
	}
}
