package parser_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

// TestRowsReading: a non-aggregate SELECT gets its row reading (Rows) in
// both dialects; an aggregate gets none and no refusal; shapes outside
// the row subset say why.
func TestRowsReading(t *testing.T) {
	one := func(d parser.Dialect, sql string) ir.Statement {
		t.Helper()
		stmts, err := parser.Parse(d, sql)
		if err != nil || len(stmts) != 1 {
			t.Fatalf("%s: %v (%d statements)", sql, err, len(stmts))
		}
		return stmts[0]
	}
	st := one(parser.Postgres, `SELECT c.*, cell + 1, borough AS b FROM cells c WHERE cell > 2 ORDER BY b DESC LIMIT 3`)
	if st.Rows == nil {
		t.Fatalf("no Rows: %s", st.RowsRefusal)
	}
	r := st.Rows
	if !r.Items[0].Star || r.Items[0].Qualifier != "c" || r.Items[1].Name != "?column?" || r.Items[2].Name != "b" {
		t.Errorf("items %+v", r.Items)
	}
	if o, ok := r.OrderBy[0].Expr.(ir.OutputRef); !ok || o.Index != 2 {
		t.Errorf("ORDER BY b (the output name): %+v", r.OrderBy[0])
	}
	st = one(parser.Postgres, `SELECT cell, borough AS b FROM cells ORDER BY b DESC NULLS LAST, 1 LIMIT 3 OFFSET 1`)
	if st.Rows == nil {
		t.Fatalf("no Rows: %s", st.RowsRefusal)
	}
	want := []ir.OrderItem{{Expr: ir.OutputRef{Index: 1}, Desc: true, Nulls: ir.NullsLast}, {Expr: ir.OutputRef{Index: 0}}}
	if !reflect.DeepEqual(st.Rows.OrderBy, want) || *st.Rows.Limit != 3 || *st.Rows.Offset != 1 {
		t.Errorf("order %+v limit %v offset %v", st.Rows.OrderBy, st.Rows.Limit, st.Rows.Offset)
	}
	my := one(parser.MySQL, "SELECT `cell`, cell+1, B FROM cells WHERE borough = ? ORDER BY b LIMIT 1, 2")
	if my.Rows == nil {
		t.Fatalf("mysql: no Rows: %s", my.RowsRefusal)
	}
	if my.Rows.Items[1].Name != "cell+1" || *my.Rows.Limit != 2 || *my.Rows.Offset != 1 {
		t.Errorf("mysql: %+v", my.Rows)
	}
	if o, ok := my.Rows.OrderBy[0].Expr.(ir.OutputRef); !ok || o.Index != 2 {
		t.Errorf("mysql ORDER BY b (case-insensitive output name): %+v", my.Rows.OrderBy[0])
	}
	if agg := one(parser.Postgres, `SELECT COUNT(*) FROM cells`); agg.Rows != nil || agg.RowsRefusal != "" {
		t.Errorf("aggregate: Rows %+v refusal %q", agg.Rows, agg.RowsRefusal)
	}
	for _, tc := range []struct {
		d        parser.Dialect
		sql, why string
	}{
		{parser.Postgres, `SELECT * FROM cells ORDER BY 1`, "position over SELECT *"},
		{parser.Postgres, `SELECT * FROM (SELECT cell FROM cells) s`, "subqueries in FROM"},
		{parser.Postgres, `SELECT DISTINCT borough FROM cells`, "DISTINCT"},
		{parser.MySQL, "SELECT md5(borough) FROM cells", "md5"},
		{parser.MySQL, "SELECT cell FROM cells UNION SELECT cell FROM cells", "set operations"},
	} {
		st := one(tc.d, tc.sql)
		if st.Rows != nil || !strings.Contains(st.RowsRefusal, tc.why) {
			t.Errorf("%s: Rows %v, refusal %q; want one naming %q", tc.sql, st.Rows != nil, st.RowsRefusal, tc.why)
		}
	}
}
