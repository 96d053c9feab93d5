package sqlrender

import (
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// RowsStatement is a rendered row-level read: SQL text and its bound
// literals, in placeholder order, as ir values (the pass-through path
// binds ir values: backends.Backend.Stream).
type RowsStatement struct {
	SQL  string
	Args []ir.Value
}

// RenderRows renders a row-level read of public tables (ir.RowQuery) in
// this dialect:
//
//	SELECT items FROM t [JOIN ...] [WHERE w] [ORDER BY ...] [LIMIT n] [OFFSET m]
//
// Every ORDER BY key is preceded by (x IS NULL) so that NULLs sort where
// the client's dialect puts them (nullsHigh: PostgreSQL, NULLs after
// every value), whatever the backend's default; an explicit NULLS
// FIRST/LAST wins. Literals are bound, never spliced, as in Render; the
// LIMIT and OFFSET constants (int64s from the parser) are formatted with
// strconv. The planner has expanded or checked every star and column.
func (d *Dialect) RenderRows(q *ir.RowQuery, nullsHigh bool) (RowsStatement, error) {
	r := &renderer{d: d, keepVals: true}
	r.w("SELECT ")
	for i, it := range q.Items {
		if i > 0 {
			r.w(", ")
		}
		switch {
		case it.Star && it.Qualifier == "":
			r.w("*")
		case it.Star:
			r.ident(it.Qualifier)
			r.w(".*")
		default:
			r.expr(it.Expr)
			r.w(" AS ")
			r.ident(it.Name)
		}
	}
	r.fromWhere(&ir.BackendQuery{From: q.From, Joins: q.Joins, Where: q.Where})
	for i, o := range q.OrderBy {
		if i == 0 {
			r.w(" ORDER BY ")
		} else {
			r.w(", ")
		}
		x := o.Expr
		if ref, ok := x.(ir.OutputRef); ok {
			if ref.Index < 0 || ref.Index >= len(q.Items) || q.Items[ref.Index].Star {
				return RowsStatement{}, sqlerr.New(sqlerr.Internal, "invalid row query: ORDER BY output %d", ref.Index+1)
			}
			x = q.Items[ref.Index].Expr
		}
		last := nullsHigh != o.Desc // where the client's dialect puts NULLs
		switch o.Nulls {
		case ir.NullsFirst:
			last = false
		case ir.NullsLast:
			last = true
		}
		r.w("(")
		r.expr(x)
		if last {
			r.w(" IS NULL), ")
		} else {
			r.w(" IS NULL) DESC, ")
		}
		r.expr(x)
		if o.Desc {
			r.w(" DESC")
		}
	}
	switch {
	case q.Limit != nil:
		r.w(" LIMIT " + strconv.FormatInt(*q.Limit, 10))
	case q.Offset != nil && d.Name == "mysql":
		r.w(" LIMIT 18446744073709551615") // MySQL has no OFFSET without LIMIT
	case q.Offset != nil && d.Name == "sqlite":
		r.w(" LIMIT -1")
	}
	if q.Offset != nil {
		r.w(" OFFSET " + strconv.FormatInt(*q.Offset, 10))
	}
	if r.err != nil {
		return RowsStatement{}, r.err
	}
	if len(r.vals) != len(r.args) {
		// Only literals may be bound in a row read; anything else is a
		// node (a clamp) the planner never puts there.
		return RowsStatement{}, sqlerr.New(sqlerr.Internal, "invalid row query: a bound value that is not a literal")
	}
	return RowsStatement{SQL: r.b.String(), Args: r.vals}, nil
}
