package release

import (
	"context"
	"slices"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// expandSets returns the rows post-processing reads, with Set the index of
// the grouping set as written: without grouping sets the release itself;
// summed, each set's rows are the sums of the released finest cells over
// the keys the set rolls up (which read NULL); released separately, each
// set's own rows (a repeated set's rows twice, as SQL returns them).
func expandSets(pl *planner.Plan, rows []storedRow) ([]storedRow, error) {
	gs := pl.GroupingSets
	if gs == nil {
		return rows, nil
	}
	var out []storedRow
	if gs.Separate() {
		for i := range gs.Sets {
			for _, r := range rows {
				if r.Set < 0 || r.Set >= len(gs.Release) {
					return nil, sqlerr.New(sqlerr.Internal, "internal error: a cached release does not match its plan")
				}
				if r.Set == gs.Distinct[i] {
					r.Set = i
					out = append(out, r)
				}
			}
		}
	} else {
		for i, set := range gs.Sets {
			out = append(out, sumSet(rows, set, len(pl.Groups), len(pl.Aggs), i)...)
		}
	}
	if len(pl.OrderBy) == 0 {
		rollupOrder(pl, out)
	}
	return out, nil
}

// rollupOrder sorts rows as MySQL returns GROUP BY ... WITH ROLLUP (and
// PostgreSQL's sorted grouping does): by the keys in GROUP BY order, a
// key's subtotal right after the rows it adds up (a rolled-up key sorts
// after every value of it). Only without ORDER BY; SQL leaves that order
// unspecified, but reports read subtotals in place.
func rollupOrder(pl *planner.Plan, rows []storedRow) {
	sets := pl.GroupingSets.Sets
	in := func(r storedRow, g int) bool { return slices.Contains(sets[r.Set], g) }
	slices.SortStableFunc(rows, func(a, b storedRow) int {
		for g := range pl.Groups {
			ia, ib := in(a, g), in(b, g)
			switch {
			case ia && !ib:
				return -1
			case !ia && ib:
				return 1
			case !ia:
				continue
			}
			an, bn := a.Keys[g].IsNull(), b.Keys[g].IsNull()
			switch {
			case an && bn:
				continue
			case an != bn:
				// A NULL key (a LEFT join's unmatched rows) sorts as the
				// client's database sorts NULL.
				if an == pl.NullsHigh {
					return 1
				}
				return -1
			}
			if c := ir.CompareValues(a.Keys[g], b.Keys[g]); c != 0 {
				return c
			}
		}
		return 0
	})
}

// sumSet adds up the finest cells into the rows of one grouping set, in
// order of first appearance. The noisy cells are exact integers (lattice
// units), so a subtotal is exactly the sum of the cells shown; the grand
// total () is one row even over no cell, as in SQL.
func sumSet(rows []storedRow, set []int, nKeys, nAggs, index int) []storedRow {
	var out []storedRow
	at := map[string]int{}
	for _, r := range rows {
		keys := make([]ir.Value, nKeys)
		for g := range keys {
			keys[g] = ir.Null()
			if slices.Contains(set, g) && g < len(r.Keys) {
				keys[g] = r.Keys[g]
			}
		}
		k := keyString(keys)
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, storedRow{Keys: keys, Aggs: make([]int64, nAggs), Set: index})
		}
		for a := range out[j].Aggs {
			if a < len(r.Aggs) {
				out[j].Aggs[a] = exprtype.SaturatingAdd(out[j].Aggs[a], r.Aggs[a])
			}
		}
	}
	if len(out) == 0 && len(set) == 0 {
		keys := make([]ir.Value, nKeys)
		for g := range keys {
			keys[g] = ir.Null()
		}
		out = append(out, storedRow{Keys: keys, Aggs: make([]int64, nAggs), Set: index})
	}
	return out
}

// setPlan is the plan whose calibration a row's values are read with: the
// row's own set's release when the sets are released separately (each
// has its own lattice for real sums), else the plan itself.
func setPlan(pl *planner.Plan, sr storedRow) *planner.Plan {
	gs := pl.GroupingSets
	if !gs.Separate() || sr.Set < 0 || sr.Set >= len(gs.Distinct) {
		return pl
	}
	v := *pl
	v.Aggs = gs.Release[gs.Distinct[sr.Set]].Aggs
	return &v
}

// runSeparate releases each distinct grouping set as its own noisy
// histogram, all under one reservation of the plan's whole budget: the
// charge is durable before any backend query runs, and once one has run
// a later failure keeps it (the failure may depend on private data, and
// the data was read). Called with the release's flight lock held, after
// its cache lookup missed.
func (e *Engine) runSeparate(ctx context.Context, user *policies.User, pl *planner.Plan, limit policies.Budget, q Query) (*Result, error) {
	gs := pl.GroupingSets
	// Public work first: nothing is charged if it fails.
	if err := e.checkJoinKeys(ctx, pl.Backend); err != nil {
		return nil, err
	}
	keys := make([][][]ir.Value, len(gs.Release))
	for i, r := range gs.Release {
		var err error
		if keys[i], err = e.keyDomain(ctx, r); err != nil {
			return nil, err
		}
	}
	members := make([][]int, len(gs.Release))
	for i, d := range gs.Distinct {
		if members[d] == nil {
			members[d] = gs.Sets[i]
		}
	}

	res, err := e.ledger.Charge(ctx, q.charge(user.Name, pl.Dataset.Name, pl.CacheKey, pl.Budget), limit)
	if err != nil {
		return nil, err
	}
	rel := &stored{Version: 1}
	for i, r := range gs.Release {
		truth, err := e.collect(ctx, r, len(keys[i]))
		if err == nil {
			var part *stored
			if part, err = e.noisy(r, keys[i], truth, nil); err == nil {
				for _, row := range part.Rows {
					rel.Rows = append(rel.Rows, widen(row, members[i], len(pl.Groups), i))
				}
			}
		}
		if err != nil {
			if i == 0 {
				return nil, e.failed(res, err)
			}
			return nil, e.keep(res, err)
		}
	}
	data, err := encodeStored(rel)
	if err != nil {
		return nil, e.keep(res, err)
	}
	return e.publish(ctx, user, pl, res, rel, data)
}

// widen places a set's row among all the query's keys (NULL where the set
// rolls a key up) and marks it with its release's index.
func widen(r storedRow, set []int, nKeys, release int) storedRow {
	keys := make([]ir.Value, nKeys)
	for g := range keys {
		keys[g] = ir.Null()
	}
	for j, g := range set {
		if j < len(r.Keys) {
			keys[g] = r.Keys[j]
		}
	}
	return storedRow{Keys: keys, Aggs: r.Aggs, Set: release}
}

// keep settles a reservation after a failure that came after a backend
// query of it ran: the charge stays, whatever the error.
func (e *Engine) keep(res budget.Reservation, err error) error {
	if _, cerr := res.Commit("", nil); cerr != nil {
		return e.unsettled(cerr, err)
	}
	se := sqlerr.As(err)
	if sqlerr.NeverRan(se) {
		se = sqlerr.New(sqlerr.Internal, "internal error: the backend failed during a release; the budget stays charged")
	}
	e.log.Warn("private query failed after it reached the backend; the budget stays charged", "code", se.Code.Name, "err", err)
	return se
}

// unsettled is the error of a failed release whose reservation could not
// be settled: the charge may not be durable (Charge.Overlap), so the
// failure, which may depend on private data, is not returned; the
// reservation stays charged.
func (e *Engine) unsettled(cerr, err error) error {
	e.log.Error("settling a failed release; the budget stays charged", "err", cerr, "failure", err)
	return sqlerr.Wrap(sqlerr.Internal, cerr, "the privacy budget ledger failed; nothing was returned, and the budget stays charged")
}
