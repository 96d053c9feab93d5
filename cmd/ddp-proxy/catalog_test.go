package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// catalogBackend is a running proxy plus what a client should find in
// its catalog.
type catalogBackend struct {
	name     string
	addr     string
	db       string // database name to connect to
	schema   string // schema of the people table ("public" on the demo)
	table    string // psql's name for it (schema-qualified unless public)
	columns  []string
	pgTypes  []string // format_type of each column
	saTypes  []string // SQLAlchemy's type class names
	jdbc     []string // pgjdbc TYPE_NAME
	pk       string   // primary key column ("" when none is exposed)
	database string   // a database \l must list
}

// demoCatalog serves the demo: the emulated catalog. Its columns come from
// the demo policy (the declared columns only), its types from the policy's
// column types.
func demoCatalog(t *testing.T) catalogBackend {
	addr, _ := startDemo(t)
	_, pol := demoPolicy(t)
	b := catalogBackend{name: "demo", addr: addr, db: "demo", schema: "public", table: "people", database: "demo"}
	people := pol.Datasets["census"].Tables["people"]
	for _, c := range people.ColumnNames {
		b.columns = append(b.columns, c)
		switch people.Columns[c].Type {
		case policies.TypeInteger:
			b.pgTypes, b.saTypes, b.jdbc = append(b.pgTypes, "bigint"), append(b.saTypes, "BIGINT"), append(b.jdbc, "int8")
		case policies.TypeReal:
			b.pgTypes, b.saTypes, b.jdbc = append(b.pgTypes, "double precision"), append(b.saTypes, "DOUBLE_PRECISION"), append(b.jdbc, "float8")
		default:
			b.pgTypes, b.saTypes, b.jdbc = append(b.pgTypes, "text"), append(b.saTypes, "TEXT"), append(b.jdbc, "text")
		}
	}
	return b
}

const catalogPolicy = pgAnalystPolicyHead + `    budgets: {census: {epsilon: 5}}
    max_epsilon: 1
datasets:
  census:
    tables:
      people:
        schema: %s
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 100]}
          sex: {type: text, domain: {values: [F, M]}}
`

// postgresCatalog serves a table in a fresh schema of the test PostgreSQL
// through the proxy: catalog queries pass through to PostgreSQL's own
// catalog, with undeclared tables and columns hidden.
func postgresCatalog(t *testing.T) catalogBackend {
	dsn := pgtest.DSN(t, "the PostgreSQL catalog test")
	raw := pgtest.Connect(t, dsn)
	schema := pgtest.CreateSchema(t, raw, dsn, "ddp_pgcat_")
	pgtest.Exec(t, raw,
		"CREATE TABLE "+schema+".people (person_id integer PRIMARY KEY, age integer NOT NULL, sex text, income text)",
		"INSERT INTO "+schema+".people SELECT g, 20 + g % 50, CASE WHEN g % 2 = 0 THEN 'F' ELSE 'M' END, 'x' FROM generate_series(1, 300) g",
		"CREATE TABLE "+schema+".hidden_t (x integer)",
		// An index over a declared column (\d lists it) and one over an
		// undeclared column (its definition would name income: hidden).
		"CREATE INDEX people_age_idx ON "+schema+".people (age)",
		"CREATE INDEX people_income_idx ON "+schema+".people (income)",
		"ANALYZE "+schema+".people",
	)
	var db string
	if err := raw.QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pol := loadPolicyText(t, dir, fmt.Sprintf(catalogPolicy, dsn, filepath.Join(dir, "ledger.db"), schema))
	p, _ := servePolicy(t, pol)
	return catalogBackend{name: "postgres", addr: p.pgAddr, db: db, schema: schema, table: schema + ".people",
		// Only the declared columns: person_id (the unit) and income exist
		// in the table but are hidden like the undeclared table. The
		// primary key is on person_id, so no key column is shown.
		columns: []string{"age", "sex"}, pgTypes: []string{"integer", "text"},
		saTypes: []string{"INTEGER", "TEXT"}, jdbc: []string{"int4", "text"}, database: db}
}

func catalogBackends(t *testing.T) map[string]func(*testing.T) catalogBackend {
	return map[string]func(*testing.T) catalogBackend{"demo": demoCatalog, "postgres": postgresCatalog}
}

// TestCatalogWithPsql runs psql's \d, \d+, \l and \dt against both
// backends and checks what psql prints.
func TestCatalogWithPsql(t *testing.T) {
	psql := clientBinary(t, "postgresql-client", "psql")
	for name, start := range catalogBackends(t) {
		t.Run(name, func(t *testing.T) {
			b := start(t)
			host, port, _ := strings.Cut(b.addr, ":")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			run := func(cmds ...string) string {
				args := []string{"-X", "-h", host, "-p", port, "-U", "analyst", "-d", b.db}
				for _, c := range cmds {
					args = append(args, "-c", c)
				}
				cmd := exec.CommandContext(ctx, psql, args...)
				cmd.Env = append(os.Environ(), "PGPASSWORD=demo", "PGSSLMODE=disable")
				out, _ := cmd.CombinedOutput()
				return string(out)
			}
			for _, meta := range []string{`\d `, `\d+ `} {
				out := run(meta + b.table)
				if strings.Contains(out, "ERROR") || !strings.Contains(out, fmt.Sprintf("Table \"%s.people\"", b.schema)) {
					t.Fatalf("%s%s:\n%s", meta, b.table, out)
				}
				for i, c := range b.columns {
					if !containsRow(out, c, b.pgTypes[i]) {
						t.Errorf("%s%s lacks the row %s | %s:\n%s", meta, b.table, c, b.pgTypes[i], out)
					}
				}
				if meta == `\d+ ` && (!strings.Contains(out, "Storage") || !strings.Contains(out, "Description")) {
					t.Errorf("\\d+ columns:\n%s", out)
				}
			}
			out := run(`\l`)
			if strings.Contains(out, "ERROR") || !strings.Contains(out, "List of databases") || !containsRow(out, b.database) {
				t.Errorf("\\l:\n%s", out)
			}
			// Only the database the policy serves: the cluster's others
			// (template1 always exists on PostgreSQL) are not listed.
			if containsRow(out, "template1") || strings.Contains(out, "(2 rows)") {
				t.Errorf("\\l lists other databases:\n%s", out)
			}
			// \df and \dT answer (nothing is exposed on the demo; on
			// PostgreSQL, the schema has no functions or types).
			for _, meta := range []string{`\df`, `\dT`} {
				if out := run(meta); strings.Contains(out, "ERROR") || !strings.Contains(out, "List of") {
					t.Errorf("%s:\n%s", meta, out)
				}
			}
			out = run(`\dt ` + b.schema + `.*`)
			if !containsRow(out, b.schema, "people", "table") || strings.Contains(out, "hidden_t") {
				t.Errorf("\\dt:\n%s", out)
			}
			// \dt+ asks for sizes: they are blank (sizes grow with row counts).
			out = run(`\dt+ ` + b.schema + `.*`)
			if cells := rowCells(out, b.schema, "people"); len(cells) != 8 || cells[6] != "" || strings.Contains(out, "hidden_t") ||
				!strings.Contains(out, "Size") {
				t.Errorf("\\dt+ (size %q):\n%s", cells, out)
			}
			if name == "postgres" {
				// "Indexes:" lists the index over a declared column only:
				// the primary key is on the undeclared person_id.
				out := run(`\d ` + b.table)
				if !strings.Contains(out, "Indexes:") || !strings.Contains(out, `"people_age_idx" btree (age)`) ||
					strings.Contains(out, "income") || strings.Contains(out, "pkey") {
					t.Errorf("\\d indexes:\n%s", out)
				}
				if out := run(`\d ` + b.schema + `.hidden_t`); !strings.Contains(out, "Did not find any relation") {
					t.Errorf("undeclared table described:\n%s", out)
				}
			}
		})
	}
}

// rowCells returns the trimmed cells of the first row of psql's aligned
// output that starts with lead, or nil.
func rowCells(out string, lead ...string) []string {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.Split(line, "|")
		if len(parts) < len(lead) {
			continue
		}
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		if slices.Equal(parts[:len(lead)], lead) {
			return parts
		}
	}
	return nil
}

// containsRow reports whether psql's aligned output has a row whose
// leading cells are cells.
func containsRow(out string, cells ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.Split(line, "|")
		if len(parts) < len(cells) {
			continue
		}
		ok := true
		for i, c := range cells {
			if strings.TrimSpace(parts[i]) != c {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestCatalogWithSQLAlchemyInspector runs SQLAlchemy's inspector
// (testdata/python_client.py inspect) against both backends.
func TestCatalogWithSQLAlchemyInspector(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import psycopg2, sqlalchemy").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: python3-psycopg2 and python3-sqlalchemy must be installed by .ci/run: %v", err)
		}
		t.Skip("python3 with psycopg2 and sqlalchemy is not installed")
	}
	for name, start := range catalogBackends(t) {
		t.Run(name, func(t *testing.T) {
			b := start(t)
			host, port, _ := strings.Cut(b.addr, ":")
			var cols []string
			for i, c := range b.columns {
				cols = append(cols, c+":"+b.saTypes[i])
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, py, "testdata/python_client.py", host, port, "inspect", b.db, b.schema, "people",
				strings.Join(cols, ","), b.pk).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "inspector ok") {
				t.Fatalf("python inspector: %v\n%s", err, out)
			}
		})
	}
}

// TestCatalogWithPgJDBC runs DatabaseMetaData.getTables/getColumns
// (testdata/JdbcClient.java metadata) against both backends.
func TestCatalogWithPgJDBC(t *testing.T) {
	jar := "/usr/share/java/postgresql.jar"
	_, errJ := os.Stat(jar)
	_, errC := exec.LookPath("javac")
	if errJ != nil || errC != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: javac and libpostgresql-jdbc-java must be installed by .ci/run (%v, %v)", errJ, errC)
		}
		t.Skip("javac or pgjdbc (libpostgresql-jdbc-java) is not installed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "javac", "-cp", jar, "-d", dir, "testdata/JdbcClient.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	for name, start := range catalogBackends(t) {
		t.Run(name, func(t *testing.T) {
			b := start(t)
			host, port, _ := strings.Cut(b.addr, ":")
			var cols []string
			for i, c := range b.columns {
				cols = append(cols, c+":"+b.jdbc[i])
			}
			out, err := exec.CommandContext(ctx, "java", "-cp", jar+":"+dir, "JdbcClient", host, port, "metadata", b.db, b.schema, "people",
				strings.Join(cols, ",")).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "jdbc metadata ok") {
				t.Fatalf("JDBC metadata: %v\n%s", err, out)
			}
		})
	}
}

// TestCatalogWithPgxExtended: catalog queries with parameters over the
// extended protocol (Parse/Describe/Bind/Execute, binary results), as pgx
// sends them, against both backends.
func TestCatalogWithPgxExtended(t *testing.T) {
	for name, start := range catalogBackends(t) {
		t.Run(name, func(t *testing.T) {
			b := start(t)
			ctx := context.Background()
			cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://analyst:demo@%s/%s?sslmode=disable", b.addr, b.db))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			rows, err := conn.Query(ctx, "SELECT column_name, ordinal_position, is_nullable = 'YES' AS nullable FROM information_schema.columns "+
				"WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position", b.schema, "people")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			last := int32(0)
			for rows.Next() {
				var col string
				var pos int32
				var nullable bool
				if err := rows.Scan(&col, &pos, &nullable); err != nil {
					t.Fatal(err)
				}
				// Positions are the table's own (hidden columns leave gaps).
				if pos <= last {
					t.Fatalf("ordinal %d for %s after %d", pos, col, last)
				}
				last = pos
				got = append(got, col)
			}
			if err := rows.Err(); err != nil || !slices.Equal(got, b.columns) {
				t.Fatalf("columns %v (%v), want %v", got, err, b.columns)
			}
			var n int64
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace "+
				"WHERE ns.nspname = $1 AND c.relname = $2", b.schema, "people").Scan(&n); err != nil || n != 1 {
				t.Fatalf("count %d: %v", n, err)
			}
		})
	}
}
