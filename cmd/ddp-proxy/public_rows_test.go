package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ddp-proxy/ddp-proxy/internal/mysqltest"
	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
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
	out, err := scanText(rows, "NULL")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
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
	files, pol := demoPolicy(t)
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
			// Expressions are typed from the policy (SQLite reports no type
			// for them), and parameters are bound.
			rows, err := fe.db.QueryContext(context.Background(), fe.q(`SELECT cell + 1 AS c1, center_lat * 2 AS d, cell > 3 AS b FROM cells WHERE cell = `)+map[bool]string{true: "$1", false: "?"}[fe.name == "postgres"], 5)
			if err != nil {
				t.Fatal(err)
			}
			cts, _ := rows.ColumnTypes()
			var types []string
			for _, c := range cts {
				types = append(types, c.DatabaseTypeName())
			}
			want := map[string][]string{"postgres": {"INT8", "FLOAT8", "BOOL"}, "mysql": {"BIGINT", "DOUBLE", "TINYINT"}}[fe.name]
			if !reflect.DeepEqual(types, want) {
				t.Errorf("expression column types %v, want %v", types, want)
			}
			n := 0
			for rows.Next() {
				var c1 int64
				var d float64
				var b bool
				if err := rows.Scan(&c1, &d, &b); err != nil {
					t.Fatal(err)
				}
				if c1 != 6 || !b {
					t.Errorf("cell 5: c1 %d b %v, want 6 true", c1, b)
				}
				n++
			}
			rows.Close()
			if n != 1 {
				t.Errorf("cell = 5: %d rows, want 1", n)
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

// publicRowsPolicy serves two public tables (one with a hidden column) and
// a private one on a server backend, through the front end of the other
// dialect.
func publicRowsPolicy(t *testing.T, driver, dsn, front, pub, pub2, priv string) *proxy {
	t.Helper()
	t.Setenv("DDP_TEST_PUBROWS_PW", "pub-pw")
	listen := `{postgres: "127.0.0.1:0", mysql: "off", auth: password}`
	if front == "mysql" {
		listen = `{postgres: "off", mysql: "127.0.0.1:0", auth: password}`
	}
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: %s, dsn: %q}
listen: %s
ledger: {path: ledger.db}
users:
  - name: analyst
    password_env: DDP_TEST_PUBROWS_PW
    budgets: {d: {epsilon: 1}}
datasets:
  d:
    tables:
      %s:
        unit: id
        columns:
          v: {type: integer, bounds: [0, 100]}
      %s:
        public: true
        key: id
        columns:
          id: {type: integer}
          name: {type: text}
          score: {type: real}
      %s:
        public: true
        key: id
`, driver, dsn, listen, priv, pub, pub2)))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := servePolicy(t, pol)
	return p
}

// publicRowsFixture creates the three tables on db (either dialect's
// SQL) and drops them when the test ends.
func publicRowsFixture(t *testing.T, db *sql.DB) (pub, pub2, priv string) {
	t.Helper()
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	pub, pub2, priv = "pubr_"+suffix, "pubr2_"+suffix, "privr_"+suffix
	for _, s := range []string{
		"CREATE TABLE " + pub + " (id INTEGER, name VARCHAR(20), score DOUBLE PRECISION, secret VARCHAR(20))",
		"INSERT INTO " + pub + " VALUES (1, 'one', 1.5, 's1'), (2, 'two', NULL, 's2'), (3, NULL, 3.25, 's3'), (4, 'four', -4, 's4'), (5, 'five', 5, 's5')",
		"CREATE TABLE " + pub2 + " (id INTEGER, tag VARCHAR(20))",
		"INSERT INTO " + pub2 + " VALUES (1, 'a'), (3, 'c'), (5, 'e'), (7, 'g')",
		"CREATE TABLE " + priv + " (id INTEGER, v INTEGER)",
		"INSERT INTO " + priv + " VALUES (1, 10), (2, 20)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{pub, pub2, priv} {
			_, _ = db.Exec("DROP TABLE IF EXISTS " + n)
		}
	})
	return pub, pub2, priv
}

// checkPublicRows runs the reads and refusals through client (the other
// dialect's front end) and compares with the backend's own answers.
func checkPublicRows(t *testing.T, client, backend *sql.DB, quote func(string) string, pub, pub2, priv string) {
	t.Helper()
	cols, got := allStrings(t, client, "SELECT * FROM "+pub)
	if want := []string{"id", "name", "score"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("SELECT * columns %v, want %v (secret is not declared)", cols, want)
	}
	_, want := allStrings(t, backend, "SELECT id, name, score FROM "+pub)
	if !reflect.DeepEqual(floatRows(t, sortedRows(got)), floatRows(t, sortedRows(want))) || len(want) != 5 {
		t.Errorf("SELECT *: %v, want %v", got, want)
	}
	// NULLs sort as the client's dialect sorts them: PostgreSQL last in
	// ascending order, MySQL first.
	_, got = allStrings(t, client, quote(`SELECT "name", id * 2 AS twice FROM `+pub+` WHERE id >= 2 AND score IS NOT NULL OR name IS NULL ORDER BY name LIMIT 3 OFFSET 0`))
	wantOrder := [][]string{{"five", "10"}, {"four", "8"}, {"NULL", "6"}}
	if quote(`"`) == "`" {
		wantOrder = [][]string{{"NULL", "6"}, {"five", "10"}, {"four", "8"}}
	}
	if !reflect.DeepEqual(got, wantOrder) {
		t.Errorf("WHERE/ORDER BY/LIMIT: %v, want %v", got, wantOrder)
	}
	_, got = allStrings(t, client, "SELECT p.id, q.tag FROM "+pub+" p JOIN "+pub2+" q ON p.id = q.id ORDER BY p.id DESC")
	if want := [][]string{{"5", "e"}, {"3", "c"}, {"1", "a"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("join of public tables: %v, want %v", got, want)
	}
	wantRefused(t, client, "SELECT * FROM "+priv+" k JOIN "+pub+" p ON k.id = p.id", "42501", 1142)
	wantRefused(t, client, "SELECT secret FROM "+pub, "42703", 1054)
	wantRefused(t, client, "SELECT p.id FROM "+pub+" p JOIN "+pub2+" q ON p.id = q.id WHERE p.secret = 's1'", "42703", 1054)
	// Unqualified, secret can only be the table without a column list's
	// (which has none): the backend never reads the hidden one.
	if rows, _ := allStringsErr(client, "SELECT p.id FROM "+pub+" p JOIN "+pub2+" q ON p.id = q.id WHERE secret = 's1'"); rows != nil {
		t.Errorf("a hidden column read through an unqualified name: %v", rows)
	}
}

// allStringsErr runs q and returns its rows, or the error.
func allStringsErr(db *sql.DB, q string) ([][]string, error) {
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, []string{v.String})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedRows(rows [][]string) [][]string {
	out := append([][]string(nil), rows...)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], "\x00") < strings.Join(out[j], "\x00") })
	return out
}

// TestPublicRowsPostgresBackendMySQLClient reads public tables of a
// PostgreSQL backend through the MySQL front end (go-sql-driver).
func TestPublicRowsPostgresBackendMySQLClient(t *testing.T) {
	dsn := pgtest.DSN(t, "the public-row reads of a PostgreSQL backend")
	backend := pgtest.OpenDB(t, dsn)
	pub, pub2, priv := publicRowsFixture(t, backend)
	p := publicRowsPolicy(t, "postgres", dsn, "mysql", pub, pub2, priv)
	client := openDB(t, "mysql", "analyst:pub-pw@tcp("+p.myAddr+")/")
	checkPublicRows(t, client, backend, func(s string) string { return strings.ReplaceAll(s, `"`, "`") }, pub, pub2, priv)
}

// TestPublicRowsMariaDBBackendPostgresClient reads public tables of a
// MariaDB backend through the PostgreSQL front end (pgx).
func TestPublicRowsMariaDBBackendPostgresClient(t *testing.T) {
	dsn := mariaDSN(t)
	backend := mysqltest.Open(t, dsn)
	pub, pub2, priv := publicRowsFixture(t, backend)
	p := publicRowsPolicy(t, "mysql", dsn, "postgres", pub, pub2, priv)
	client := openDB(t, "pgx", fmt.Sprintf("postgres://analyst:pub-pw@%s/test?sslmode=disable", p.pgAddr))
	checkPublicRows(t, client, backend, func(s string) string { return s }, pub, pub2, priv)
}

// checkSameDialectHidden: with the backend's own dialect, a public
// table's undeclared column is as hidden as through the other front end
// (the client's text is never forwarded when it could read one), and an
// aggregate over declared columns is still forwarded.
func checkSameDialectHidden(t *testing.T, client *sql.DB, pub, pub2 string) {
	t.Helper()
	cols, _ := allStrings(t, client, "SELECT * FROM "+pub)
	if want := []string{"id", "name", "score"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("SELECT * columns %v, want %v", cols, want)
	}
	_, got := allStrings(t, client, "SELECT name, COUNT(*) FROM "+pub+" WHERE id < 3 GROUP BY name ORDER BY name")
	if want := [][]string{{"one", "1"}, {"two", "1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("aggregate over declared columns: %v, want %v", got, want)
	}
	for _, q := range []string{
		"SELECT secret FROM " + pub,
		"SELECT COUNT(secret) FROM " + pub,
		"SELECT p.secret FROM " + pub + " p JOIN " + pub2 + " q ON p.id = q.id",
		"SELECT x.secret FROM (SELECT * FROM " + pub + ") x",
		"SELECT (SELECT MAX(secret) FROM " + pub + ")",
		"SELECT name FROM " + pub + " GROUP BY name HAVING MAX(secret) > 's'",
	} {
		if rows, err := allStringsErr(client, q); err == nil {
			t.Errorf("%s: answered %v; the column is not declared", q, rows)
		}
	}
}

func TestPublicRowsSameDialectHidden(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t, "the public-row reads of a PostgreSQL backend")
		backend := pgtest.OpenDB(t, dsn)
		pub, pub2, priv := publicRowsFixture(t, backend)
		p := publicRowsPolicy(t, "postgres", dsn, "postgres", pub, pub2, priv)
		client := openDB(t, "pgx", fmt.Sprintf("postgres://analyst:pub-pw@%s/test?sslmode=disable", p.pgAddr))
		checkSameDialectHidden(t, client, pub, pub2)
	})
	t.Run("mariadb", func(t *testing.T) {
		dsn := mariaDSN(t)
		backend := mysqltest.Open(t, dsn)
		pub, pub2, priv := publicRowsFixture(t, backend)
		p := publicRowsPolicy(t, "mysql", dsn, "mysql", pub, pub2, priv)
		client := openDB(t, "mysql", "analyst:pub-pw@tcp("+p.myAddr+")/test")
		checkSameDialectHidden(t, client, pub, pub2)
	})
}
