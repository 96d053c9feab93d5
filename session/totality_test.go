package session

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/mysql"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The totality attacks (DESIGN.md, safety rules): an expression that
// fails in the backend only for some rows turns the error into one exact
// bit about the data, for the price of one query. Each is replayed here,
// through the session (simple and extended protocol, PostgreSQL and MySQL
// front ends), on SQLite, PostgreSQL and MariaDB, against two databases
// that differ in one person's salary and age only.

const totalityPolicy = `
version: 1
backend: {driver: %s, dsn: %q}
ledger: {path: %q}
users:
  - name: eve
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {hr: {epsilon: 1000}}
    max_epsilon: 1
datasets:
  hr:
    tables:
      people:
        schema: %q
        unit: id
        columns:
          age: {type: integer, bounds: [0, 120]}
          salary: {type: integer, bounds: [0, 10000000]}
          score: {type: real, bounds: [-1000, 1000]}
          note: {type: text}
          educ: {type: text}
          flag: {type: boolean}
          raw: {type: integer}
          small: {type: integer, bounds: [0, 100]}
`

// Column types per backend: PostgreSQL's age is int4 (it overflowed at
// 2^31 in age * 100000000) and MySQL's small is BIGINT UNSIGNED (small - 5
// failed with error 1690 when small < 5).
var totalityTypes = map[string]string{
	"sqlite":   "id INTEGER, age INTEGER, salary INTEGER, score REAL, note TEXT, educ TEXT, flag BOOLEAN, raw INTEGER, small INTEGER",
	"postgres": "id BIGINT, age INTEGER, salary BIGINT, score DOUBLE PRECISION, note TEXT, educ TEXT, flag BOOLEAN, raw BIGINT, small INTEGER",
	"mysql":    "id BIGINT, age INT, salary BIGINT, score DOUBLE, note TEXT, educ TEXT, flag BOOLEAN, raw BIGINT, small BIGINT UNSIGNED",
}

// totalityRows: 200 people; person 123 has note n1234, and in variant b
// a salary one higher (54322 instead of 54321) and an age one lower (89
// instead of 90). Nobody else is 90.
func totalityRows(variant string) []string {
	var rows []string
	for i := range 200 {
		age, salary, note := 20+i%50, 30000+i*10, fmt.Sprintf("n%d", i)
		if i == 123 {
			age, salary, note = 90, 54321, "n1234"
			if variant == "b" {
				age, salary = 89, 54322
			}
		}
		flag := "TRUE"
		if i%2 == 1 {
			flag = "FALSE"
		}
		rows = append(rows, fmt.Sprintf("(%d, %d, %d, %g, '%s', '%s', %s, %d, %d)",
			i, age, salary, float64(i%7-3)*1.5, note, []string{"HS", "BSc", "MSc"}[i%3], flag, i*1000, i%10))
	}
	return rows
}

type totalityFixture struct {
	name   string
	p      *Proxy
	led    *ledger.Ledger
	schema string // qualifies people in queries ("" on SQLite)
}

// totalityFixtures builds variants a and b on every configured backend.
func totalityFixtures(t *testing.T) [][2]*totalityFixture {
	t.Helper()
	var out [][2]*totalityFixture
	out = append(out, [2]*totalityFixture{totalitySQLite(t, "a"), totalitySQLite(t, "b")})
	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		out = append(out, [2]*totalityFixture{totalityServer(t, "postgres", dsn, "a"), totalityServer(t, "postgres", dsn, "b")})
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
		out = append(out, [2]*totalityFixture{totalityServer(t, "mysql", dsn, "a"), totalityServer(t, "mysql", dsn, "b")})
	}
	return out
}

func totalitySQLite(t *testing.T, variant string) *totalityFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hr.db")
	be := sqliteBackend(t, path, "CREATE TABLE people ("+totalityTypes["sqlite"]+")", "INSERT INTO people VALUES "+strings.Join(totalityRows(variant), ", "))
	return totalityProxy(t, "sqlite", path, "", variant, be)
}

// totalityServer loads a variant into its own schema (PostgreSQL) or
// database (MySQL), dropped when the test ends.
func totalityServer(t *testing.T, driver, dsn, variant string) *totalityFixture {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("ddp_total_%d_%s", os.Getpid(), variant)
	create, drop := "CREATE SCHEMA "+schema, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"
	if driver == "mysql" {
		create, drop = "CREATE DATABASE "+schema, "DROP DATABASE IF EXISTS "+schema
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Exec(drop); raw.Close() })
	for _, s := range []string{drop, create,
		"CREATE TABLE " + schema + ".people (" + totalityTypes[driver] + ")",
		"INSERT INTO " + schema + ".people VALUES " + strings.Join(totalityRows(variant), ", ")} {
		if _, err := raw.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s is set but loading failed: %s: %v", driver, s, err)
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
	return totalityProxy(t, driver, dsn, schema, variant, be)
}

func totalityProxy(t *testing.T, driver, dsn, schema, variant string, be Backend) *totalityFixture {
	t.Helper()
	return totalityProxyPolicy(t, totalityPolicy, driver, dsn, schema, variant, be)
}

// totalityProxyPolicy opens a proxy with the policy template tmpl (its
// verbs: driver, dsn, ledger path, schema).
func totalityProxyPolicy(t *testing.T, tmpl, driver, dsn, schema, variant string, be Backend) *totalityFixture {
	t.Helper()
	dir := t.TempDir()
	p, _, led := seededProxy(t, dir, fmt.Sprintf(tmpl, driver, dsn, filepath.Join(dir, "ledger.db"), schema), be, Config{})
	return &totalityFixture{name: driver + "/" + variant, p: p, led: led, schema: schema}
}

// probe is one query, with bound parameters when args is not nil.
type probe struct {
	name    string
	dialect parser.Dialect
	sql     string
	args    []ir.Value
	want    *sqlerr.Code // nil: answered
	msg     []string     // substrings of the refusal
}

// run sends the probe and returns the error and the ε it was charged.
func (f *totalityFixture) run(t *testing.T, pr probe) (Result, error, float64) {
	t.Helper()
	ctx := context.Background()
	text := pr.sql
	if f.schema != "" {
		text = strings.Replace(text, " FROM people", " FROM "+f.schema+".people", 1)
		text = strings.Replace(text, " FROM events", " FROM "+f.schema+".events", 1)
		text = strings.Replace(text, " FROM nums", " FROM "+f.schema+".nums", 1)
	}
	before, _ := f.led.Spent("eve", "hr")
	s := f.p.Open(f.p.Policy().User("eve"), pr.dialect, nil)
	var res Result
	var err error
	if pr.args == nil {
		var rs []Result
		rs, err = query(s, ctx, text)
		if err == nil {
			res = rs[0]
		}
	} else {
		var p *Prepared
		p, err = s.Prepare(ctx, text, nil)
		if err == nil {
			res, err = execute(s, ctx, p, pr.args)
		}
	}
	after, _ := f.led.Spent("eve", "hr")
	return res, err, after.Epsilon - before.Epsilon
}

const maxInt = math.MaxInt64

func totalityProbes() []probe {
	pg, my := parser.Postgres, parser.MySQL
	overflow := &sqlerr.NumericValueOutOfRange
	inList := func(n int) string {
		var b strings.Builder
		b.WriteString("SELECT COUNT(*) FROM people WHERE salary IN (0")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, ", %d", i)
		}
		return b.String() + ")"
	}
	wide := func(n int) string {
		var b strings.Builder
		b.WriteString("SELECT COUNT(*) FROM people WHERE age IN (age + 1")
		for i := 2; i <= n; i++ {
			fmt.Fprintf(&b, ", age + %d", i)
		}
		return b.String() + ")"
	}
	deep := "SELECT COUNT(*) FROM people WHERE " + strings.Repeat("NOT (", 500) + "age > 3" + strings.Repeat(")", 500)
	return []probe{
		// The overflow probes: refused at plan time, naming the expression
		// and the limit it can pass, and never charged.
		{"demo probe", pg, "SELECT COUNT(*) FROM people WHERE abs(age - 90 - 9223372036854775807 - 1) > 0", nil, overflow,
			[]string{`"age"`, "-9223372036854775808"}},
		{"salary binary search", pg, "SELECT COUNT(*) FROM people WHERE note = 'n1234' AND salary + (9223372036854775807 - 54321) > 0", nil, overflow,
			[]string{`"salary"`, "9223372036854775807"}},
		{"salary probe, $1", pg, "SELECT COUNT(*) FROM people WHERE note = 'n1234' AND salary + $1 > 0", []ir.Value{ir.Int(maxInt - 54321)}, overflow,
			[]string{`"salary"`, "9223372036854775807"}},
		{"salary probe, $1 as text", pg, "SELECT COUNT(*) FROM people WHERE note = $1 AND salary + $2 > 0", []ir.Value{ir.String("n1234"), ir.String("9223372036854721486")}, overflow, nil},
		{"salary probe, MySQL ?", my, "SELECT COUNT(*) FROM people WHERE note = ? AND salary + ? > 0", []ir.Value{ir.String("n1234"), ir.Int(maxInt - 54321)}, overflow, nil},
		{"salary probe, MySQL text", my, "SELECT COUNT(*) FROM people WHERE note = 'n1234' AND salary + (9223372036854775807 - 54321) > 0", nil, overflow, nil},
		{"double overflow", pg, "SELECT COUNT(*) FROM people WHERE score * 1e300 * 1e10 > 0", nil, overflow, []string{"1e+300"}},
		{"double underflow", pg, "SELECT COUNT(*) FROM people WHERE score * 1e-300 > 0", nil, overflow, []string{"underflow"}},
		{"constant overflow", pg, "SELECT COUNT(*) FROM people WHERE 9223372036854775807 + 1 > age", nil, overflow, nil},
		{"unbounded column", pg, "SELECT COUNT(*) FROM people WHERE raw + 1 > 0", nil, &sqlerr.FeatureNotSupported, []string{"no declared bounds"}},
		{"LIKE dangling escape", pg, `SELECT COUNT(*) FROM people WHERE note LIKE 'abc\'`, nil, &sqlerr.InvalidParameterValue, nil},
		{"LIKE column pattern", pg, "SELECT COUNT(*) FROM people WHERE note LIKE educ", nil, &sqlerr.FeatureNotSupported, nil},

		// Failures that cannot depend on data: refused, uncharged, with
		// the SQLSTATE PostgreSQL would give.
		{"text < number", pg, "SELECT COUNT(*) FROM people WHERE educ < 2", nil, &sqlerr.UndefinedFunction, []string{"text < bigint"}},
		{"boolean = number", pg, "SELECT COUNT(*) FROM people WHERE flag = 1", nil, &sqlerr.UndefinedFunction, nil},
		{"lower(integer)", pg, "SELECT COUNT(*) FROM people WHERE lower(age) = 'x'", nil, &sqlerr.UndefinedFunction, nil},
		{"length(integer)", my, "SELECT COUNT(*) FROM people WHERE char_length(age) > 1", nil, &sqlerr.UndefinedFunction, nil},
		{"mixed COALESCE", pg, "SELECT COUNT(*) FROM people WHERE coalesce(age, note) = 1", nil, &sqlerr.DatatypeMismatch, nil},
		{"LIKE on a number", pg, "SELECT COUNT(*) FROM people WHERE age LIKE '1%'", nil, &sqlerr.UndefinedFunction, nil},
		{"bad quoted number", pg, "SELECT COUNT(*) FROM people WHERE age = 'thirty'", nil, &sqlerr.InvalidTextRepresentation, nil},
		{"70,000 IN items", pg, inList(70000), nil, &sqlerr.TooManyParameters, []string{"bind parameters"}},
		{"IN of 5,000 expressions", pg, wide(5000), nil, &sqlerr.StatementTooComplex, nil},
		{"deep nesting", pg, deep, nil, &sqlerr.StatementTooComplex, nil},
		{"NUL byte", pg, "SELECT COUNT(*) FROM people WHERE note = $1", []ir.Value{ir.String("a\x00b")}, &sqlerr.CharacterNotInRepertoire, nil},
		{"invalid UTF-8", my, "SELECT COUNT(*) FROM people WHERE note = ?", []ir.Value{ir.String("\xff")}, &sqlerr.CharacterNotInRepertoire, nil},

		// Queries that used to fail for some data and are answered now.
		{"int4 product", pg, "SELECT COUNT(*) FROM people WHERE age * 100000000 > 5000000000", nil, nil, nil},
		{"unsigned difference", my, "SELECT COUNT(*) FROM people WHERE small - 5 > 0", nil, nil, nil},
		{"quoted number", pg, "SELECT COUNT(*) FROM people WHERE age = '30'", nil, nil, nil},
		{"legit arithmetic", pg, "SELECT COUNT(*) FROM people WHERE age + 1 > 30 AND abs(salary - 50000) < 100000", nil, nil, nil},
	}
}

// TestTotalityAttacks: every probe gets the same outcome on the two
// databases (so it cannot tell them apart); refusals carry the expected
// SQLSTATE and message and charge nothing; answers are charged.
func TestTotalityAttacks(t *testing.T) {
	for _, pair := range totalityFixtures(t) {
		for _, pr := range totalityProbes() {
			if pr.name == "70,000 IN items" && testing.Short() {
				continue
			}
			var errs [2]error
			for i, f := range pair {
				res, err, charged := f.run(t, pr)
				errs[i] = err
				switch {
				case pr.want == nil && err != nil:
					t.Errorf("%s: %s: refused: %v", f.name, pr.name, err)
				case pr.want == nil && (charged <= 0 || len(res.Rows) != 1):
					t.Errorf("%s: %s: answered %v, charged ε %g", f.name, pr.name, res.Rows, charged)
				case pr.want != nil && !sqlerr.HasCode(err, *pr.want):
					t.Errorf("%s: %s: got %v, want SQLSTATE %s", f.name, pr.name, err, pr.want.SQLState)
				case pr.want != nil && charged != 0:
					t.Errorf("%s: %s: refused but charged ε %g", f.name, pr.name, charged)
				}
				for _, m := range pr.msg {
					if err != nil && !strings.Contains(err.Error(), m) {
						t.Errorf("%s: %s: message %q does not mention %s", f.name, pr.name, err, m)
					}
				}
			}
			// Same code and message (hints name each fixture's policy file).
			if a, b := sqlerr.As(errs[0]), sqlerr.As(errs[1]); (a == nil) != (b == nil) || a != nil && (a.Code != b.Code || a.Message != b.Message) {
				t.Errorf("%s: the two databases answer differently: %v | %v", pr.name, errs[0], errs[1])
			}
		}
	}
}
