package quantile

import "github.com/ddp-proxy/ddp-proxy/ir"

// BinExpr is the backend expression that places a row's value x in its
// bin: a binary search over the cuts written as nested CASEs,
//
//	CASE WHEN x < Cut(mid) THEN <bins below mid> ELSE <bins from mid> END
//
// ⌈log2 m⌉ levels deep (10 for 1024 bins), each leaf the bin number as a
// BIGINT literal. It only compares x with constants of x's own type, so it
// is total: no arithmetic, no cast, nothing that can fail for any stored
// value, and every backend computes the same bins (comparisons of
// integers, of doubles with double constants and of dates or timestamps
// are exact). A NULL x compares unknown and falls to the last bin, where
// COUNT(x) gives it no weight. kind is the ir.Kind of the values: KindInt
// or a date or time kind for an integer grid (days, microseconds),
// KindFloat for a real one, the domain values' kind for a domain grid.
func BinExpr(x ir.Expr, g Grid, kind ir.Kind) ir.Expr {
	return binRange(x, g, kind, 0, g.m)
}

func binRange(x ir.Expr, g Grid, kind ir.Kind, a, b int) ir.Expr {
	if b-a == 1 {
		return ir.Literal{Value: ir.Int(int64(a))}
	}
	mid := a + (b-a)/2
	return ir.Case{
		Whens: []ir.When{{Cond: ir.Compare{Op: ir.OpLt, L: x, R: ir.Literal{Value: cutValue(g.Cut(mid), kind)}}, Then: binRange(x, g, kind, a, mid)}},
		Else:  binRange(x, g, kind, mid, b),
	}
}

func cutValue(v Value, kind ir.Kind) ir.Value {
	switch {
	case !v.IsInt:
		return ir.Float(v.Real)
	case kind == ir.KindInt:
		return ir.Int(v.Int)
	}
	return ir.Value{Kind: kind, Int: v.Int}
}
