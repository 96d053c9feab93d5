package release_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlite"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

const synPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {pay: {epsilon: 1000}}
    max_epsilon: 100
  - name: bob
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {pay: {epsilon: 5}}
    max_epsilon: 5
datasets:
  pay:
    model: blowfish
    secrets: {distance: {column: salary, theta: %d}}
    synopses:
      - {table: staff, column: salary, fanout: 4}
    tables:
      staff:
        unit: id
        columns:
          salary: {type: integer, domain: {range: [0, 199]}}
`

// synSalary is the fixture: 2000 staff, salary (i*7)%230 − 10 (so some
// are below 0 and above 199: clamped by the synopsis), every 50th NULL.
const synStaff = 2000

func synSalary(i int) (int64, bool) {
	if i%50 == 0 {
		return 0, false
	}
	return int64((i*7)%230 - 10), true
}

// synTruth is the true count of lo ≤ clamp(salary) ≤ hi over non-NULL rows
// (the clamped column is what the synopsis protects; a query beyond the
// domain sees the clamped values).
func synTruth(lo, hi int64) int64 {
	var n int64
	for i := range synStaff {
		v, ok := synSalary(i)
		if !ok {
			continue
		}
		v = min(max(v, 0), 199)
		if v >= lo && v <= hi {
			n++
		}
	}
	return n
}

type synFixture struct {
	dir, db string
	pol     *policies.Policy
	p       *planner.Planner
	be      planner.Backend
	led     *ledger.Ledger
	closer  func()
}

func newSynFixture(t *testing.T, dir string, theta int) *synFixture {
	t.Helper()
	t.Setenv("DDP_TEST_RELEASE_PASSWORD", "pw")
	f := &synFixture{dir: dir, db: filepath.Join(dir, "pay.db")}
	db, err := sql.Open("sqlite3", "file:"+f.db)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"CREATE TABLE IF NOT EXISTS staff (id INTEGER, salary INTEGER)", "DELETE FROM staff", "BEGIN"}
	for i := range synStaff {
		if v, ok := synSalary(i); ok {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO staff VALUES (%d, %d)", i, v))
		} else {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO staff VALUES (%d, NULL)", i))
		}
	}
	for _, s := range append(stmts, "COMMIT") {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	f.open(t, theta)
	return f
}

// open (re)opens the policy, backend and ledger: a restart.
func (f *synFixture) open(t *testing.T, theta int) {
	t.Helper()
	ledgerPath := filepath.Join(f.dir, "ledger.db")
	pol, err := policies.LoadBytes(filepath.Join(f.dir, "policy.yaml"), fmt.Appendf(nil, synPolicy, f.db, ledgerPath, theta))
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	be, err := sqlite.Open(context.Background(), f.db, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.pol, f.p, f.be, f.led = pol, planner.New(pol), be, led
	f.closer = f.close(t)
	t.Cleanup(f.closer)
}

func (f *synFixture) close(t *testing.T) func() {
	led, be := f.led, f.be
	once := sync.Once{}
	return func() {
		once.Do(func() {
			if err := led.Check(); err != nil {
				t.Errorf("ledger check: %v", err)
			}
			led.Close()
			be.Close()
		})
	}
}

func (f *synFixture) run(t *testing.T, e *release.Engine, user, q string, eps float64) *release.Result {
	t.Helper()
	stmts, err := parser.Parse(parser.Postgres, q)
	if err != nil {
		t.Fatal(err)
	}
	u := f.pol.User(user)
	pl, err := f.p.Plan(planner.Request{User: u, Epsilon: eps, Dialect: "postgres", Statement: &stmts[0]})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if pl.Synopsis == nil {
		t.Fatalf("%s: not planned as a synopsis answer", q)
	}
	res, err := e.Run(context.Background(), u, pl)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

func TestSynopsisChargedOnceAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	f := newSynFixture(t, dir, 10)
	e := release.New(f.be, f.led, release.Options{Source: noise.CryptoSource()})

	first := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary BETWEEN 20 AND 120", 2)
	if first.Cached || first.Charged.Epsilon != 2 {
		t.Fatalf("first: cached %v charged %+v", first.Cached, first.Charged)
	}
	if first.Columns[0].Scale <= 0 || first.Columns[0].CI95 <= 0 {
		t.Errorf("first: scale %g ci95 %g, want the raw estimator's", first.Columns[0].Scale, first.Columns[0].CI95)
	}
	spent, _ := f.led.Spent("alice", "pay")
	// Other ranges, other operators: same synopsis, free, and consistent
	// (additive, because they are differences of one cumulative vector).
	a := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary >= 20 AND salary < 70", 2)
	b := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary > 69 AND salary <= 120", 2)
	for _, r := range []*release.Result{a, b} {
		if !r.Cached || r.Charged.Epsilon != 0 {
			t.Fatalf("later range: cached %v charged %+v", r.Cached, r.Charged)
		}
	}
	if a.Rows[0][0].Int+b.Rows[0][0].Int != first.Rows[0][0].Int {
		t.Errorf("[20,69] + [70,120] = %d + %d ≠ [20,120] = %d", a.Rows[0][0].Int, b.Rows[0][0].Int, first.Rows[0][0].Int)
	}
	// Bob's range count at the same ε is free too: the release is public.
	if r := f.run(t, e, "bob", "SELECT COUNT(*) FROM staff WHERE salary < 5", 2); !r.Cached {
		t.Error("bob paid for a released synopsis")
	}
	if again, _ := f.led.Spent("alice", "pay"); again != spent {
		t.Fatalf("spent %+v after free answers, was %+v", again, spent)
	}
	// The total is exact (distance secrets never change it).
	if r := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary >= -1000000", 2); r.Rows[0][0].Int != synTruth(0, 199) {
		t.Errorf("total %d, want exact %d", r.Rows[0][0].Int, synTruth(0, 199))
	}

	// Restart: a new policy load, backend, ledger and engine.
	f.closer()
	f.open(t, 10)
	e = release.New(f.be, f.led, release.Options{Source: noise.CryptoSource()})
	r := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE 20 <= salary AND salary <= 120", 2)
	if !r.Cached || r.Rows[0][0].Int != first.Rows[0][0].Int {
		t.Fatalf("after restart: cached %v, %v (first %v)", r.Cached, r.Rows, first.Rows)
	}
	// Another ε is another release.
	if r := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary < 70", 3); r.Cached || r.Charged.Epsilon != 3 {
		t.Fatalf("new ε: cached %v charged %+v", r.Cached, r.Charged)
	}
	// A different θ is a different policy fingerprint: released afresh.
	f.closer()
	f.open(t, 20)
	e = release.New(f.be, f.led, release.Options{Source: noise.CryptoSource()})
	if r := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary < 70", 2); r.Cached {
		t.Fatal("a changed θ reused the old synopsis")
	}
}

// TestSynopsisConcurrentFirstQueries: many sessions asking different
// ranges at once before any synopsis exists are charged exactly once.
func TestSynopsisConcurrentFirstQueries(t *testing.T) {
	f := newSynFixture(t, t.TempDir(), 5)
	e := release.New(f.be, f.led, release.Options{Source: noise.CryptoSource()})
	var wg sync.WaitGroup
	results := make([]*release.Result, 8)
	for i := range results {
		wg.Go(func() {
			results[i] = f.run(t, e, "bob", fmt.Sprintf("SELECT COUNT(*) FROM staff WHERE salary < %d", 10+20*i), 1.5)
		})
	}
	wg.Wait()
	charged := 0
	for _, r := range results {
		if r != nil && !r.Cached {
			charged++
		}
	}
	spent, _ := f.led.Spent("bob", "pay")
	if charged != 1 || spent.Epsilon != 1.5 {
		t.Fatalf("%d answers charged, bob spent %+v; want exactly one charge of 1.5", charged, spent)
	}
}

// TestSynopsisAccuracy is the end-to-end statistical check: each ε is a
// separate release, so 150 slightly different ε give 150 independent
// synopses. The mean squared error of range answers must stay below the
// raw estimator's analytic variance (the advertised scale²; inference only
// removes error on average) and the mean error near 0.
func TestSynopsisAccuracy(t *testing.T) {
	f := newSynFixture(t, t.TempDir(), 10)
	e := release.New(f.be, f.led, release.Options{Source: noise.SeededSource(3)})
	ranges := [][2]int64{{20, 120}, {0, 9}, {55, 58}, {100, 199}}
	const reps = 150
	for _, rg := range ranges {
		var se, sum, adv float64
		for i := range reps {
			eps := 1 + float64(i)/1000
			r := f.run(t, e, "alice", fmt.Sprintf("SELECT COUNT(*) FROM staff WHERE salary BETWEEN %d AND %d", rg[0], rg[1]), eps)
			d := float64(r.Rows[0][0].Int - synTruth(rg[0], rg[1]))
			se += d * d
			sum += d
			adv += r.Columns[0].Scale * r.Columns[0].Scale
		}
		mse, mean, adv := se/reps, sum/reps, adv/reps
		t.Logf("range %v: MSE %.2f, mean error %.2f, raw variance %.2f", rg, mse, mean, adv)
		if mse > 1.3*adv {
			t.Errorf("range %v: MSE %.2f above the raw variance %.2f", rg, mse, adv)
		}
		if math.Abs(mean) > 6*math.Sqrt(adv/reps)+1 {
			t.Errorf("range %v: mean error %.2f", rg, mean)
		}
	}
}

// TestSynopsisOverAValueThatIsNotAnInteger: SQLite lets a column declared
// integer hold text or a fraction. The histogram once failed, after the
// charge, when one row held such a value: whether the query failed told
// whether someone's value was not an integer. Such a row is left out of
// the histogram (a decision on that row alone), and the answer comes.
func TestSynopsisOverAValueThatIsNotAnInteger(t *testing.T) {
	for _, odd := range []string{"'x'", "2.5", "X'00'"} {
		t.Run(odd, func(t *testing.T) {
			dir := t.TempDir()
			f := newSynFixture(t, dir, 10)
			db, err := sql.Open("sqlite3", "file:"+f.db)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO staff VALUES (99999, " + odd + ")"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			e := release.New(f.be, f.led, release.Options{Source: noise.SeededSource(1)})
			r := f.run(t, e, "alice", "SELECT COUNT(*) FROM staff WHERE salary BETWEEN 20 AND 120", 2)
			if len(r.Rows) != 1 {
				t.Fatalf("rows %v", r.Rows)
			}
		})
	}
}
