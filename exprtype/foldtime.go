package exprtype

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// errUnboundTime refuses a current time the session did not bind (where
// it does not look: ORDER BY of a nested level, say): a plan never
// holds one.
func errUnboundTime(n ir.CurrentTime) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in this position", ir.FormatExpr(n)).
		WithHint("compare a column with it in WHERE, or write the date as a literal")
}

// FoldTime folds one node of a statement whose current time is bound
// (ir.CurrentTime replaced by a literal): a date or time computation of
// constants becomes its value, computed as the client's database computes
// it in UTC, the time zone of every session. It is meant for ir.Rewrite,
// which hands it each node with its children already folded, so that
// Metabase's date_trunc('day', NOW() + INTERVAL '-30 day') becomes one
// timestamp a column is compared with. Folded here:
//
//   - t ± INTERVAL 'n unit' (date_add): AddInterval (whole months clip
//     to the month's last day, as both databases do);
//   - date_trunc(unit, t): TruncTime;
//   - t AT TIME ZONE 'UTC' (at_utc): the same instant as the other type
//     (timestamp ↔ timestamptz);
//   - CAST(t AS date|timestamp|timestamptz), MySQL's DATE(t): a
//     timestamp's date is its day in UTC, a date's timestamp its
//     midnight;
//   - PostgreSQL's date ± integer (days; MySQL reads a date as the
//     number 20261129 there, so not for MySQL clients).
//
// t is a time literal or a quoted one (DATE '2024-01-01'). Anything else,
// or a value outside the years 1 to 9999, is returned unchanged for the
// checker to decide as before; folding changes no result, it only spares
// the backend (and the checker's range rules) a constant.
func FoldTime(e ir.Expr, mysql bool) ir.Expr {
	switch n := e.(type) {
	case ir.Func:
		switch {
		case n.Name == "date_add" && len(n.Args) == 3:
			t, ok1 := timeConst(n.Args[0])
			count, ok2 := n.Args[1].(ir.Literal)
			unit, ok3 := n.Args[2].(ir.Literal)
			if ok1 && ok2 && ok3 && count.Value.Kind == ir.KindInt && unit.Value.Kind == ir.KindString {
				if v, ok := AddInterval(t, count.Value.Int, strings.ToLower(unit.Value.Str)); ok {
					return ir.Literal{Value: v}
				}
			}
		case n.Name == "at_utc" && len(n.Args) == 1:
			// t AT TIME ZONE 'UTC': the same instant as the other type.
			if l, ok := n.Args[0].(ir.Literal); ok {
				if k, ok := atUTCKind(l.Value.Kind); ok {
					return ir.Literal{Value: ir.Value{Kind: k, Int: l.Value.Int}}
				}
			}
		case n.Name == "date_trunc" && len(n.Args) == 2:
			unit, ok1 := n.Args[0].(ir.Literal)
			t, ok2 := timeConst(n.Args[1])
			if ok1 && ok2 && unit.Value.Kind == ir.KindString {
				if v, ok := TruncTime(strings.ToLower(strings.TrimSpace(unit.Value.Str)), t); ok {
					return ir.Literal{Value: v}
				}
			}
		}
	case ir.Cast:
		to, ok := castTimeTarget(n.To)
		l, lit := n.X.(ir.Literal)
		if !ok || !lit || !l.Value.IsTime() {
			// A quoted literal alone stays as written: the checker
			// parses it against the column it meets.
			return e
		}
		return ir.Literal{Value: castTimeValue(l.Value, to)}
	case ir.Arith:
		if mysql || n.Op != ir.OpAdd && n.Op != ir.OpSub {
			return e
		}
		d, days := n.L, n.R
		if n.Op == ir.OpAdd {
			if isIntLit(n.L) {
				d, days = n.R, n.L // 30 + date
			}
		}
		t, ok := timeConst(d)
		k, isLit := days.(ir.Literal)
		if !ok || t.Kind != ir.KindDate || !isLit || k.Value.Kind != ir.KindInt {
			return e
		}
		count := k.Value.Int
		if n.Op == ir.OpSub {
			if count == -count && count != 0 { // MinInt64
				return e
			}
			count = -count
		}
		if v, ok := AddInterval(t, count, "day"); ok {
			return ir.Literal{Value: v}
		}
	}
	return e
}

func isIntLit(e ir.Expr) bool {
	l, ok := e.(ir.Literal)
	return ok && l.Value.Kind == ir.KindInt
}

// timeConst reads a constant date or time: a time literal, or a quoted
// one cast to its type (DATE '2024-01-01', '2024-01-01'::timestamp).
func timeConst(e ir.Expr) (ir.Value, bool) {
	switch n := e.(type) {
	case ir.Literal:
		return n.Value, n.Value.IsTime()
	case ir.Cast:
		to, ok := castTimeTarget(n.To)
		l, lit := n.X.(ir.Literal)
		if !ok || !lit || l.Value.Kind != ir.KindString {
			return ir.Value{}, false
		}
		v, err := ir.ParseTime(to.Kind(), l.Value.Str)
		return v, err == nil
	}
	return ir.Value{}, false
}
