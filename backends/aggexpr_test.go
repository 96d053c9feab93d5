package backends_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestExpressionAggregatesOnEveryBackend plans aggregates over expressions
// (parser, planner: exprtype lowering and range) and runs the true,
// noise-free backend query on SQLite, PostgreSQL and MariaDB, in its
// bounded form (max_rows_per_unit 2; one unit has 4 rows, so the window's
// ORDER BY over the rendered argument decides which 2 it keeps). The expected
// values are computed below in Go from the same rows, clamping to the
// declared bounds where the expression computes with a column.
func TestExpressionAggregatesOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_aggexpr")
	cols := map[string]string{
		"sqlite":   "u INTEGER, age INTEGER, income REAL, sex TEXT",
		"postgres": "u BIGINT, age BIGINT, income DOUBLE PRECISION, sex TEXT",
		"mysql":    "u BIGINT, age BIGINT, income DOUBLE, sex VARCHAR(4)",
	}
	type row struct {
		unit   int
		age    *int64
		income *float64
		sex    string
	}
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	data := []row{
		{1, i64(30), f64(100.5), "F"},
		{1, i64(45), f64(2000), "M"}, // income above its bounds
		{2, i64(70), f64(10.25), "F"},
		{2, nil, nil, "F"},
		{3, i64(-5), f64(0.5), ""}, // age below its bounds, sex NULL
		{4, i64(41), f64(999.75), "M"},
		// Unit 5 has more rows than max_rows_per_unit: the backend keeps
		// the 2 with the smallest argument values, NULLs first.
		{5, i64(90), f64(700), "F"},
		{5, i64(10), f64(3), "M"},
		{5, nil, f64(1), "F"},
		{5, i64(60), nil, "F"},
	}
	var rows []string
	for _, r := range data {
		age, inc, sex := "NULL", "NULL", "NULL"
		if r.age != nil {
			age = fmt.Sprint(*r.age)
		}
		if r.income != nil {
			inc = fmt.Sprint(*r.income)
		}
		if r.sex != "" {
			sex = "'" + r.sex + "'"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s)", r.unit, age, inc, sex))
	}
	backends := eachBackend(t, table, cols, rows)

	t.Setenv("DDP_TEST_AGGEXPR_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(fmt.Sprintf(`
version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_AGGEXPR_PASSWORD
    budgets: {d: {epsilon: 100}}
    max_epsilon: 10
datasets:
  d:
    tables:
      %s:
        unit: u
        max_rows_per_unit: 2
        columns:
          age: {type: integer, bounds: [0, 100]}
          income: {type: real, bounds: [0, 1000]}
          sex: {type: text}
`, table)))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)

	clampAge := func(r row) (int64, bool) {
		if r.age == nil {
			return 0, false
		}
		return min(max(*r.age, 0), 100), true
	}
	// kept is what the bounded backend query reads: per unit, the 2 rows
	// with the smallest values of the argument f, NULLs first.
	kept := func(f func(r row) (float64, bool)) []row {
		var out []row
		for u := 1; u <= 5; u++ {
			var rs []row
			for _, r := range data {
				if r.unit == u {
					rs = append(rs, r)
				}
			}
			slices.SortStableFunc(rs, func(a, b row) int {
				va, oka := f(a)
				vb, okb := f(b)
				switch {
				case !oka || !okb:
					return cmp.Compare(btoi(oka), btoi(okb))
				}
				return cmp.Compare(va, vb)
			})
			out = append(out, rs[:min(2, len(rs))]...)
		}
		return out
	}
	asFloat := func(f func(r row) (int64, bool)) func(r row) (float64, bool) {
		return func(r row) (float64, bool) { v, ok := f(r); return float64(v), ok }
	}
	sumInt := func(f func(r row) (int64, bool)) int64 {
		var s int64
		for _, r := range kept(asFloat(f)) {
			if v, ok := f(r); ok {
				s += v
			}
		}
		return s
	}
	countOf := func(f func(r row) (int64, bool)) int64 {
		var n int64
		for _, r := range kept(asFloat(f)) {
			if _, ok := f(r); ok {
				n++
			}
		}
		return n
	}
	indicator := func(r row) (int64, bool) {
		if r.age != nil && *r.age > 40 { // compared as stored
			return 1, true
		}
		return 0, true
	}
	// MySQL's truth value of age > 40: 1, 0, or NULL when age is NULL.
	gt40 := func(r row) (int64, bool) {
		if r.age == nil {
			return 0, false
		}
		return int64(btoi(*r.age > 40)), true
	}
	double := func(r row) (int64, bool) { a, ok := clampAge(r); return 2 * a, ok }
	minus17 := func(r row) (int64, bool) { a, ok := clampAge(r); return a - 17, ok }
	half := func(r row) (int64, bool) { a, ok := clampAge(r); return a / 2, ok }
	female := func(r row) (int64, bool) { return 1, r.sex == "F" }
	// AVG(age) FILTER (WHERE sex = 'F'): the rows of other sexes are NULL
	// to both the sum and the hidden count.
	femaleAge := func(r row) (int64, bool) {
		if r.sex != "F" {
			return 0, false
		}
		return clampAge(r)
	}
	incomeK := func(r row) (float64, bool) {
		if r.income == nil {
			return 0, false
		}
		return min(max(*r.income, 0), 1000) / 1000, true
	}

	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d    parser.Dialect
		sql  string
		want func(quantum float64) []int64
	}{
		{pg, "SELECT SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM " + table, func(float64) []int64 { return []int64{sumInt(indicator)} }},
		{my, "SELECT SUM(CASE WHEN age > 40 THEN 1 ELSE 0 END) FROM " + table, func(float64) []int64 { return []int64{sumInt(indicator)} }},
		{my, "SELECT SUM(IF(age > 40, 1, 0)) FROM " + table, func(float64) []int64 { return []int64{sumInt(indicator)} }},
		{my, "SELECT SUM(age > 40) FROM " + table, func(float64) []int64 { return []int64{sumInt(gt40)} }},
		{my, "SELECT AVG(age > 40) FROM " + table, func(float64) []int64 { return []int64{sumInt(gt40), countOf(gt40)} }},
		{pg, "SELECT SUM(age * 2) FROM " + table, func(float64) []int64 { return []int64{sumInt(double)} }},
		{my, "SELECT SUM(age * 2) FROM " + table, func(float64) []int64 { return []int64{sumInt(double)} }},
		{pg, "SELECT AVG(age - 17) FROM " + table, func(float64) []int64 { return []int64{sumInt(minus17), countOf(minus17)} }},
		{pg, "SELECT COUNT(CASE WHEN sex = 'F' THEN 1 END) FROM " + table, func(float64) []int64 { return []int64{countOf(female)} }},
		{my, "SELECT COUNT(CASE WHEN sex = 'F' THEN 1 END) FROM " + table, func(float64) []int64 { return []int64{countOf(female)} }},
		{pg, "SELECT COUNT(*) FILTER (WHERE sex = 'F') FROM " + table, func(float64) []int64 { return []int64{countOf(female)} }},
		{pg, "SELECT AVG(age) FILTER (WHERE sex = 'F') FROM " + table, func(float64) []int64 { return []int64{sumInt(femaleAge), countOf(femaleAge)} }},
		{pg, "SELECT SUM(age / 2) FROM " + table, func(float64) []int64 { return []int64{sumInt(half)} }},
		{my, "SELECT SUM(age DIV 2) FROM " + table, func(float64) []int64 { return []int64{sumInt(half)} }},
		{pg, "SELECT SUM(income / 1000) FROM " + table, func(q float64) []int64 {
			var s int64
			for _, r := range kept(incomeK) {
				if x, ok := incomeK(r); ok {
					s += int64(math.Floor(x/q + 0.5))
				}
			}
			return []int64{s}
		}},
		// A tiny real range: the lattice step is the smallest normal double.
		{pg, "SELECT SUM(CASE WHEN age > 40 THEN 1e-300 ELSE 0 END) FROM " + table, func(q float64) []int64 {
			tiny := func(r row) (float64, bool) {
				if v, _ := indicator(r); v == 1 {
					return 1e-300, true
				}
				return 0, true
			}
			var s int64
			for _, r := range kept(tiny) {
				x, _ := tiny(r)
				s += int64(math.Floor(x/q + 0.5))
			}
			return []int64{s}
		}},
	}
	for _, tc := range tests {
		stmts, err := parser.Parse(tc.d, tc.sql)
		if err != nil || len(stmts) != 1 {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		pl, err := p.Plan(planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: tc.d.String(), Statement: &stmts[0]})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if pl.Backend.MaxRowsPerUnit != 2 {
			t.Fatalf("%s: not the bounded form: %+v", tc.sql, pl.Backend)
		}
		want := fmt.Sprint(tc.want(pl.Aggs[0].Quantum))
		for _, b := range backends {
			got, err := backendtest.Collect(context.Background(), b.agg, pl.Backend)
			if err != nil {
				t.Errorf("%s (%v client) on %s: %v", tc.sql, tc.d, b.name, err)
				continue
			}
			if len(got) != 1 || fmt.Sprint(got[0].Aggs) != want {
				t.Errorf("%s (%v client) on %s: %v, want %s", tc.sql, tc.d, b.name, got, want)
			}
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}
