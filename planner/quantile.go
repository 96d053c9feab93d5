package planner

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/aggregate/quantile"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// QuantilePlan is the selection step of a quantile part (MIN, MAX,
// median, percentiles; aggregate/quantile.go): the exponential mechanism
// over the rank utility of the column's candidate grid, one draw per
// released group.
type QuantilePlan struct {
	Spec *aggregate.Quantile
	// Query counts the column's non-NULL values per group and bin: the
	// main backend query (same FROM, joins, WHERE and contribution bound)
	// with the bin expression as one more grouping key and COUNT(col) as
	// its only aggregate. The release runs it inside the same reservation.
	Query *ir.BackendQuery
	// Rate is a = ε/(2Δu) rounded down, Δu = max(p, 1−p)·S in the
	// utility's units, where S·m (m the ddp multiplier, else 1) is the
	// histogram sensitivity the part's Scale was calibrated to: a =
	// 1/(2·max(r, q−r)·t) for the Laplace scale t = S·m/ε_share, which is
	// itself exact or rounded up. The zero Rate with sensitivity 0 means
	// the histogram is the same on every neighbour: the best candidate is
	// released exactly.
	Rate noise.Rate
	// RankError is the 95% rank error bound in rows (quantile.RankError);
	// 0 when exact.
	RankError float64
}

// Select draws the released candidate index of one group from its
// per-bin counts (len = the grid's size).
func (a AggPlan) Select(src noise.Source, counts []int64) int64 {
	q := a.Quantile
	if a.Scale.IsZero() {
		// Sensitivity 0: every neighbour has these counts; the first
		// best candidate is a function of public data.
		d := quantile.Deficits(counts, q.Spec.Fraction)
		for j, x := range d {
			if x.Sign() == 0 {
				return int64(j)
			}
		}
		return 0
	}
	return int64(quantile.Select(src, q.Rate, counts, q.Spec.Fraction))
}

// RankError is a quantile part's 95% rank error bound in rows (0 for
// other parts and for an exact one).
func (a AggPlan) RankError() float64 {
	if a.Quantile == nil {
		return 0
	}
	return a.Quantile.RankError
}

// quantilePart reports whether true aggregate i is a quantile part.
func (b *builder) quantilePart(i int) bool { return b.parts[i].Shape == aggregate.ShapeBins }

// hasQuantile reports whether the query releases a quantile.
func (b *builder) hasQuantile() bool {
	return slices.ContainsFunc(b.parts, func(p aggregate.Part) bool { return p.Shape == aggregate.ShapeBins })
}

// ddpQuantileMultiplier is the dependence multiplier of a quantile under
// ddp: L, the most units one unit's change can reach (itself included).
// The planner's smaller multipliers solve Eq. 14 for Laplace noise; they
// do not carry over to the exponential mechanism, while L does (group
// privacy: the histogram changes by at most L times one unit's bound).
func (b *builder) ddpQuantileMultiplier(ds *policies.Dataset, a *AggPlan) {
	if ds.Model != policies.ModelDDP || ds.Dependence == nil || ds.Dependence.Structure == nil {
		return
	}
	l := float64(ds.Dependence.Structure.L)
	if l > a.Multiplier {
		a.Multiplier = l
	}
	b.notes = append(b.notes, fmt.Sprintf("%s: dependence multiplier L = %d (the largest set of units one change reaches): ρ from Eq. 14 is derived for Laplace noise and is not used for the exponential mechanism", a.Label, ds.Dependence.Structure.L))
}

// finishQuantiles builds each quantile part's per-bin query and rate from
// its calibrated scale. It runs after calibration and settleBlowfish
// (which may change a part's ε share and scale).
func (b *builder) finishQuantiles() error {
	if b.plan.GroupingSets != nil && b.hasQuantile() {
		return sqlerr.New(sqlerr.FeatureNotSupported, "MIN, MAX, median and percentiles are not supported with ROLLUP, CUBE or GROUPING SETS: a subtotal's quantile is not made of its cells' quantiles").
			WithHint("ask one query per grouping")
	}
	for i := range b.plan.Aggs {
		if !b.quantilePart(i) {
			continue
		}
		a := &b.plan.Aggs[i]
		part := b.parts[i]
		spec := part.Quantile
		if spec == nil || part.Agg.Column == nil {
			return sqlerr.New(sqlerr.Internal, "internal error: %s has no quantile grid", a.Label)
		}
		bin, err := b.p.bins.binExpr(b.quantileSource(i), spec, b.exprColumn)
		if err != nil {
			return sqlerr.Wrap(sqlerr.FeatureNotSupported, err, "cannot place the values of "+a.Label+" in bins")
		}
		q := *b.plan.Backend
		q.GroupBy = append(slices.Clip(q.GroupBy), bin)
		q.Aggs = []ir.BackendAgg{{Kind: ir.CountValues, Column: part.Agg.Column}}
		qp := &QuantilePlan{Spec: spec, Query: &q}
		if !a.Scale.IsZero() {
			// a = 1/(2·L·t), t = num/den: den/(2·L·num).
			t := a.Scale.Rat()
			l := new(big.Int).Mul(spec.Fraction.Lipschitz(), big.NewInt(2))
			r := new(big.Rat).SetFrac(t.Denom(), new(big.Int).Mul(l, t.Num()))
			qp.Rate = noise.RateOf(r)
			qp.RankError = quantile.RankError(qp.Rate, spec.Fraction, spec.Grid.Len())
		}
		a.Quantile = qp
		for _, o := range b.plan.Outputs {
			if o.Kind == OutAggregate && slices.Contains(o.Parts, i) && (o.Unit == aggregate.Min || o.Unit == aggregate.Max) {
				b.notes = append(b.notes, fmt.Sprintf("%s is %s: differential privacy cannot release one row's extreme", o.AggLabel(), o.Unit.Notice))
			}
		}
		b.notes = append(b.notes, fmt.Sprintf("%s: exponential mechanism over %d candidates of %s (rank utility, Lipschitz max(p, 1−p) in the per-bin counts, so Δu = max(p, 1−p) × the histogram sensitivity %g); rank error ≤ %g rows with 95%% probability; a second backend query counts the values per bin",
			a.Label, spec.Grid.Len(), part.Agg.Column.Name, a.SensitivityValue(), qp.RankError))
	}
	return nil
}

// quantileSource is the column the quantile part i reads, as the analyst
// wrote it (exprColumn resolves it again).
func (b *builder) quantileSource(i int) ir.Expr {
	for _, o := range b.plan.Outputs {
		if o.Kind == OutAggregate && slices.Contains(o.Parts, i) && o.Arg.Source != nil {
			return o.Arg.Source
		}
	}
	c := *b.parts[i].Agg.Column
	return c
}

// orderedArg analyses the column argument of a quantile: a number, date
// or time column with declared bounds (or a static domain, whose extent
// serves, as for any computation with it). Its exact bounds and domain
// give the candidate grid.
func (b *builder) orderedArg(u *aggregate.Unit, r resolved, out aggregate.Arg) (aggregate.Arg, error) {
	name := strings.ToUpper(u.Name)
	path := "datasets." + b.sc.ds.Name + ".tables." + b.sc.tables[r.table].tbl.Name + ".columns." + r.name
	if r.decl == nil {
		return aggregate.Arg{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s of %s needs a declared type and bounds", name, r.name).
			WithHint("declare %s with a type and bounds", path)
	}
	t := exprType(r.decl.Type)
	if t != exprtype.Integer && t != exprtype.Real && !t.IsTime() {
		return aggregate.Arg{}, sqlerr.New(sqlerr.DatatypeMismatch, "%s of %s: the column is %s, not a number, date or time", name, r.name, r.decl.Type).
			WithHint("%s is answered over numbers, dates and times with declared bounds", name)
	}
	lo, hi, ok := clampBounds(r.decl, t)
	if !ok {
		return aggregate.Arg{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s of %s needs declared bounds: %s.bounds", name, r.name, path).
			WithHint("the DBA adds bounds: [lo, hi] at %s; the quantile is chosen among values inside them", b.p.pol.Position(path))
	}
	out.Range = [2]ir.Value{lo, hi}
	if d := r.decl.Domain; d != nil && d.Query == "" {
		out.Domain = d.Resolved
	}
	for i, v := range out.Range {
		f := float64(v.Int)
		if v.Kind == ir.KindFloat {
			f = v.Float
		}
		if i == 0 {
			out.Lo = f
		} else {
			out.Hi = f
		}
	}
	return out, nil
}

// binCache keeps the lowered bin expressions of quantiles (a binary
// search of up to 1,023 CASEs, whose lowering is most of a quantile's
// planning) for the planner's lifetime, that is one policy generation.
// Safe for concurrent use; the expressions are shared read-only (the ir
// rewriters copy).
type binCache struct {
	mu sync.Mutex
	m  map[string]ir.Expr
}

// maxCachedBins bounds the cache: one entry per quantile column as
// queries name it, so a policy's worth fits.
const maxCachedBins = 256

// binExpr is exprtype.Scalar(quantile.BinExpr(x, grid, kind), cols),
// remembered when x is a column. The lowering reads nothing but x, the
// grid, the kind and what cols says of x's column, so those, spelled out
// in full (%#v), are the key; an expression argument is lowered afresh.
func (c *binCache) binExpr(x ir.Expr, spec *aggregate.Quantile, cols exprtype.Columns) (ir.Expr, error) {
	lower := func() (ir.Expr, error) {
		bin, _, err := exprtype.Scalar(quantile.BinExpr(x, spec.Grid, spec.Kind), cols)
		return bin, err
	}
	ref, ok := x.(ir.ColumnRef)
	if !ok || c == nil {
		return lower()
	}
	col, err := cols(ref)
	if err != nil {
		return lower() // its error, exactly as the lowering reports it
	}
	key := fmt.Sprintf("%#v\x00%#v\x00%s\x00%d", ref, col, spec.Grid.String(), spec.Kind)
	c.mu.Lock()
	bin, hit := c.m[key]
	c.mu.Unlock()
	if hit {
		return bin, nil
	}
	if bin, err = lower(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedBins {
		clear(c.m)
	}
	c.m[key] = bin
	c.mu.Unlock()
	return bin, nil
}
