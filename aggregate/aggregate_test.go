package aggregate

import (
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		d    Dialect
		name string
		want *Unit
	}{
		{PostgreSQL, "count", Count},
		{PostgreSQL, "COUNT", Count},
		{MySQL, "Sum", Sum},
		{MySQL, "avg", Avg},
		{PostgreSQL, "max", Max},
		{MySQL, "MEDIAN", Median},
		{PostgreSQL, "percentile_disc", PercentileDisc},
		{PostgreSQL, "array_agg", nil},
		{MySQL, "group_concat", nil},
	}
	for _, tt := range tests {
		if got := Lookup(tt.d, tt.name); got != tt.want {
			t.Errorf("Lookup(%d, %q) = %v, want %v", tt.d, tt.name, got, tt.want)
		}
	}
}

// TestUnitsAreConsistent checks every unit of the list: a unique canonical
// lowercase name that ByName finds, spellings in both dialects that Lookup
// maps back to it and no other unit claims, and every func declared.
func TestUnitsAreConsistent(t *testing.T) {
	seen := map[string]*Unit{}
	for _, u := range All() {
		if ByName(u.Name) != u {
			t.Errorf("ByName(%q) does not find its unit", u.Name)
		}
		for _, d := range []Dialect{PostgreSQL, MySQL} {
			if len(u.Spellings[d]) == 0 {
				t.Errorf("%s has no spelling in dialect %d", u.Name, d)
			}
			for _, s := range u.Spellings[d] {
				key := string(rune('0'+d)) + s
				if other := seen[key]; other != nil && other != u {
					t.Errorf("%q is spelled by %s and %s", s, u.Name, other.Name)
				}
				seen[key] = u
				if Lookup(d, s) != u {
					t.Errorf("Lookup(%d, %q) is not %s", d, s, u.Name)
				}
			}
		}
		if u.Parts == nil || u.Type == nil || u.Double == nil || u.Value == nil || u.Summarize == nil {
			t.Errorf("%s leaves a func undeclared", u.Name)
		}
	}
	// The refusal messages list every name: "COUNT, SUM or AVG" for three.
	want := ""
	for i, u := range All() {
		switch {
		case i == 0:
		case i == len(All())-1:
			want += " or "
		default:
			want += ", "
		}
		want += strings.ToUpper(u.Name)
	}
	if got := NamesText(); got != want || !strings.HasPrefix(got, "COUNT, SUM") {
		t.Errorf("NamesText() = %q, want %q", got, want)
	}
}

func TestParts(t *testing.T) {
	col := &ir.ColumnRef{Qualifier: "t0", Name: "age"}
	arg := Arg{Column: col, Text: "age", Type: "integer", Lo: 0, Hi: 120}
	star := Count.Parts(Arg{Star: true})
	if len(star) != 1 || star[0].Agg.Kind != ir.CountRows || star[0].Label != "count(*)" || star[0].Shape != ShapeCount {
		t.Errorf("count(*) parts = %+v", star)
	}
	avg := Avg.Parts(arg)
	if len(avg) != 2 {
		t.Fatalf("avg parts = %+v", avg)
	}
	s, n := avg[0], avg[1]
	if s.Agg.Kind != ir.SumClamped || s.Agg.Lo != 0 || s.Agg.Hi != 120 || s.Agg.Column != col || s.Label != "sum(age)" || s.Shape != ShapeSum || s.SumType != "integer" {
		t.Errorf("avg's sum part = %+v", s)
	}
	if n.Agg.Kind != ir.CountValues || n.Agg.Column != col || n.Label != "count(age)" || n.Shape != ShapeCount {
		t.Errorf("avg's count part = %+v", n)
	}
	// AVG's sum is SUM's: the planner shares identical parts.
	if sum := Sum.Parts(arg)[0]; sum.Agg != s.Agg || sum.Label != s.Label {
		t.Errorf("sum part %+v differs from avg's %+v", sum, s)
	}
}

func TestShapeKind(t *testing.T) {
	for _, tt := range []struct {
		s       Shape
		grouped bool
		want    sensitivity.Kind
	}{
		{ShapeCount, false, sensitivity.KindCount},
		{ShapeCount, true, sensitivity.KindHistogram},
		{ShapeSum, false, sensitivity.KindSum},
		{ShapeSum, true, sensitivity.KindGroupedSum},
	} {
		if got := tt.s.Kind(tt.grouped); got != tt.want {
			t.Errorf("Shape(%d).Kind(%t) = %v, want %v", tt.s, tt.grouped, got, tt.want)
		}
	}
}

func TestValue(t *testing.T) {
	intArg := Arg{Type: "integer", Lo: 10, Hi: 20}
	realArg := Arg{Type: "real", Lo: -1, Hi: 1}
	tests := []struct {
		name  string
		u     *Unit
		c     Context
		parts []Noisy
		want  ir.Value
	}{
		{"count", Count, Context{}, []Noisy{{-3, 1}}, ir.Int(-3)},
		{"count clamped at zero", Count, Context{ClampCounts: true}, []Noisy{{-3, 1}}, ir.Int(0)},
		{"integer sum", Sum, Context{Arg: intArg}, []Noisy{{-7, 1}}, ir.Int(-7)},
		{"real sum on a lattice", Sum, Context{Arg: realArg}, []Noisy{{5, 0.25}}, ir.Float(1.25)},
		{"avg", Avg, Context{Arg: intArg}, []Noisy{{45, 1}, {3, 1}}, ir.Float(15)},
		{"avg clamped to the bounds", Avg, Context{Arg: intArg}, []Noisy{{450, 1}, {3, 1}}, ir.Float(20)},
		{"avg below the bounds", Avg, Context{Arg: intArg}, []Noisy{{-450, 1}, {3, 1}}, ir.Float(10)},
		{"avg of no rows", Avg, Context{Arg: intArg}, []Noisy{{45, 1}, {0, 1}}, ir.Null()},
		{"avg of a negative count", Avg, Context{Arg: intArg}, []Noisy{{45, 1}, {-2, 1}}, ir.Null()},
	}
	for _, tt := range tests {
		if got := tt.u.Value(tt.c, tt.parts); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	p := []PartNoise{{Label: "sum(x)", Sensitivity: 120, Scale: 240, Epsilon: 0.5, CI95: 700}, {Label: "count(x)", Sensitivity: 1, Scale: 2, Epsilon: 0.5, CI95: 6}}
	if s := Sum.Summarize(p[:1]); s.Scale != 240 || s.CI95 != 700 || s.Epsilon != 0.5 {
		t.Errorf("sum summary %+v", s)
	}
	if s := Avg.Summarize(p); s.Epsilon != 1 || !math.IsNaN(s.CI95) || s.Sensitivity != 120 {
		t.Errorf("avg summary %+v", s)
	}
}
