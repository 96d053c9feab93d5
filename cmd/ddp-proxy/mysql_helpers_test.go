package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/internal/mysqltest"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// serveMySQL starts pol with only the MySQL front end, on a free port.
func serveMySQL(t *testing.T, pol *policies.Policy) string {
	t.Helper()
	pol.Listen.Postgres = policies.ListenOff
	pol.Listen.MySQL = "127.0.0.1:0"
	p, _ := servePolicy(t, pol)
	return p.myAddr
}

// startMySQLDemo serves the demo (SQLite backend, auth trust) and returns
// the MySQL address and the demo database's path.
func startMySQLDemo(t *testing.T) (addr, dbPath string) {
	t.Helper()
	files, pol := demoPolicy(t)
	return serveMySQL(t, pol), files.Database
}

// demoTables lists every table the demo policy declares, sorted: what
// SHOW TABLES and information_schema.TABLES must list on the demo.
func demoTables(t *testing.T) []string {
	t.Helper()
	_, pol := demoPolicy(t)
	var names []string
	for _, ds := range pol.Datasets {
		names = append(names, ds.TableNames...)
	}
	sort.Strings(names)
	return names
}

const mysqlDSNEnv = mysqltest.Env

// mariaDSN returns the test server's DSN, skipping when none is set.
func mariaDSN(t *testing.T) string {
	t.Helper()
	return mysqltest.DSN(t, "the MariaDB backend tests")
}

// mariaFixture is a private table in the MariaDB test database with known
// true answers, and a policy over it.
type mariaFixture struct {
	table    string
	pol      *policies.Policy
	count    map[string]int64 // true COUNT(*) per sex
	ageSum   int64
	password string // analyst's cleartext password (password_env)
}

// newMariaFixture creates ddp_my_people_<suffix> (dropped at the end) with
// n people and writes a policy with auth: password for users analyst
// (password_env) and hashed (mysql_native_password verifier).
func newMariaFixture(t *testing.T, n int, budget float64) *mariaFixture {
	t.Helper()
	dsn := mariaDSN(t)
	raw := mysqltest.Open(t, dsn)
	f := &mariaFixture{table: fmt.Sprintf("ddp_my_people_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9), count: map[string]int64{}}
	if _, err := raw.Exec("CREATE TABLE " + f.table + " (id BIGINT NOT NULL PRIMARY KEY, age BIGINT, sex VARCHAR(8), score DOUBLE)"); err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", mysqlDSNEnv, err)
	}
	t.Cleanup(func() { raw.Exec("DROP TABLE IF EXISTS " + f.table) })
	rng := rand.New(rand.NewPCG(4, 4))
	var vals []string
	for i := range n {
		age := int64(18 + rng.IntN(60))
		sex := []string{"F", "M"}[rng.IntN(3)%2]
		f.count[sex]++
		f.ageSum += age
		vals = append(vals, fmt.Sprintf("(%d, %d, '%s', %g)", i+1, age, sex, rng.Float64()*10))
	}
	if _, err := raw.Exec("INSERT INTO " + f.table + " VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	f.password = "s3cret-" + f.table
	t.Setenv("DDP_TEST_MYSQL_ANALYST_PW", f.password)
	h1 := sha1.Sum([]byte("hashed-pw"))
	h2 := sha1.Sum(h1[:])
	dir := t.TempDir()
	yaml := fmt.Sprintf(`version: 1
backend:
  driver: mysql
  dsn: %q
  statement_timeout: 10s
listen:
  postgres: "off"
  mysql: 127.0.0.1:0
  auth: password
ledger:
  path: ledger.db
users:
  - name: analyst
    password_env: DDP_TEST_MYSQL_ANALYST_PW
    budgets: {people: {epsilon: %g}}
    default_epsilon: 0.1
    max_epsilon: 1
  - name: hashed
    mysql_native_password: "*%s"
    budgets: {people: {epsilon: 5}}
datasets:
  people:
    model: dp
    tables:
      %s:
        unit: id
        columns:
          age: {type: integer, bounds: [0, 100], domain: {range: [0, 100]}}
          sex: {type: text, domain: {values: [F, M]}}
          score: {type: real, bounds: [0, 10]}
`, dsn, budget, strings.ToUpper(hex.EncodeToString(h2[:])), f.table)
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policies.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f.pol = pol
	return f
}
