package backends_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestVarianceOnEveryBackend plans the variance family over random data
// (integers and reals, some outside the declared bounds, some NULL, three
// groups), runs the true, noise-free parts on SQLite, PostgreSQL and
// MariaDB, and requires (1) the parts to be the same integers on every
// backend and (2) the value computed from them by the unit to equal the
// variance Go computes directly from the clamped values (up to the
// lattice's rounding). It also checks the dialect spellings against the
// databases' own functions: PostgreSQL's variance/stddev are the sample
// forms, MariaDB's VARIANCE/STD/STDDEV the population forms.
func TestVarianceOnEveryBackend(t *testing.T) {
	table := uniqueTable("registry_var")
	cols := map[string]string{
		"sqlite":   "u INTEGER, x INTEGER, r REAL, g TEXT",
		"postgres": "u BIGINT, x BIGINT, r DOUBLE PRECISION, g TEXT",
		"mysql":    "u BIGINT, x BIGINT, r DOUBLE, g VARCHAR(4)",
	}
	type row struct {
		x    *int64
		r    *float64
		g    string
		unit int
	}
	rng := rand.New(rand.NewPCG(7, 2026))
	var data []row
	var values []string
	for i := range 400 {
		rw := row{unit: i / 2, g: []string{"a", "b", "c"}[rng.IntN(3)]}
		if rng.IntN(10) > 0 {
			x := int64(rng.IntN(141)) - 20 // bounds [0, 100]
			rw.x = &x
		}
		if rng.IntN(10) > 0 {
			r := float64(rng.IntN(101100)-500) / 100 // bounds [0, 1000]
			rw.r = &r
		}
		data = append(data, rw)
		x, r := "NULL", "NULL"
		if rw.x != nil {
			x = fmt.Sprint(*rw.x)
		}
		if rw.r != nil {
			r = fmt.Sprint(*rw.r)
		}
		values = append(values, fmt.Sprintf("(%d, %s, %s, '%s')", rw.unit, x, r, rw.g))
	}
	bs := eachBackend(t, table, cols, values)

	t.Setenv("DDP_TEST_REGISTRY_VAR_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(fmt.Sprintf(`
version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_REGISTRY_VAR_PASSWORD
    budgets: {d: {epsilon: 100}}
    max_epsilon: 10
datasets:
  d:
    tables:
      %s:
        unit: u
        max_rows_per_unit: 2
        columns:
          x: {type: integer, bounds: [0, 100]}
          r: {type: real, bounds: [0, 1000]}
          g: {type: text, domain: {values: [a, b, c]}}
`, table)))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)

	// want is the variance (pop or samp) of the clamped non-NULL values of
	// group g ("" for all), NULL when undefined.
	want := func(col, g string, pop bool) (float64, bool) {
		var xs []float64
		for _, r := range data {
			if g != "" && r.g != g {
				continue
			}
			switch {
			case col == "x" && r.x != nil:
				xs = append(xs, min(max(float64(*r.x), 0), 100))
			case col == "r" && r.r != nil:
				xs = append(xs, min(max(*r.r, 0), 1000))
			}
		}
		n := float64(len(xs))
		if n == 0 || !pop && n == 1 {
			return 0, false
		}
		var mean, ss float64
		for _, x := range xs {
			mean += x / n
		}
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		if pop {
			return ss / n, true
		}
		return ss / (n - 1), true
	}

	pg, my := parser.Postgres, parser.MySQL
	for _, tc := range []struct {
		d   parser.Dialect
		sql string
		// per visible aggregate output: column, pop, sqrt
		cols []string
		pop  []bool
		sqrt []bool
	}{
		{pg, "SELECT var_pop(x), var_samp(x), stddev_pop(r), stddev_samp(r) FROM " + table,
			[]string{"x", "x", "r", "r"}, []bool{true, false, true, false}, []bool{false, false, true, true}},
		{pg, "SELECT g, variance(x), stddev(r) FROM " + table + " GROUP BY g",
			[]string{"x", "r"}, []bool{false, false}, []bool{false, true}},
		{my, "SELECT g, VARIANCE(x), STD(r), STDDEV(x), VAR_SAMP(r) FROM " + table + " GROUP BY g",
			[]string{"x", "r", "x", "r"}, []bool{true, true, true, false}, []bool{false, true, true, false}},
	} {
		stmts, err := parser.Parse(tc.d, tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: tc.d.String(), Statement: &stmts[0]})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		var first string
		for _, b := range bs {
			rows, err := backendtest.Collect(context.Background(), b.agg, pl.Backend)
			if err != nil {
				t.Fatalf("%s on %s: %v", tc.sql, b.name, err)
			}
			backendtest.Sort(rows)
			if got := fmt.Sprint(rows); first == "" {
				first = got
			} else if got != first {
				t.Errorf("%s: the parts differ on %s:\n%s\nvs\n%s", tc.sql, b.name, got, first)
			}
			for _, r := range rows {
				g := ""
				if len(r.Keys) > 0 {
					g = r.Keys[0].Str
				}
				ai := 0
				for _, o := range pl.Outputs[:pl.NumVisible] {
					if o.Kind != planner.OutAggregate {
						continue
					}
					parts := make([]aggregate.Noisy, len(o.Parts))
					for i, pi := range o.Parts {
						parts[i] = aggregate.Noisy{Units: r.Aggs[pi], Quantum: pl.Aggs[pi].Quantum}
					}
					got := o.Unit.Value(aggregate.Context{Arg: o.Arg}, parts)
					w, ok := want(tc.cols[ai], g, tc.pop[ai])
					if tc.sqrt[ai] {
						w = math.Sqrt(w)
					}
					switch {
					case !ok && got.Kind != ir.KindNull, ok && got.Kind != ir.KindFloat:
						t.Errorf("%s on %s, group %q, %s: %v, want %g (defined %t)", tc.sql, b.name, g, o.Name, got, w, ok)
					case ok && math.Abs(got.Float-w) > 1e-6*max(1, w):
						t.Errorf("%s on %s, group %q, %s: %.12g, want %.12g", tc.sql, b.name, g, o.Name, got.Float, w)
					}
					ai++
				}
			}
		}
	}

	// The databases' own functions, on the clamped column, name the
	// forms each dialect's spellings map to.
	nativeCheck := func(driver, dsn string, spellings map[string]bool) {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		popW, _ := want("x", "", true)
		sampW, _ := want("x", "", false)
		for fn, pop := range spellings {
			var got float64
			// WHERE: PostgreSQL's GREATEST ignores a NULL argument.
			q := fmt.Sprintf("SELECT %s(LEAST(GREATEST(x, 0), 100)) FROM %s WHERE x IS NOT NULL", fn, table)
			if err := db.QueryRow(q).Scan(&got); err != nil {
				t.Fatalf("%s: %s: %v", driver, q, err)
			}
			w := sampW
			if pop {
				w = popW
			}
			if u := aggregate.Lookup(map[string]aggregate.Dialect{"postgres": aggregate.PostgreSQL, "mysql": aggregate.MySQL}[driver], fn); u == nil {
				t.Errorf("%s: %s has no unit", driver, fn)
			} else if isSqrt := u == aggregate.StddevPop || u == aggregate.StddevSamp; isSqrt {
				w = math.Sqrt(w)
				if (u == aggregate.StddevPop) != pop {
					t.Errorf("%s: %s is mapped to %s", driver, fn, u.Name)
				}
			} else if (u == aggregate.VarPop) != pop {
				t.Errorf("%s: %s is mapped to %s", driver, fn, u.Name)
			}
			if math.Abs(got-w) > 1e-4+1e-9*w { // MariaDB rounds to 4 decimals
				t.Errorf("%s: %s = %.12g, want the %s form %.12g", driver, fn, got, map[bool]string{true: "population", false: "sample"}[pop], w)
			}
		}
	}
	if dsn := os.Getenv("DDP_TEST_POSTGRES_DSN"); dsn != "" {
		nativeCheck("postgres", dsn, map[string]bool{"variance": false, "var_samp": false, "var_pop": true, "stddev": false, "stddev_samp": false, "stddev_pop": true})
	}
	if dsn := os.Getenv("DDP_TEST_MYSQL_DSN"); dsn != "" {
		nativeCheck("mysql", dsn, map[string]bool{"variance": true, "var_pop": true, "var_samp": false, "std": true, "stddev": true, "stddev_pop": true, "stddev_samp": false})
	}
	if len(bs) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(bs))
	}
}
