package session

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
)

const negZeroPolicy = `
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
      temps:
        schema: %q
        unit: id
        columns:
          r: {type: real, bounds: [-1, 1]}
`

// TestNegativeZeroKey: ceil(-0.4) is -0 (and so is round(-0.4)), which every
// backend groups with 0 but returns with the sign of whichever row it met
// first. The key was then matched by its spelling ("-0" is not "0"), so
// one person's value (-0.5 instead of 0, stored first) emptied the whole
// released group of key 0 — a change of 2000 in one count from one
// person. Both zeros are one key.
func TestNegativeZeroKey(t *testing.T) {
	for _, fx := range testBackends() {
		for _, first := range []string{"0", "-0.4"} {
			t.Run(fx.driver+"/"+first, func(t *testing.T) {
				rows := []string{"(0, " + first + ")"}
				for i := 1; i < 2000; i++ {
					rows = append(rows, fmt.Sprintf("(%d, 0)", i))
				}
				for i := 2000; i < 2500; i++ {
					rows = append(rows, fmt.Sprintf("(%d, 0.75)", i))
				}
				be, dsn, schema := loadTestTable(t, fx.driver, fx.dsn, fmt.Sprintf("ddp_negz_%d", os.Getpid()), testTable{
					name: "temps", rows: rows,
					columns: map[string]string{
						"sqlite":   "id INTEGER, r REAL",
						"postgres": "id BIGINT, r DOUBLE PRECISION",
						"mysql":    "id BIGINT, r DOUBLE",
					},
				})
				f := totalityProxyPolicy(t, negZeroPolicy, fx.driver, dsn, schema, "a", be)
				for _, q := range []string{
					"SELECT ceil(r) AS k, COUNT(*) FROM temps GROUP BY 1",
					"SELECT ceil(r) * 10 AS k, COUNT(*) FROM temps GROUP BY 1",
				} {
					text := q
					if schema != "" {
						text = strings.Replace(q, "FROM temps", "FROM "+schema+".temps", 1)
					}
					res, err, _ := f.run(t, probe{name: q, dialect: parser.Postgres, sql: text})
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					zeros := 0
					for _, r := range res.Rows {
						if r[0].Float == 0 {
							zeros++
							if n := r[1].Int; n < 1900 || n > 2100 {
								t.Errorf("%s: key %s released %d, true count 2000", q, r[0].SQL(), n)
							}
						}
					}
					if zeros != 1 {
						t.Errorf("%s: %d zero keys in %v", q, zeros, res.Rows)
					}
				}
			})
		}
	}
}
