package aggregate

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

// TestDistinctParts: COUNT with DISTINCT has one distinct-count part: a
// text argument counted by its exact spelling (CAST to text, which the
// renderers collate in binary), another argument bare, the unit column
// bare with the unit shape.
func TestDistinctParts(t *testing.T) {
	city := &ir.ColumnRef{Qualifier: "t0", Name: "city"}
	age := &ir.ColumnRef{Qualifier: "t0", Name: "age"}
	uid := &ir.ColumnRef{Qualifier: "t0", Name: "uid"}
	lower := ir.Func{Name: "lower", Args: []ir.Expr{*city}}
	tests := []struct {
		name  string
		arg   Arg
		shape Shape
		input ir.Expr // the backend's input
		label string
	}{
		{"text column", Arg{Column: city, Text: "city", Type: "text", Distinct: true}, ShapeDistinct, ir.Cast{X: *city, To: ir.CastText}, "count(DISTINCT city)"},
		{"integer column", Arg{Column: age, Text: "age", Type: "integer", Distinct: true}, ShapeDistinct, *age, "count(DISTINCT age)"},
		{"text expression", Arg{Expr: lower, Text: "lower(city)", Type: "text", Distinct: true}, ShapeDistinct, ir.Cast{X: lower, To: ir.CastText}, "count(DISTINCT lower(city))"},
		{"text unit", Arg{Column: uid, Text: "uid", Type: "text", Unit: true, Distinct: true}, ShapeDistinctUnits, *uid, "count(DISTINCT uid)"},
	}
	for _, tt := range tests {
		parts := Count.Parts(tt.arg)
		if len(parts) != 1 {
			t.Fatalf("%s: parts %+v", tt.name, parts)
		}
		p := parts[0]
		var input ir.Expr = p.Agg.Expr
		if p.Agg.Column != nil {
			input = *p.Agg.Column
		}
		if p.Agg.Kind != ir.CountDistinct || p.Shape != tt.shape || p.Label != tt.label || p.Mechanism != DiscreteLaplace ||
			(p.Agg.Column != nil) == (p.Agg.Expr != nil) || ir.FormatExpr(input) != ir.FormatExpr(tt.input) {
			t.Errorf("%s: part %+v (input %s), want shape %d, input %s, label %q", tt.name, p, ir.FormatExpr(input), tt.shape, ir.FormatExpr(tt.input), tt.label)
		}
	}
	// Without DISTINCT, COUNT stays a count.
	if p := Count.Parts(Arg{Column: city, Text: "city", Type: "text"})[0]; p.Agg.Kind != ir.CountValues || p.Shape != ShapeCount {
		t.Errorf("COUNT(city) part %+v", p)
	}
	if !Count.Distinct || Sum.Distinct || Avg.Distinct {
		t.Error("only COUNT takes DISTINCT")
	}
	// Its value is a count's: an integer, clamped at 0 when the dataset
	// says so.
	if v := Count.Value(Context{ClampCounts: true}, []Noisy{{-2, 1}}); v != ir.Int(0) {
		t.Errorf("clamped value %v", v)
	}
}

// TestDistinctShapeKinds: the distinct shapes reach the distinct
// sensitivity kinds (whose closed forms are oracle-checked).
func TestDistinctShapeKinds(t *testing.T) {
	for _, tt := range []struct {
		s       Shape
		grouped bool
		want    sensitivity.Kind
	}{
		{ShapeDistinct, false, sensitivity.KindDistinct},
		{ShapeDistinct, true, sensitivity.KindGroupedDistinct},
		{ShapeDistinctUnits, false, sensitivity.KindDistinctUnits},
		{ShapeDistinctUnits, true, sensitivity.KindGroupedDistinctUnits},
	} {
		if got := tt.s.Kind(tt.grouped); got != tt.want {
			t.Errorf("Shape(%d).Kind(%t) = %v, want %v", tt.s, tt.grouped, got, tt.want)
		}
	}
}
