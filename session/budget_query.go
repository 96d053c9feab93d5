package session

import (
	"context"
	"slices"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// budgetQuery answers a SELECT over ddp.budget: the view's rows
// (budgetView) filtered, projected, ordered and limited as the statement
// says (SELECT epsilon_left FROM ddp.budget WHERE dataset = 'census'), so
// a script or a BI tool reading one figure gets that figure, not the whole
// view. The rows are the session user's own budget, never private data,
// and the expressions are evaluated in the proxy by the post-processing
// evaluator (exprtype), which cannot fail on a value. What the row-read
// subset does not cover (joins, grouping, subqueries) is refused.
func (s *Session) budgetQuery(ctx context.Context, st *ir.Statement, args []ir.Value) (Result, error) {
	rq := st.Rows
	if rq == nil {
		why := st.RowsRefusal
		if why == "" {
			why = "it is not a plain read of the view's rows"
		}
		return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "this query on ddp.budget is not supported: %s", why).
			WithHint("select columns of ddp.budget with WHERE, ORDER BY and LIMIT (SELECT epsilon_left FROM ddp.budget WHERE dataset = '...'), or SHOW ddp.budget")
	}
	if len(rq.Joins) > 0 {
		return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "ddp.budget cannot be joined").
			WithHint("read it on its own: SELECT ... FROM ddp.budget WHERE dataset = '...'")
	}
	if len(args) > 0 {
		var err error
		if rq, err = rq.Bind(args); err != nil {
			return Result{}, err
		}
	}
	view, err := s.budgetView(ctx)
	if err != nil {
		return Result{}, err
	}
	d := exprtype.PostDialect{MySQL: s.dialect == parser.MySQL}
	out := func(i int) exprtype.Out {
		if budgetColumns[i].Type == TypeText {
			return exprtype.Out{Type: exprtype.Text}
		}
		return exprtype.Out{Type: exprtype.Real, Double: true}
	}
	ref := rq.From.RefName()
	// resolve makes e an expression over the view's columns (OutputRef
	// i = budgetColumns[i]) and checks it.
	resolve := func(e ir.Expr) (ir.Expr, exprtype.Type, error) {
		e, err := ir.Rewrite(e, func(x ir.Expr) (ir.Expr, error) {
			c, ok := x.(ir.ColumnRef)
			if !ok {
				return x, nil
			}
			if c.Qualifier != "" && !s.sameName(c.Qualifier, ref) {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", c.Qualifier)
			}
			i := slices.IndexFunc(budgetColumns, func(col Column) bool { return s.sameName(c.Name, col.Name) })
			if i < 0 {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist in ddp.budget", c.Name).
					WithHint("its columns are %s", strings.Join(columnNames(budgetColumns), ", "))
			}
			return ir.OutputRef{Index: i}, nil
		})
		if err != nil {
			return nil, 0, err
		}
		return exprtype.PostType(e, out, d)
	}

	// The select list: the view's columns for *, else each expression.
	var cols []Column
	var exprs []ir.Expr
	for _, it := range rq.Items {
		if it.Star {
			if it.Qualifier != "" && !s.sameName(it.Qualifier, ref) {
				return Result{}, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", it.Qualifier)
			}
			for i, c := range budgetColumns {
				cols = append(cols, c)
				exprs = append(exprs, ir.OutputRef{Index: i})
			}
			continue
		}
		e, t, err := resolve(it.Expr)
		if err != nil {
			return Result{}, err
		}
		cols = append(cols, Column{Name: it.Name, Type: planner.ResultType(t)})
		exprs = append(exprs, e)
	}
	var where ir.Expr
	if rq.Where != nil {
		e, t, err := resolve(rq.Where)
		if err != nil {
			return Result{}, err
		}
		if t != exprtype.Boolean && t != exprtype.Null {
			return Result{}, sqlerr.New(sqlerr.DatatypeMismatch, "argument of WHERE must be type boolean, not type %s", t)
		}
		where = e
	}
	// ORDER BY keys: an output position or name (ir.OutputRef over the
	// select list), else an expression over the view's columns, computed
	// into an extra column after the select list's and cut off after the
	// sort. NULL sorts as the client's database does: last ascending for
	// PostgreSQL, first for MySQL (the view's own rows hold no NULL).
	nullsHigh := s.dialect != parser.MySQL
	keys := make([]planner.OrderKey, 0, len(rq.OrderBy))
	for _, o := range rq.OrderBy {
		if r, ok := o.Expr.(ir.OutputRef); ok {
			if r.Index < 0 || r.Index >= len(cols) {
				return Result{}, sqlerr.New(sqlerr.Internal, "internal error: ORDER BY position %d is not in the select list", r.Index+1)
			}
			keys = append(keys, planner.OrderKey{Output: r.Index, Desc: o.Desc, NullsHigh: nullsHigh})
			continue
		}
		e, _, err := resolve(o.Expr)
		if err != nil {
			return Result{}, err
		}
		keys = append(keys, planner.OrderKey{Output: len(exprs), Desc: o.Desc, NullsHigh: nullsHigh})
		exprs = append(exprs, e)
	}

	var rows [][]ir.Value
	for _, in := range view.Rows {
		if where != nil {
			v, err := exprtype.Eval(where, in, d)
			if err != nil {
				return Result{}, err
			}
			if !exprtype.IsTrue(v) {
				continue
			}
		}
		vals := make([]ir.Value, len(exprs))
		for i, e := range exprs {
			if vals[i], err = exprtype.Eval(e, in, d); err != nil {
				return Result{}, err
			}
		}
		rows = append(rows, vals)
	}
	rows = release.OrderAndLimit(rows, keys, rq.Offset, rq.Limit)
	for i := range rows {
		rows[i] = rows[i][:len(cols)]
	}
	return Result{Columns: cols, Rows: rows, Tag: "SELECT " + itoa(len(rows))}, nil
}

// sameName compares two identifiers as the session's dialect does for
// column names: exactly for PostgreSQL (the parser folded unquoted names
// already), case-insensitively for MySQL.
func (s *Session) sameName(a, b string) bool {
	if s.dialect == parser.MySQL {
		return strings.EqualFold(a, b)
	}
	return a == b
}
