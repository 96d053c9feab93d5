package ir

import "strings"

// WindowFunc is the function of a Window.
type WindowFunc uint8

const (
	// WinCount, WinSum, WinAvg, WinMin and WinMax aggregate Arg over the
	// window frame (WinCount with a nil Arg counts the frame's rows).
	WinCount WindowFunc = iota
	WinSum
	WinAvg
	WinMin
	WinMax
	// WinRowNumber, WinRank and WinDenseRank number the rows of the
	// partition in the window's order (no argument).
	WinRowNumber
	WinRank
	WinDenseRank
)

var windowFuncText = [...]string{"count", "sum", "avg", "min", "max", "row_number", "rank", "dense_rank"}

func (f WindowFunc) String() string { return windowFuncText[f] }

// Ranking reports whether f numbers rows rather than aggregating.
func (f WindowFunc) Ranking() bool { return f >= WinRowNumber }

// Window is a window function over the rows of the (noisy) result:
// f(Arg) OVER (PARTITION BY ... ORDER BY ...) with SQL's default frame
// (the whole partition without ORDER BY; from its start through the
// current row's peers with it). It is post-processing: the proxy computes
// it after the noise, and its argument, partition and order keys are
// expressions over the output row (aggregates and grouping keys), never
// over input rows. The planner never sends it to the backend: it becomes
// a hidden output of the plan, and the expression that used it reads that
// output.
type Window struct {
	Func        WindowFunc
	Arg         Expr // nil for COUNT(*) and the ranking functions
	PartitionBy []Expr
	OrderBy     []OrderItem
}

func (Window) exprNode() {}

func formatWindow(b *strings.Builder, n Window) {
	b.WriteString(n.Func.String())
	b.WriteByte('(')
	switch {
	case n.Arg != nil:
		formatExpr(b, n.Arg)
	case n.Func == WinCount:
		b.WriteByte('*')
	}
	b.WriteString(") OVER (")
	if len(n.PartitionBy) > 0 {
		b.WriteString("PARTITION BY ")
		for i, x := range n.PartitionBy {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(b, x)
		}
	}
	if len(n.OrderBy) > 0 {
		if len(n.PartitionBy) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("ORDER BY ")
		for i, o := range n.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(b, o.Expr)
			if o.Desc {
				b.WriteString(" DESC")
			}
			switch o.Nulls {
			case NullsFirst:
				b.WriteString(" NULLS FIRST")
			case NullsLast:
				b.WriteString(" NULLS LAST")
			}
		}
	}
	b.WriteByte(')')
}
