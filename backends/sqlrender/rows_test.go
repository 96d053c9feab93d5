package sqlrender

import (
	"reflect"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

func i64(n int64) *int64 { return &n }

// rowsQuery reads two public tables: a star, an aliased expression with a
// literal, WHERE, ORDER BY an output and an expression, LIMIT and OFFSET.
var rowsQuery = &ir.RowQuery{
	From:  ir.TableRef{Name: "cells", Alias: "c"},
	Joins: []ir.Join{{Table: ir.TableRef{Schema: "geo", Name: "boroughs", Alias: "b"}, Left: col("c", "borough"), Right: col("b", "name")}},
	Items: []ir.RowItem{
		{Star: true, Qualifier: "c"},
		{Expr: ir.Arith{Op: ir.OpAdd, L: col("c", "cell"), R: lit(ir.Int(1))}, Name: "next"},
	},
	Where:   ir.Compare{Op: ir.OpEq, L: col("b", "name"), R: lit(ir.String("Bronx"))},
	OrderBy: []ir.OrderItem{{Expr: ir.OutputRef{Index: 1}, Desc: true}, {Expr: col("c", "cell")}},
	Limit:   i64(10),
	Offset:  i64(5),
}

func TestRenderRows(t *testing.T) {
	for _, tc := range []struct {
		d         *Dialect
		nullsHigh bool
		want      string
	}{
		// A PostgreSQL client: NULLs last ascending, first descending.
		{Postgres(), true, `SELECT "c".*, ("c"."cell" + CAST($1 AS BIGINT)) AS "next" FROM "cells" AS "c" JOIN "geo"."boroughs" AS "b" ON "c"."borough" = "b"."name" WHERE ("b"."name" = CAST($2 AS TEXT)) ORDER BY (("c"."cell" + CAST($3 AS BIGINT)) IS NULL) DESC, ("c"."cell" + CAST($4 AS BIGINT)) DESC, ("c"."cell" IS NULL), "c"."cell" LIMIT 10 OFFSET 5`},
		// A MySQL client: NULLs first ascending, last descending.
		{MySQL(), false, "SELECT `c`.*, (`c`.`cell` + ?) AS `next` FROM `cells` AS `c` JOIN `geo`.`boroughs` AS `b` ON `c`.`borough` = `b`.`name` WHERE (`b`.`name` = ?) ORDER BY ((`c`.`cell` + ?) IS NULL), (`c`.`cell` + ?) DESC, (`c`.`cell` IS NULL) DESC, `c`.`cell` LIMIT 10 OFFSET 5"},
		{SQLite(), false, `SELECT "c".*, ("c"."cell" + ?) AS "next" FROM "cells" AS "c" JOIN "geo"."boroughs" AS "b" ON "c"."borough" = "b"."name" WHERE ("b"."name" = ?) ORDER BY (("c"."cell" + ?) IS NULL), ("c"."cell" + ?) DESC, ("c"."cell" IS NULL) DESC, "c"."cell" LIMIT 10 OFFSET 5`},
	} {
		got, err := tc.d.RenderRows(rowsQuery, tc.nullsHigh)
		if err != nil {
			t.Fatalf("%s: %v", tc.d.Name, err)
		}
		if got.SQL != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.d.Name, got.SQL, tc.want)
		}
		// Literals are bound, in placeholder order, as ir values.
		want := []ir.Value{ir.Int(1), ir.String("Bronx"), ir.Int(1), ir.Int(1)}
		if !reflect.DeepEqual(got.Args, want) {
			t.Errorf("%s: args %v, want %v", tc.d.Name, got.Args, want)
		}
	}
}

// An OFFSET without LIMIT needs a LIMIT on MySQL and SQLite.
func TestRenderRowsOffsetOnly(t *testing.T) {
	q := &ir.RowQuery{From: ir.TableRef{Name: "t"}, Items: []ir.RowItem{{Star: true}}, Offset: i64(3)}
	for d, want := range map[*Dialect]string{
		Postgres(): `SELECT * FROM "t" OFFSET 3`,
		MySQL():    "SELECT * FROM `t` LIMIT 18446744073709551615 OFFSET 3",
		SQLite():   `SELECT * FROM "t" LIMIT -1 OFFSET 3`,
	} {
		got, err := d.RenderRows(q, false)
		if err != nil || got.SQL != want {
			t.Errorf("%s: %q, %v; want %q", d.Name, got.SQL, err, want)
		}
	}
}

// Explicit NULLS FIRST/LAST win over the client's default; an ORDER BY
// position over a star cannot be rendered.
func TestRenderRowsNullsAndRefusals(t *testing.T) {
	q := &ir.RowQuery{From: ir.TableRef{Name: "t"}, Items: []ir.RowItem{{Expr: col("", "a"), Name: "a"}},
		OrderBy: []ir.OrderItem{{Expr: col("", "a"), Nulls: ir.NullsFirst}}}
	got, err := MySQL().RenderRows(q, true)
	if want := "SELECT `a` AS `a` FROM `t` ORDER BY (`a` IS NULL) DESC, `a`"; err != nil || got.SQL != want {
		t.Errorf("NULLS FIRST: %q, %v; want %q", got.SQL, err, want)
	}
	star := &ir.RowQuery{From: ir.TableRef{Name: "t"}, Items: []ir.RowItem{{Star: true}}, OrderBy: []ir.OrderItem{{Expr: ir.OutputRef{Index: 0}}}}
	if _, err := Postgres().RenderRows(star, true); err == nil {
		t.Error("ORDER BY a star's position rendered")
	}
}
