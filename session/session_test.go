package session

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/lib/pq"
	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

const testPolicy = `
version: 1
backend: {driver: %s, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {census: {epsilon: 5}}
    max_epsilon: 1
datasets:
  census:
    tables:
      people:
        schema: %q
        unit: id
        columns:
          age: {type: integer, bounds: [0, 100]}
          sex: {type: text, domain: {values: [F, M]}}
`

type fixture struct {
	p   *Proxy
	s   *Session
	led *ledger.Ledger
}

func setup(t *testing.T, driver, dsn, schema string, be Backend) *fixture {
	t.Helper()
	dir := t.TempDir()
	p, pol, led := seededProxy(t, dir, fmt.Sprintf(testPolicy, driver, dsn, filepath.Join(dir, "ledger.db"), schema), be, Config{})
	return &fixture{p: p, s: p.Open(pol.User("alice"), parser.Postgres, map[string]string{"application_name": "test"}), led: led}
}

func sqliteFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.db")
	stmts := []string{"CREATE TABLE people (id INTEGER, age INTEGER, sex TEXT)", "BEGIN"}
	for i := 0; i < 200; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO people VALUES (%d, %d, '%s')", i, 20+i%50, []string{"F", "M"}[i%2]))
	}
	be := sqliteBackend(t, path, append(stmts, "COMMIT")...)
	return setup(t, "sqlite", path, "", be)
}

func mustQuery(t *testing.T, s *Session, sql string) []Result {
	t.Helper()
	rs, err := query(s, context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rs
}

func TestEpsilonSettingAndNotice(t *testing.T) {
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, "SET ddp.epsilon = 0.25; SHOW ddp.epsilon; SELECT COUNT(*) FROM people")
	if len(rs) != 3 || rs[0].Tag != "SET" || rs[1].Rows[0][0].Str != "0.25" {
		t.Fatalf("results %+v", rs)
	}
	count := rs[2]
	if count.Tag != "SELECT 1" || len(count.Columns) != 1 || count.Columns[0].Type != TypeInt8 {
		t.Fatalf("count result %+v", count)
	}
	// Sensitivity 1 at ε = 0.25: scale 4.
	if len(count.Notices) != 1 || !strings.Contains(count.Notices[0], "spent ε = 0.25") ||
		!strings.Contains(count.Notices[0], "ε left: 4.75") || !strings.Contains(count.Notices[0], "noise scale 4") {
		t.Fatalf("notice %q", count.Notices)
	}
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon != 0.25 {
		t.Fatalf("spent %+v", spent)
	}
	// Above max_epsilon: refused, the session keeps its ε and still works.
	if _, err := query(f.s, context.Background(), "SET ddp.epsilon = 2"); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
		t.Fatalf("ε above max: %v", err)
	}
	rs = mustQuery(t, f.s, "SHOW ddp.epsilon")
	if rs[0].Rows[0][0].Str != "0.25" {
		t.Fatalf("ε changed by a refused SET: %v", rs[0].Rows)
	}
	rs = mustQuery(t, f.s, "RESET ddp.epsilon; SHOW ddp.epsilon")
	if rs[1].Rows[0][0].Str != "0.1" {
		t.Fatalf("RESET: %v", rs[1].Rows)
	}
}

func TestErrorsStopTheBatchButNotTheSession(t *testing.T) {
	f := sqliteFixture(t)
	rs, err := query(f.s, context.Background(), "SET application_name = 'x'; SELECT * FROM people; SET ddp.epsilon = 0.5")
	if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) || len(rs) != 1 {
		t.Fatalf("got %d results, %v", len(rs), err)
	}
	if rs := mustQuery(t, f.s, "SHOW ddp.epsilon"); rs[0].Rows[0][0].Str != "0.1" {
		t.Fatal("the statement after the error ran")
	}
	if _, err := query(f.s, context.Background(), "DELETE FROM people"); !sqlerr.HasCode(err, sqlerr.ReadOnly) {
		t.Fatalf("DELETE: %v", err)
	}
	if _, err := query(f.s, context.Background(), "SET client_encoding = 'LATIN1'"); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Fatalf("LATIN1: %v", err)
	}
	if _, err := query(f.s, context.Background(), "SET session_authorization = 'postgres'"); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Fatalf("SET session_authorization: %v", err)
	}
	rs = mustQuery(t, f.s, "BEGIN; SET extra_float_digits = 3; COMMIT")
	if rs[0].Tag != "BEGIN" || rs[2].Tag != "COMMIT" || f.s.InTransaction() {
		t.Fatalf("transaction tags %+v", rs)
	}
	if rs := mustQuery(t, f.s, ""); len(rs) != 1 || !rs[0].Empty {
		t.Fatalf("empty query: %+v", rs)
	}
}

func TestExplainAndBudgetViewSpendNothing(t *testing.T) {
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, "EXPLAIN SELECT sex, COUNT(*) FROM people GROUP BY sex")
	text := ""
	for _, r := range rs[0].Rows {
		text += r[0].Str + "\n"
	}
	if !strings.Contains(text, "private_aggregate") || !strings.Contains(text, "sensitivity 1") || !strings.Contains(text, "ROW_NUMBER") {
		t.Fatalf("explain:\n%s", text)
	}
	mustQuery(t, f.s, "SELECT COUNT(*) FROM people WHERE age > 30")
	for _, q := range []string{"SHOW ddp.budget", "SELECT * FROM ddp.budget"} {
		rs := mustQuery(t, f.s, q)
		r := rs[0]
		if len(r.Rows) != 1 || r.Rows[0][0].Str != "census" || r.Rows[0][1].Float != 5 || r.Rows[0][2].Float != 0.1 || r.Rows[0][3].Float != 4.9 {
			t.Fatalf("%s: %+v", q, r.Rows)
		}
	}
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon != 0.1 {
		t.Fatalf("explain or the budget view spent budget: %+v", spent)
	}
}

func TestPreparedStatements(t *testing.T) {
	f := sqliteFixture(t)
	ctx := context.Background()
	p, err := f.s.Prepare(ctx, "SELECT sex, COUNT(*) AS n FROM people WHERE age > $1 AND sex = $2 GROUP BY sex", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ParamTypes) != 2 || p.ParamTypes[0] != TypeInt8 || p.ParamTypes[1] != TypeText {
		t.Fatalf("param types %v, want the columns' types", p.ParamTypes)
	}
	if len(p.Columns) != 2 || p.Columns[0] != (Column{Name: "sex", Type: TypeText}) || p.Columns[1] != (Column{Name: "n", Type: TypeInt8}) {
		t.Fatalf("columns %+v", p.Columns)
	}
	if spent, _ := f.led.Spent("alice", "census"); spent.Epsilon != 0 {
		t.Fatalf("Prepare spent %+v", spent)
	}
	// Text parameters are converted to the column types.
	r, err := execute(f.s, ctx, p, []ir.Value{ir.String("30"), ir.String("F")})
	if err != nil {
		t.Fatal(err)
	}
	// WHERE sex = 'F' rules out the key M of the declared domain.
	if len(r.Rows) != 1 || r.Tag != "SELECT 1" || r.Rows[0][0].Str != "F" {
		t.Fatalf("rows %v", r.Rows)
	}
	if _, err := execute(f.s, ctx, p, []ir.Value{ir.String("thirty"), ir.String("F")}); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
		t.Fatalf("bad integer parameter: %v", err)
	}
	if _, err := f.s.Prepare(ctx, "SELECT * FROM people WHERE age > $1", nil); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Fatalf("row-level prepare: %v", err)
	}
	if _, err := f.s.Prepare(ctx, "SELECT 1; SELECT 2", nil); err == nil {
		t.Fatal("two statements prepared")
	}
}

// TestPostgresPassthrough runs catalog and public statements through a
// real PostgreSQL backend.
func TestPostgresPassthrough(t *testing.T) {
	dsn, be := postgresBackend(t, "the PostgreSQL pass-through test")
	f := setup(t, "postgres", dsn, "", be)
	rs := mustQuery(t, f.s, "SELECT current_database() AS db, 1 + 1 AS two")
	r := rs[0]
	if len(r.Columns) != 2 || r.Columns[0].Name != "db" || r.Rows[0][0].Str != "test" || r.Rows[0][1].Int != 2 {
		t.Fatalf("result %+v", r)
	}
	p, err := f.s.Prepare(context.Background(), "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname = $1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Columns) != 1 || p.Columns[0].Name != "relname" || p.Columns[0].Type != TypeName {
		t.Fatalf("described %+v", p.Columns)
	}
	r, err = execute(f.s, context.Background(), p, []ir.Value{ir.String("pg_class")})
	if err != nil || len(r.Rows) != 1 || r.Rows[0][0].Str != "pg_class" {
		t.Fatalf("execute: %+v %v", r, err)
	}
	if _, err := query(f.s, context.Background(), "SELECT * FROM pg_stats"); !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Fatalf("pg_stats: %v", err)
	}
	// Tables the policy does not declare are not listed.
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	hidden := fmt.Sprintf("ddp_hidden_%d", os.Getpid())
	if _, err := raw.Exec("CREATE TABLE " + hidden + " (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Exec("DROP TABLE IF EXISTS " + hidden); raw.Close() })
	for _, q := range []string{
		"SELECT table_schema, table_name FROM information_schema.tables",
		"SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')",
		"SELECT schemaname, tablename FROM pg_catalog.pg_tables",
	} {
		rs := mustQuery(t, f.s, q)
		sawSystem := false
		for _, row := range rs[0].Rows {
			for _, v := range row {
				if v.Text() == hidden {
					t.Errorf("%s lists the undeclared table %s", q, hidden)
				}
				if v.Text() == "pg_catalog" {
					sawSystem = true
				}
			}
		}
		if strings.Contains(q, "information_schema") && !sawSystem {
			t.Errorf("%s: system tables were hidden too", q)
		}
	}
	// SELECT * FROM pg_class keeps its columns but blanks the statistics.
	rs = mustQuery(t, f.s, "SELECT * FROM pg_catalog.pg_class WHERE relname = 'pg_class'")
	found := 0
	for i, c := range rs[0].Columns {
		if c.Name == "reltuples" || c.Name == "relpages" {
			found++
			if !rs[0].Rows[0][i].IsNull() {
				t.Errorf("%s = %v leaked through SELECT *", c.Name, rs[0].Rows[0][i])
			}
		}
	}
	if found != 2 || len(rs[0].Rows) != 1 {
		t.Fatalf("pg_class row: %d statistics columns, %d rows", found, len(rs[0].Rows))
	}
}

func TestLocalAnswersOnAForeignBackend(t *testing.T) {
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, "SELECT version(); select current_database() as db, current_user")
	if !strings.HasPrefix(rs[0].Rows[0][0].Str, "PostgreSQL 15.0") {
		t.Fatalf("version: %+v", rs[0])
	}
	if rs[1].Columns[0].Name != "db" || rs[1].Rows[0][1].Str != "alice" {
		t.Fatalf("current_database/current_user: %+v", rs[1])
	}
	// now() is answered (Metabase's startup probe), typed timestamptz;
	// other date functions are not emulated.
	rs = mustQuery(t, f.s, "SELECT now()")
	if rs[0].Columns[0].Type != TypeTimestampTZ || rs[0].Rows[0][0].Kind != ir.KindTimestampTZ {
		t.Fatalf("SELECT now() on SQLite: %+v", rs[0])
	}
	if _, err := query(f.s, context.Background(), "SELECT age(now())"); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) ||
		!strings.Contains(err.Error(), "sqlite backend") {
		t.Fatalf("SELECT age(now()) on SQLite: %v", err)
	}
}

// psql 15's \dt and \dt peo* queries, as psql -E prints them.
const psqlDt = `SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;`

const psqlDtPattern = `SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','t','s','')
  AND c.relname OPERATOR(pg_catalog.~) '^(zzz.*)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;`

func TestPsqlListsPolicyTables(t *testing.T) {
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, psqlDt)
	r := rs[0]
	if len(r.Columns) != 4 || r.Columns[1].Name != "Name" || len(r.Rows) != 1 || r.Rows[0][1].Str != "people" || r.Rows[0][0].Str != "public" {
		t.Fatalf("\\dt: %+v", r)
	}
	rs = mustQuery(t, f.s, psqlDtPattern)
	if len(rs[0].Rows) != 0 {
		t.Fatalf("\\dt zzz*: %+v", rs[0].Rows)
	}
	rs = mustQuery(t, f.s, strings.Replace(psqlDtPattern, "zzz", "peo", 1))
	if len(rs[0].Rows) != 1 {
		t.Fatalf("\\dt peo*: %+v", rs[0].Rows)
	}
}

func TestEmptyCatalogOnForeignBackend(t *testing.T) {
	f := sqliteFixture(t)
	// psycopg2's hstore probe, which SQLAlchemy sends on connect.
	rs := mustQuery(t, f.s, `SELECT t.oid, typarray FROM pg_type t JOIN pg_namespace ns ON typnamespace = ns.oid WHERE typname = 'hstore'`)
	r := rs[0]
	if len(r.Rows) != 0 || len(r.Columns) != 2 || r.Columns[0].Name != "oid" || r.Columns[1].Name != "typarray" {
		t.Fatalf("hstore probe: %+v", r)
	}
	// A catalog query mixed with a private table is still planned (and refused).
	if _, err := query(f.s, context.Background(), "SELECT age FROM people, pg_catalog.pg_class"); err == nil {
		t.Fatal("a query over a private table was answered as an empty catalog query")
	}
}

// query runs sql and returns its answers held whole.
func query(s *Session, ctx context.Context, sql string) ([]Result, error) {
	var c Collector
	err := s.Query(ctx, sql, &c)
	return c.Results, err
}

// execute runs a prepared statement and returns its answer held whole.
func execute(s *Session, ctx context.Context, p *Prepared, args []ir.Value) (Result, error) {
	var c Collector
	_, err := s.Execute(ctx, p, args, &c)
	if len(c.Results) == 0 {
		return Result{}, err
	}
	return c.Results[0], err
}
