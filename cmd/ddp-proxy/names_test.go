package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// startNamesDemo serves the demo on both front ends (free ports) and
// returns the PostgreSQL and MySQL addresses and the demo's sex domain.
func startNamesDemo(t *testing.T) (pgAddr, myAddr string, sexes []string) {
	t.Helper()
	_, pol := demoPolicy(t)
	for _, v := range pol.Datasets["census"].Tables["people"].Columns["sex"].Domain.Values {
		sexes = append(sexes, fmt.Sprint(v))
	}
	if len(sexes) < 2 {
		t.Fatalf("demo sex domain %v: expected at least two declared values", sexes)
	}
	pol.Listen.Postgres = "127.0.0.1:0"
	pol.Listen.MySQL = "127.0.0.1:0"
	p, _ := servePolicy(t, pol)
	return p.pgAddr, p.myAddr, sexes
}

// TestCatalogNamesOverTheWire: the names psql's \dt (public.people) and
// MySQL's SHOW DATABASES (demo) show for the demo's people table work in
// queries, with Metabase's fully qualified column shape, through pgx and
// go-sql-driver/mysql; a wrong schema or database is still 42P01 / 1146.
func TestCatalogNamesOverTheWire(t *testing.T) {
	pgAddr, myAddr, sexes := startNamesDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("postgres", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/demo?sslmode=disable", pgAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)

		// The catalog's name for the table, as psql \dt shows it.
		var schema string
		if err := conn.QueryRow(ctx, `SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'people'`).Scan(&schema); err != nil {
			t.Fatalf("catalog lookup: %v", err)
		}
		if schema != "public" {
			t.Fatalf("catalog shows people in %q, want public", schema)
		}

		metabase := `SELECT "public"."people"."sex" AS "sex", count(*) AS "count" FROM "public"."people" ` +
			`GROUP BY "public"."people"."sex" ORDER BY "public"."people"."sex" ASC`
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
			rows, err := conn.Query(ctx, metabase, mode)
			if err != nil {
				t.Fatalf("%v: %v", mode, err)
			}
			var cols []string
			for _, f := range rows.FieldDescriptions() {
				cols = append(cols, f.Name)
			}
			var got []string
			for rows.Next() {
				var sex string
				var n int64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatalf("%v: scan: %v", mode, err)
				}
				got = append(got, sex)
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%v: Metabase's query: %v", mode, err)
			}
			if !slices.Equal(cols, []string{"sex", "count"}) {
				t.Errorf("%v: columns %v, want [sex count]", mode, cols)
			}
			want := slices.Sorted(slices.Values(sexes))
			if !slices.Equal(got, want) {
				t.Errorf("%v: groups %v, want every declared key in order %v", mode, got, want)
			}
		}

		var n int64
		for _, q := range []string{`SELECT COUNT(*) FROM public.people`, `SELECT COUNT(*) FROM "public"."people" WHERE public.people.sex = 'Male'`} {
			if err := conn.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}

		for _, q := range []string{
			`SELECT COUNT(*) FROM other.people`,
			`SELECT COUNT(*) FROM "demo"."people"`,
			`SELECT COUNT(*) FROM people WHERE other.people.sex = 'Male'`,
		} {
			_, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42P01" {
				t.Errorf("%s: %v, want 42P01", q, err)
			}
		}
	})

	t.Run("mysql", func(t *testing.T) {
		db, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		conn, err := db.Conn(ctx) // one session: SHOW DATABASES and the queries see the same database
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()

		var dbs []string
		rows, err := conn.QueryContext(ctx, "SHOW DATABASES")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				t.Fatal(err)
			}
			dbs = append(dbs, d)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(dbs, "demo") {
			t.Fatalf("SHOW DATABASES = %v, want demo listed", dbs)
		}

		// SHOW TABLES lists under a database exactly what resolves there.
		showTables := func(db string) []string {
			rows, err := conn.QueryContext(ctx, "SHOW TABLES FROM "+db)
			if err != nil {
				t.Fatalf("SHOW TABLES FROM %s: %v", db, err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					t.Fatal(err)
				}
				out = append(out, name)
			}
			return out
		}
		if got := showTables("demo"); !slices.Contains(got, "people") {
			t.Errorf("SHOW TABLES FROM demo = %v, want people listed", got)
		}
		if got := showTables("other"); len(got) != 0 {
			t.Errorf("SHOW TABLES FROM other = %v, want none: other.people is refused", got)
		}

		for _, q := range []string{
			"SELECT `demo`.`people`.`sex`, COUNT(*) FROM `demo`.`people` GROUP BY `demo`.`people`.`sex`",
			"SELECT DEMO.People.sex, COUNT(*) FROM Demo.PEOPLE GROUP BY demo.people.sex", // lower_case_table_names=1
		} {
			rows, err := conn.QueryContext(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			cols, _ := rows.Columns()
			var got []string
			for rows.Next() {
				var sex string
				var n int64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatalf("scan: %v", err)
				}
				got = append(got, sex)
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if len(cols) != 2 || cols[0] != "sex" {
				t.Errorf("%s: columns %v, want [sex COUNT(*)]", q, cols)
			}
			slices.Sort(got)
			if want := slices.Sorted(slices.Values(sexes)); !slices.Equal(got, want) {
				t.Errorf("%s: groups %v, want every declared key %v", q, got, want)
			}
		}

		// DESCRIBE takes the same names as queries.
		if rows, err := conn.QueryContext(ctx, "SHOW COLUMNS FROM `demo`.`people`"); err != nil {
			t.Errorf("SHOW COLUMNS FROM demo.people: %v", err)
		} else {
			rows.Close()
		}
		if _, err := conn.ExecContext(ctx, "SHOW COLUMNS FROM other.people"); err == nil {
			t.Error("SHOW COLUMNS FROM other.people succeeded; other.people is refused in queries")
		}

		// A prepared statement (binary protocol): the parameter's type is
		// inferred from the three-part column it is compared with.
		var n int64
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM demo.people WHERE demo.people.sex = ?", sexes[0]).Scan(&n); err != nil {
			t.Errorf("prepared three-part query: %v", err)
		}

		for _, q := range []string{
			"SELECT COUNT(*) FROM `other`.`people`",
			"SELECT COUNT(*) FROM public.people",
			"SELECT COUNT(*) FROM people WHERE other.people.sex = 'Male'",
		} {
			_, err := conn.ExecContext(ctx, q)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1146 || string(me.SQLState[:]) != "42S02" {
				t.Errorf("%s: %v, want 1146 (42S02)", q, err)
			}
		}
	})
}

// TestMariaDBSessionDatabaseNames serves a MariaDB backend to a MySQL
// client whose session database is not the backend's: db.table names the
// declared private table under the session's database (as SHOW TABLES
// lists it) and under the backend's, with three-part columns. A public
// table is passed through as text, so there the session's database would
// name another relation on the server: a database holding a table of the
// same name with other rows must not be read through it.
func TestMariaDBSessionDatabaseNames(t *testing.T) {
	dsn := mariaDSN(t)
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	priv, pub, otherDB := "ddp_names_p_"+suffix, "ddp_names_q_"+suffix, "ddp_names_db_"+suffix
	backendDB := (&policies.Policy{Backend: policies.Backend{Driver: "mysql", DSN: dsn}}).DefaultSchema()
	if backendDB == "" {
		t.Skipf("%s names no database", mysqlDSNEnv)
	}
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP TABLE IF EXISTS " + priv)
		admin.Exec("DROP TABLE IF EXISTS " + pub)
		admin.Exec("DROP DATABASE IF EXISTS " + otherDB)
		admin.Close()
	})
	for _, q := range []string{
		"CREATE TABLE " + priv + " (id BIGINT PRIMARY KEY, sex VARCHAR(10))",
		"INSERT INTO " + priv + " VALUES (1, 'Female'), (2, 'Male'), (3, 'Male')",
		"CREATE TABLE " + pub + " (k VARCHAR(10) PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO " + pub + " VALUES ('a', 'public')",
		"CREATE DATABASE " + otherDB,
		"CREATE TABLE " + otherDB + "." + pub + " (k VARCHAR(10) PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO " + otherDB + "." + pub + " VALUES ('a', 'secret')",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "names.yaml")
	src := fmt.Sprintf(`version: 1
backend: {driver: mysql, dsn: %q}
listen: {postgres: "off", mysql: 127.0.0.1:0, auth: trust}
ledger: {path: ledger.db}
users:
  - name: analyst
    password_env: HOME
    budgets: {d: {epsilon: 100}}
    max_epsilon: 1
datasets:
  d:
    tables:
      %s:
        unit: id
        columns:
          sex: {type: text, domain: {values: [Female, Male]}}
      %s:
        public: true
        key: k
        columns:
          k: {type: text}
          v: {type: text}
`, dsn, priv, pub)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveMySQL(t, pol)
	db, err := sql.Open("mysql", "analyst:x@tcp("+addr+")/"+otherDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	for _, schema := range []string{otherDB, backendDB} {
		q := fmt.Sprintf("SELECT `%[1]s`.`%[2]s`.`sex`, COUNT(*) FROM `%[1]s`.`%[2]s` GROUP BY `%[1]s`.`%[2]s`.`sex` ORDER BY 1", schema, priv)
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for rows.Next() {
			var sex string
			var n int64
			if err := rows.Scan(&sex, &n); err != nil {
				t.Fatal(err)
			}
			got = append(got, sex)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !slices.Equal(got, []string{"Female", "Male"}) {
			t.Errorf("%s: groups %v, want Female, Male", q, got)
		}
	}

	var v string
	if err := db.QueryRow("SELECT v FROM " + pub).Scan(&v); err != nil || v != "public" {
		t.Errorf("unqualified public table: %q, %v; want the backend database's row", v, err)
	}
	err = db.QueryRow("SELECT v FROM " + otherDB + "." + pub).Scan(&v)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1235 {
		t.Errorf("public table under the session's database: %q, %v; want refused (1235), never the other database's row", v, err)
	}
	_, err = db.Exec("SELECT COUNT(*) FROM wrong_db_" + suffix + "." + priv)
	if !errors.As(err, &me) || me.Number != 1146 {
		t.Errorf("private table under a wrong database: %v, want 1146", err)
	}
	// The server compares table names case-sensitively when its
	// lower_case_table_names is 0 (MariaDB's default on Linux), and so does
	// the proxy for MySQL clients; column names are case-insensitive.
	var lc string
	if err := admin.QueryRow("SELECT @@lower_case_table_names").Scan(&lc); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM " + priv + " WHERE SEX = 'Male'").Scan(&n); err != nil {
		t.Errorf("column name in another case: %v", err)
	}
	err = db.QueryRow("SELECT COUNT(*) FROM " + strings.ToUpper(priv)).Scan(&n)
	if lc == "0" {
		if !errors.As(err, &me) || me.Number != 1146 || !strings.Contains(me.Message, "did you mean `"+priv+"`?") {
			t.Errorf("table name in another case with lower_case_table_names = 0: %v, want 1146 naming %s", err, priv)
		}
	} else if err != nil {
		t.Errorf("table name in another case with lower_case_table_names = %s: %v", lc, err)
	}
}

// TestMetabaseShapeOnEachCatalog: on the emulated catalog (demo) and on a
// PostgreSQL backend whose table is declared in its own schema, the schema
// information_schema.tables shows for people is the one Metabase's
// fully qualified query uses, and it answers with every declared key.
func TestMetabaseShapeOnEachCatalog(t *testing.T) {
	for name, start := range catalogBackends(t) {
		t.Run(name, func(t *testing.T) {
			b := start(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://analyst:demo@%s/%s?sslmode=disable", b.addr, b.db))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			// Other tests' schemas on the shared PostgreSQL may hold a
			// people table too, and a result without a table_name column
			// is not filtered by the proxy (a known gap, issue 13): look
			// for this backend's schema among the rows.
			rs, err := conn.Query(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'people'")
			if err != nil {
				t.Fatalf("catalog: %v", err)
			}
			schemas, err := pgx.CollectRows(rs, pgx.RowTo[string])
			if err != nil {
				t.Fatalf("catalog: %v", err)
			}
			schema := ""
			for _, s := range schemas {
				if s == b.schema {
					schema = s
				}
			}
			if schema == "" {
				t.Fatalf("catalog shows people in %q, want %q among them", schemas, b.schema)
			}
			q := fmt.Sprintf(`SELECT %[1]q."people"."sex" AS "sex", count(*) AS "count" FROM %[1]q."people" `+
				`GROUP BY %[1]q."people"."sex" ORDER BY %[1]q."people"."sex" ASC`, schema)
			rows, err := conn.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var sex string
				var n int64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatal(err)
				}
				got = append(got, sex)
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if len(got) < 2 || !slices.IsSorted(got) {
				t.Errorf("%s: groups %v, want every declared key, sorted", q, got)
			}
			if name == "postgres" {
				if !slices.Equal(got, []string{"F", "M"}) {
					t.Errorf("groups %v, want the declared F, M", got)
				}
				_, err := conn.Exec(ctx, `SELECT count(*) FROM "public"."people"`)
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "42P01" {
					t.Errorf("people outside its declared schema: %v, want 42P01", err)
				}
			}
		})
	}
}

// TestMySQLInfoSchemaShowsResolvableDatabases: on a non-MySQL backend the
// emulated information_schema and SHOW TABLES show each table in the
// database that names it in queries: the session's database for tables
// declared without a schema, the declared schema otherwise.
func TestMySQLInfoSchemaShowsResolvableDatabases(t *testing.T) {
	dir := t.TempDir()
	lite, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lite.Exec("CREATE TABLE people (id INTEGER, sex TEXT)"); err != nil {
		t.Fatal(err)
	}
	lite.Close()
	path := filepath.Join(dir, "p.yaml")
	src := `version: 1
backend: {driver: sqlite, dsn: x.db}
listen: {postgres: "off", mysql: 127.0.0.1:0, auth: trust}
ledger: {path: ledger.db}
users:
  - name: analyst
    password_env: HOME
    budgets: {d: {epsilon: 1}}
datasets:
  d:
    tables:
      people:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
      orders:
        schema: sales
        unit: id
        columns:
          kind: {type: text, domain: {values: [a, b]}}
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveMySQL(t, pol)
	db, err := sql.Open("mysql", "analyst:x@tcp("+addr+")/bi")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	strs := func(q string) []string {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	if got := strs("SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.TABLES ORDER BY 1"); !slices.Equal(got, []string{"bi.people", "sales.orders"}) {
		t.Errorf("information_schema.TABLES = %v, want [bi.people sales.orders]", got)
	}
	if got := strs("SELECT DISTINCT TABLE_SCHEMA FROM information_schema.COLUMNS WHERE TABLE_NAME = 'orders'"); !slices.Equal(got, []string{"sales"}) {
		t.Errorf("information_schema.COLUMNS schema of orders = %v, want [sales]", got)
	}
	if got := strs("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"); !slices.Equal(got, []string{"bi", "information_schema", "sales"}) {
		t.Errorf("information_schema.SCHEMATA = %v, want [bi information_schema sales]", got)
	}
	if got := strs("SHOW TABLES"); !slices.Equal(got, []string{"people"}) {
		t.Errorf("SHOW TABLES in bi = %v, want [people]", got)
	}
	if got := strs("SHOW TABLES FROM sales"); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("SHOW TABLES FROM sales = %v, want [orders]", got)
	}
	if got := strs("SHOW DATABASES"); !slices.Contains(got, "bi") || !slices.Contains(got, "sales") {
		t.Errorf("SHOW DATABASES = %v, want bi and sales", got)
	}
}
