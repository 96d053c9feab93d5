package planner

import (
	"math"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// lipInfo is what lipschitz knows of an expression: its value lies in
// [lo, hi], and it moves by at most lip·d when the distance column moves
// by d (every other column fixed).
type lipInfo struct{ lo, hi, lip float64 }

// lipschitz analyses a lowered summand built from numeric literals,
// clamped columns, +, −, × and unary minus (the shapes x − m and (x − m)²
// of a variance); ok is false for anything else (a division, a CASE, a
// function: not Lipschitz, or not analysed).
//
// Proof, by induction on the expression. A literal does not move (lip 0).
// A clamped column lies in its clamp [Lo, Hi]; clamping is 1-Lipschitz,
// so the clamped distance column moves by at most d (lip 1) and any other
// clamped column, which an edge of a distance graph never changes, not at
// all (lip 0). |(a ± b) − (a' ± b')| ≤ |a − a'| + |b − b'|: lips add.
// |ab − a'b'| ≤ |a − a'|·|b| + |a'|·|b − b'| ≤ (lip_a·max|b| + lip_b·max|a|)·d,
// with max|·| from the ranges, which are the interval arithmetic of the
// operands' ranges. Negation keeps lip.
func lipschitz(e ir.Expr, alias, col string) (lipInfo, bool) {
	switch n := e.(type) {
	case ir.Literal:
		v, ok := n.Value.AsFloat()
		if !ok || !n.Value.IsNumber() {
			return lipInfo{}, false
		}
		return lipInfo{v, v, 0}, true
	case ir.Clamp:
		c, ok := n.X.(ir.ColumnRef)
		if !ok {
			return lipInfo{}, false
		}
		lo, ok1 := n.Lo.AsFloat()
		hi, ok2 := n.Hi.AsFloat()
		if !ok1 || !ok2 || !n.Lo.IsNumber() || !n.Hi.IsNumber() || lo > hi {
			return lipInfo{}, false
		}
		l := 0.0
		if c.Qualifier == alias && strings.EqualFold(c.Name, col) {
			l = 1
		} else if c.Qualifier != alias {
			return lipInfo{}, false // a joined column: a function of the join column, not analysed
		}
		return lipInfo{lo, hi, l}, true
	case ir.Neg:
		x, ok := lipschitz(n.X, alias, col)
		return lipInfo{-x.hi, -x.lo, x.lip}, ok
	case ir.Arith:
		a, ok1 := lipschitz(n.L, alias, col)
		b, ok2 := lipschitz(n.R, alias, col)
		if !ok1 || !ok2 {
			return lipInfo{}, false
		}
		switch n.Op {
		case ir.OpAdd:
			return lipInfo{a.lo + b.lo, a.hi + b.hi, a.lip + b.lip}, true
		case ir.OpSub:
			return lipInfo{a.lo - b.hi, a.hi - b.lo, a.lip + b.lip}, true
		case ir.OpMul:
			p := []float64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
			lo, hi := p[0], p[0]
			for _, v := range p[1:] {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			ma := math.Max(math.Abs(a.lo), math.Abs(a.hi))
			mb := math.Max(math.Abs(b.lo), math.Abs(b.hi))
			return lipInfo{lo, hi, a.lip*mb + b.lip*ma}, true
		}
	}
	return lipInfo{}, false
}

// exprDistanceStep bounds, in lattice units of s, how far the summand
// e moves along one edge of a distance-θ secret graph on column sec.Column
// (that column moves by at most θ, ⌊θ⌋ for an integer column; nothing else
// changes; a NULL is at no distance from a number, so no edge turns one
// into a value): lip·θ, by lipschitz. The backend clamps the sum's
// argument to its range (1-Lipschitz). An integer summand (intResult) of
// an integer column is computed exactly in BIGINT, so lip·θ (an integer)
// is the step. A real one is quantized as FLOOR(v/γ + 0.5), which moves by
// at most ⌈Δ/γ⌉; one more lattice unit covers the rounding of the
// backend's floating-point (or decimal) evaluation, far below γ, and the
// factor 1 + 2^-40 the rounding of lip computed here. ok is false when
// lipschitz does not apply or the step would not fit.
func exprDistanceStep(e ir.Expr, alias string, sec *policies.Secrets, col *policies.Column, s aggShape, intResult bool) (int64, bool) {
	if sec.Kind != policies.SecretsDistance || col == nil {
		return 0, false
	}
	l, ok := lipschitz(e, alias, sec.Column)
	if !ok || math.IsNaN(l.lip) || math.IsInf(l.lip, 0) || l.lip < 0 {
		return 0, false
	}
	theta := sec.Theta
	if col.Type == policies.TypeInteger {
		theta = math.Floor(theta)
	}
	if intResult && col.Type == policies.TypeInteger && quantumOf(s) == 1 {
		v := l.lip * theta
		if v != math.Trunc(v) || v >= 1<<53 {
			return 0, false
		}
		return int64(v), true
	}
	step := math.Ceil(l.lip*theta/quantumOf(s)*(1+0x1p-40)) + 1
	if !(step >= 0 && step < 1<<62) {
		return 0, false
	}
	return int64(step), true
}
