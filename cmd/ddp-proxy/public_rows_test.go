package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Row-level reads of public tables through a front end whose dialect is
// not the backend's: the proxy parses them with the client's grammar and
// renders them in the backend's (planner/rows.go). The truth is the same
// query run on the backend directly.

// allStrings runs q and returns its rows as text ("NULL" for NULL).
func allStrings(t *testing.T, db *sql.DB, q string, args ...any) ([]string, [][]string) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return cols, out
}

// wantRefused checks that q fails with the PostgreSQL SQLSTATE or the
// MySQL errno of code (pg or mysql front end).
func wantRefused(t *testing.T, db *sql.DB, q, pgState string, myErrno uint16) {
	t.Helper()
	_, err := db.QueryContext(context.Background(), q)
	if err == nil {
		t.Fatalf("%s: no error, want a refusal", q)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code != pgState {
			t.Fatalf("%s: SQLSTATE %s (%s), want %s", q, pe.Code, pe.Message, pgState)
		}
		return
	}
	wantMySQLError(t, err, myErrno, map[uint16]string{1235: "42000", 1054: "42S22", 1142: "42000"}[myErrno])
}

func floatRows(t *testing.T, rows [][]string) [][]string {
	t.Helper()
	// Reals may print differently (1.5 vs 1.5e+00) between drivers:
	// normalise each cell that parses as a number.
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil && !strings.ContainsAny(v, "-:") {
				v = fmt.Sprint(f)
			}
			out[i][j] = v
		}
	}
	return out
}

func TestPublicRowsDemo(t *testing.T) {
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(files.Policy)
	if err != nil {
		t.Fatal(err)
	}
	// Hide one column of cells: it must stay hidden on every path.
	cells := pol.Datasets["social"].Tables["cells"]
	if cells == nil || !cells.Public {
		t.Fatal("demo policy: cells is not a public table of dataset social")
	}
	delete(cells.Columns, "center_lon")
	cells.ColumnNames = []string{"cell", "borough", "center_lat"}
	pol.Listen.Postgres, pol.Listen.MySQL = "127.0.0.1:0", "127.0.0.1:0"
	p, _ := servePolicy(t, pol)

	truth, err := sql.Open("sqlite3", "file:"+files.Database+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer truth.Close()
	pgdb, err := sql.Open("pgx", fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", p.pgAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer pgdb.Close()
	mydb, err := sql.Open("mysql", "analyst:anything@tcp("+p.myAddr+")/demo")
	if err != nil {
		t.Fatal(err)
	}
	defer mydb.Close()

	_, all := allStrings(t, truth, `SELECT cell, borough, center_lat FROM cells`)
	if len(all) < 10 {
		t.Fatalf("demo cells has %d rows", len(all))
	}
	_, where := allStrings(t, truth, `SELECT cell, borough FROM cells WHERE borough = 'Manhattan' AND cell > 3 ORDER BY cell DESC LIMIT 5 OFFSET 1`)
	if len(where) != 5 {
		t.Fatalf("truth: %d rows for the WHERE query", len(where))
	}
	_, join := allStrings(t, truth, `SELECT a.cell, b.borough FROM cells a JOIN cells b ON a.cell = b.cell WHERE a.cell < 4 ORDER BY a.cell`)

	for _, fe := range []struct {
		name string
		db   *sql.DB
		q    func(string) string // the client's quoting
	}{
		{"postgres", pgdb, func(s string) string { return s }},
		{"mysql", mydb, func(s string) string { return strings.ReplaceAll(s, `"`, "`") }},
	} {
		t.Run(fe.name, func(t *testing.T) {
			cols, got := allStrings(t, fe.db, fe.q(`SELECT * FROM cells`))
			if want := []string{"cell", "borough", "center_lat"}; !reflect.DeepEqual(cols, want) {
				t.Errorf("SELECT * columns %v, want %v (center_lon is hidden)", cols, want)
			}
			if !reflect.DeepEqual(floatRows(t, got), floatRows(t, all)) {
				t.Errorf("SELECT * FROM cells: %d rows, want %d; first %v want %v", len(got), len(all), first(got), first(all))
			}
			_, got = allStrings(t, fe.db, fe.q(`SELECT "cell", borough AS b FROM cells WHERE borough = 'Manhattan' AND cell > 3 ORDER BY 1 DESC LIMIT 5 OFFSET 1`))
			if !reflect.DeepEqual(got, where) {
				t.Errorf("WHERE/ORDER BY/LIMIT: %v, want %v", got, where)
			}
			_, got = allStrings(t, fe.db, fe.q(`SELECT a.cell, b.borough FROM cells a JOIN cells AS b ON a.cell = b.cell WHERE a.cell < 4 ORDER BY a.cell`))
			if !reflect.DeepEqual(got, join) || len(join) == 0 {
				t.Errorf("join: %v, want %v", got, join)
			}
			// A private table joined without aggregation: the private path refuses it.
			wantRefused(t, fe.db, `SELECT * FROM checkins k JOIN cells c ON k.cell = c.cell`, "42501", 1142)
			// The hidden column does not exist for the client.
			wantRefused(t, fe.db, `SELECT center_lon FROM cells`, "42703", 1054)
			wantRefused(t, fe.db, `SELECT cell FROM cells WHERE center_lon > 0`, "42703", 1054)
			// A function the renderer does not translate is named.
			wantRefused(t, fe.db, `SELECT md5(borough) FROM cells`, "0A000", 1235)
		})
	}
}

func first(rows [][]string) []string {
	if len(rows) == 0 {
		return nil
	}
	return rows[0]
}
