package aggregate

import "github.com/ddp-proxy/ddp-proxy/ir"

// COUNT(DISTINCT x) is Count with DISTINCT: its one part counts the
// distinct non-NULL values of x in the backend over the rows each unit
// keeps after the contribution bound k (ir.CountDistinct), released with
// discrete Laplace noise like a count, and clamped at 0 like one.
//
// The sensitivity (package sensitivity, Distinct; oracle-checked) is that
// of COUNT for a column or expression — one unit's at most k rows add or
// remove at most k distinct values — except for the privacy unit column
// itself: COUNT(DISTINCT unit), the number of people, moves by at most 1
// ungrouped (k, 2k over the groups of a GROUP BY). Under blowfish a change
// of x alone moves a distinct count even where COUNT cannot move, so x's
// columns are read like a summed column's.
//
// Which equality counts values as the same:
//   - a text argument is counted by its exact spelling, as a text group
//     key is grouped (CAST to text, which the renderers give a binary
//     collation), so 'F', 'f' and 'F ' count three times on every backend
//     whatever the column's collation;
//   - the unit column is counted bare, under the same equality as the
//     PARTITION BY that bounds each unit's rows, so that one unit (however
//     the collation spells it) is one value. Counted by exact spelling, a
//     unit whose rows spell 'u1' and 'U1' would count twice.
//
// Any equality is sound for the bound: it needs only that equal values
// form classes, and |O ∪ A| − |O| ≤ |A| holds for classes.
func DistinctPart(a Arg) Part {
	agg := ir.BackendAgg{Kind: ir.CountDistinct, Column: a.Column, Expr: a.Expr}
	shape := ShapeDistinct
	switch {
	case a.Unit:
		shape = ShapeDistinctUnits
	case a.Type == typeText:
		var x ir.Expr = a.Expr
		if x == nil {
			x = *a.Column
		}
		agg.Column, agg.Expr = nil, ir.Cast{X: x, To: ir.CastText}
	}
	return Part{Agg: agg, Label: "count(DISTINCT " + a.Text + ")", Shape: shape}
}
