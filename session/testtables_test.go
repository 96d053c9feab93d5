package session

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// testTable is a table a test loads on one backend: its column list per
// driver ("sqlite", "postgres", "mysql"; "{schema}" stands for the test's
// schema, e.g. to name a collation made in it), statements per driver run
// before it is created (session settings, a collation), and its rows as
// "(v1, v2, ...)" tuples.
type testTable struct {
	name    string
	columns map[string]string
	before  map[string][]string
	rows    []string
}

// loadTestTable creates tb on driver — in a new SQLite file, or in a new
// PostgreSQL schema / MySQL database named schema, dropped when the test
// ends — and opens the backend over it. It returns the backend, the DSN
// it was opened with and the schema ("" on SQLite), as
// totalityProxyPolicy takes them. On a server every statement runs on one
// connection, so session settings in before apply to the load.
func loadTestTable(t *testing.T, driver, dsn, schema string, tb testTable) (Backend, string, string) {
	t.Helper()
	ctx := context.Background()
	insert := "INSERT INTO " + tb.name + " VALUES " + strings.Join(tb.rows, ", ")
	if driver == "sqlite" {
		dsn = filepath.Join(t.TempDir(), tb.name+".db")
		db, err := sql.Open("sqlite3", "file:"+dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range append(tb.before[driver], "CREATE TABLE "+tb.name+" ("+tb.columns[driver]+")", insert) {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		be, err := sqlite.Open(ctx, dsn, backends.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return be, dsn, ""
	}
	create, drop := "CREATE SCHEMA "+schema, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"
	if driver == "mysql" {
		create, drop = "CREATE DATABASE "+schema, "DROP DATABASE IF EXISTS "+schema
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Exec(drop); raw.Close() })
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	withSchema := func(s string) string { return strings.ReplaceAll(s, "{schema}", schema) }
	setup := []string{drop, create}
	for _, s := range tb.before[driver] {
		setup = append(setup, withSchema(s))
	}
	setup = append(setup, "CREATE TABLE "+schema+"."+tb.name+" ("+withSchema(tb.columns[driver])+")",
		strings.Replace(insert, "INTO "+tb.name, "INTO "+schema+"."+tb.name, 1))
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %s: %v", driver, s, err)
		}
	}
	var be Backend
	if driver == "mysql" {
		be, err = mysql.Open(ctx, dsn, backends.Options{})
	} else {
		be, err = postgres.Open(ctx, dsn, backends.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return be, dsn, schema
}

// testBackend is a backend the session's multi-backend tests load their
// tables on: driver and DSN ("" for SQLite, which needs none).
type testBackend struct{ driver, dsn string }

// testBackends lists SQLite and every server whose DSN is set, in that
// order.
func testBackends() []testBackend {
	out := []testBackend{{"sqlite", ""}}
	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		out = append(out, testBackend{"postgres", dsn})
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
		out = append(out, testBackend{"mysql", dsn})
	}
	return out
}

// hostileOutcomesEqual runs every probe on SQLite and on the servers whose
// DSNs are set, first over the ordinary data (variant 0), then over each
// hostile variant (one person's value replaced, variants(driver) of them):
// the outcome — the SQLSTATE and message of a refusal or failure, or the
// released keys — must be the same. Keys are read from results with more
// than one column (only from GROUP BY queries when groupedOnly).
func hostileOutcomesEqual(t *testing.T, probes []probe, variants func(driver string) int,
	fixture func(t *testing.T, driver, dsn string, variant int) *totalityFixture, groupedOnly bool) {
	for _, tb := range testBackends() {
		driver, dsn := tb.driver, tb.dsn
		t.Run(driver, func(t *testing.T) {
			type outcome struct{ code, keys string }
			run := func(f *totalityFixture, pr probe) outcome {
				res, err, _ := f.run(t, pr)
				if err != nil {
					if e := sqlerr.As(err); e != nil {
						return outcome{code: e.Code.SQLState + " " + e.Message}
					}
					return outcome{code: "?? " + err.Error()}
				}
				var keys []string
				if len(res.Columns) > 1 && (!groupedOnly || strings.Contains(pr.sql, "GROUP BY")) {
					for _, r := range res.Rows {
						keys = append(keys, r[0].SQL())
					}
				}
				return outcome{keys: strings.Join(keys, ",")}
			}
			base := fixture(t, driver, dsn, 0)
			want := make([]outcome, len(probes))
			answered := 0
			for i, pr := range probes {
				want[i] = run(base, pr)
				if want[i].code == "" {
					answered++
				}
			}
			t.Logf("%s: %d of %d probes answered", driver, answered, len(probes))
			for v := 1; v <= variants(driver); v++ {
				f := fixture(t, driver, dsn, v)
				for i, pr := range probes {
					if got := run(f, pr); got != want[i] {
						t.Errorf("%s hostile %d: %s: %+v, ordinary data: %+v", driver, v, pr.sql, got, want[i])
					}
				}
			}
		})
	}
}
