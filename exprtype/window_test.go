package exprtype_test

import (
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestEvalWindow: window functions over result rows, against values worked
// out by hand from SQL's definitions (default frame: the whole partition
// without ORDER BY, through the current row's peers with it; NULL keys
// form one partition; ranks share ties).
func TestEvalWindow(t *testing.T) {
	I, F, S, N := ir.Int, ir.Float, ir.String, ir.Null()
	// Rows: key (0), partition (1), count (2), real sum (3).
	rows := [][]ir.Value{
		{S("a"), S("x"), I(10), F(1.5)},
		{S("b"), S("x"), I(30), N},
		{S("c"), S("y"), I(10), F(2)},
		{S("d"), N, I(20), F(-1)},
		{S("e"), S("y"), I(30), F(4)},
		{S("f"), N, I(math.MaxInt64), F(0)},
	}
	ref := func(i int) ir.Expr { return ir.OutputRef{Index: i} }
	types := []exprtype.Type{exprtype.Text, exprtype.Text, exprtype.Integer, exprtype.Real}
	cases := []struct {
		name string
		w    ir.Window
		want []ir.Value
	}{
		{"total", ir.Window{Func: ir.WinSum, Arg: ref(2)},
			rep(I(math.MaxInt64), 6)}, // saturates
		{"count rows", ir.Window{Func: ir.WinCount}, rep(I(6), 6)},
		{"count non-null", ir.Window{Func: ir.WinCount, Arg: ref(3)}, rep(I(5), 6)},
		{"running by count (peers share)", ir.Window{Func: ir.WinSum, Arg: ref(3), OrderBy: []ir.OrderItem{{Expr: ref(2)}}},
			// order by count: a,c (10) → 3.5; d (20) → 2.5; b,e (30) → 6.5; f → 6.5
			[]ir.Value{F(3.5), F(6.5), F(3.5), F(2.5), F(6.5), F(6.5)}},
		{"rank by count desc", ir.Window{Func: ir.WinRank, OrderBy: []ir.OrderItem{{Expr: ref(2), Desc: true}}},
			[]ir.Value{I(5), I(2), I(5), I(4), I(2), I(1)}},
		{"dense_rank by count desc", ir.Window{Func: ir.WinDenseRank, OrderBy: []ir.OrderItem{{Expr: ref(2), Desc: true}}},
			[]ir.Value{I(4), I(2), I(4), I(3), I(2), I(1)}},
		{"row_number by count, key", ir.Window{Func: ir.WinRowNumber, OrderBy: []ir.OrderItem{{Expr: ref(2)}, {Expr: ref(0)}}},
			[]ir.Value{I(1), I(4), I(2), I(3), I(5), I(6)}},
		{"partition sums", ir.Window{Func: ir.WinSum, Arg: ref(2), PartitionBy: []ir.Expr{ref(1)}},
			[]ir.Value{I(40), I(40), I(40), I(math.MaxInt64), I(40), I(math.MaxInt64)}},
		{"partition avg of reals (NULL skipped)", ir.Window{Func: ir.WinAvg, Arg: ref(3), PartitionBy: []ir.Expr{ref(1)}},
			[]ir.Value{F(1.5), F(1.5), F(3), F(-0.5), F(3), F(-0.5)}},
		{"partition max, min", ir.Window{Func: ir.WinMin, Arg: ref(0), PartitionBy: []ir.Expr{ref(1)}},
			[]ir.Value{S("a"), S("a"), S("c"), S("d"), S("c"), S("d")}},
		{"rank within partition by real", ir.Window{Func: ir.WinRank, PartitionBy: []ir.Expr{ref(1)}, OrderBy: []ir.OrderItem{{Expr: ref(3), Desc: true}}},
			// x: b NULL, a 1.5 → PostgreSQL sorts NULL first descending: b 1, a 2
			[]ir.Value{I(2), I(1), I(2), I(2), I(1), I(1)}},
	}
	for _, c := range cases {
		w, _, err := exprtype.PostWindow(c.w, func(i int) exprtype.Out { return exprtype.Out{Type: types[i]} }, exprtype.PostDialect{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := exprtype.EvalWindow(w, rows, true, exprtype.PostDialect{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: row %d = %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
	}
	// MySQL sorts NULL first ascending, so last descending.
	w := ir.Window{Func: ir.WinRank, OrderBy: []ir.OrderItem{{Expr: ref(3), Desc: true}}}
	got, _ := exprtype.EvalWindow(w, rows, false, exprtype.PostDialect{MySQL: true})
	want := []ir.Value{I(3), I(6), I(2), I(5), I(1), I(4)} // e 4, c 2, a 1.5, f 0, d -1, b NULL
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("mysql NULL order: row %d = %v, want %v", i, got[i], want[i])
		}
	}
	// An explicit NULL order holds in either direction and dialect.
	for _, c := range []struct {
		o    ir.OrderItem
		want []ir.Value
	}{
		// e 4, c 2, a 1.5, f 0, d -1, b NULL
		{ir.OrderItem{Expr: ref(3), Desc: true, Nulls: ir.NullsLast}, []ir.Value{I(3), I(6), I(2), I(5), I(1), I(4)}},
		// b NULL, e 4, c 2, a 1.5, f 0, d -1
		{ir.OrderItem{Expr: ref(3), Desc: true, Nulls: ir.NullsFirst}, []ir.Value{I(4), I(1), I(3), I(6), I(2), I(5)}},
		// b NULL, d -1, f 0, a 1.5, c 2, e 4
		{ir.OrderItem{Expr: ref(3), Nulls: ir.NullsFirst}, []ir.Value{I(4), I(1), I(5), I(2), I(6), I(3)}},
		// d -1, f 0, a 1.5, c 2, e 4, b NULL
		{ir.OrderItem{Expr: ref(3), Nulls: ir.NullsLast}, []ir.Value{I(3), I(6), I(4), I(1), I(5), I(2)}},
	} {
		for _, high := range []bool{false, true} {
			w := ir.Window{Func: ir.WinRank, OrderBy: []ir.OrderItem{c.o}}
			got, err := exprtype.EvalWindow(w, rows, high, exprtype.PostDialect{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("%s (nulls high %v): row %d = %v, want %v", ir.FormatExpr(w), high, i, got[i], c.want[i])
				}
			}
		}
	}
	// Types: sum keeps integers, avg is real, ranking integer, sum of
	// text refused.
	for _, c := range []struct {
		w    ir.Window
		want exprtype.Type
		ok   bool
	}{
		{ir.Window{Func: ir.WinSum, Arg: ref(2)}, exprtype.Integer, true},
		{ir.Window{Func: ir.WinSum, Arg: ref(3)}, exprtype.Real, true},
		{ir.Window{Func: ir.WinAvg, Arg: ref(2)}, exprtype.Real, true},
		{ir.Window{Func: ir.WinMax, Arg: ref(0)}, exprtype.Text, true},
		{ir.Window{Func: ir.WinDenseRank}, exprtype.Integer, true},
		{ir.Window{Func: ir.WinSum, Arg: ref(0)}, 0, false},
	} {
		_, typ, err := exprtype.PostWindow(c.w, func(i int) exprtype.Out { return exprtype.Out{Type: types[i]} }, exprtype.PostDialect{})
		if (err == nil) != c.ok || c.ok && typ != c.want {
			t.Errorf("%s: type %v, err %v; want %v (ok %v)", ir.FormatExpr(c.w), typ, err, c.want, c.ok)
		}
	}
}

func rep(v ir.Value, n int) []ir.Value {
	out := make([]ir.Value, n)
	for i := range out {
		out[i] = v
	}
	return out
}
