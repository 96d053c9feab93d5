package planner

import (
	"fmt"
	"slices"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

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
	var conj []ir.Expr
	var split func(e ir.Expr)
	split = func(e ir.Expr) {
		if a, ok := e.(ir.And); ok {
			split(a.L)
			split(a.R)
			return
		}
		conj = append(conj, e)
	}
	split(where)
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
		var onKey []ir.Expr
		for _, c := range conj {
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
