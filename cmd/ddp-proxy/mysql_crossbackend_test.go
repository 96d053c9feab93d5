package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestSameNoisyAnswersOnEveryBackend loads one table into SQLite, MariaDB
// and (when DDP_TEST_POSTGRES_DSN is set) PostgreSQL, serves each through
// its own proxy, and asks each the same 400 private counts over the MySQL
// front end (a new literal each time, so none is answered from the
// release cache). The noise of each backend's answers must have mean 0
// and the variance of the discrete Laplace at scale 1/ε, and the backends'
// means must agree with each other. Each check allows 5 standard errors
// (normal approximation; the sample variance's standard error uses the
// Laplace fourth moment 6σ⁴): a false failure has probability about
// 10⁻⁶ per check.
func TestSameNoisyAnswersOnEveryBackend(t *testing.T) {
	myDSN := mariaDSN(t)
	const rows, queries = 250, 400
	name := fmt.Sprintf("ddp_myx_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	var vals []string
	trueCount := 0
	for i := 1; i <= rows; i++ {
		age := 18 + (i*7919)%73
		if age > 40 {
			trueCount++
		}
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, age))
	}
	create := "CREATE TABLE " + name + " (id BIGINT NOT NULL PRIMARY KEY, age BIGINT)"
	insert := "INSERT INTO " + name + " VALUES " + strings.Join(vals, ",")
	load := func(driver, dsn string) {
		t.Helper()
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(create); err != nil {
			t.Fatalf("%s: %v", driver, err)
		}
		t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + name); db.Close() })
		if _, err := db.Exec(insert); err != nil {
			t.Fatalf("%s: %v", driver, err)
		}
	}
	dir := t.TempDir()
	backends := map[string]string{} // name → backend YAML
	litePath := filepath.Join(dir, "x.db")
	load("sqlite3", "file:"+litePath)
	backends["sqlite"] = fmt.Sprintf("{driver: sqlite, dsn: %q}", litePath)
	load("mysql", myDSN)
	backends["mysql"] = fmt.Sprintf("{driver: mysql, dsn: %q}", myDSN)
	if pg := os.Getenv("DDP_TEST_POSTGRES_DSN"); pg != "" {
		load("postgres", pg)
		backends["postgres"] = fmt.Sprintf("{driver: postgres, dsn: %q}", pg)
	}

	const eps = 1.0
	noise := map[string][]float64{}
	for be, yaml := range backends {
		path := filepath.Join(dir, be+".yaml")
		pol := fmt.Sprintf(`version: 1
backend: %s
listen: {postgres: "off", mysql: 127.0.0.1:0, auth: trust}
ledger: {path: %s-ledger.db}
users:
  - name: analyst
    password_env: HOME
    budgets: {d: {epsilon: 10000}}
    max_epsilon: 1
datasets:
  d:
    tables:
      %s:
        unit: id
        columns:
          age: {type: integer, bounds: [0, 120]}
`, yaml, be, name)
		if err := os.WriteFile(path, []byte(pol), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := policies.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		addr := serveMySQL(t, p)
		db, err := sql.Open("mysql", "analyst:x@tcp("+addr+")/d?interpolateParams=true")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if _, err := db.Exec("SET @ddp_epsilon = 1"); err != nil {
			t.Fatal(err)
		}
		for i := range queries {
			// age > 40 AND age <> -i: the same true count, a new query.
			var n int64
			if err := db.QueryRow("SELECT COUNT(*) FROM "+name+" WHERE age > ? AND age <> ?", 40, -1-i).Scan(&n); err != nil {
				t.Fatalf("%s query %d: %v", be, i, err)
			}
			noise[be] = append(noise[be], float64(n-int64(trueCount)))
		}
	}
	// Discrete Laplace with scale 1/ε: Var = 2e^-ε / (1-e^-ε)².
	q := math.Exp(-eps)
	wantVar := 2 * q / ((1 - q) * (1 - q))
	se := math.Sqrt(wantVar / queries)
	stats := func(xs []float64) (mean, v float64) {
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		for _, x := range xs {
			v += (x - mean) * (x - mean)
		}
		return mean, v / float64(len(xs)-1)
	}
	means := map[string]float64{}
	for be, xs := range noise {
		m, v := stats(xs)
		means[be] = m
		t.Logf("%s: noise mean %.3f, variance %.3f (want 0, %.3f)", be, m, v, wantVar)
		if math.Abs(m) > 5*se {
			t.Errorf("%s: noise mean %.3f is more than 5 standard errors (%.3f) from 0", be, m, se)
		}
		if math.Abs(v-wantVar) > 5*wantVar*math.Sqrt(5.0/queries) {
			t.Errorf("%s: noise variance %.3f, want about %.3f", be, v, wantVar)
		}
	}
	for a, ma := range means {
		for b, mb := range means {
			if a < b && math.Abs(ma-mb) > 5*se*math.Sqrt2 {
				t.Errorf("mean noise differs between %s (%.3f) and %s (%.3f)", a, ma, b, mb)
			}
		}
	}
	if len(noise) < 2 {
		t.Fatalf("only %d backends ran", len(noise))
	}
}
