package aggregate

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/aggregate/quantile"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The quantile family: MIN, MAX, median, percentile_cont and
// percentile_disc. Each is one part of shape ShapeBins: the backend counts
// the column's values per candidate bin (a grid over the declared bounds or
// domain, package aggregate/quantile) per group, and the release picks one
// candidate per group by the exponential mechanism over the rank utility
// for the fraction p (MIN p = 0, MAX p = 1, median p = 1/2). MIN and MAX are
// therefore noisy quantiles near the ends, not the extreme values: the
// extreme of one row is not something differential privacy can release.
//
// Sensitivity: the rank utility of every candidate is max(p, 1−p)-Lipschitz
// in the L1 norm of the bin counts (quantile.Utilities), so its
// sensitivity is max(p, 1−p) times that of the histogram GROUP BY (keys…,
// bin(x)), which the per-model code computes for the part (sensitivity
// kind histogram, the column counted as a grouping column).

// Quantile is what a ShapeBins part carries: the candidate grid of its
// column, the fraction, and the ir.Kind of the column's values (the bin
// expression's constants are written in it).
type Quantile struct {
	Grid     quantile.Grid
	Fraction quantile.Fraction
	Kind     ir.Kind
}

// Key identifies the part's selection (two outputs with equal keys share
// one draw: median and percentile_cont(0.5) of a column are one release).
func (q *Quantile) Key() string {
	return "p=" + q.Fraction.Rat().RatString() + "/" + q.Grid.String()
}

// quantileUnit declares one member of the family. fixed is its fraction
// (nil: the query's percentile_cont(p)); cont: percentile_cont's
// interpolated value of an integer bin (a real), else a value of the
// column's type.
func quantileUnit(name string, spell []string, fixed *big.Rat, cont bool, notice string) *Unit {
	u := &Unit{
		Name:      name,
		Spellings: map[Dialect][]string{PostgreSQL: spell, MySQL: spell},
		Fraction:  fixed == nil,
		Ordered:   true,
		Notice:    notice,
	}
	frac := func(a Arg) (*big.Rat, error) {
		if fixed != nil {
			return fixed, nil
		}
		if a.Fraction == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s needs a fraction: %s(p) WITHIN GROUP (ORDER BY %s)", name, name, a.Text)
		}
		return fractionOf(*a.Fraction)
	}
	spec := func(a Arg) (*Quantile, error) {
		p, err := frac(a)
		if err != nil {
			return nil, err
		}
		f, err := quantile.NewFraction(p)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.NumericValueOutOfRange, err, "percentile value "+p.RatString()+" is not between 0 and 1")
		}
		g, kind, err := gridOf(a)
		if err != nil {
			return nil, err
		}
		return &Quantile{Grid: g, Fraction: f, Kind: kind}, nil
	}
	u.Check = func(a Arg) error {
		_, err := spec(a)
		return err
	}
	u.Parts = func(a Arg) []Part {
		q, err := spec(a) // Check has passed: err is nil
		if err != nil {
			return []Part{{Label: name + "(" + a.Text + ")", Shape: ShapeBins, Mechanism: Exponential}}
		}
		return []Part{{
			Agg:   ir.BackendAgg{Kind: ir.CountValues, Column: a.Column},
			Label: fmt.Sprintf("rank(%s, p = %s)", a.Text, q.Fraction.Rat().RatString()),
			Shape: ShapeBins, Mechanism: Exponential, Quantile: q,
		}}
	}
	u.Type = func(t string) string {
		if cont && (t == typeInteger || t == typeReal) {
			return typeReal
		}
		return t
	}
	u.Double = func(t string) bool { return (cont && t == typeInteger) || t == typeReal }
	u.Value = func(c Context, p []Noisy) ir.Value {
		g, kind, err := gridOf(c.Arg)
		j := p[0].Units
		if err != nil || j < 0 || j >= int64(g.Len()) {
			return ir.Null()
		}
		v := g.Value(int(j), cont && kind == ir.KindInt)
		switch {
		case !v.IsInt:
			return ir.Float(v.Real)
		case kind == ir.KindInt && cont:
			return ir.Float(float64(v.Int))
		case kind == ir.KindInt:
			return ir.Int(v.Int)
		}
		return ir.Value{Kind: kind, Int: v.Int}
	}
	u.Summarize = func(p []PartNoise) Summary {
		return Summary{Sensitivity: p[0].Sensitivity, Mechanism: p[0].Mechanism, Epsilon: p[0].Epsilon, CI95: math.NaN(), RankError: p[0].RankError}
	}
	return u
}

var (
	// Min is MIN(x): the quantile at p = 0.
	Min = quantileUnit("min", []string{"min"}, big.NewRat(0, 1), false,
		"a noisy quantile near the low end (exponential mechanism at p = 0), not the extreme value")
	// Max is MAX(x): the quantile at p = 1.
	Max = quantileUnit("max", []string{"max"}, big.NewRat(1, 1), false,
		"a noisy quantile near the high end (exponential mechanism at p = 1), not the extreme value")
	// Median is median(x) (PostgreSQL has none built in; BI tools and
	// MariaDB users write it): percentile_cont(0.5).
	Median = quantileUnit("median", []string{"median"}, big.NewRat(1, 2), true,
		"a noisy median (exponential mechanism over the column's bins)")
	// PercentileCont is percentile_cont(p) WITHIN GROUP (ORDER BY x).
	PercentileCont = quantileUnit("percentile_cont", []string{"percentile_cont"}, nil, true,
		"a noisy quantile (exponential mechanism over the column's bins)")
	// PercentileDisc is percentile_disc(p) WITHIN GROUP (ORDER BY x).
	PercentileDisc = quantileUnit("percentile_disc", []string{"percentile_disc"}, nil, false,
		"a noisy quantile (exponential mechanism over the column's bins)")
)

// fractionOf reads a fraction as the shortest decimal that converts back
// to the float64 (0.95 is 19/20), as the query wrote it, and checks it is
// in [0, 1] (PostgreSQL's error for others is 22003).
func fractionOf(f float64) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok || math.IsNaN(f) || r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "percentile value %g is not between 0 and 1", f)
	}
	return r, nil
}

// gridOf is the candidate grid of an Ordered argument: a declared numeric
// (or date) domain of at most quantile.MaxDomainCandidates values, else
// the integers (days, microseconds) of the bounds or bins of them, else
// bins of a real range.
func gridOf(a Arg) (quantile.Grid, ir.Kind, error) {
	lo, hi := a.Range[0], a.Range[1]
	kind := lo.Kind
	if kind == ir.KindNull || hi.Kind != kind {
		return quantile.Grid{}, kind, sqlerr.New(sqlerr.FeatureNotSupported, "%s has no declared bounds to place a quantile in", a.Text)
	}
	if n := len(a.Domain); n > 0 && n <= quantile.MaxDomainCandidates {
		vs := make([]quantile.Value, 0, n)
		for _, v := range a.Domain {
			switch {
			case v.Kind == ir.KindFloat && kind == ir.KindFloat:
				vs = append(vs, quantile.Value{Real: v.Float})
			case v.Kind == kind && kind != ir.KindFloat:
				vs = append(vs, quantile.Value{IsInt: true, Int: v.Int})
			}
		}
		if len(vs) == n {
			if g, err := quantile.DomainGrid(vs); err == nil {
				return g, kind, nil
			}
		}
	}
	var g quantile.Grid
	var err error
	if kind == ir.KindFloat {
		g, err = quantile.RealGrid(lo.Float, hi.Float)
	} else {
		g, err = quantile.IntegerGrid(lo.Int, hi.Int)
	}
	if err != nil {
		return g, kind, sqlerr.Wrap(sqlerr.FeatureNotSupported, err, "the bounds of "+a.Text+" give no quantile grid")
	}
	return g, kind, nil
}
