package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConstraints: check names the constraint combination that cannot
// be bounded (with file:line), and prints the load-time bound of those it
// can.
func TestCheckConstraints(t *testing.T) {
	dir := t.TempDir()
	head := `version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: a
    password_env: X
    budgets: {d: {epsilon: 1}}
datasets:
  d:
`
	table := `    tables:
      t:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
          region: {type: text, domain: {values: [n, e, s, w]}}
`
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(head+"    model: blowfish\n    secrets: attribute\n    constraints:\n      - marginal: [sex]\n      - marginal: [region]\n"+table), 0o600)
	_, errOut, code := runCmd(t, "check", bad)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"bad.yaml:12:", "marginal: [sex]; marginal: [region] overlap", "compensation: secrets-only"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check output lacks %q:\n%s", want, errOut)
		}
	}
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(head+"    model: induced\n    constraints:\n      - rows_and_columns: [sex, region]\n"+table), 0o600)
	out, errOut, code := runCmd(t, "check", good)
	if code != 0 || !strings.Contains(out, "d (model induced): induced neighbours: largest Graver L1 4 (row and column sums of a 2×4 table") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestCheckConnectDomains: check --connect reports a constrained column
// holding an undeclared value.
func TestCheckConnectDomains(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "d.db")
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE t (id INTEGER, sex TEXT)", "INSERT INTO t VALUES (1, 'F'), (2, NULL)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	p := filepath.Join(dir, "p.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf(`version: 1
backend: {driver: sqlite, dsn: %q}
datasets:
  d:
    model: induced
    constraints: [{marginal: [sex]}]
    tables:
      t:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
`, dbPath)), 0o600)
	_, errOut, code := runCmd(t, "check", "--connect", p)
	if code != 1 || !strings.Contains(errOut, "t.sex holds NULL or values outside its declared domain") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}
