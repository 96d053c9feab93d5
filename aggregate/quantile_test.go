package aggregate

import (
	"math/big"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func qArg(lo, hi ir.Value, typ string) Arg {
	c := ir.ColumnRef{Qualifier: "t0", Name: "x"}
	return Arg{Column: &c, Text: "x", Source: ir.ColumnRef{Name: "x"}, Type: typ, Range: [2]ir.Value{lo, hi}}
}

func frac(f float64) *float64 { return &f }

// TestQuantileParts: each unit has one ShapeBins part released by the
// exponential mechanism, whose sensitivity kind is the histogram's
// grouped or not, at the unit's fraction (percentiles read theirs as the
// shortest decimal: 0.95 is 19/20).
func TestQuantileParts(t *testing.T) {
	a := qArg(ir.Int(0), ir.Int(100), typeInteger)
	for _, tc := range []struct {
		u    *Unit
		frac *float64
		want *big.Rat
	}{
		{Min, nil, big.NewRat(0, 1)},
		{Max, nil, big.NewRat(1, 1)},
		{Median, nil, big.NewRat(1, 2)},
		{PercentileCont, frac(0.95), big.NewRat(19, 20)},
		{PercentileDisc, frac(0.1), big.NewRat(1, 10)},
	} {
		a.Fraction = tc.frac
		if err := tc.u.Check(a); err != nil {
			t.Fatalf("%s: %v", tc.u.Name, err)
		}
		ps := tc.u.Parts(a)
		if len(ps) != 1 || ps[0].Shape != ShapeBins || ps[0].Mechanism != Exponential || ps[0].Quantile == nil {
			t.Fatalf("%s: parts %+v", tc.u.Name, ps)
		}
		if got := ps[0].Quantile.Fraction.Rat(); got.Cmp(tc.want) != 0 {
			t.Errorf("%s: fraction %v, want %v", tc.u.Name, got, tc.want)
		}
		if ps[0].Quantile.Grid.Len() != 101 || ps[0].Agg.Kind != ir.CountValues {
			t.Errorf("%s: %d candidates, agg %v", tc.u.Name, ps[0].Quantile.Grid.Len(), ps[0].Agg.Kind)
		}
		for _, grouped := range []bool{false, true} {
			if k := ps[0].Shape.Kind(grouped); k != sensitivity.KindHistogram {
				t.Errorf("%s: sensitivity kind %v, want the histogram's", tc.u.Name, k)
			}
		}
	}
}

// TestQuantileCheck: refusals before any charge, with their codes.
func TestQuantileCheck(t *testing.T) {
	a := qArg(ir.Int(0), ir.Int(100), typeInteger)
	for _, tc := range []struct {
		name string
		u    *Unit
		arg  Arg
		code sqlerr.Code
	}{
		{"fraction above 1", PercentileCont, func() Arg { b := a; b.Fraction = frac(1.5); return b }(), sqlerr.NumericValueOutOfRange},
		{"negative fraction", PercentileDisc, func() Arg { b := a; b.Fraction = frac(-0.1); return b }(), sqlerr.NumericValueOutOfRange},
		{"no fraction", PercentileCont, a, sqlerr.FeatureNotSupported},
		{"no bounds", Median, Arg{Text: "x"}, sqlerr.FeatureNotSupported},
	} {
		err := tc.u.Check(tc.arg)
		if err == nil || !sqlerr.HasCode(err, tc.code) {
			t.Errorf("%s: %v, want code %s", tc.name, err, tc.code.Name)
		}
	}
}

// TestQuantileValues: the released value of candidate j by type, worked
// out by hand: integer columns give integers (percentile_cont a real of
// the same value, or a bin's midpoint), dates give dates, reals the bin's
// midpoint, a declared domain its values; an index outside the grid (a
// corrupt release) reads NULL.
func TestQuantileValues(t *testing.T) {
	intArg := qArg(ir.Int(0), ir.Int(100), typeInteger)
	wide := qArg(ir.Int(0), ir.Int(2047), typeInteger) // 1024 bins of 2
	day := qArg(ir.Date(14610), ir.Date(14975), "date")
	real := qArg(ir.Float(0), ir.Float(1024), typeReal)
	dom := qArg(ir.Int(1), ir.Int(10), typeInteger)
	dom.Domain = []ir.Value{ir.Int(10), ir.Int(1), ir.Int(5)}
	tests := []struct {
		name string
		u    *Unit
		arg  Arg
		j    int64
		want ir.Value
	}{
		{"min of integers", Min, intArg, 17, ir.Int(17)},
		{"median of integers is a real", Median, intArg, 17, ir.Float(17)},
		{"disc over wide bins: lower middle", PercentileDisc, withFrac(wide, 0.5), 3, ir.Int(6)},
		{"cont over wide bins: midpoint", PercentileCont, withFrac(wide, 0.5), 3, ir.Float(6.5)},
		{"max of dates", Max, day, 31, ir.Date(14641)},
		{"median of dates stays a date", Median, day, 31, ir.Date(14641)},
		{"real bin midpoint", Median, real, 10, ir.Float(10.5)},
		{"domain value", Max, dom, 1, ir.Int(5)},
		{"outside the grid", Min, intArg, 101, ir.Null()},
		{"negative index", Min, intArg, -1, ir.Null()},
	}
	for _, tc := range tests {
		got := tc.u.Value(Context{Arg: tc.arg}, []Noisy{{Units: tc.j, Quantum: 1}})
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if Median.Type(typeInteger) != typeReal || Min.Type(typeInteger) != typeInteger || Max.Type("date") != "date" || PercentileCont.Type("date") != "date" {
		t.Error("result types: percentile_cont/median of numbers are real, the others keep the column's type")
	}
}

func withFrac(a Arg, f float64) Arg { a.Fraction = &f; return a }
