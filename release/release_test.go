package release_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver"

	_ "github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/postgres"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

const policyTemplate = `
version: 1
backend: {driver: %s, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {census: {epsilon: 100000, delta: 0.001}}
    max_epsilon: 10
    delta_per_query: 1.0e-6
  - name: bob
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {census: {epsilon: 0.3}}
datasets:
  census:
    tables:
      people:
        schema: %q
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 100], domain: {range: [0, 100]}}
          sex: {type: text, domain: {values: [Female, Male, Other]}}
          income: {type: real, bounds: [0, 1000]}
          ghost: {type: integer, bounds: [0, 1]}
          bucket: {type: integer}
      sexes:
        public: true
        key: code
      dupsexes:
        public: true
        key: code
      femsexes:
        public: true
        key: code
      nullsexes:
        public: true
        key: code
`

// The fixture: 1000 people, person i has age i%90+10, sex Female for even
// i and Male for odd i (none Other), income i*0.75.
const nPeople = 1000

func trueAge(i int) int        { return i%90 + 10 }
func trueIncome(i int) float64 { return float64(i) * 0.75 }

// trueBucket is i%7, except that person 0 alone is in bucket 99.
func trueBucket(i int) int {
	if i == 0 {
		return 99
	}
	return i % 7
}

type fixture struct {
	schema string // PostgreSQL: the fixture's schema, qualified into queries
	dir    string
	pol    *policies.Policy
	ledger *ledger.Ledger
	be     planner.Backend
	p      *planner.Planner
}

// fixtureRows returns the INSERT statements of the fixture data.
func fixtureRows() []string {
	var stmts []string
	for i := 0; i < nPeople; i++ {
		sex := "Female"
		if i%2 == 1 {
			sex = "Male"
		}
		stmts = append(stmts, fmt.Sprintf("INSERT INTO people VALUES (%d, %d, '%s', %g, %d)", i, trueAge(i), sex, trueIncome(i), trueBucket(i)))
	}
	return stmts
}

// newFixture builds the data in SQLite under dir (reusing it when it is
// already there) and a ledger in dir.
func newFixture(t *testing.T, dir string) *fixture {
	t.Helper()
	dbPath := filepath.Join(dir, "census.db")
	if _, err := os.Stat(dbPath); err != nil {
		db, err := sql.Open("sqlite3", "file:"+dbPath)
		if err != nil {
			t.Fatal(err)
		}
		stmts := append([]string{
			"CREATE TABLE people (person_id INTEGER, age INTEGER, sex TEXT, income REAL, bucket INTEGER)",
			"CREATE TABLE sexes (code TEXT, label TEXT)",
			"INSERT INTO sexes VALUES ('Female', 'F'), ('Male', 'M'), ('Other', 'O')",
			"CREATE TABLE dupsexes (code TEXT, label TEXT)",
			"INSERT INTO dupsexes VALUES ('Female', 'F'), ('Female', 'W'), ('Male', 'M')",
			"CREATE TABLE femsexes (code TEXT, label TEXT)",
			"INSERT INTO femsexes VALUES ('Female', 'F')",
			"CREATE TABLE nullsexes (code TEXT, label TEXT)",
			"INSERT INTO nullsexes VALUES ('Female', 'F'), (NULL, 'X'), (NULL, 'Y')",
			"BEGIN"}, fixtureRows()...)
		for _, s := range append(stmts, "COMMIT") {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		db.Close()
	}
	be, err := sqlite.Open(context.Background(), dbPath, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return finishFixture(t, dir, "sqlite", dbPath, "", be)
}

// newPostgresFixture builds the same data in a fresh schema of the
// PostgreSQL database named by DDP_TEST_POSTGRES_DSN. It skips when the
// variable is unset and fails when the server cannot be reached.
func newPostgresFixture(t *testing.T) *fixture {
	t.Helper()
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping the PostgreSQL release test")
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := fmt.Sprintf("ddp_release_%d", os.Getpid())
	stmts := []string{
		"DROP SCHEMA IF EXISTS " + schema + " CASCADE",
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".people (person_id INTEGER, age INTEGER, sex TEXT, income DOUBLE PRECISION, bucket INTEGER)",
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("PostgreSQL at DDP_TEST_POSTGRES_DSN: %s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		db, err := sql.Open("postgres", dsn)
		if err == nil {
			db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
			db.Close()
		}
	})
	var b strings.Builder
	b.WriteString("SET search_path TO " + schema + "; BEGIN;")
	for _, r := range fixtureRows() {
		b.WriteString(r + ";")
	}
	b.WriteString("COMMIT;")
	if _, err := db.Exec(b.String()); err != nil {
		t.Fatal(err)
	}
	be, err := postgres.Open(context.Background(), dsn, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return finishFixture(t, t.TempDir(), "postgres", dsn, schema, be)
}

func finishFixture(t *testing.T, dir, driver, dsn, schema string, be planner.Backend) *fixture {
	t.Helper()
	t.Setenv("DDP_TEST_RELEASE_PASSWORD", "pw")
	ledgerPath := filepath.Join(dir, "ledger.db")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(policyTemplate, driver, dsn, ledgerPath, schema)))
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	l, err := ledger.Open(ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{schema: schema, dir: dir, pol: pol, ledger: l, be: be, p: planner.New(pol)}
	t.Cleanup(func() {
		if err := l.Check(); err != nil {
			t.Errorf("ledger check: %v", err)
		}
		l.Close()
		be.Close()
	})
	return f
}

func (f *fixture) plan(t *testing.T, user, sqlText string, eps float64) (*policies.User, *planner.Plan) {
	t.Helper()
	if f.schema != "" {
		sqlText = strings.Replace(sqlText, " FROM people", " FROM "+f.schema+".people", 1)
	}
	stmts, err := parser.Parse(parser.Postgres, sqlText)
	if err != nil {
		t.Fatal(err)
	}
	u := f.pol.User(user)
	pl, err := f.p.Plan(planner.Request{User: u, Epsilon: eps, Dialect: "postgres", Statement: &stmts[0]})
	if err != nil {
		t.Fatalf("%s: %v", sqlText, err)
	}
	return u, pl
}

func (f *fixture) run(t *testing.T, e *release.Engine, user, sqlText string, eps float64) (*release.Result, error) {
	t.Helper()
	u, pl := f.plan(t, user, sqlText, eps)
	return e.Run(context.Background(), u, pl)
}

// discreteLaplaceVar is the variance 2p/(1-p)^2 of the discrete Laplace
// distribution with scale t, p = exp(-1/t).
func discreteLaplaceVar(t float64) float64 {
	p := math.Exp(-1 / t)
	return 2 * p / ((1 - p) * (1 - p))
}

// TestErrorMatchesAdvertisedScale runs distinct queries with the same true
// answer through the whole release path and compares the empirical error
// with the advertised noise distribution. n = 400 samples per check; the
// bounds are 5 standard errors (a false rejection has probability < 1e-5
// for the mean; the seeded source makes the run reproducible anyway).
func TestErrorMatchesAdvertisedScale(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testErrorMatchesAdvertisedScale(t, newFixture(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { testErrorMatchesAdvertisedScale(t, newPostgresFixture(t)) })
}

func testErrorMatchesAdvertisedScale(t *testing.T, f *fixture) {
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(7)})
	const n = 400
	check := func(name string, errs []float64, scale, quantum float64) {
		t.Helper()
		variance := discreteLaplaceVar(scale/quantum) * quantum * quantum
		mean, sq := 0.0, 0.0
		for _, x := range errs {
			mean += x
			sq += x * x
		}
		mean /= n
		empVar := sq/n - mean*mean
		if se := math.Sqrt(variance / n); math.Abs(mean) > 5*se {
			t.Errorf("%s: mean error %g, want 0 ± %g", name, mean, 5*se)
		}
		// The variance of a sample variance of Laplace-like noise is about
		// 5σ⁴/n (excess kurtosis 3).
		if se := math.Sqrt(5/float64(n)) * variance; math.Abs(empVar-variance) > 5*se {
			t.Errorf("%s: error variance %g, advertised %g (± %g)", name, empVar, variance, 5*se)
		}
	}

	var countErrs, sumErrs []float64
	var countScale, sumScale, sumQuantum float64
	wantSum := 0.0
	for i := 0; i < nPeople; i++ {
		wantSum += trueIncome(i)
	}
	for i := 0; i < n; i++ {
		// Different literals: different releases, same true answers.
		res, err := f.run(t, e, "alice", fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age <> %d", -1-i), 0.5)
		if err != nil {
			t.Fatal(err)
		}
		countErrs = append(countErrs, float64(res.Rows[0][0].Int-nPeople))
		countScale = res.Columns[0].Scale

		res, err = f.run(t, e, "alice", fmt.Sprintf("SELECT SUM(income) FROM people WHERE age <> %d", -1-i), 2)
		if err != nil {
			t.Fatal(err)
		}
		sumErrs = append(sumErrs, res.Rows[0][0].Float-wantSum)
		sumScale = res.Columns[0].Scale
	}
	if countScale != 2 {
		t.Fatalf("count scale %g, want sensitivity 1 / ε 0.5 = 2", countScale)
	}
	if math.Abs(sumScale-500) > 1e-3 {
		t.Fatalf("sum scale %g, want 1000/2", sumScale)
	}
	_, pl := f.plan(t, "alice", "SELECT SUM(income) FROM people", 2)
	sumQuantum = pl.Aggs[0].Quantum
	check("count", countErrs, countScale, 1)
	// The rounding of each row to the lattice adds at most 1000·γ/2 of
	// bias; γ is tiny, so the error is the lattice Laplace noise.
	check("sum", sumErrs, sumScale, sumQuantum)
}

func TestCacheMakesRepeatsFreeAndIdentical(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	e := release.New(f.be, f.ledger, release.Options{})
	q := "SELECT sex, COUNT(*), AVG(age) FROM people WHERE age > 20 GROUP BY sex"
	first, err := f.run(t, e, "alice", q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || first.Charged.Epsilon != 1 {
		t.Fatalf("first answer: cached %v charged %+v", first.Cached, first.Charged)
	}
	spent, _ := f.ledger.Spent("alice", "census")
	second, err := f.run(t, e, "alice", "select sex, count(*), avg(age) from people p where p.age > 20 group by sex order by sex", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Cached || second.Charged.Epsilon != 0 || !reflect.DeepEqual(first.Rows, second.Rows) {
		t.Fatalf("repeat: cached %v charged %+v rows %v, first %v", second.Cached, second.Charged, second.Rows, first.Rows)
	}
	if again, _ := f.ledger.Spent("alice", "census"); again != spent {
		t.Fatalf("spent %+v after a cached answer, was %+v", again, spent)
	}
	// All three declared keys are released, the empty one too.
	if len(first.Rows) != 3 || first.Rows[2][0].Str != "Other" {
		t.Fatalf("rows %v: want the three domain keys", first.Rows)
	}
	// AVG is clamped to the bounds even when its noisy count is tiny.
	for _, r := range first.Rows {
		if !r[2].IsNull() && (r[2].Float < 0 || r[2].Float > 100) {
			t.Fatalf("AVG %v outside [0, 100]", r[2])
		}
	}
}

func TestBudgetExhaustion(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{})
	for i := 0; i < 3; i++ {
		if _, err := f.run(t, e, "bob", fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", i), 0.1); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	_, err := f.run(t, e, "bob", "SELECT COUNT(*) FROM people WHERE age > 99", 0.1)
	if !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Fatalf("got %v, want budget exhausted", err)
	}
	if spent, _ := f.ledger.Spent("bob", "census"); spent.Epsilon != 0.30000000000000004 && spent.Epsilon != 0.3 {
		t.Fatalf("spent %+v, want 0.3", spent)
	}
	// A cached answer is still free after exhaustion.
	if res, err := f.run(t, e, "bob", "SELECT COUNT(*) FROM people WHERE age > 0", 0.1); err != nil || !res.Cached {
		t.Fatalf("cached repeat after exhaustion: %v %+v", err, res)
	}
}

// failingBackend wraps a backend and fails Aggregate with a chosen error.
type failingBackend struct {
	planner.Backend
	err error
}

func (b failingBackend) Aggregate(context.Context, *ir.BackendQuery, func(ir.BackendRow) error) error {
	return b.err
}

func TestFailuresAndRefunds(t *testing.T) {
	f := newFixture(t, t.TempDir())
	secret := errors.New(`connection refused`)
	down := release.New(failingBackend{f.be, sqlerr.Wrap(sqlerr.BackendUnavailable, secret, "the database is unavailable")}, f.ledger, release.Options{})
	_, err := f.run(t, down, "alice", "SELECT COUNT(*) FROM people", 1)
	if !sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("got %v", err)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 0 {
		t.Fatalf("a query that never ran was charged %+v", spent)
	}

	// A real failure after the query reached SQLite: the column exists in
	// the policy but not in the table. It stays charged and the client
	// sees a generic message without the backend's text.
	e := release.New(f.be, f.ledger, release.Options{})
	_, err = f.run(t, e, "alice", "SELECT SUM(ghost) FROM people", 1)
	if !sqlerr.HasCode(err, sqlerr.BackendFailed) {
		t.Fatalf("got %v, want BackendFailed", err)
	}
	if msg := err.Error(); strings.Contains(msg, "ghost") || strings.Contains(msg, "no such column") {
		t.Fatalf("backend text leaked to the client: %q", msg)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 1 {
		t.Fatalf("spent %+v after an executed failure, want 1", spent)
	}
	if pend, _ := f.ledger.Pending(); len(pend) != 0 {
		t.Fatalf("failed release left pending reservations: %+v", pend)
	}
}

// TestCrashBetweenCommitAndSend kills a child process right after the
// release is committed (charge durable, commit record deferred) and before
// it is returned, restarts, and checks that the crashed answer stays
// charged exactly once (its reservation pending), that the query is then
// either answered from a durable record for free or — the record was lost —
// charged and drawn afresh, and that from then on it is answered
// identically every time at no cost.
func TestCrashBetweenCommitAndSend(t *testing.T) {
	if dir := os.Getenv("DDP_RELEASE_CRASH_DIR"); dir != "" {
		f := newFixture(t, dir)
		e := release.New(f.be, f.ledger, release.Options{AfterCommit: func() { os.Exit(3) }})
		f.run(t, e, "alice", "SELECT sex, COUNT(*) FROM people GROUP BY sex", 0.7)
		t.Fatal("the crash hook did not run")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBetweenCommitAndSend$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DDP_RELEASE_CRASH_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child: %v\n%s", err, out)
	}
	f := newFixture(t, dir)
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 0.7 {
		t.Fatalf("after the crash spent = %+v, want exactly 0.7", spent)
	}
	pend, _ := f.ledger.Pending()
	e := release.New(f.be, f.ledger, release.Options{})
	a, err := f.run(t, e, "alice", "SELECT sex, COUNT(*) FROM people GROUP BY sex", 0.7)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.7
	switch {
	case len(pend) == 1 && !a.Cached:
		// The record was lost: the repeat is a new, charged release.
		want = 1.4
	case len(pend) == 0 && a.Cached:
	default:
		t.Fatalf("after the crash %d pending reservations and the repeat cached=%v: want (1, false) or (0, true)", len(pend), a.Cached)
	}
	b, err := f.run(t, e, "alice", "SELECT sex, COUNT(*) FROM people GROUP BY sex", 0.7)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Cached || !reflect.DeepEqual(a.Rows, b.Rows) {
		t.Fatalf("after restart: cached %v rows %v vs %v", b.Cached, a.Rows, b.Rows)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != want {
		t.Fatalf("spent %+v after the repeats, want %v", spent, want)
	}
	t.Logf("pending after crash: %d; spent after repeats: %v", len(pend), want)
}

func TestPostProcessing(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(1)})
	res, err := f.run(t, e, "alice", "SELECT age, COUNT(*) AS n FROM people GROUP BY age HAVING COUNT(*) > 5 ORDER BY n DESC, age LIMIT 10", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 || len(res.Columns) != 2 || res.Columns[1].Name != "n" {
		t.Fatalf("columns %+v, %d rows", res.Columns, len(res.Rows))
	}
	for i, r := range res.Rows {
		if r[1].Int <= 5 {
			t.Errorf("row %v passed HAVING COUNT(*) > 5", r)
		}
		if i > 0 && r[1].Int > res.Rows[i-1][1].Int {
			t.Errorf("rows not ordered by n DESC: %v after %v", r, res.Rows[i-1])
		}
		// Ages 10..99 have 11 or 12 people each; ages 0..9 and 100 none.
		if age := r[0].Int; age < 10 || age > 99 {
			t.Errorf("age %d with noisy count %d: ε = 5 noise cannot lift an empty key above 5 so often", age, r[1].Int)
		}
	}
}

// TestThresholdKeySelection groups by a column without a declared domain:
// keys come from the data and are released only above the noisy threshold,
// so the key held by a single person stays hidden while the seven large
// groups appear. With ε = 1 and δ = 1e-6 a one-person key passes with
// probability below 1e-6; a 142-person key fails with probability below
// e^-100.
func TestThresholdKeySelection(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{})
	res, err := f.run(t, e, "alice", "SELECT bucket, COUNT(*) FROM people GROUP BY bucket", 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, r := range res.Rows {
		keys = append(keys, r[0].Int)
	}
	if !reflect.DeepEqual(keys, []int64{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("released keys %v, want 0..6 and not the one-person key 99", keys)
	}
	if res.Charged.Delta != 1e-6 {
		t.Fatalf("charged %+v, want δ = 1e-6", res.Charged)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Delta != 1e-6 {
		t.Fatalf("ledger δ spent %g", spent.Delta)
	}
}

// TestThresholdKeysWithoutAggregate: GROUP BY without an aggregate over a
// column without a declared domain releases the keys that pass the noisy
// threshold of a hidden COUNT(*) — the same keys and the same charge as the
// query with COUNT(*) — and only the key column. Bob's budget has no δ, so
// his query is refused at plan time, before anything could be charged.
func TestThresholdKeysWithoutAggregate(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{})
	res, err := f.run(t, e, "alice", "SELECT bucket FROM people GROUP BY bucket ORDER BY bucket", 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, r := range res.Rows {
		if len(r) != 1 {
			t.Fatalf("row %v, want the key alone", r)
		}
		keys = append(keys, r[0].Int)
	}
	if !reflect.DeepEqual(keys, []int64{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("released keys %v, want 0..6 and not the one-person key 99", keys)
	}
	if res.Charged != (policies.Budget{Epsilon: 1, Delta: 1e-6}) {
		t.Fatalf("charged %+v, want ε 1 and δ 1e-6", res.Charged)
	}
	stmts, err := parser.Parse(parser.Postgres, "SELECT bucket FROM people GROUP BY bucket")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.p.Plan(planner.Request{User: f.pol.User("bob"), Epsilon: 0.1, Dialect: "postgres", Statement: &stmts[0]})
	if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) {
		t.Fatalf("without δ: %v, want 42501 at plan time", err)
	}
}

// TestPublicJoin groups by a column of a public table joined many-to-one:
// its keys come from the public table (all of them, the one without
// private rows too), and a public table whose declared key repeats is
// refused before anything is charged.
func TestPublicJoin(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(3)})
	res, err := f.run(t, e, "alice", "SELECT s.label, COUNT(*) FROM people p JOIN sexes s ON p.sex = s.code GROUP BY s.label", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Rows[0][0].Str != "F" || res.Rows[2][0].Str != "O" {
		t.Fatalf("rows %v, want the keys F, M, O of the public table", res.Rows)
	}
	// 500 Female and 500 Male; ε = 5 noise has scale 0.2.
	for i, want := range []int64{500, 500, 0} {
		if d := res.Rows[i][1].Int - want; d < -5 || d > 5 {
			t.Errorf("%v: count %d, true %d", res.Rows[i][0], res.Rows[i][1].Int, want)
		}
	}
	spent, _ := f.ledger.Spent("alice", "census")
	_, err = f.run(t, e, "alice", "SELECT s.label, COUNT(*) FROM people p JOIN dupsexes s ON p.sex = s.code GROUP BY s.label", 1)
	if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) || !strings.Contains(err.Error(), "repeated values") {
		t.Fatalf("join on a non-unique key: %v", err)
	}
	if again, _ := f.ledger.Spent("alice", "census"); again != spent {
		t.Fatalf("the refused join was charged: %+v -> %+v", spent, again)
	}
}

// TestPublicLeftJoin: a LEFT JOIN keeps every private row once; grouping by
// a column of the joined table releases the public keys plus NULL (the
// rows without a match), NULL noised and present even when no row lacks a
// match. Repeated keys are refused for LEFT joins too, and repeated NULL
// keys under IS NOT DISTINCT FROM, before any charge.
func TestPublicLeftJoin(t *testing.T) {
	f := newFixture(t, t.TempDir())
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(4)})
	counts := func(sql string) map[string]int64 {
		t.Helper()
		res, err := f.run(t, e, "alice", sql, 5)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got := map[string]int64{}
		for _, r := range res.Rows {
			k := r[0].Str
			if r[0].IsNull() {
				k = "NULL"
			}
			got[k] = r[1].Int
		}
		return got
	}
	near := func(sql string, got map[string]int64, want map[string]int64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: keys %v, want those of %v", sql, got, want)
		}
		for k, w := range want {
			g, ok := got[k]
			if !ok {
				t.Fatalf("%s: key %s missing from %v", sql, k, got)
			}
			// ε = 5: noise scale 0.2.
			if d := g - w; d < -5 || d > 5 {
				t.Errorf("%s: %s count %d, true %d", sql, k, g, w)
			}
		}
	}
	q := "SELECT s.label, COUNT(*) FROM people p LEFT JOIN femsexes s ON p.sex = s.code GROUP BY s.label"
	near(q, counts(q), map[string]int64{"F": 500, "NULL": 500})
	q = "SELECT s.label, COUNT(*) FROM people p LEFT OUTER JOIN sexes s ON p.sex = s.code GROUP BY s.label"
	near(q, counts(q), map[string]int64{"F": 500, "M": 500, "O": 0, "NULL": 0})
	// With =, a NULL key matches nothing: the repeated NULLs are harmless.
	q = "SELECT s.label, COUNT(*) FROM people p LEFT JOIN nullsexes s ON p.sex = s.code GROUP BY s.label"
	near(q, counts(q), map[string]int64{"F": 500, "X": 0, "Y": 0, "NULL": 500})

	spent, _ := f.ledger.Spent("alice", "census")
	for sql, msg := range map[string]string{
		"SELECT COUNT(*) FROM people p LEFT JOIN dupsexes s ON p.sex = s.code":                     "repeated values",
		"SELECT COUNT(*) FROM people p LEFT JOIN nullsexes s ON p.sex IS NOT DISTINCT FROM s.code": "several NULLs",
		"SELECT COUNT(*) FROM people p JOIN nullsexes s ON p.sex IS NOT DISTINCT FROM s.code":      "several NULLs",
	} {
		_, err := f.run(t, e, "alice", sql, 1)
		if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", sql, err, msg)
		}
	}
	if again, _ := f.ledger.Spent("alice", "census"); again != spent {
		t.Fatalf("a refused join was charged: %+v -> %+v", spent, again)
	}
	// The null-safe equality on a key without repeated NULLs is accepted.
	q = "SELECT s.label, COUNT(*) FROM people p JOIN femsexes s ON p.sex IS NOT DISTINCT FROM s.code GROUP BY s.label"
	near(q, counts(q), map[string]int64{"F": 500})
}

// blockingBackend holds every Aggregate call until release is closed,
// telling started when one begins.
type blockingBackend struct {
	planner.Backend
	started chan struct{}
	release chan struct{}
}

func (b blockingBackend) Aggregate(ctx context.Context, q *ir.BackendQuery, row func(ir.BackendRow) error) error {
	b.started <- struct{}{}
	<-b.release
	return b.Backend.Aggregate(ctx, q, row)
}

// TestWaitForIdenticalQueryIsCancellable: a query waiting for an
// identical one (the second of two concurrent copies waits and reads the
// first one's release) gives up when its own statement is cancelled or
// times out, at once and without a charge, instead of waiting for the
// other query; the first query is not disturbed, and a later copy is
// answered from its release.
func TestWaitForIdenticalQueryIsCancellable(t *testing.T) {
	f := newFixture(t, t.TempDir())
	b := blockingBackend{f.be, make(chan struct{}, 1), make(chan struct{})}
	e := release.New(b, f.ledger, release.Options{})
	const q = "SELECT COUNT(*) FROM people WHERE age > 40"
	u, pl := f.plan(t, "alice", q, 1)
	first := make(chan error, 1)
	go func() {
		_, err := e.Run(context.Background(), u, pl)
		first <- err
	}()
	<-b.started // the first copy holds the key and runs

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Run(ctx, u, pl)
	if !sqlerr.HasCode(err, sqlerr.QueryCanceled) {
		t.Fatalf("the cancelled waiter: %v, want the cancel error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the cancelled waiter returned after %v", d)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 1 {
		t.Errorf("spent %+v while the first copy runs, want its 1 only", spent)
	}

	close(b.release)
	if err := <-first; err != nil {
		t.Fatalf("the first copy: %v", err)
	}
	res, err := e.Run(context.Background(), u, pl)
	if err != nil || !res.Cached {
		t.Fatalf("a later copy: %+v, %v, want the stored release", res, err)
	}
	if spent, _ := f.ledger.Spent("alice", "census"); spent.Epsilon != 1 {
		t.Errorf("spent %+v after both, want 1", spent)
	}
}
