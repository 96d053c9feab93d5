package parser

import (
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// foldTimeConsts folds the date arithmetic of constants in q
// (exprtype.FoldTime): DATE '2024-01-01' - 30, date_trunc('month',
// TIMESTAMP '2024-03-15' - INTERVAL '1 month'). At parse time, since it
// depends on the text alone; the current time's (NOW() - INTERVAL '30
// days') is folded when the session binds it, per statement. A walk that
// allocates nothing finds the candidates first, so that the common query
// is not copied.
func foldTimeConsts(q *ir.Query, mysql bool) *ir.Query {
	found := false
	q.WalkExprs(func(e ir.Expr) bool {
		switch n := e.(type) {
		case ir.Func:
			found = n.Name == "date_add" || n.Name == "date_trunc"
		case ir.Arith:
			_, l := n.L.(ir.Cast)
			_, r := n.R.(ir.Cast)
			found = !mysql && (l || r)
		}
		return !found
	})
	if !found {
		return q
	}
	out, err := q.RewriteExprs(func(e ir.Expr) (ir.Expr, error) { return exprtype.FoldTime(e, mysql), nil })
	if err != nil {
		return q
	}
	return out
}
