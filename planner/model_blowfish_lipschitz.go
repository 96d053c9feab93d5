package planner

import (
	"math"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// lipInfo is what lipschitz knows of an expression: its value lies in
// [lo, hi], it moves by at most lip·d when the distance column moves by d
// (every other column fixed), and the backend's floating-point evaluation
// differs from the exact value by at most err.
type lipInfo struct{ lo, hi, lip, err float64 }

// unitRoundoff is the relative error of one double operation (2^-53).
// A DECIMAL or integer evaluation is exact for +, −, × or rounds less.
const unitRoundoff = 0x1p-53

// mag is the largest magnitude in [lo, hi].
func (l lipInfo) mag() float64 { return math.Max(math.Abs(l.lo), math.Abs(l.hi)) }

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
//
// err bounds the rounding of the backend's double evaluation (the standard
// model fl(a ∘ b) = (a ∘ b)(1 + δ), |δ| ≤ 2^-53): a column is read exactly
// (an integer beyond 2^53 rounds once when it meets a double, a real below
// TinyReal reads 0), a real literal rounds once; a ± b adds the operands'
// errors and one rounding of the result; a·b propagates them as lip does
// (e_a·max|b| + e_b·max|a| + e_a·e_b) plus one rounding. Two evaluations
// at distance d then differ by at most lip·d + 2·err: with a range far
// narrower than its operands (3·z − 3 over z ∈ [1, 1 + 2^-40]), err is
// many lattice units, which the step must include.
func lipschitz(e ir.Expr, alias, col string) (lipInfo, bool) {
	switch n := e.(type) {
	case ir.Literal:
		v, ok := n.Value.AsFloat()
		if !ok || !n.Value.IsNumber() {
			return lipInfo{}, false
		}
		e := 0.0
		if n.Value.Kind == ir.KindFloat || math.Abs(v) > 1<<53 {
			e = math.Abs(v) * unitRoundoff // rounded once to a double
		}
		return lipInfo{v, v, 0, e}, true
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
		out := lipInfo{lo: lo, hi: hi, lip: l, err: ir.TinyReal}
		if m := out.mag(); m > 1<<53 {
			out.err += m * unitRoundoff
		}
		return out, true
	case ir.Neg:
		x, ok := lipschitz(n.X, alias, col)
		return lipInfo{-x.hi, -x.lo, x.lip, x.err}, ok
	case ir.Arith:
		a, ok1 := lipschitz(n.L, alias, col)
		b, ok2 := lipschitz(n.R, alias, col)
		if !ok1 || !ok2 {
			return lipInfo{}, false
		}
		switch n.Op {
		case ir.OpAdd, ir.OpSub:
			out := lipInfo{a.lo + b.lo, a.hi + b.hi, a.lip + b.lip, 0}
			if n.Op == ir.OpSub {
				out.lo, out.hi = a.lo-b.hi, a.hi-b.lo
			}
			out.err = a.err + b.err + (out.mag()+a.err+b.err)*unitRoundoff
			return out, true
		case ir.OpMul:
			p := []float64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
			lo, hi := p[0], p[0]
			for _, v := range p[1:] {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			ma := math.Max(math.Abs(a.lo), math.Abs(a.hi))
			mb := math.Max(math.Abs(b.lo), math.Abs(b.hi))
			e := a.err*mb + b.err*ma + a.err*b.err
			return lipInfo{lo, hi, a.lip*mb + b.lip*ma, e + (math.Max(math.Abs(lo), math.Abs(hi))+e)*unitRoundoff}, true
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
// is the step. A real one is evaluated in floating point, within err of
// its exact value at each end of the edge, and quantized as
// FLOOR(v/γ + 0.5), which moves by at most ⌈Δ/γ⌉ for Δ = lip·θ + 2·err;
// one more lattice unit and the factor 1 + 2^-40 cover the rounding of
// lip and err computed here. ok is false when lipschitz does not apply
// or the step would not fit.
func exprDistanceStep(e ir.Expr, alias string, sec *policies.Secrets, col *policies.Column, s aggShape, intResult bool) (int64, bool) {
	if sec.Kind != policies.SecretsDistance || col == nil {
		return 0, false
	}
	l, ok := lipschitz(e, alias, sec.Column)
	if !ok || math.IsNaN(l.lip) || math.IsInf(l.lip, 0) || l.lip < 0 || !(l.err >= 0 && l.err < math.MaxFloat64) {
		return 0, false
	}
	theta := sec.Theta
	if col.Type == policies.TypeInteger {
		theta = math.Floor(theta)
	} else if lo, hi, ok := clampBounds(col, exprtype.Real); ok && lo.Kind == ir.KindFloat && hi.Kind == ir.KindFloat {
		// The distance column enters e through its clamp (exprColumn):
		// its declared bounds, else its static domain's extent.
		theta = thetaWithRounding(theta, math.Max(math.Abs(lo.Float), math.Abs(hi.Float)))
	} else {
		return 0, false
	}
	if intResult && col.Type == policies.TypeInteger && quantumOf(s) == 1 {
		v := l.lip * theta
		if v != math.Trunc(v) || v >= 1<<53 {
			return 0, false
		}
		return int64(v), true
	}
	step := math.Ceil((l.lip*theta+2*l.err)/quantumOf(s)*(1+0x1p-40)) + 1
	if !(step >= 0 && step < 1<<62) {
		return 0, false
	}
	return int64(step), true
}
