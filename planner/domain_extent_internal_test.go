package planner

import (
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestSumBounds: the clamp of a bare numeric aggregate's column is its
// declared bounds, else its static domain's extent when that extent is
// what validation accepts as bounds; anything else refuses, including
// columns validation never produces (a query domain with values, a value
// of the wrong kind, NaN or ±Inf) so that the guard does not rest on the
// loader alone.
func TestSumBounds(t *testing.T) {
	dom := func(vs ...ir.Value) *policies.Domain { return &policies.Domain{Resolved: vs} }
	cases := []struct {
		name   string
		col    policies.Column
		lo, hi float64
		ok     bool
	}{
		{"bounds", policies.Column{Type: policies.TypeInteger, Bounds: []float64{-3, 8}, Domain: dom(ir.Int(0), ir.Int(1))}, -3, 8, true},
		{"integer extent", policies.Column{Type: policies.TypeInteger, Domain: dom(ir.Int(4), ir.Int(-2), ir.Int(7))}, -2, 7, true},
		{"real extent", policies.Column{Type: policies.TypeReal, Domain: dom(ir.Float(0.25), ir.Float(-1.5))}, -1.5, 0.25, true},
		{"integer extent at 2^53", policies.Column{Type: policies.TypeInteger, Domain: dom(ir.Int(-1<<53), ir.Int(1<<53))}, -1 << 53, 1 << 53, true},
		{"integer extent above 2^53", policies.Column{Type: policies.TypeInteger, Domain: dom(ir.Int(0), ir.Int(1<<53+1))}, 0, 0, false},
		{"integer extent below -2^53", policies.Column{Type: policies.TypeInteger, Domain: dom(ir.Int(-1<<53-1), ir.Int(0))}, 0, 0, false},
		{"integer extent at MinInt64", policies.Column{Type: policies.TypeInteger, Domain: dom(ir.Int(math.MinInt64))}, 0, 0, false},
		{"no domain", policies.Column{Type: policies.TypeInteger}, 0, 0, false},
		{"query domain", policies.Column{Type: policies.TypeInteger, Domain: &policies.Domain{Query: "SELECT v FROM codes", Resolved: []ir.Value{ir.Int(0), ir.Int(5)}}}, 0, 0, false},
		{"real column, integer values", policies.Column{Type: policies.TypeReal, Domain: dom(ir.Int(0), ir.Int(5))}, 0, 0, false},
		{"integer column, real values", policies.Column{Type: policies.TypeInteger, Domain: dom(ir.Float(0), ir.Float(5))}, 0, 0, false},
		{"NaN", policies.Column{Type: policies.TypeReal, Domain: dom(ir.Float(math.NaN()))}, 0, 0, false},
		{"+Inf", policies.Column{Type: policies.TypeReal, Domain: dom(ir.Float(0), ir.Float(math.Inf(1)))}, 0, 0, false},
		{"-Inf", policies.Column{Type: policies.TypeReal, Domain: dom(ir.Float(math.Inf(-1)), ir.Float(0))}, 0, 0, false},
		{"text", policies.Column{Type: policies.TypeText, Domain: dom(ir.String("a"))}, 0, 0, false},
	}
	for _, c := range cases {
		lo, hi, ok := sumBounds(&c.col, exprType(c.col.Type))
		if ok != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("%s: sumBounds = %v, %v, %v; want %v, %v, %v", c.name, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
	// A query domain never clamps a computation either, nor a date.
	q := &policies.Domain{Query: "SELECT d FROM days", Resolved: []ir.Value{ir.Int(0)}}
	if _, _, ok := clampBounds(&policies.Column{Type: policies.TypeInteger, Domain: q}, exprtype.Integer); ok {
		t.Error("clampBounds: a query domain served as bounds")
	}
	day := ir.Value{Kind: ir.KindDate, Int: 14000}
	q.Resolved = []ir.Value{day}
	if _, _, ok := clampBounds(&policies.Column{Type: policies.TypeDate, Domain: q}, exprtype.Date); ok {
		t.Error("clampBounds: a query domain served as date bounds")
	}
}
