package session

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// undeclaredPolicy has a private table that declares no columns (visits),
// a public one that declares none (regions) and a private one that
// declares some (people, whose backend table has more).
const undeclaredPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {census: {epsilon: 5}}
    max_epsilon: 1
datasets:
  census:
    tables:
      visits: {unit: id}
      regions: {public: true, key: code}
      people:
        unit: id
        columns:
          age: {type: integer, bounds: [0, 100]}
`

func undeclaredFixture(t *testing.T) *Proxy {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	be := sqliteBackend(t, path,
		"CREATE TABLE visits (id INTEGER, diagnosis TEXT, clinic TEXT)",
		"CREATE TABLE regions (code TEXT, label TEXT)",
		"CREATE TABLE people (id INTEGER, age INTEGER, salary REAL)",
	)
	p, _, _ := seededProxy(t, dir, fmt.Sprintf(undeclaredPolicy, path, filepath.Join(dir, "ledger.db")), be, Config{InfoSchema: emulated.QueryMySQL})
	return p
}

// TestDescribeNeverShowsUndeclaredColumns: every way a client lists a
// table's columns, on both front ends, shows a private table's declared
// columns only — none for a private table that declares none, whatever
// its backend table holds — and a public table without a column list
// with the backend's columns. (The MySQL front end's DESCRIBE once had its
// own builder and showed visits' diagnosis and clinic.)
func TestDescribeNeverShowsUndeclaredColumns(t *testing.T) {
	p := undeclaredFixture(t)
	ctx := context.Background()
	want := map[string][]string{"visits": nil, "regions": {"code", "label"}, "people": {"age"}}

	my, err := p.MySQLHandler().NewSession(ctx, 1, "alice", "test")
	if err != nil {
		t.Fatal(err)
	}
	for table, cols := range want {
		for _, q := range []string{"DESCRIBE " + table, "SHOW COLUMNS FROM " + table, "SHOW FULL COLUMNS FROM " + table,
			"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = '" + table + "' ORDER BY ORDINAL_POSITION"} {
			r := myQuery(t, my, q)
			var got []string
			for _, row := range r.Rows {
				got = append(got, row[0].Text())
			}
			if !slices.Equal(got, cols) {
				t.Errorf("MySQL %s: columns %q, want %q", q, got, cols)
			}
		}
		fl, err := my.FieldList(ctx, table)
		if err != nil {
			t.Fatalf("COM_FIELD_LIST %s: %v", table, err)
		}
		var got []string
		for _, c := range fl {
			got = append(got, c.Name)
		}
		if !slices.Equal(got, cols) {
			t.Errorf("MySQL COM_FIELD_LIST %s: %q, want %q", table, got, cols)
		}
		r := myQuery(t, my, "SHOW CREATE TABLE "+table)
		for _, hidden := range []string{"diagnosis", "clinic", "salary"} {
			if s := r.Rows[0][1].Text(); strings.Contains(s, hidden) {
				t.Errorf("MySQL SHOW CREATE TABLE %s shows %s: %s", table, hidden, s)
			}
		}
	}

	s := p.Open(p.Policy().User("alice"), parser.Postgres, nil)
	for table, cols := range want {
		for _, q := range []string{
			"SELECT a.attname FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid " +
				"WHERE c.relname = '" + table + "' AND a.attnum > 0 ORDER BY a.attnum",
			"SELECT column_name FROM information_schema.columns WHERE table_name = '" + table + "' ORDER BY ordinal_position",
		} {
			rs, err := query(s, ctx, q)
			if err != nil {
				t.Fatalf("PostgreSQL %s: %v", q, err)
			}
			var got []string
			for _, row := range rs[0].Rows {
				got = append(got, row[0].Text())
			}
			if !slices.Equal(got, cols) {
				t.Errorf("PostgreSQL %s: columns %q, want %q", q, got, cols)
			}
		}
	}
}
