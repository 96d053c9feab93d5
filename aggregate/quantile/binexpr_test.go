package quantile

import (
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// evalBin evaluates BinExpr's shape (nested CASE of x < literal) for one
// value of x, independently of BinOf.
func evalBin(t *testing.T, e ir.Expr, x ir.Value) int64 {
	t.Helper()
	for depth := 0; ; depth++ {
		switch n := e.(type) {
		case ir.Literal:
			return n.Value.Int
		case ir.Case:
			c := n.Whens[0].Cond.(ir.Compare)
			if c.Op != ir.OpLt || len(n.Whens) != 1 {
				t.Fatalf("unexpected node %#v", n)
			}
			if ir.CompareValues(x, c.R.(ir.Literal).Value) < 0 {
				e = n.Whens[0].Then
			} else {
				e = n.Else
			}
		default:
			t.Fatalf("unexpected node %T", e)
		}
		if depth > 11 {
			t.Fatal("bin expression deeper than ⌈log2 1024⌉ + 1")
		}
	}
}

// TestBinExprAgreesWithBinOf: on integer, date, real and domain grids,
// the backend expression puts every probed value (cuts, their
// neighbours, values beyond the bounds) in the bin BinOf gives.
func TestBinExprAgreesWithBinOf(t *testing.T) {
	x := ir.ColumnRef{Name: "x"}
	rng := rand.New(rand.NewPCG(9, 10))
	ig, _ := IntegerGrid(-50, 5000)
	dg, _ := IntegerGrid(14610, 15000) // dates 2010-01-01 … 2011-01-25
	rg, _ := RealGrid(-3.5, 1e6)
	og, _ := DomainGrid([]Value{{Real: 0.5}, {Real: 1.5}, {Real: 4}})
	for _, tc := range []struct {
		name string
		g    Grid
		kind ir.Kind
	}{{"integer", ig, ir.KindInt}, {"date", dg, ir.KindDate}, {"real", rg, ir.KindFloat}, {"domain", og, ir.KindFloat}} {
		e := BinExpr(x, tc.g, tc.kind)
		var probes []Value
		for j := 1; j < tc.g.Len(); j++ {
			c := tc.g.Cut(j)
			if c.IsInt {
				probes = append(probes, c, Value{IsInt: true, Int: c.Int - 1})
			} else {
				probes = append(probes, c, Value{Real: c.Real - 1e-9}, Value{Real: c.Real + 1e-9})
			}
		}
		for range 200 {
			if tc.g.IsReal() {
				probes = append(probes, Value{Real: rng.Float64()*2e6 - 1e5})
			} else {
				probes = append(probes, Value{IsInt: true, Int: rng.Int64N(40000) - 100})
			}
		}
		for _, p := range probes {
			v := cutValue(p, tc.kind)
			if got, want := evalBin(t, e, v), tc.g.BinOf(p); got != int64(want) {
				t.Fatalf("%s: value %+v in bin %d by the expression, %d by BinOf", tc.name, p, got, want)
			}
		}
	}
}
