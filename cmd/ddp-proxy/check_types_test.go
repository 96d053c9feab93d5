package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestBackendTypeFits: each dialect's column types against the policy's.
func TestBackendTypeFits(t *testing.T) {
	cases := []struct {
		driver, declared, backend string
		ok                        bool
	}{
		{"postgres", policies.TypeDate, "date", true},
		{"postgres", policies.TypeDate, "timestamp without time zone", false},
		{"postgres", policies.TypeTimestamp, "timestamp without time zone", true},
		{"postgres", policies.TypeTimestamp, "timestamp with time zone", false},
		{"postgres", policies.TypeTimestampTZ, "timestamp with time zone", true},
		{"postgres", policies.TypeTimestamp, "text", false},
		{"postgres", policies.TypeInteger, "text", false},
		{"postgres", policies.TypeInteger, "numeric", false}, // may hold fractions
		{"postgres", policies.TypeReal, "numeric", true},
		{"postgres", policies.TypeText, "character varying", true},
		{"mysql", policies.TypeDate, "DATE", true},
		{"mysql", policies.TypeTimestamp, "DATETIME", true},
		{"mysql", policies.TypeTimestamp, "VARCHAR", false},
		{"mysql", policies.TypeTimestampTZ, "TIMESTAMP", true},
		{"mysql", policies.TypeInteger, "BIGINT", true},
		{"mysql", policies.TypeBoolean, "TINYINT", true},
		{"sqlite", policies.TypeTimestamp, "TIMESTAMP", true},
		{"sqlite", policies.TypeTimestamp, "TEXT", true},
		{"sqlite", policies.TypeTimestamp, "INTEGER", false},
		{"sqlite", policies.TypeDate, "DATETIME", false},
		{"sqlite", policies.TypeInteger, "BIGINT", true},
		{"sqlite", policies.TypeInteger, "TEXT", false},
		{"sqlite", policies.TypeText, "VARCHAR(20)", true},
	}
	for _, c := range cases {
		if ok, _ := backendTypeFits(c.driver, c.declared, c.backend); ok != c.ok {
			t.Errorf("%s: %s declared over %s: fits %v, want %v", c.driver, c.declared, c.backend, ok, c.ok)
		}
	}
}

// TestCheckDateTypesAndBounds: check --connect refuses a declared type
// the backend column does not have (a timestamp stored as INTEGER, a date
// declared over a DATETIME), and check notes the numeric and date columns
// without bounds with what they block, or the domain extent that serves.
func TestCheckDateTypesAndBounds(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE visits (id INTEGER, at TIMESTAMP, day DATETIME, n INTEGER, amount REAL, big INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	pol := filepath.Join(dir, "p.yaml")
	write := func(cols string) {
		t.Helper()
		if err := os.WriteFile(pol, []byte(`version: 1
backend: {driver: sqlite, dsn: d.db}
users: [{name: a, password_env: DDP_TEST_CHECK_PW, budgets: {d: {epsilon: 1}}}]
datasets:
  d:
    tables:
      visits:
        unit: id
        columns:
`+cols), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("          at: {type: timestamp, bounds: ['2010-01-01', '2011-01-01']}\n          n: {type: integer, bounds: [0, 10]}\n")
	if out, errOut, code := runCmd(t, "check", "--connect", pol); code != 0 || strings.Contains(out, "without bounds") {
		t.Fatalf("matching types: exit %d\n%s%s", code, out, errOut)
	}
	write("          at: {type: timestamp}\n          day: {type: date}\n          n: {type: integer}\n          amount: {type: real, domain: {values: [1.5, 2.5]}}\n" +
		"          big: {type: integer, domain: {values: [0, 9007199254740993]}}\n")
	out, errOut, code := runCmd(t, "check", "--connect", pol)
	if code != 1 || !strings.Contains(errOut, "p.yaml:11:") || !strings.Contains(errOut, "column day is declared date but is DATETIME") {
		t.Fatalf("date over DATETIME: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCmd(t, "check", pol)
	if code != 0 {
		t.Fatalf("check without --connect: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"p.yaml:10: datasets.d.tables.visits.columns.at: timestamp column without bounds: date_trunc, extract and intervals on it are refused",
		"p.yaml:12: datasets.d.tables.visits.columns.n: integer column without bounds: SUM and AVG of it are refused, and so is arithmetic",
		"p.yaml:13: datasets.d.tables.visits.columns.amount: real column without bounds: its domain's extent [1.5, 2.5] serves as bounds: SUM, AVG and arithmetic clamp values to it\n",
		"p.yaml:14: datasets.d.tables.visits.columns.big: integer column without bounds: SUM and AVG of it are refused (its domain's extent is beyond ±2^53; comparisons, counts and arithmetic work); declare bounds: [lo, hi]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}
