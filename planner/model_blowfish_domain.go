package planner

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
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
