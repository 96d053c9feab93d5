package catalog_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// undeclaredPolicy: a private table without a column list (visits) and a
// public one (regions).
const undeclaredPolicy = `
version: 1
backend: {driver: postgres, dsn: "postgres://x@127.0.0.1/db"}
ledger: {path: %s}
users:
  - name: alice
    password_env: DDP_TEST_CATALOG_PASSWORD
    budgets: {d: {epsilon: 1}}
datasets:
  d:
    tables:
      visits: {unit: id}
      regions: {public: true, key: code}
`

func undeclaredPol(t *testing.T) *policies.Policy {
	t.Helper()
	t.Setenv("DDP_TEST_CATALOG_PASSWORD", "pw")
	dir := t.TempDir()
	pol, err := policies.LoadBytes(filepath.Join(dir, "p.yaml"), []byte(strings.Replace(undeclaredPolicy, "%s", filepath.Join(dir, "l.db"), 1)))
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// TestPrivateTableWithoutColumnsShowsNone: a MySQL backend's
// information_schema.COLUMNS rows of a private table that declares no
// columns are all hidden (the unit too: the emulated catalogs show none),
// a public table's are kept.
func TestPrivateTableWithoutColumnsShowsNone(t *testing.T) {
	pol := undeclaredPol(t)
	row := func(table, col string) []ir.Value { return []ir.Value{ir.String(table), ir.String(col)} }
	rows := [][]ir.Value{row("visits", "id"), row("visits", "diagnosis"), row("regions", "code"), row("regions", "label"), row("other", "x")}
	kept := catalog.HideUndeclaredColumns(pol, []string{"TABLE_NAME", "COLUMN_NAME"}, rows)
	var got []string
	for _, r := range kept {
		got = append(got, r[0].Text()+"."+r[1].Text())
	}
	if want := []string{"regions.code", "regions.label", "other.x"}; !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
}

// TestPostgresColumnFilterCoversPrivateTablesWithoutColumns: on a
// PostgreSQL backend pg_attribute and information_schema.columns are
// read cut to the declared columns; a private table without a list is
// cut to none (before, it was left out of the filter and showed every
// backend column), and the filter is valid SQL with no declared column.
func TestPostgresColumnFilterCoversPrivateTablesWithoutColumns(t *testing.T) {
	pol := undeclaredPol(t)
	col := func(name, typ string) catalog.Column {
		return catalog.Column{Name: name, TypeSchema: "pg_catalog", Type: typ}
	}
	rels := catalog.NewRelations([]catalog.Relation{{Schema: "pg_catalog", Name: "pg_class", Columns: []catalog.Column{
		col("oid", "oid"), col("relname", "name"), col("relnamespace", "oid"), col("reltuples", "float4"),
	}}})
	for _, sql := range []string{
		"SELECT attname FROM pg_catalog.pg_attribute WHERE attnum > 0",
		"SELECT column_name FROM information_schema.columns",
	} {
		stmts, err := parser.Parse(parser.Postgres, sql)
		if err != nil {
			t.Fatal(err)
		}
		out, err := catalog.CheckPassthrough(catalog.Passthrough{
			Text: sql, Client: "postgres", Backend: "postgres", ReadsCatalog: true, Functions: stmts[0].Functions,
			Declared: catalog.Declared(pol), PGRelations: rels, MySQLParse: parser.MySQLTree,
		})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if !strings.Contains(out, "('public', 'visits')") || strings.Contains(out, "'regions'") {
			t.Errorf("%s: forwarded %q, want visits cut and regions untouched", sql, out)
		}
		if _, err := parser.Parse(parser.Postgres, out); err != nil {
			t.Errorf("%s: forwarded text does not parse: %v\n%s", sql, err, out)
		}
	}
}
