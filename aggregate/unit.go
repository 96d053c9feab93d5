package aggregate

import (
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

// Dialect is the client's SQL dialect, which decides the spellings.
type Dialect uint8

const (
	PostgreSQL Dialect = iota
	MySQL
)

// Shape is the sensitivity shape of one part: the per-model code turns it
// into a sensitivity.Kind (Kind) and computes the bound.
type Shape uint8

const (
	// ShapeCount counts rows (or non-NULL values): each row adds 1.
	ShapeCount Shape = iota
	// ShapeSum adds each row's value clamped to the part's [Lo, Hi].
	ShapeSum
	// ShapeBins counts the argument's values per bin of its Quantile grid
	// (a histogram GROUP BY keys…, bin(x), computed by a query of its
	// own): grouped or not, its sensitivity is that histogram's.
	ShapeBins
	// ShapeDistinct counts the distinct non-NULL values of the argument
	// among the bounded rows; ShapeDistinctUnits those of the privacy
	// unit column (the number of units). See count_distinct.go.
	ShapeDistinct
	ShapeDistinctUnits
)

// Kind is the sensitivity kind of a part of this shape, over all groups
// when grouped.
func (s Shape) Kind(grouped bool) sensitivity.Kind {
	switch {
	case s == ShapeBins:
		return sensitivity.KindHistogram
	case s == ShapeDistinct || s == ShapeDistinctUnits:
		return sensitivity.Distinct{Grouped: grouped, Units: s == ShapeDistinctUnits}.Kind()
	case s == ShapeCount && grouped:
		return sensitivity.KindHistogram
	case s == ShapeCount:
		return sensitivity.KindCount
	case grouped:
		return sensitivity.KindGroupedSum
	}
	return sensitivity.KindSum
}

// Mechanism is how a part's true value is released.
type Mechanism uint8

const (
	// DiscreteLaplace adds discrete Laplace noise scaled to the part's
	// sensitivity (on a lattice for real sums).
	DiscreteLaplace Mechanism = iota
	// Exponential selects one candidate of a ShapeBins part's grid per
	// group by the exponential mechanism over its rank utility (package
	// aggregate/quantile); the part's released value is the candidate's
	// index.
	Exponential
)

// Arg is an aggregate's argument as the planner analysed it.
type Arg struct {
	// Star is `*` (COUNT(*)); Column and Expr are then unset.
	Star bool
	// Column is a bare column; Expr a lowered expression (package
	// exprtype: total, every column clamped) otherwise.
	Column *ir.ColumnRef
	Expr   ir.Expr
	// Text names the argument in labels: the column's name or the
	// expression as written.
	Text string
	// Source is the argument as written (an ir.ColumnRef or an
	// expression, not lowered): a Part's Of is built over it.
	Source ir.Expr
	// Type is the policies type of the values ("integer", "real", ...;
	// "" unknown). Lo and Hi are their clamp: a column's declared bounds
	// (or its static domain's extent) or an expression's inferred range
	// (set for Numeric units only).
	Type   string
	Lo, Hi float64
	// Range is the exact clamping bounds of an Ordered unit's column
	// (ir.Int, ir.Float or a date or time value), Domain its declared
	// static domain (nil when none).
	Range  [2]ir.Value
	Domain []ir.Value
	// Unit: the argument is the privacy unit column of the private table
	// (a bare column), so that COUNT(DISTINCT unit) counts units.
	Unit bool
	// Distinct and Fraction as written; the planner refuses them unless
	// the unit accepts them.
	Distinct bool
	Fraction *float64
}

// Part is one true aggregate a unit needs. Identical parts of a query (same
// Agg) are computed and noised once.
type Part struct {
	Agg ir.BackendAgg
	// Label names the part in explain ("count(*)", "sum(age)").
	Label     string
	Shape     Shape
	Mechanism Mechanism
	// SumType is the type of the values a ShapeSum part adds ("integer":
	// summed exactly; "real": on a noise lattice).
	SumType string
	// Of, when set, is an expression over Arg.Source that the part
	// aggregates instead of the argument (VAR's (x − m)). The planner
	// analyses it as it analyses an expression argument (package exprtype:
	// lowered, total, every column clamped to its declared bounds, its
	// range inferred) and fills Agg.Expr, the clamp Agg.Lo, Agg.Hi (the
	// inferred range, which sets the sensitivity), SumType and, when
	// empty, Label; Agg.Kind stays the unit's.
	Of ir.Expr
	// Quantile describes a ShapeBins part: its candidate grid and
	// fraction (quantile.go). Parts with equal Quantile keys are one.
	Quantile *Quantile
}

// Noisy is one part's released value: Units × Quantum.
type Noisy struct {
	Units   int64
	Quantum float64
}

// Value is the released value in output units.
func (n Noisy) Value() float64 { return float64(n.Units) * n.Quantum }

// Context is what Value needs besides the noisy parts.
type Context struct {
	Arg Arg
	// ClampCounts: negative noisy counts read 0 (the dataset's
	// clamp_counts_at_zero).
	ClampCounts bool
}

// PartNoise describes one part's noise step for explain.
type PartNoise struct {
	Label       string
	Sensitivity float64
	Mechanism   string
	// Scale is the noise scale in output units (the discrete Laplace
	// scale in lattice units × Quantum; 0: exact).
	Scale   float64
	Quantum float64
	Epsilon float64
	CI95    float64
	// Lo and Hi are a sum part's clamp (0, 0 for counts).
	Lo, Hi float64
	// RankError is an Exponential part's bound R: with probability at
	// least 95% the released candidate lies within R rows (in sorted
	// order) of the requested rank.
	RankError float64
}

// Summary describes a column's noise for explain: for a one-part unit its
// part's, for a composite one how its parts combine.
type Summary struct {
	Sensitivity float64
	Mechanism   string
	Scale       float64
	Epsilon     float64
	// CI95 is the half-width of the column's 95% interval; NaN when not
	// expressible as one number (AVG's ratio).
	CI95 float64
	// CI95OverN, when set, gives the interval of a value whose error
	// shrinks with the group's row count n: its 95% half-width is
	// CI95OverN/n (Mechanism says how it was derived and what to take
	// the square root of for a standard deviation).
	CI95OverN float64
	// RankError is a quantile's 95% rank error bound in rows (0: none).
	RankError float64
	// Interval, when set, is the 95% interval in words for the cost
	// notice, when CI95 cannot say it ("±360000/n for a group of n rows"),
	// its figures written by AppendNoise.
	Interval string
}

// Unit is one aggregate function. Its funcs are pure.
type Unit struct {
	// Name is canonical and lowercase: the ir.AggFunc value, the output
	// column name and the explain "aggregate" field.
	Name string
	// Spellings are the lowercase function names per client dialect.
	Spellings map[Dialect][]string
	// Star: the unit takes `*`. Distinct, Fraction: it accepts DISTINCT
	// or a fraction parameter (percentile_cont(p)); otherwise the planner
	// refuses them.
	Star, Distinct, Fraction bool
	// Numeric: the argument must be a number with bounds (declared or
	// inferred); the planner refuses it otherwise.
	Numeric bool
	// Ordered: the argument must be a column of a number, date or time
	// type with declared bounds (or a static domain, whose extent
	// serves); the planner fills Arg.Range and Arg.Domain.
	Ordered bool
	// Check, when set, refuses an argument the unit cannot take whatever
	// the data (a fraction outside [0, 1]); the planner calls it before
	// Parts, so nothing is charged.
	Check func(a Arg) error
	// Parts lists the true aggregates the unit needs.
	Parts func(a Arg) []Part
	// Type is the policies type of the result for values of argType.
	Type func(argType string) string
	// Double: the client's database computes the result in double
	// precision (not exactly), which decides how round() rounds it.
	Double func(argType string) bool
	// Value computes the result from the noisy parts (in Parts order).
	// It reads parts during the call only: the caller reuses the slice.
	Value func(c Context, parts []Noisy) ir.Value
	// Summarize describes the column's noise from its parts'.
	Summarize func(parts []PartNoise) Summary
	// Notice is the cost notice's text of a composite unit's noise ("" for
	// one part: its scale and interval are shown).
	Notice string
}

// Func is the IR name of the unit.
func (u *Unit) Func() ir.AggFunc { return ir.AggFunc(u.Name) }

// onePart is the Summary of a unit with one part: that part's noise.
func onePart(p []PartNoise) Summary {
	return Summary{Sensitivity: p[0].Sensitivity, Mechanism: p[0].Mechanism, Scale: p[0].Scale, Epsilon: p[0].Epsilon, CI95: p[0].CI95}
}

// CountPart counts the argument's non-NULL values, or the rows for `*`.
func CountPart(a Arg) Part {
	if a.Star {
		return Part{Agg: ir.BackendAgg{Kind: ir.CountRows}, Label: "count(*)", Shape: ShapeCount}
	}
	return Part{Agg: ir.BackendAgg{Kind: ir.CountValues, Column: a.Column, Expr: a.Expr}, Label: "count(" + a.Text + ")", Shape: ShapeCount}
}

// SumPart sums the argument clamped to its bounds.
func SumPart(a Arg) Part {
	return Part{
		Agg:   ir.BackendAgg{Kind: ir.SumClamped, Column: a.Column, Expr: a.Expr, Lo: a.Lo, Hi: a.Hi},
		Label: "sum(" + a.Text + ")", Shape: ShapeSum, SumType: a.Type,
	}
}

// The policies column types a result or an argument can have (package
// policies spells them the same; this package does not import it, as the
// parser imports this one).
const (
	typeInteger = "integer"
	typeReal    = "real"
	typeText    = "text"
)
