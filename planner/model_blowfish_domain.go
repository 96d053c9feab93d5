package planner

import (
	"math"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

// latticeOf returns what a row adds to the clamped SUM of aggregate s when
// its summed column holds value v and it passes the WHERE clause, as the
// smallest and largest lattice value the backend can compute: the value
// clamped to the bounds, divided by γ and rounded. An integer summed
// without a lattice is clamped exactly; a real value's ROUND is either the
// floor or the ceiling of c/γ (γ is a power of two, so the division is
// exact), so both are kept. ok is false for a value that is not a number.
func (b *builder) latticeOf(s aggShape) func(v ir.Value) (lo, hi int64, ok bool) {
	ba := b.plan.Backend.Aggs[s.Index]
	q := quantumOf(s)
	return func(v ir.Value) (int64, int64, bool) {
		if v.Kind == ir.KindInt && q == 1 && float64(s.Lo) == ba.Lo && float64(s.Hi) == ba.Hi {
			c := min(max(v.Int, s.Lo), s.Hi)
			return c, c, true
		}
		f, ok := v.AsFloat()
		if !ok || math.IsNaN(f) {
			return 0, 0, false
		}
		c := min(max(f, ba.Lo), ba.Hi) / q
		lo, hi := math.Floor(c), math.Ceil(c)
		if !(lo >= -(1<<62) && hi <= 1<<62) {
			return 0, 0, false
		}
		return max(int64(lo), s.Lo), min(int64(hi), s.Hi), true
	}
}

// domainRange is the smallest and largest amount a passing row adds to the
// SUM of s when the summed column has a verified domain (a constrained
// column of a blowfish or induced dataset: every row holds a domain value,
// never NULL). ok is false otherwise: the clamping bounds hold then.
func (b *builder) domainRange(an *policies.Analysis, value string, s aggShape) (lo, hi int64, ok bool) {
	dom, ok := an.VerifiedDomain(value)
	if !ok {
		return 0, 0, false
	}
	lattice := b.latticeOf(s)
	first := true
	for _, v := range dom {
		l, h, ok := lattice(v)
		if !ok || l > h {
			return 0, 0, false
		}
		if first {
			lo, hi, first = l, h, false
		}
		lo, hi = min(lo, l), max(hi, h)
	}
	return lo, hi, !first
}

// exactPass returns the WHERE clause as an exact test on the constrained
// columns, for policies.SumRows.Pass, or nil when there is no WHERE
// clause or it cannot be one: a join (a row without a match is dropped),
// or a clause that evalRow cannot decide on integer columns. The analysis
// asks it for every tuple of the declared domains and falls back to the
// = / IN reading when any answer is unknown; constrained columns never
// hold NULL (verified before serving), so two-valued logic is exact.
func (b *builder) exactPass(main *policies.Table) func(get func(col string) (ir.Value, bool)) (bool, bool) {
	where := b.plan.Backend.Where
	if where == nil || len(b.plan.Backend.Joins) > 0 {
		return nil
	}
	alias := b.sc.tables[0].alias
	return func(get func(col string) (ir.Value, bool)) (bool, bool) {
		return evalRow(where, alias, func(name string) (float64, bool) {
			name = strings.ToLower(name)
			if col := main.Column(name); col == nil || col.Type != policies.TypeInteger {
				return 0, false
			}
			v, ok := get(name)
			if !ok || v.Kind != ir.KindInt || v.Int > 1<<53 || v.Int < -(1<<53) {
				return 0, false
			}
			return float64(v.Int), true
		}, true)
	}
}

// sumRows describes aggregate s (a SUM of value, or a COUNT(*) when value
// is "") for the load-time analysis.
func (b *builder) sumRows(main *policies.Table, value string, s aggShape) policies.SumRows {
	conds, plain := b.whereValues()
	if b.plan.Backend.Where == nil {
		conds = nil
	}
	return policies.SumRows{Column: value, Lo: s.Lo, Hi: s.Hi, Lattice: b.latticeOf(s),
		Pass: b.exactPass(main), Where: conds, Opaque: !plain || len(b.plan.Backend.Joins) > 0,
		Grouped: s.Kind == sensitivity.KindGroupedSum || s.Kind == sensitivity.KindHistogram}
}
