package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
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
