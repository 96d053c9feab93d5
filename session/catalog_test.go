package session

import (
	"context"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestEmulatedCatalogOnSQLite: on a SQLite backend, PostgreSQL catalog
// queries are answered from the policy: only declared tables, only their
// declared columns (people's id column exists in the backend but is not
// declared), in the simple and the extended protocol.
func TestEmulatedCatalogOnSQLite(t *testing.T) {
	f := sqliteFixture(t)
	ctx := context.Background()
	rs := mustQuery(t, f.s, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'; "+
		"SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_catalog.pg_attribute a "+
		"WHERE a.attrelid = 'people'::pg_catalog.regclass AND a.attnum > 0 ORDER BY a.attnum")
	if got := colText(rs[0], 0); !slices.Equal(got, []string{"people"}) {
		t.Fatalf("tables %v", got)
	}
	if got := colText(rs[1], 0); !slices.Equal(got, []string{"age", "sex"}) {
		t.Fatalf("columns %v", got)
	}
	if got := colText(rs[1], 1); !slices.Equal(got, []string{"bigint", "text"}) {
		t.Fatalf("types %v", got)
	}
	if rs[1].Columns[0].Type != TypeName || rs[1].Columns[2].Type != TypeBool || rs[1].Rows[0][2].Kind != ir.KindBool {
		t.Fatalf("result types %+v %+v", rs[1].Columns, rs[1].Rows[0])
	}
	// Extended protocol: described without running anything private, then
	// executed with the bound parameter.
	p, err := f.s.Prepare(ctx, "SELECT column_name, ordinal_position FROM information_schema.columns WHERE table_name = $1 ORDER BY 2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Columns) != 2 || p.Columns[0].Name != "column_name" || p.Columns[1].Type != TypeInt4 {
		t.Fatalf("described %+v", p.Columns)
	}
	r, err := execute(f.s, ctx, p, []ir.Value{ir.String("people")})
	if err != nil || !slices.Equal(colText(r, 0), []string{"age", "sex"}) {
		t.Fatalf("execute %+v %v", r, err)
	}
	// Drivers' startup probes get their (empty) answers.
	rs = mustQuery(t, f.s, "SELECT t.oid, typarray FROM pg_type t JOIN pg_namespace ns ON typnamespace = ns.oid WHERE typname = 'hstore'")
	if len(rs[0].Rows) != 0 || len(rs[0].Columns) != 2 {
		t.Fatalf("hstore probe %+v", rs[0])
	}
	// Statistics catalogs and anything unemulated: a clear refusal.
	if _, err := query(f.s, ctx, "SELECT * FROM pg_stats"); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Fatalf("pg_stats: %v", err)
	}
	// A private table next to a catalog relation is not a catalog query.
	if _, err := query(f.s, ctx, "SELECT * FROM people, pg_class"); sqlerr.HasCode(err, sqlerr.FeatureNotSupported) || err == nil {
		t.Fatalf("mixed query: %v", err)
	}
}

func colText(r Result, i int) []string {
	var out []string
	for _, row := range r.Rows {
		out = append(out, row[i].Text())
	}
	return out
}
