package session

import (
	"fmt"
	"os"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

const distinctPolicy = `
version: 1
backend: {driver: %s, dsn: %q}
ledger: {path: %q}
users:
  - name: eve
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {hr: {epsilon: 1000}}
    default_epsilon: 1
    max_epsilon: 1
datasets:
  hr:
    tables:
      people:
        schema: %q
        unit: id
        max_rows_per_unit: 3
        columns:
          sex: {type: text}
`

// TestCountDistinctUnderCaseInsensitiveCollation: the unit id and the
// counted column are text in a case-insensitive collation (SQLite
// NOCASE, a PostgreSQL nondeterministic collation, MySQL
// utf8mb4_general_ci). 2000 units u0..u1999 with one row each, sex
// a<i mod 200>; units 0..99 have a second row spelled U<i>, A<i>.
//   - COUNT(DISTINCT sex) counts exact spellings on every backend: 300
//     (a0..a199, A0..A99), not the collation's 200.
//   - COUNT(DISTINCT id) counts units under the equality that makes 'u5'
//     and 'U5' one unit (the PARTITION BY's): 2000, not 2100 — counted by
//     spelling, one unit would add two, beyond its sensitivity 1.
//
// Noise: k = 3, ε = 1: scales 3 and 1; a deviation of 45 has probability
// below e^-15 and e^-45, far below the gaps of 100 it must tell apart.
func TestCountDistinctUnderCaseInsensitiveCollation(t *testing.T) {
	var rows []string
	for i := range 2000 {
		rows = append(rows, fmt.Sprintf("('u%d', 'a%d')", i, i%200))
		if i < 100 {
			rows = append(rows, fmt.Sprintf("('U%d', 'A%d')", i, i%200))
		}
	}
	for _, fx := range testBackends() {
		t.Run(fx.driver, func(t *testing.T) {
			be, dsn, schema := loadTestTable(t, fx.driver, fx.dsn, fmt.Sprintf("distinct_ci_%d", os.Getpid()), testTable{
				name: "people", rows: rows,
				columns: map[string]string{
					"sqlite":   "id TEXT COLLATE NOCASE, sex TEXT COLLATE NOCASE",
					"postgres": "id TEXT COLLATE {schema}.ci, sex TEXT COLLATE {schema}.ci",
					"mysql":    "id VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, sex VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
				},
				before: map[string][]string{
					"postgres": {"CREATE COLLATION {schema}.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"},
				},
			})
			f := totalityProxyPolicy(t, distinctPolicy, fx.driver, dsn, schema, "distinct", be)
			for _, tc := range []struct {
				sql  string
				want int64
			}{
				{"SELECT COUNT(DISTINCT sex) FROM people", 300},
				{"SELECT COUNT(DISTINCT id) FROM people", 2000},
				// Constants and expressions render and run on every
				// backend (a statement that failed would be charged).
				{"SELECT COUNT(DISTINCT 1) FROM people", 1},
				{"SELECT COUNT(DISTINCT NULL) FROM people", 0},
				{"SELECT COUNT(DISTINCT 'x') FROM people", 1},
				// a1, a10..a19, a100..a199 (and on MySQL, whose LIKE follows the
				// column's case-insensitive collation, A1 and A10..A19, which
				// lower() merges with them).
				{"SELECT COUNT(DISTINCT lower(sex)) FROM people WHERE sex LIKE 'a1%'", 111},
				{"SELECT COUNT(DISTINCT CASE WHEN sex = 'a1' THEN 1 ELSE 2 END) FROM people", 2},
			} {
				for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
					res, err, eps := f.run(t, probe{name: tc.sql, dialect: d, sql: tc.sql})
					if err != nil {
						t.Fatalf("%s: %v", tc.sql, err)
					}
					if got := res.Rows[0][0].Int; got < tc.want-45 || got > tc.want+45 {
						t.Errorf("%s (%v): %d, true %d", tc.sql, d, got, tc.want)
					}
					if eps != 1 && eps != 0 { // 0: the second dialect repeats the release
						t.Errorf("%s: charged ε %g", tc.sql, eps)
					}
				}
			}
		})
	}
}
