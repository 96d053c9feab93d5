package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// The demo's checkin_time is a TIMESTAMP within [2009-02-01, 2010-11-01):
// a date-range count with a timestamp parameter, the typed empty result
// of Metabase's probe, and an invalid date refused before any charge.
const (
	datesCountPG = `SELECT COUNT(*) FROM checkins WHERE checkin_time >= $1 AND checkin_time < $2`
	datesProbePG = `SELECT "checkins"."checkin_time" AS "checkin_time" FROM "checkins" WHERE 1 <> 1 LIMIT 0`
)

func TestDatesWithPgx(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	for _, mode := range pgxModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectPgx(t, addr, mode)
			// At the session default ε = 0.1 the counts' noise has scale
			// 200 (20 check-ins per user), which put February 2010's ~1,300
			// below 500 about once in a hundred runs; at ε = 1 (the demo's
			// max_epsilon, 2 of the budget's 10) it is 20.
			if _, err := conn.Exec(ctx, "SET ddp.epsilon = 1"); err != nil {
				t.Fatal(err)
			}
			// time.Time parameters: pgx sends them in the binary timestamp
			// format once Describe says the parameter is a timestamp, as
			// text in the simple protocol.
			from := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
			var n int64
			if err := conn.QueryRow(ctx, datesCountPG, from, from.AddDate(0, 3, 0)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n < 1000 { // about 4,000 check-ins, noise of scale 20
				t.Errorf("count %d for the first quarter of 2010", n)
			}
			// A parameter compared with a date function of the column is
			// described as a timestamp too.
			if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM checkins WHERE date_trunc('month', checkin_time) = $1 AND extract(year FROM checkin_time) = $2`,
				from.AddDate(0, 1, 0), 2010).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n < 500 { // about 1,300 check-ins in February 2010
				t.Errorf("count %d for February 2010", n)
			}
			rows, err := conn.Query(ctx, datesProbePG)
			if err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if fd := rows.FieldDescriptions(); len(fd) != 1 || fd[0].DataTypeOID != 1114 {
				t.Errorf("probe columns %+v, want one timestamp (OID 1114)", fd)
			}
			err = conn.QueryRow(ctx, "SELECT COUNT(*) FROM checkins WHERE checkin_time < '2010-02-30'").Scan(&n)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "22008" {
				t.Errorf("invalid date: %v, want 22008", err)
			}
			err = conn.QueryRow(ctx, "SELECT COUNT(*) FROM checkins WHERE checkin_time < $1", "yesterday").Scan(&n)
			if !errors.As(err, &pe) || pe.Code != "22007" {
				t.Errorf("invalid timestamp parameter: %v, want 22007", err)
			}
		})
	}
}

func TestDatesWithMySQLDriver(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	for _, parseTime := range []bool{false, true} {
		t.Run(fmt.Sprintf("parseTime=%v", parseTime), func(t *testing.T) {
			db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo?parseTime=%v", addr, parseTime))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			from := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
			// Prepared: the driver binds time.Time as a DATETIME in the
			// binary protocol.
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM checkins WHERE checkin_time >= ? AND checkin_time < ?", from, from.AddDate(0, 3, 0)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n < 1000 {
				t.Errorf("count %d for the first quarter of 2010", n)
			}
			rows, err := db.QueryContext(ctx, "SELECT `checkins`.`checkin_time` FROM `checkins` WHERE 1 <> 1 LIMIT 0")
			if err != nil {
				t.Fatal(err)
			}
			cts, err := rows.ColumnTypes()
			rows.Close()
			if err != nil || len(cts) != 1 || cts[0].DatabaseTypeName() != "DATETIME" {
				t.Errorf("probe column types %v %v, want one DATETIME", cts, err)
			}
			err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM checkins WHERE checkin_time < DATE '2010-13-45'").Scan(&n)
			var me *gomysql.MySQLError
			if !errors.As(err, &me) || string(me.SQLState[:]) != "22008" {
				t.Errorf("invalid date: %v, want 22008", err)
			}
		})
	}
}

// demoWithTimeDomain serves the demo with a declared domain of three
// check-in times, so GROUP BY checkin_time releases exactly those keys.
func demoWithTimeDomain(t *testing.T) *policies.Policy {
	t.Helper()
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	const bounds = "            bounds: ['2009-02-01 00:00:00', '2010-10-31 23:59:59']\n"
	if !strings.Contains(string(text), bounds) {
		t.Fatalf("the demo policy has no checkin_time bounds line %q", bounds)
	}
	withDomain := strings.Replace(string(text), bounds, bounds+"            domain: {values: ['2010-03-01 12:00:00', '2010-01-01 00:00:00', '2010-06-30 23:59:59']}\n", 1)
	if err := os.WriteFile(files.Policy, []byte(withDomain), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

var timeDomainKeys = []time.Time{
	time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2010, 3, 1, 12, 0, 0, 0, time.UTC),
	time.Date(2010, 6, 30, 23, 59, 59, 0, time.UTC),
}

// TestTimeGroupKeysOverTheWire: GROUP BY a timestamp column with a
// declared domain returns exactly the domain, in order, in a timestamp
// column (OID 1114 to pgx, DATETIME to go-sql-driver/mysql), scanned as
// time.Time by both drivers.
func TestTimeGroupKeysOverTheWire(t *testing.T) {
	pol := demoWithTimeDomain(t)
	ctx := context.Background()
	myAddr := serveMySQL(t, pol)
	pol2 := demoWithTimeDomain(t)
	pol2.Listen.Postgres, pol2.Listen.MySQL = "127.0.0.1:0", policies.ListenOff
	cctx, cancel := context.WithCancel(ctx)
	p, err := startProxy(cctx, pol2, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); p.wait(cctx) })

	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", p.pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT checkin_time, COUNT(*) FROM checkins GROUP BY checkin_time ORDER BY checkin_time")
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Time
	for rows.Next() {
		var at time.Time
		var n int64
		if err := rows.Scan(&at, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, at.UTC())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fd := rows.FieldDescriptions(); len(fd) != 2 || fd[0].DataTypeOID != 1114 {
		t.Errorf("columns %+v, want a timestamp key (OID 1114)", fd)
	}
	if !slices.EqualFunc(got, timeDomainKeys, time.Time.Equal) {
		t.Errorf("pgx keys %v, want %v", got, timeDomainKeys)
	}

	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo?parseTime=true", myAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mrows, err := db.QueryContext(ctx, "SELECT checkin_time, COUNT(*) FROM checkins GROUP BY checkin_time ORDER BY checkin_time")
	if err != nil {
		t.Fatal(err)
	}
	defer mrows.Close()
	cts, _ := mrows.ColumnTypes()
	if len(cts) != 2 || cts[0].DatabaseTypeName() != "DATETIME" {
		t.Errorf("MySQL key column type %v, want DATETIME", cts)
	}
	got = nil
	for mrows.Next() {
		var at time.Time
		var n int64
		if err := mrows.Scan(&at, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, at.UTC())
	}
	if !slices.EqualFunc(got, timeDomainKeys, time.Time.Equal) {
		t.Errorf("MySQL keys %v, want %v", got, timeDomainKeys)
	}
}
