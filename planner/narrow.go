package planner

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// appendConjuncts appends the top-level AND conjuncts of e to dst, left
// to right.
func appendConjuncts(dst []ir.Expr, e ir.Expr) []ir.Expr {
	if a, ok := e.(ir.And); ok {
		return appendConjuncts(appendConjuncts(dst, a.L), a.R)
	}
	return append(dst, e)
}

// narrowKeys drops from a grouping key's public key set (a declared
// static domain, a derived one, or the NULL key of a LEFT-joined column)
// the values that a top-level AND conjunct of WHERE rules out on its own:
// a conjunct whose only non-constant parts are the key expression itself
// (WHERE age BETWEEN 30 AND 33 GROUP BY age, WHERE sex = 'Female' GROUP
// BY sex, IN lists), evaluated with the key's value substituted and
// folded (exprtype.Fold). A key is dropped only when the conjunct is
// provably not true there (false or NULL); whenever the fold is unsure
// (a text order, a collation), the key stays.
//
// Why this is safe: a row that passes WHERE satisfies every conjunct,
// and such a conjunct depends on the row only through the row's own
// key, so no row that passes WHERE can have a dropped key. The dropped
// keys' groups are empty on every database: omitting them depends on
// the query and the policy only, never on the data, and reveals nothing.
func (b *builder) narrowKeys() {
	where := b.plan.Backend.Where
	if where == nil {
		return
	}
	conj := appendConjuncts(nil, where)
	var texts []string // FormatExpr of each conjunct, once some key needs them
	for gi, g := range b.groupCols {
		gp := &b.plan.Groups[gi]
		if gp.Domain == nil && !gp.NullKey {
			continue
		}
		var key ir.Expr = g.r.col
		if g.expr != nil {
			key = g.expr
		}
		text := ir.FormatExpr(key)
		// The conjuncts on the key alone, with the key replaced by a
		// placeholder (Param 0, which no parsed query holds).
		if texts == nil {
			texts = make([]string, len(conj))
			for i, c := range conj {
				texts[i] = ir.FormatExpr(c)
			}
		}
		var onKey []ir.Expr
		for i, c := range conj {
			// A node formatted as the key lies in a conjunct only if the
			// conjunct's text contains the key's: FormatExpr writes every
			// node Rewrite visits verbatim into its parent's text
			// (ir.TestRewriteNodesFormatInside), and the first node the
			// rewrite replaces is an unchanged node of the conjunct. So
			// the others are skipped without a rewrite formatting each
			// of their nodes.
			if !strings.Contains(texts[i], text) {
				continue
			}
			found := false
			sub, _ := ir.Rewrite(c, func(n ir.Expr) (ir.Expr, error) {
				if ir.FormatExpr(n) == text {
					found = true
					return ir.Param{Index: 0}, nil
				}
				return n, nil
			})
			other := false
			ir.Walk(sub, func(n ir.Expr) bool {
				switch n.(type) {
				case ir.ColumnRef, ir.Clamp:
					other = true
				}
				return !other
			})
			if found && !other {
				onKey = append(onKey, sub)
			}
		}
		if len(onKey) == 0 {
			continue
		}
		// ruledOut reports whether some such conjunct is provably not
		// true for key value v.
		ruledOut := func(v ir.Value) bool {
			for _, c := range onKey {
				sub, _ := ir.Rewrite(c, func(n ir.Expr) (ir.Expr, error) {
					if _, ok := n.(ir.Param); ok {
						return ir.Literal{Value: v}, nil
					}
					return n, nil
				})
				if t, ok := exprtype.Fold(sub); ok && !(t.Kind == ir.KindBool && t.Bool) {
					return true
				}
			}
			return false
		}
		before := len(gp.Domain)
		if gp.Domain != nil {
			// A copy: the declared domain belongs to the policy.
			gp.Domain = slices.DeleteFunc(slices.Clone(gp.Domain), ruledOut)
			if gp.Domain == nil {
				gp.Domain = []ir.Value{}
			}
		}
		nullDropped := gp.NullKey && ruledOut(ir.Null())
		if nullDropped {
			gp.NullKey = false
		}
		if len(gp.Domain) < before || nullDropped {
			b.notes = append(b.notes, fmt.Sprintf("WHERE rules out some keys of GROUP BY %s on its own: %d of %d keys remain (the others are empty whatever the data)", g.name(), len(gp.Domain)+btoi(gp.NullKey), before+btoi(gp.NullKey || nullDropped)))
		}
	}
}

// valueRange is an interval of one kind of value; lo or hi is NULL
// (ir.KindNull) when WHERE sets no such end.
type valueRange struct{ lo, hi ir.Value }

// whereColumnRanges reads, from the top-level AND conjuncts of the
// lowered WHERE, the ranges it allows columns: col op literal (either
// side; =, <, <=, >, >=) and col BETWEEN literal AND literal, on the
// stored value (a bare comparison reads it unclamped). A strict bound of
// an integer, date or time is moved by one unit (values of those kinds
// are whole numbers of days or microseconds); of a real it is kept (a
// wider range is still a bound).
func whereColumnRanges(where ir.Expr) map[ir.ColumnRef]valueRange {
	var out map[ir.ColumnRef]valueRange // made at the first range found
	limit := func(c ir.ColumnRef, v ir.Value, op ir.CmpOp) {
		if v.Kind != ir.KindInt && v.Kind != ir.KindFloat && !v.IsTime() {
			return
		}
		whole := v.Kind != ir.KindFloat
		r := out[c]
		if (!r.lo.IsNull() && r.lo.Kind != v.Kind) || (!r.hi.IsNull() && r.hi.Kind != v.Kind) {
			return // mixed kinds: leave this column alone
		}
		low, high := v, v
		switch op {
		case ir.OpGt:
			if whole {
				if v.Int == math.MaxInt64 {
					return
				}
				low.Int++
			}
			high = ir.Null()
		case ir.OpGe:
			high = ir.Null()
		case ir.OpLt:
			if whole {
				if v.Int == math.MinInt64 {
					return
				}
				high.Int--
			}
			low = ir.Null()
		case ir.OpLe:
			low = ir.Null()
		case ir.OpEq:
		default:
			return
		}
		if !low.IsNull() && (r.lo.IsNull() || ir.CompareValues(low, r.lo) > 0) {
			r.lo = low
		}
		if !high.IsNull() && (r.hi.IsNull() || ir.CompareValues(high, r.hi) < 0) {
			r.hi = high
		}
		if out == nil {
			out = map[ir.ColumnRef]valueRange{}
		}
		out[c] = r
	}
	var visit func(e ir.Expr)
	visit = func(e ir.Expr) {
		switch n := e.(type) {
		case ir.And:
			visit(n.L)
			visit(n.R)
		case ir.Compare:
			if c, ok := n.L.(ir.ColumnRef); ok {
				if l, ok := n.R.(ir.Literal); ok {
					limit(c, l.Value, n.Op)
				}
			} else if c, ok := n.R.(ir.ColumnRef); ok {
				if l, ok := n.L.(ir.Literal); ok {
					limit(c, l.Value, flip(n.Op))
				}
			}
		case ir.Between:
			c, ok := n.X.(ir.ColumnRef)
			lo, okLo := n.Lo.(ir.Literal)
			hi, okHi := n.Hi.(ir.Literal)
			if ok && okLo && okHi && !n.Not && lo.Value.Kind == hi.Value.Kind {
				limit(c, lo.Value, ir.OpGe)
				limit(c, hi.Value, ir.OpLe)
			}
		}
	}
	visit(where)
	return out
}

// narrowedDomain derives a grouping expression's key set again with its
// bounded columns' clamping bounds narrowed to the ranges WHERE allows
// them (whereColumnRanges): WHERE t >= '2010-04-01' GROUP BY
// date_trunc('month', t) has the months from April on, not every month of
// t's declared bounds. ok is false when no column of the key is narrowed
// or no key set results.
//
// Why this is safe: a row that passes WHERE has a stored value v in the
// allowed range [a, b]; the key is computed from v clamped to the
// declared bounds [lo, hi], and clamping is monotone, so the clamped
// value lies in [clamp(a), clamp(b)] — the bounds this derivation clamps
// to. Every key such a row can have is in the narrowed key set; the keys
// left out are empty on every database, whatever the data.
func (b *builder) narrowedDomain(src ir.Expr) ([]ir.Value, bool) {
	if len(b.whereRanges) == 0 {
		return nil, false
	}
	any := false
	column := func(c ir.ColumnRef) (exprtype.Column, error) {
		col, err := b.exprColumn(c)
		if err != nil || !col.HasBounds {
			return col, err
		}
		r, ok := b.whereRanges[col.Ref]
		if !ok {
			return col, nil
		}
		clamp := func(v ir.Value) ir.Value {
			if v.Kind != col.Lo.Kind {
				return ir.Null()
			}
			if ir.CompareValues(v, col.Lo) < 0 {
				return col.Lo
			}
			if ir.CompareValues(v, col.Hi) > 0 {
				return col.Hi
			}
			return v
		}
		lo, hi := col.Lo, col.Hi
		if !r.lo.IsNull() {
			if v := clamp(r.lo); !v.IsNull() {
				lo = v
			}
		}
		if !r.hi.IsNull() {
			if v := clamp(r.hi); !v.IsNull() {
				hi = v
			}
		}
		if ir.CompareValues(lo, hi) > 0 {
			return col, nil // WHERE allows no value: no row passes, any key set holds
		}
		if lo != col.Lo || hi != col.Hi {
			col.Lo, col.Hi, any = lo, hi, true
			// A declared domain outside the range is left to the clamp.
		}
		return col, nil
	}
	_, info, err := exprtype.GroupKey(src, column)
	if err != nil || !any || info.Domain == nil {
		return nil, false
	}
	return info.Domain, true
}
