package main

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The brief's query over the demo's census: every declared sex, a rounded
// noisy average age, COUNT(1) and a constant.
const postQuery = "SELECT sex, ROUND(AVG(age), 2) AS a, COUNT(1) AS n, 3 AS three FROM people GROUP BY sex"

// Metabase's table-permission probe.
const probeQuery = `SELECT TRUE AS "_" FROM people WHERE 1 <> 1 LIMIT 0`

type postRow struct {
	sex   string
	a     float64
	n     int64
	three int64
}

// TestPostProcessingWithPgx runs select-list expressions and the Metabase
// probe through pgx (both query protocols) on the demo.
func TestPostProcessingWithPgx(t *testing.T) {
	addr, _ := startDemo(t)
	ctx := context.Background()
	var first []postRow
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", addr))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			var mu sync.Mutex
			var notices []string
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
				mu.Lock()
				notices = append(notices, n.Message)
				mu.Unlock()
			}
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)

			rows, err := conn.Query(ctx, postQuery)
			if err != nil {
				t.Fatal(err)
			}
			// Row description: text, float8, int8, int8 (PostgreSQL OIDs).
			var oids []uint32
			var names []string
			for _, fd := range rows.FieldDescriptions() {
				oids = append(oids, fd.DataTypeOID)
				names = append(names, fd.Name)
			}
			var got []postRow
			for rows.Next() {
				var r postRow
				if err := rows.Scan(&r.sex, &r.a, &r.n, &r.three); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if want := []uint32{25, 701, 20, 20}; !reflect.DeepEqual(oids, want) {
				t.Errorf("column OIDs %v, want %v", oids, want)
			}
			if want := []string{"sex", "a", "n", "three"}; !reflect.DeepEqual(names, want) {
				t.Errorf("column names %v, want %v", names, want)
			}
			checkPostRows(t, got)
			if first == nil {
				first = got
			} else if !reflect.DeepEqual(got, first) {
				t.Errorf("repeat gave %v, first %v: the release cache must answer it", got, first)
			}

			before := showBudget(t, conn)
			rows, err = conn.Query(ctx, probeQuery)
			if err != nil {
				t.Fatal(err)
			}
			fds := rows.FieldDescriptions()
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("probe: %v", err)
			}
			if n != 0 || len(fds) != 1 || fds[0].Name != "_" || fds[0].DataTypeOID != 16 {
				t.Errorf("probe: %d rows, fields %+v; want none, one boolean column _", n, fds)
			}
			if after := showBudget(t, conn); after != before {
				t.Errorf("budget %q after the probe, was %q", after, before)
			}
			mu.Lock()
			if len(notices) == 0 || !strings.Contains(notices[len(notices)-1], "has no row whatever the data") {
				t.Errorf("notices %q: want the probe's free answer stated", notices)
			}
			mu.Unlock()
		})
	}
}

func showBudget(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SHOW ddp.budget", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var s string
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprint(v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

func checkPostRows(t *testing.T, got []postRow) {
	t.Helper()
	if len(got) != 2 || got[0].sex != "Female" || got[1].sex != "Male" {
		t.Fatalf("rows %v: want Female and Male", got)
	}
	for _, r := range got {
		if r.a < 17 || r.a > 90 {
			t.Errorf("%s: a = %v outside the age bounds [17, 90]", r.sex, r.a)
		}
		if d := r.a*100 - float64(int64(r.a*100+0.5)); d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: a = %v has more than two decimals", r.sex, r.a)
		}
		if r.three != 3 || r.n < 1000 {
			t.Errorf("%s: n = %d, three = %d", r.sex, r.n, r.three)
		}
	}
}

// TestPostProcessingWithMySQLDriver: the same through go-sql-driver/mysql.
func TestPostProcessingWithMySQLDriver(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var first []postRow
	for i := 0; i < 2; i++ {
		rows, err := db.QueryContext(ctx, postQuery)
		if err != nil {
			t.Fatal(err)
		}
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, c := range cts {
			types = append(types, c.DatabaseTypeName())
		}
		if want := []string{"VARCHAR", "DOUBLE", "BIGINT", "BIGINT"}; !reflect.DeepEqual(types, want) {
			t.Errorf("column types %v, want %v", types, want)
		}
		var got []postRow
		for rows.Next() {
			var r postRow
			if err := rows.Scan(&r.sex, &r.a, &r.n, &r.three); err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		checkPostRows(t, got)
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Errorf("repeat gave %v, first %v", got, first)
		}
	}
	rows, err := db.QueryContext(ctx, "SELECT TRUE AS `_` FROM people WHERE 1 <> 1 LIMIT 0")
	if err != nil {
		t.Fatal(err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 0 || len(cts) != 1 || cts[0].Name() != "_" || cts[0].DatabaseTypeName() != "TINYINT" {
		t.Errorf("probe: %d rows, %d columns; want none, one TINYINT (boolean) column _", n, len(cts))
	}
}
