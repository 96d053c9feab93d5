package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A column probe with a star — SELECT * FROM people LIMIT 0, or WHERE
// 1 = 0, how drivers, pandas users and BI tools learn a table's columns —
// is answered with no row and the columns the emulated catalog lists for
// the table, in its order, at no cost: through pgx in both protocols (the
// extended one describes the statement before running it) and through
// go-sql-driver/mysql in both modes. A star that reads rows stays refused.
func TestStarProbeThroughClients(t *testing.T) {
	pgAddr, myAddr := startDemoBoth(t)
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var catalog []string
			rows, err := conn.Query(ctx, "SELECT column_name FROM information_schema.columns WHERE table_name = 'people' ORDER BY ordinal_position")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					t.Fatal(err)
				}
				catalog = append(catalog, c)
			}
			if err := rows.Err(); err != nil || len(catalog) < 2 {
				t.Fatalf("the catalog's columns of people: %v, %v", catalog, err)
			}
			before := showBudget(t, conn)
			for _, probe := range []string{"SELECT * FROM people LIMIT 0", "SELECT p.* FROM people AS p WHERE 1 = 0"} {
				rows, err := conn.Query(ctx, probe)
				if err != nil {
					t.Fatalf("%s: %v", probe, err)
				}
				var names []string
				for _, fd := range rows.FieldDescriptions() {
					names = append(names, fd.Name)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s: %v", probe, err)
				}
				if n != 0 || !reflect.DeepEqual(names, catalog) {
					t.Errorf("%s: %d rows, columns %v; want none and the catalog's %v", probe, n, names, catalog)
				}
			}
			if after := showBudget(t, conn); after != before {
				t.Errorf("budget %q after the probes, was %q", after, before)
			}
			_, err = conn.Exec(ctx, "SELECT * FROM people LIMIT 5")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42501" {
				t.Errorf("SELECT * ... LIMIT 5: %v, want refused (42501)", err)
			}
		})
	}
	for _, params := range []string{"interpolateParams=true", "interpolateParams=false"} {
		t.Run("mysql "+params, func(t *testing.T) {
			db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo?%s", myAddr, params))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var catalog []string
			rows, err := db.Query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'people' ORDER BY ORDINAL_POSITION")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					t.Fatal(err)
				}
				catalog = append(catalog, c)
			}
			rows.Close()
			if len(catalog) < 2 {
				t.Fatalf("the catalog's columns of people: %v", catalog)
			}
			rows, err = db.Query("SELECT * FROM people WHERE 1 = ?", 0)
			if err != nil {
				t.Fatal(err)
			}
			names, err := rows.Columns()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if n != 0 || !reflect.DeepEqual(names, catalog) {
				t.Errorf("%d rows, columns %v; want none and the catalog's %v", n, names, catalog)
			}
		})
	}
}
