package release

import (
	"context"
	"fmt"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// binCounts holds, per quantile part (index into plan.Aggs), the per-bin
// counts of each group key (keyString) that has rows.
type binCounts map[int]map[string][]int64

// binCounts runs each quantile part's per-bin count query (the main
// query's rows, grouped by the keys and the bin of the column) and adds
// the counts up per key and bin. A key is normalised as the main query's
// (two backend spellings of one key add up, as there); a bin outside the
// grid (which the bin expression cannot produce) is clamped into it,
// still one bin per row.
func (e *Engine) binCounts(ctx context.Context, pl *planner.Plan) (binCounts, error) {
	out := binCounts{}
	for i, a := range pl.Aggs {
		if a.Quantile == nil {
			continue
		}
		m := a.Quantile.Spec.Grid.Len()
		n := len(pl.Groups)
		counts := map[string][]int64{}
		err := e.backend.Aggregate(ctx, a.Quantile.Query, func(r ir.BackendRow) error {
			if len(r.Keys) != n+1 || len(r.Aggs) != 1 {
				return sqlerr.New(sqlerr.Internal, "internal error: the per-bin count query returned %d keys and %d aggregates", len(r.Keys), len(r.Aggs))
			}
			keys := make([]ir.Value, n)
			for g := range keys {
				keys[g] = normalize(r.Keys[g], pl.Groups[g].Type)
			}
			k := keyString(keys)
			c := counts[k]
			if c == nil {
				c = make([]int64, m)
				counts[k] = c
			}
			bin := int64(m - 1)
			if b := r.Keys[n]; b.Kind == ir.KindInt {
				bin = min(max(b.Int, 0), int64(m-1))
			} else if b.Kind == ir.KindFloat {
				bin = min(max(int64(b.Float), 0), int64(m-1))
			}
			c[bin] = exprtype.SaturatingAdd(c[bin], max(r.Aggs[0], 0))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("per-bin counts of %s: %w", a.Label, err)
		}
		out[i] = counts
	}
	return out, nil
}

// selectQuantiles draws each quantile part of every released row: one
// exponential-mechanism selection per released key, over that key's
// per-bin counts (all zero for a declared key without rows: the choice is
// then uniform, which reveals nothing). Under threshold selection only the
// keys that passed are drawn.
func (e *Engine) selectQuantiles(pl *planner.Plan, rel *stored, bins binCounts) {
	for i, a := range pl.Aggs {
		if a.Quantile == nil {
			continue
		}
		zero := make([]int64, a.Quantile.Spec.Grid.Len())
		for r := range rel.Rows {
			c := bins[i][keyString(rel.Rows[r].Keys)]
			if c == nil {
				c = zero
			}
			rel.Rows[r].Aggs[i] = a.Select(e.src, c)
		}
	}
}

// noRowsQuantiles marks the quantile parts of the one row of a query that
// reads no row: no candidate (-1), which the units read as NULL, as MIN
// and percentile_cont of an empty input are in SQL.
func noRowsQuantiles(pl *planner.Plan, aggs []int64) {
	for _, o := range pl.Outputs {
		if o.Kind != planner.OutAggregate {
			continue
		}
		for i, p := range o.Unit.Parts(o.Arg) {
			if p.Shape == aggregate.ShapeBins && i < len(o.Parts) {
				aggs[o.Parts[i]] = -1
			}
		}
	}
}
