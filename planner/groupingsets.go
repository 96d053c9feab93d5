package planner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// SetsStrategy is how the rows of a query with grouping sets are released.
type SetsStrategy uint8

const (
	// SetsSummed: one release of the finest grouping (every key of the
	// query, all from declared or derived domains); each set's rows are
	// sums of its noisy cells. Post-processing: costs what the finest
	// GROUP BY costs, and totals agree with their cells exactly.
	SetsSummed SetsStrategy = iota
	// SetsSeparate: each distinct set is its own noisy histogram (its
	// keys from domains or by threshold selection), with ε (and δ) split
	// among them (sequential composition), all charged in one reservation.
	SetsSeparate
)

func (s SetsStrategy) String() string {
	if s == SetsSeparate {
		return "per_set_release"
	}
	return "sum_of_finest_cells"
}

// GroupingSetsPlan is the release of GROUP BY ROLLUP / CUBE / GROUPING
// SETS. Plan.Groups holds every key of any set; a row of set S reads NULL
// in the keys S rolls up.
type GroupingSetsPlan struct {
	// Sets are the grouping sets as written (duplicates kept: SQL returns
	// their rows twice), each listing indexes into Plan.Groups.
	Sets     [][]int
	Strategy SetsStrategy
	// Release (SetsSeparate) has one plan per distinct set, run in one
	// reservation: its Backend, Groups (the set's keys), Aggs (parallel
	// to the parent's), Keys and Budget. Sets[i] is released by
	// Release[Distinct[i]].
	Release  []*Plan
	Distinct []int
	// SumError and SeparateError are the total noise variance over all
	// output rows under each strategy, in units of the variance of one
	// finest cell, summed over the noisy aggregates (NaN when not
	// computed: a domain whose size is known only at run time, or a
	// strategy that is not possible).
	SumError, SeparateError float64
}

// Separate reports whether the sets are released one by one.
func (g *GroupingSetsPlan) Separate() bool { return g != nil && g.Strategy == SetsSeparate }

// bindGroupingSets records the query's grouping sets (run after groups:
// q.GroupBy and Plan.Groups are then parallel).
func (b *builder) bindGroupingSets(q *ir.Query) error {
	if q.GroupingSets == nil {
		return nil
	}
	if len(b.plan.Groups) != len(q.GroupBy) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "a key of these grouping sets is written twice in two spellings (the same column or expression)").
			WithHint("write each key of ROLLUP, CUBE or GROUPING SETS the same way everywhere")
	}
	if len(b.plan.Groups) == 0 {
		if len(q.GroupingSets) == 1 {
			return nil // GROUP BY (): the one row of an ungrouped aggregate
		}
		return sqlerr.New(sqlerr.FeatureNotSupported, "grouping sets that are all () are not supported").
			WithHint("drop the GROUP BY: the query then returns its one total row")
	}
	b.plan.GroupingSets = &GroupingSetsPlan{Sets: q.GroupingSets}
	return nil
}

// groupingOutput returns the hidden output computing GROUPING(keys).
func (b *builder) groupingOutput(g ir.Grouping) (int, error) {
	if len(g.Keys) != len(g.Args) || len(g.Keys) == 0 {
		return 0, sqlerr.New(sqlerr.Internal, "internal error: GROUPING is not bound to the GROUP BY")
	}
	for _, k := range g.Keys {
		if k < 0 || k >= len(b.q.GroupBy) {
			return 0, sqlerr.New(sqlerr.GroupingError, "arguments to GROUPING must be grouping expressions of the query")
		}
	}
	for i, o := range b.plan.Outputs {
		if o.Kind == OutGrouping && slices.Equal(o.Grouping, g.Keys) {
			return i, nil
		}
	}
	name := make([]string, len(g.Keys))
	for i, k := range g.Keys {
		name[i] = ir.FormatExpr(b.q.GroupBy[k])
		if k < len(b.plan.Groups) {
			name[i] = b.plan.Groups[k].Name
		}
	}
	b.plan.Outputs = append(b.plan.Outputs, Output{Name: "grouping(" + strings.Join(name, ", ") + ")", Kind: OutGrouping,
		Type: policies.TypeInteger, Grouping: slices.Clone(g.Keys), Hidden: true})
	return len(b.plan.Outputs) - 1, nil
}

// GroupingValue is the value of output o (OutGrouping) on a row of
// grouping set set (an index into GroupingSets.Sets); 0 without grouping
// sets, where every key is in the one set.
func (pl *Plan) GroupingValue(o Output, set int) int64 {
	if pl.GroupingSets == nil || set < 0 || set >= len(pl.GroupingSets.Sets) {
		return 0
	}
	return ir.GroupingBits(o.Grouping, pl.GroupingSets.Sets[set])
}

// additive reports whether an aggregate's noisy values add up across
// cells to the noisy value of their union (so a subtotal may be summed).
// Counts and clamped sums do, and so AVG, the ratio of two of them.
// A primitive whose parts do not add (a quantile's bin choice, a
// distinct count) is not summed: its sets are released separately.
func additive(k ir.BackendAggKind) bool {
	switch k {
	case ir.CountRows, ir.CountValues, ir.SumClamped:
		return true
	}
	return false
}

// planGroupingSets chooses how the sets are released, after the finest
// grouping (Plan.Groups: every key) is planned and calibrated at ε, δ.
func (b *builder) planGroupingSets(eps float64, ds *policies.Dataset, main *policies.Table) error {
	gs := b.plan.GroupingSets
	if gs == nil {
		return nil
	}
	if b.plan.Synopsis != nil {
		return sqlerr.New(sqlerr.FeatureNotSupported, "grouping sets are not supported with a range count answered from a synopsis")
	}
	var distinct [][]int
	gs.Distinct = make([]int, len(gs.Sets))
	for i, s := range gs.Sets {
		j := slices.IndexFunc(distinct, func(d []int) bool { return slices.Equal(d, s) })
		if j < 0 {
			j = len(distinct)
			distinct = append(distinct, s)
		}
		gs.Distinct[i] = j
	}
	summable := b.plan.Keys.Mode == KeysDomain
	why := ""
	for i, a := range b.plan.Backend.Aggs {
		if !additive(a.Kind) {
			summable, why = false, b.plan.Aggs[i].Label+" does not add up across cells"
		}
	}
	if b.plan.Keys.Mode != KeysDomain {
		why = "the finest grouping has no declared or derived key set"
	}
	gs.SumError, gs.SeparateError = math.NaN(), math.NaN()

	release, serr := b.separateReleases(distinct, eps, b.plan.Budget.Delta, ds, main)
	finest, known := b.finestKeyCount()
	switch {
	case !summable && serr != nil:
		return serr
	case !summable:
		gs.Strategy = SetsSeparate
	case serr != nil:
		gs.Strategy = SetsSummed
		b.notes = append(b.notes, "grouping sets: releasing each set separately is not possible ("+sqlerr.As(serr).Message+")")
	case !known:
		gs.Strategy = SetsSummed
		b.notes = append(b.notes, "grouping sets: a key set is read from a table at run time, so the errors of the two strategies are not compared; totals are summed from the finest cells")
	default:
		gs.SumError, gs.SeparateError = b.setErrors(distinct, release, finest)
		gs.Strategy = SetsSummed
		if gs.SeparateError < gs.SumError {
			gs.Strategy = SetsSeparate
		}
	}
	if gs.Strategy == SetsSummed {
		b.notes = append(b.notes, fmt.Sprintf(
			"grouping sets (%d): one release of the finest grouping (%s); each subtotal and total is the sum of its noisy finest cells (post-processing: consistent, no extra cost; a sum of c cells has c times a cell's noise variance)%s",
			len(gs.Sets), strings.Join(b.groupNames(nil), ", "), b.errorsText(gs)))
		return nil
	}
	gs.Release = release
	// The columns (explain, the cost notice) describe the noisiest set's
	// calibration of each aggregate; grouping_sets in explain lists all.
	for j := range b.plan.Aggs {
		worst := release[0].Aggs[j]
		for _, r := range release[1:] {
			if r.Aggs[j].ScaleValue() > worst.ScaleValue() {
				worst = r.Aggs[j]
			}
		}
		b.plan.Aggs[j] = worst
	}
	b.plan.Budget = chargeOf(release, eps, b.plan.Budget.Delta)
	reason := why
	if reason == "" {
		reason = "the smaller error"
	}
	b.notes = append(b.notes, fmt.Sprintf(
		"grouping sets (%d, %d distinct): each distinct set is its own histogram, the %d noisy ones with ε = %g / %d each (sequential composition, one charge for all; exact sets take none)%s, chosen because %s%s",
		len(gs.Sets), len(distinct), noisySets(release), eps, noisySets(release), deltaText(release), reason, b.errorsText(gs)))
	for i, r := range release {
		for _, n := range r.Notes {
			if !slices.Contains(b.notes, n) { // the finest plan's notes say it already
				b.notes = append(b.notes, fmt.Sprintf("set %d (%s): %s", i+1, strings.Join(b.groupNames(distinct[i]), ", "), n))
			}
		}
	}
	// The finest grouping's own key selection is not released: its
	// threshold note would mislead.
	b.plan.Notes = nil
	return nil
}

func deltaText(release []*Plan) string {
	n, d := 0, 0.0
	for _, r := range release {
		if r.Keys.Mode == KeysThreshold {
			n, d = n+1, r.Budget.Delta
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; sets without a key set (%d) select their keys by threshold with δ = %g each", n, d)
}

func (b *builder) errorsText(gs *GroupingSetsPlan) string {
	if math.IsNaN(gs.SumError) || math.IsNaN(gs.SeparateError) {
		return ""
	}
	return fmt.Sprintf(" (total noise variance over all rows, in finest-cell units: summed %.4g, per set %.4g)", gs.SumError, gs.SeparateError)
}

// groupNames names the keys of set (all keys when nil).
func (b *builder) groupNames(set []int) []string {
	var out []string
	for i, g := range b.plan.Groups {
		if set == nil || slices.Contains(set, i) {
			out = append(out, g.Name)
		}
	}
	if len(out) == 0 {
		out = []string{"()"}
	}
	return out
}

// finestKeyCount is the number of keys of each group's static domain
// (known false when a domain is read at run time).
func (b *builder) finestKeyCount() ([]int, bool) {
	n := make([]int, len(b.plan.Groups))
	for i, g := range b.plan.Groups {
		if g.Domain == nil {
			return nil, false
		}
		n[i] = max(len(g.Domain)+btoi(g.NullKey), 1)
	}
	return n, true
}

// setErrors compares the strategies by the total noise variance of all
// rows of all distinct sets. A row of set S summed from the finest cells
// adds c cells (the product of the domain sizes of the keys S rolls up):
// its variance is c·v_j for aggregate j, v_j one finest cell's; S has r
// rows (the product of its own keys' sizes), and r·c = N, the number of
// finest cells, so summation costs N·v_j per set. Separately, S has r rows
// of variance w_j (its own release at ε/s). Both are in units of v_j and
// summed over the noisy aggregates. The discrete Laplace variance is a
// function of the scale alone, 2e^(-1/t)/(1-e^(-1/t))², compared exactly
// in that form.
func (b *builder) setErrors(distinct [][]int, release []*Plan, keys []int) (sum, sep float64) {
	n := 1.0
	for _, k := range keys {
		n *= float64(k)
	}
	for si, s := range distinct {
		r := 1.0
		for _, g := range s {
			r *= float64(keys[g])
		}
		for j, a := range b.plan.Aggs {
			v := laplaceVariance(a.ScaleValue())
			if v == 0 {
				// The finest cells are exact, so are their sums: a set
				// released with noise is worse whatever its rows.
				if laplaceVariance(release[si].Aggs[j].ScaleValue()) > 0 {
					sep = math.Inf(1)
				}
				continue
			}
			sum += n
			sep += r * laplaceVariance(release[si].Aggs[j].ScaleValue()) / v
		}
	}
	return sum, sep
}

// laplaceVariance is the variance of the discrete Laplace distribution of
// scale t (in the output's units, which cancel in the ratios above).
func laplaceVariance(t float64) float64 {
	if t <= 0 {
		return 0
	}
	q := math.Exp(-1 / t)
	return 2 * q / ((1 - q) * (1 - q))
}

// separateReleases plans each distinct set as its own histogram at ε/s
// (s distinct sets): its keys from the domains, or by threshold selection
// with δ split among the sets that need it, and the sensitivity of its own
// grouping under the dataset's model.
func (b *builder) separateReleases(distinct [][]int, eps, delta float64, ds *policies.Dataset, main *policies.Table) ([]*Plan, error) {
	s := len(distinct)
	thr := 0
	for _, set := range distinct {
		for _, g := range set {
			if !hasDomain(b.plan.Groups[g]) {
				thr++
				break
			}
		}
	}
	out := make([]*Plan, s)
	for i, set := range distinct {
		var err error
		if out[i], err = b.setPlan(set, share(eps, s), share(delta, max(thr, 1)), ds, main); err != nil {
			return nil, err
		}
	}
	// A set whose every aggregate has sensitivity 0 under the model (a
	// published marginal under induced, a partition-aligned histogram
	// under blowfish) is exact and takes no ε: the others share it all.
	var noisy []int
	for i, r := range out {
		if r.Budget.Epsilon > 0 {
			noisy = append(noisy, i)
		}
	}
	if len(noisy) == 0 || len(noisy) == s {
		return out, nil
	}
	for _, i := range noisy {
		var err error
		if out[i], err = b.setPlan(distinct[i], share(eps, len(noisy)), share(delta, max(thr, 1)), ds, main); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hasDomain(g GroupPlan) bool { return g.Domain != nil || g.DomainSQL != "" || g.DomainFrom != nil }

// setPlan plans one grouping set as a plain GROUP BY of its keys with the
// finest plan's aggregates (same order, so that the outputs read either),
// calibrated at eps.
func (b *builder) setPlan(set []int, eps, delta float64, ds *policies.Dataset, main *policies.Table) (*Plan, error) {
	pl := b.plan
	sub := *b
	sub.notes = nil
	sub.groupCols = nil
	sp := &Plan{Class: ClassPrivate, Dataset: pl.Dataset, Table: pl.Table, Post: pl.Post, NullsHigh: pl.NullsHigh}
	bq := *pl.Backend
	bq.GroupBy = nil
	bq.Aggs = slices.Clone(pl.Backend.Aggs)
	for _, g := range set {
		sp.Groups = append(sp.Groups, pl.Groups[g])
		bq.GroupBy = append(bq.GroupBy, pl.Backend.GroupBy[g])
		sub.groupCols = append(sub.groupCols, b.groupCols[g])
	}
	sp.Backend = &bq
	for _, a := range pl.Aggs {
		sp.Aggs = append(sp.Aggs, AggPlan{Label: a.Label})
	}
	sub.plan = sp
	sp.Budget = policies.Budget{Epsilon: eps}
	switch {
	case len(set) == 0:
		sp.Keys.Mode = KeysNone
	case sub.allDomains():
		sp.Keys.Mode = KeysDomain
		if n := sub.staticKeyCount(); n > MaxKeys {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a grouping set has %d possible keys, more than the %d the proxy releases at once", n, MaxKeys)
		}
	default:
		col := sub.missingDomain()
		if err := refuseThreshold(ds, col.name()); err != nil {
			return nil, err
		}
		ci := slices.IndexFunc(bq.Aggs, func(a ir.BackendAgg) bool { return a.Kind == ir.CountRows })
		if delta <= 0 || ci < 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "grouping set (%s) needs a declared domain for %s", strings.Join(b.groupNames(set), ", "), col.name())
		}
		sp.Keys = KeySelection{Mode: KeysThreshold, CountAgg: ci}
		sp.Budget.Delta = delta
	}
	if err := sub.calibrate(eps, ds, main); err != nil {
		return nil, err
	}
	if err := sub.settleBlowfish(eps, ds); err != nil {
		return nil, err
	}
	if sp.Keys.Mode == KeysThreshold {
		tau, err := threshold(main.MaxRowsPerUnit, sp.Aggs[sp.Keys.CountAgg].Scale, delta)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "cannot calibrate threshold key selection for this ε and δ")
		}
		sp.Keys.Threshold = tau
		sub.notes = append(sub.notes, fmt.Sprintf("keys released only if their noisy count is at least %d (threshold selection, δ = %g)", tau, delta))
	}
	if err := b.p.checkLimits(&bq); err != nil {
		return nil, err
	}
	sp.Notes = sub.notes
	sp.CacheKey = cacheKey(sp)
	return sp, nil
}

// appendGroupingSets adds the sets and their strategy to the bytes a
// release's cache key hashes (cacheKey): a summed release is the finest
// grouping's own (the same noisy cells), a separate one is its own set of
// releases.
func appendGroupingSets(b []byte, gs *GroupingSetsPlan) []byte {
	if !gs.Separate() {
		return b
	}
	b = append(b, "sets:"...)
	b = strconv.AppendInt(b, int64(len(gs.Release)), 10)
	b = append(b, 0)
	for _, r := range gs.Release {
		b = append(b, r.CacheKey...)
		b = append(b, 0)
	}
	return b
}

func noisySets(release []*Plan) int {
	n := 0
	for _, r := range release {
		if r.Budget.Epsilon > 0 {
			n++
		}
	}
	return n
}
