// Package aggregate owns the aggregate functions the proxy answers, one
// unit per aggregate (one file each: count.go, sum.go, avg.go; variance.go
// declares the four forms of one family, quantile.go the quantiles MIN,
// MAX, median and percentiles), the way
// Google's DP library keeps one type per aggregation. A Unit declares
// everything about its aggregate in one place:
//
//   - its canonical lowercase name (the ir.AggFunc value) and its
//     spellings in each client dialect (Spellings), so the parsers need no
//     edit for a new aggregate;
//   - what it accepts: `*`, DISTINCT, a fraction parameter;
//   - the true backend primitives (Parts) it needs from its analysed
//     argument (count rows, count values, clamped sums), each with its
//     sensitivity shape (Shape, mapped to sensitivity.Kind so the
//     per-model code computes the bound) and its mechanism;
//   - its result type, how its value is computed from the noisy parts
//     (Value), and its explain and notice texts (Summarize, Notice).
//
// The planner analyses the argument (columns, declared bounds, the range
// of an expression), asks the unit for its parts, deduplicates identical
// parts across the query and splits ε evenly over the distinct parts; the
// release step draws each part's noise and calls Value. The package holds
// no state: the list of units (units.go) is fixed at compile time.
// AppendNoise (format.go) is the one writer of the figures in notice texts
// (noise scales, 95% half-widths, rank errors), the units' interval texts
// and the session's cost notice alike.
//
// It imports ir, sensitivity (the vocabulary of part shapes), sqlerr (a
// unit's Check refusals) and its subpackage quantile (the arithmetic of the
// quantile family: grids, rank utility, exponential mechanism); it never
// imports planner, release, backends or parser, which all import it.
//
// # Adding an aggregate
//
//  1. Write one file, e.g. median.go, declaring `var Median = &Unit{...}`:
//     Name, Spellings per dialect, the Star, Distinct and Fraction flags, Numeric when the
//     argument must be a bounded number, Parts (the ir.BackendAgg
//     primitives built from the Arg, with Shape and Mechanism), Type,
//     Double, Value, Summarize and Notice. Reuse CountPart and SumPart;
//     a part over an expression of the argument sets Part.Of (built over
//     Arg.Source) and lets the planner analyse it (variance.go's centred
//     sums). A composite unit's Summarize states the column's interval
//     (CI95, or CI95OverN and Interval when it depends on the row count).
//  2. Add it to the list in units.go.
//  3. Add tests: aggregate/<name>_test.go (parts, value from noisy parts,
//     spellings), a sensitivity oracle test for any new Shape, a
//     statistical test of the value's error, and a three-backend test of
//     the parts' true values (backends/*_test.go pattern).
//  4. Add a README line under the query language section.
//
// A part whose primitive or shape is new also needs the primitive in
// ir.BackendAgg and the renderers, and the shape's per-model sensitivity
// in the planner's model code; until the model code knows a shape it
// refuses the query with its reason, never guesses. Distinct counts exist:
// a ShapeDistinct or ShapeDistinctUnits part (count_distinct.go, COUNT
// with DISTINCT) counts ir.CountDistinct, with its sensitivity kinds in
// package sensitivity (distinct.go), so another distinct aggregate is a
// part built with DistinctPart. Per-bin
// counts exist: a ShapeBins part (quantile.go) carries its grid and
// fraction in Part.Quantile; the planner builds its per-bin query and
// rate (planner/quantile.go) and the release draws it (release/quantile.go),
// so another quantile-like unit (an interquartile range, say) is one file.
package aggregate
