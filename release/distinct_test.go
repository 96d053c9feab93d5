package release_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
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

const distinctPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_RELEASE_PASSWORD
    budgets: {travel: {epsilon: 100000}}
    max_epsilon: 10
datasets:
  travel:
    tables:
      trips:
        unit: uid
        max_rows_per_unit: 2
        columns:
          city: {type: text}
          leg: {type: integer, bounds: [0, 2], domain: {range: [0, 2]}}
`

// The trips fixture: 300 travellers, each with three trips: to c(u mod 50)
// (leg 0), c(u+1 mod 50) (leg 1) and a city z<u> only they visit (leg 2),
// which sorts after every c.. . The bound k = 2 keeps each unit's two
// smallest (leg, city) tuples (the renderer's window order: group keys,
// then inputs), so the z cities never count: 50 distinct cities, not 350.
const travellers = 300

func tripsFixture(t *testing.T) (*release.Engine, *planner.Planner, *policies.Policy) {
	t.Helper()
	t.Setenv("DDP_TEST_RELEASE_PASSWORD", "pw")
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "trips.db")
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"CREATE TABLE trips (uid INTEGER, city TEXT, leg INTEGER)", "BEGIN"}
	for u := range travellers {
		stmts = append(stmts,
			fmt.Sprintf("INSERT INTO trips VALUES (%d, 'c%02d', 0), (%d, 'c%02d', 1), (%d, 'z%03d', 2)", u, u%50, u, (u+1)%50, u, u))
	}
	for _, s := range append(stmts, "COMMIT") {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	ledgerPath := filepath.Join(dir, "ledger.db")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(distinctPolicy, dbPath, ledgerPath)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	be, err := sqlite.Open(context.Background(), dbPath, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Check(); err != nil {
			t.Errorf("ledger check: %v", err)
		}
		l.Close()
		be.Close()
	})
	return release.New(be, l, release.Options{Source: noise.SeededSource(11)}), planner.New(pol), pol
}

// TestDistinctErrorMatchesAdvertisedScale runs distinct counts with known
// true answers through the whole release path (plan, SQLite, noise,
// post-processing) with distinct literals (no cache hits) and compares
// the empirical error with the advertised discrete Laplace noise:
// COUNT(DISTINCT city) = 50 after the bound (350 without it; k = 2,
// sensitivity 2), COUNT(DISTINCT uid) = 300 (sensitivity 1), and per leg
// (leg 1: 50 cities; leg 2: none after the bound; unbounded neighbours,
// grouped: sensitivity k = 2). n = 300 samples per check; the bounds are
// 5 standard errors, so a correct release fails with probability below
// 10⁻⁵ per check (and the seeded source makes the run reproducible).
func TestDistinctErrorMatchesAdvertisedScale(t *testing.T) {
	e, p, pol := tripsFixture(t)
	u := pol.User("alice")
	run := func(sqlText string, eps float64) *release.Result {
		t.Helper()
		stmts, err := parser.Parse(parser.Postgres, sqlText)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Plan(planner.Request{User: u, Epsilon: eps, Dialect: "postgres", Statement: &stmts[0]})
		if err != nil {
			t.Fatalf("%s: %v", sqlText, err)
		}
		res, err := e.Run(context.Background(), u, pl)
		if err != nil {
			t.Fatalf("%s: %v", sqlText, err)
		}
		return res
	}
	const n = 300
	type series struct {
		name         string
		errs         []float64
		scale, truth float64
	}
	check := func(s series, wantScale float64) {
		t.Helper()
		if s.scale != wantScale {
			t.Errorf("%s: advertised scale %g, want %g", s.name, s.scale, wantScale)
		}
		variance := discreteLaplaceVar(s.scale)
		mean, sq := 0.0, 0.0
		for _, x := range s.errs {
			mean += x
			sq += x * x
		}
		mean /= n
		empVar := sq/n - mean*mean
		if se := math.Sqrt(variance / n); math.Abs(mean) > 5*se {
			t.Errorf("%s: mean error %g around the true %g, want 0 ± %g", s.name, mean, s.truth, 5*se)
		}
		if se := math.Sqrt(5/float64(n)) * variance; math.Abs(empVar-variance) > 5*se {
			t.Errorf("%s: error variance %g, advertised %g (± %g)", s.name, empVar, variance, 5*se)
		}
	}
	cities := series{name: "COUNT(DISTINCT city)", truth: 50}
	units := series{name: "COUNT(DISTINCT uid)", truth: travellers}
	legCities := series{name: "leg 1: COUNT(DISTINCT city)", truth: 50}
	for i := range n {
		// Both aggregates in one query: ε 2 split evenly, so each has
		// ε = 1: scale 2 (cities, k = 2) and 1 (units).
		res := run(fmt.Sprintf("SELECT COUNT(DISTINCT city), COUNT(DISTINCT uid) AS travellers FROM trips WHERE leg <> %d", -1-i), 2)
		cities.errs = append(cities.errs, float64(res.Rows[0][0].Int)-cities.truth)
		units.errs = append(units.errs, float64(res.Rows[0][1].Int)-units.truth)
		cities.scale, units.scale = res.Columns[0].Scale, res.Columns[1].Scale

		res = run(fmt.Sprintf("SELECT leg, COUNT(DISTINCT city) FROM trips WHERE leg <> %d GROUP BY leg ORDER BY leg", -1-i), 1)
		if len(res.Rows) != 3 {
			t.Fatalf("grouped: %d rows, want one per declared leg", len(res.Rows))
		}
		legCities.errs = append(legCities.errs, float64(res.Rows[1][1].Int)-legCities.truth)
		legCities.scale = res.Columns[1].Scale
	}
	check(cities, 2)
	check(units, 1)
	// Grouped, unbounded neighbours: a unit's k = 2 rows change at most 2
	// groups' counts by 1 each.
	check(legCities, 2)
}
