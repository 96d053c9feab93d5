package exprtype_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// BenchmarkGroupKeyHistogram: typing, lowering and the derived domain of
// MySQL's floor(age / 10) * 10 over ages [0, 120].
func BenchmarkGroupKeyHistogram(b *testing.B) {
	cols := func(c ir.ColumnRef) (exprtype.Column, error) {
		return exprtype.Column{Ref: ir.ColumnRef{Qualifier: "t0", Name: "age"}, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(0), Hi: ir.Int(120)}, nil
	}
	e := ir.Arith{Op: ir.OpMul, L: ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpRealDiv, L: ir.ColumnRef{Name: "age"}, R: ir.Literal{Value: ir.Int(10)}}}}, R: ir.Literal{Value: ir.Int(10)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, info, err := exprtype.GroupKey(e, cols); err != nil || len(info.Domain) != 13 {
			b.Fatal(err, info.Domain)
		}
	}
}

// BenchmarkScalarHistogram: the same without the domain, for comparison.
func BenchmarkScalarHistogram(b *testing.B) {
	cols := func(c ir.ColumnRef) (exprtype.Column, error) {
		return exprtype.Column{Ref: ir.ColumnRef{Qualifier: "t0", Name: "age"}, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(0), Hi: ir.Int(120)}, nil
	}
	e := ir.Arith{Op: ir.OpMul, L: ir.Func{Name: "floor", Args: []ir.Expr{ir.Arith{Op: ir.OpRealDiv, L: ir.ColumnRef{Name: "age"}, R: ir.Literal{Value: ir.Int(10)}}}}, R: ir.Literal{Value: ir.Int(10)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := exprtype.Scalar(e, cols); err != nil {
			b.Fatal(err)
		}
	}
}
