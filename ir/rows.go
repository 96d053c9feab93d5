package ir

// RowQuery is a row-level SELECT in the subset the proxy can translate
// between dialects: it is read only from public tables (the planner
// checks), so its rows are not private and need no noise.
//
//	SELECT items FROM table [[LEFT] JOIN t ON a = b ...] [WHERE]
//	[ORDER BY] [LIMIT] [OFFSET]
//
// No aggregate, GROUP BY, HAVING, DISTINCT, window, subquery or set
// operation: the parsers leave Statement.Rows nil for those and say why
// in Statement.RowsRefusal. Its expressions are the dialect-neutral
// ir.Expr, so a backend of any dialect renders it (sqlrender.RenderRows).
type RowQuery struct {
	From  TableRef
	Joins []Join
	Items []RowItem
	Where Expr // nil when absent
	// OrderBy keys are expressions over the tables, or OutputRef for a
	// select-list position or output name.
	OrderBy []OrderItem
	Limit   *int64
	Offset  *int64
}

// RowItem is one select-list item: a star (Qualifier "" for every table,
// else the RefName of one), or an expression with its output name as the
// client's dialect names it.
type RowItem struct {
	Star      bool
	Qualifier string
	Expr      Expr
	Name      string
}

// RowExprs calls fn with a pointer to every expression of q (items,
// WHERE, ORDER BY), so callers may inspect or replace them.
func (q *RowQuery) RowExprs(fn func(*Expr)) {
	for i := range q.Items {
		if !q.Items[i].Star {
			fn(&q.Items[i].Expr)
		}
	}
	if q.Where != nil {
		fn(&q.Where)
	}
	for i := range q.OrderBy {
		fn(&q.OrderBy[i].Expr)
	}
}

// Bind returns a copy of q with every Param replaced by args[Index-1].
func (q *RowQuery) Bind(args []Value) (*RowQuery, error) { return q.RewriteExprs(bindParams(args)) }

// RewriteExprs returns a copy of q with every expression rewritten by
// bind (Rewrite: bottom up), q itself unchanged.
func (q *RowQuery) RewriteExprs(bind func(Expr) (Expr, error)) (*RowQuery, error) {
	c := *q
	c.Items = append([]RowItem(nil), q.Items...)
	c.OrderBy = append([]OrderItem(nil), q.OrderBy...)
	var err error
	c.RowExprs(func(e *Expr) {
		if err != nil {
			return
		}
		*e, err = Rewrite(*e, bind)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}
