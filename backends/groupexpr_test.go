package backends_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/internal/backendtest"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestGroupByExpressionsOnEveryBackend plans histogram-bin, CASE,
// width_bucket and remainder groupings (parser, planner: exprtype
// lowering and derived domain) and runs the true backend query on SQLite,
// PostgreSQL and MariaDB. Every key a backend returns lies in the derived
// domain (the NULL key of a row whose age is NULL aside: columns are taken
// to hold no NULL, and the release drops that group as it drops values
// outside a declared domain), and the counts per key equal those computed
// below in Go from the rows, with the column clamped to its declared
// bounds where the key computes with it and read as stored where a CASE
// condition compares it.
func TestGroupByExpressionsOnEveryBackend(t *testing.T) {
	table := uniqueTable("ddp_groupexpr")
	cols := map[string]string{
		"sqlite":   "u INTEGER, age INTEGER",
		"postgres": "u BIGINT, age BIGINT",
		"mysql":    "u BIGINT, age BIGINT",
	}
	ages := []*int64{}
	for _, a := range []int64{17, 18, 29, 30, 33, 45, 59, 60, 61, 89, 90, 90, 5, 120, -3} {
		ages = append(ages, &a)
	}
	ages = append(ages, nil)
	var rows []string
	for i, a := range ages {
		v := "NULL"
		if a != nil {
			v = fmt.Sprint(*a)
		}
		rows = append(rows, fmt.Sprintf("(%d, %s)", i, v))
	}
	backends := eachBackend(t, table, cols, rows)

	t.Setenv("DDP_TEST_GROUPEXPR_PASSWORD", "pw")
	pol, err := policies.LoadBytes(filepath.Join(t.TempDir(), "policy.yaml"), []byte(fmt.Sprintf(`
version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_GROUPEXPR_PASSWORD
    budgets: {d: {epsilon: 100}}
    max_epsilon: 10
datasets:
  d:
    tables:
      %s:
        unit: u
        columns:
          age: {type: integer, bounds: [17, 90]}
`, table)))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)
	clamp := func(a int64) int64 { return min(max(a, 17), 90) }
	// counts groups the rows by key(age) (age nil: NULL, unless the key
	// reads it as stored).
	// counts groups the rows by key; with only, the rows whose key is
	// not among only are filtered out (by the WHERE of the query).
	counts := func(key func(a *int64) ir.Value, only ...int64) map[string]int64 {
		out := map[string]int64{}
		for _, a := range ages {
			k := key(a)
			if len(only) > 0 && !slices.ContainsFunc(only, func(v int64) bool { return k.Kind == ir.KindInt && k.Int == v }) {
				continue
			}
			out[k.SQL()]++
		}
		return out
	}
	clamped := func(f func(int64) ir.Value) func(a *int64) ir.Value {
		return func(a *int64) ir.Value {
			if a == nil {
				return ir.Null()
			}
			return f(clamp(*a))
		}
	}
	band := func(a *int64) ir.Value {
		switch {
		case a != nil && *a < 30:
			return ir.String("young")
		case a != nil && *a < 60:
			return ir.String("middle")
		}
		return ir.Null()
	}
	pg, my := parser.Postgres, parser.MySQL
	tests := []struct {
		d    parser.Dialect
		sql  string
		want map[string]int64
	}{
		{pg, "SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM " + table + " GROUP BY 1",
			counts(clamped(func(a int64) ir.Value { return ir.Int(a / 10 * 10) }))},
		{my, "SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM " + table + " GROUP BY 1",
			counts(clamped(func(a int64) ir.Value { return ir.Float(math.Floor(float64(a)/10) * 10) }))},
		// Metabase's binning, in doubles.
		{pg, "SELECT ((floor(((age - 10.0) / 10.0)) * 10.0) + 10.0) AS \"age\", count(*) FROM " + table + " GROUP BY ((floor(((age - 10.0) / 10.0)) * 10.0) + 10.0)",
			counts(clamped(func(a int64) ir.Value { return ir.Float(math.Floor((float64(a)-10.0)/10.0)*10.0 + 10.0) }))},
		{pg, "SELECT CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'middle' END AS band, COUNT(*) FROM " + table + " GROUP BY band",
			counts(band)},
		{my, "SELECT CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'middle' END AS band, COUNT(*) FROM " + table + " GROUP BY 1",
			counts(band)},
		{pg, "SELECT width_bucket(age, 20, 80, 4), COUNT(*) FROM " + table + " GROUP BY 1",
			counts(clamped(func(a int64) ir.Value {
				switch {
				case a < 20:
					return ir.Int(0)
				case a >= 80:
					return ir.Int(5)
				}
				return ir.Int((a-20)*4/60 + 1)
			}))},
		{my, "SELECT age % 7, COUNT(*) FROM " + table + " GROUP BY age % 7",
			counts(clamped(func(a int64) ir.Value { return ir.Int(a % 7) }))},
		// WHERE on the key alone narrows the key set to 30 and 60; the
		// rows it filters are those of the dropped keys.
		{pg, "SELECT floor(age / 10) * 10, COUNT(*) FROM " + table + " WHERE floor(age / 10) * 10 IN (30, 60) GROUP BY 1",
			counts(func(a *int64) ir.Value {
				if a == nil {
					return ir.Null()
				}
				return ir.Int(clamp(*a) / 10 * 10)
			}, 30, 60)},
		{my, "SELECT age % 7, COUNT(*) FROM " + table + " WHERE age % 7 BETWEEN 2 AND 3 GROUP BY 1",
			counts(clamped(func(a int64) ir.Value { return ir.Int(a % 7) }), 2, 3)},
		{pg, "SELECT COUNT(*) FROM " + table + " GROUP BY age > 60",
			counts(func(a *int64) ir.Value {
				if a == nil {
					return ir.Null()
				}
				return ir.Bool(*a > 60)
			})},
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
		dom := pl.Groups[0].Domain
		if pl.Keys.Mode != planner.KeysDomain || dom == nil {
			t.Fatalf("%s: keys %+v, want a derived domain", tc.sql, pl.Keys)
		}
		if strings.Contains(tc.sql, "WHERE") && len(dom) != 2 {
			t.Errorf("%s: keys %v, want the two WHERE allows", tc.sql, dom)
		}
		for _, b := range backends {
			got, err := backendtest.Collect(context.Background(), b.agg, pl.Backend)
			if err != nil {
				t.Errorf("%s (%v client) on %s: %v", tc.sql, tc.d, b.name, err)
				continue
			}
			have := map[string]int64{}
			for _, r := range got {
				k := normalizeKey(r.Keys[0], pl.Groups[0].Type)
				have[k.SQL()] = r.Aggs[0]
				inDom := slices.ContainsFunc(dom, func(d ir.Value) bool { return d.Kind == k.Kind && ir.CompareValues(d, k) == 0 })
				if !inDom && !k.IsNull() {
					t.Errorf("%s on %s: key %v is not in the derived domain %v", tc.sql, b.name, k, dom)
				}
			}
			if fmt.Sprint(have) != fmt.Sprint(tc.want) {
				t.Errorf("%s (%v client) on %s: counts %v, want %v", tc.sql, tc.d, b.name, have, tc.want)
			}
		}
	}
	if len(backends) < 3 {
		t.Logf("ran on %d backends; set DDP_TEST_POSTGRES_DSN and DDP_TEST_MYSQL_DSN for all three", len(backends))
	}
}

// normalizeKey is the release's normalisation of a backend key to the
// key's type (SQLite and MySQL return truth values as 0/1, SQLite an
// integral real as an integer).
func normalizeKey(v ir.Value, typ string) ir.Value {
	switch {
	case typ == policies.TypeBoolean && v.Kind == ir.KindInt:
		return ir.Bool(v.Int != 0)
	case typ == policies.TypeReal && v.Kind == ir.KindInt:
		return ir.Float(float64(v.Int))
	}
	return v
}
