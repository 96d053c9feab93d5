package session

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

const collationPolicy = `
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
        max_rows_per_unit: 3
        columns:
          sex: {type: text, domain: {values: ['F', 'f', 'F ', 'M']}}
`

// TestGroupByUnderCaseInsensitiveCollation: a text column whose
// collation (or type) compares case- or pad-insensitively — MySQL's usual
// utf8mb4_general_ci, a PostgreSQL nondeterministic collation (or
// citext), SQLite's COLLATE NOCASE — groups 'F', 'f' (and on MySQL 'F ')
// together and returns the spelling of whichever row the backend met
// first. Grouped so, one person's spelling (the first row: 'f' instead
// of 'F') moved the whole group's count from key 'F' to key 'f' — a
// change of hundreds in one released count from one person, far beyond
// the sensitivity the noise is calibrated to. Each declared spelling
// must count its own rows only, on every backend.
func TestGroupByUnderCaseInsensitiveCollation(t *testing.T) {
	var rows []string
	for i := range 10000 {
		s := "F"
		switch {
		case i == 0:
			s = "f" // the one person whose spelling decides
		case i%10 == 5:
			s = "F "
		case i%100 >= 80:
			s = "M"
		}
		rows = append(rows, fmt.Sprintf("(%d, '%s')", i, s))
	}
	for _, fx := range testBackends() {
		t.Run(fx.driver, func(t *testing.T) {
			be, dsn, schema := loadTestTable(t, fx.driver, fx.dsn, fmt.Sprintf("ddp_coll_%d", os.Getpid()), testTable{
				name: "people", rows: rows,
				columns: map[string]string{
					"sqlite":   "id INTEGER, sex TEXT COLLATE NOCASE",
					"postgres": "id BIGINT, sex TEXT COLLATE {schema}.ci",
					"mysql":    "id BIGINT, sex VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
				},
				before: map[string][]string{
					"postgres": {"CREATE COLLATION {schema}.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"},
				},
			})
			f := totalityProxyPolicy(t, collationPolicy, fx.driver, dsn, schema, "a", be)
			// True counts (i%10 == 5 wins over M): f 1, 'F ' 1000, M 1800,
			// F 7199. The noise (three rows per unit, ε 0.1) stays far
			// below the tolerance, the merged group far above it.
			want := map[string]int64{"F": 7199, "f": 1, "F ": 1000, "M": 1800}
			for _, q := range []string{
				"SELECT sex, COUNT(*) FROM people GROUP BY sex",
				"SELECT sex, COUNT(*) FROM people WHERE sex IS NOT NULL GROUP BY sex",
				"SELECT lower(sex) AS k, COUNT(*) FROM people GROUP BY 1",
			} {
				for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
					res, err, _ := f.run(t, probe{name: q, dialect: d, sql: q})
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					got := map[string]int64{}
					for _, r := range res.Rows {
						got[r[0].Str] = r[1].Int
					}
					exp := want
					if strings.Contains(q, "lower") {
						exp = map[string]int64{"f": 7200, "f ": 1000, "m": 1800}
					}
					for k, n := range exp {
						if d := got[k] - n; d > 400 || d < -400 {
							t.Errorf("%s: key %q released %d, true count %d (all: %v)", q, k, got[k], n, got)
						}
					}
				}
			}
		})
	}
}
