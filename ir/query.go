package ir

// AggFunc is an aggregate function: the canonical lowercase name of its
// unit in package aggregate ("count", "sum", "avg", ...), so that a new
// aggregate needs no new IR value. AggNone marks a plain (grouping) column.
type AggFunc string

const (
	AggNone  AggFunc = ""
	AggCount AggFunc = "count" // COUNT(*) when Arg is nil, COUNT(col) otherwise
	AggSum   AggFunc = "sum"
	AggAvg   AggFunc = "avg"
)

func (a AggFunc) String() string { return string(a) }

// TableRef names a relation as written. Schema is "" when unqualified.
type TableRef struct {
	Schema string
	Name   string
	Alias  string // "" when none
}

// RefName is the name other clauses use to qualify this table's columns.
func (t TableRef) RefName() string {
	if t.Alias != "" {
		return t.Alias
	}
	return t.Name
}

// Join is an equi-join of the query's main table (or an earlier join)
// with Table: ON Left = Right. Parsers normalise `JOIN t USING (c)`,
// `ON a = b` and `ON a IS NOT DISTINCT FROM b` (MySQL `<=>`) into this
// form, inner or LEFT [OUTER], and refuse every other join (RIGHT and
// FULL would invent rows of the table on the left).
type Join struct {
	Table TableRef
	Left  ColumnRef
	Right ColumnRef
	// Outer marks LEFT [OUTER] JOIN: every row of the left side is kept,
	// Table's columns read NULL where no row matches.
	Outer bool
	// NullSafe marks the null-safe equality (IS NOT DISTINCT FROM): a NULL
	// Left matches a NULL Right.
	NullSafe bool
}

// SelectItem is one output column: a grouping column (Agg == AggNone, Arg
// set), an aggregate, or an expression (Expr set, Agg == AggNone, Arg nil)
// over aggregates (Aggregate nodes), grouping columns and constants, such as
// ROUND(AVG(x), 2) or 3. An expression is post-processing: the proxy
// computes it on the noisy output row and never sends it to the backend.
// Alias is the output name as written ("" when none; the planner then names
// it as PostgreSQL would: the column name, the function name or "?column?").
type SelectItem struct {
	Agg AggFunc
	Arg *ColumnRef // the column; nil for COUNT(*) and for an expression
	// ArgExpr is an aggregate's argument when it is not a bare column
	// (SUM(age * 2)); Arg is then nil. One representation per argument:
	// a bare column is always Arg.
	ArgExpr  Expr
	Distinct bool // COUNT(DISTINCT col) and friends: the planner refuses it unless the unit accepts it
	// Fraction is a literal parameter (percentile_cont(p)); nil when none.
	Fraction *float64
	// Name is the aggregate's function name as the client wrote it, lower
	// case ("stddev" where Agg is "stddev_samp"): a column without alias
	// is named after it, as the client's database names it. "" when it is
	// Agg itself.
	Name  string
	Expr  Expr // the expression item; nil for a column or an aggregate
	Alias string
	// Label is the output name of an aggregate or expression item without
	// alias when the client's database names it after its text as written
	// (MySQL: "COUNT(*)", "age DIV 10"); "" names it as PostgreSQL does
	// (count, ?column?). Unlike Alias it is not a name the query's other
	// clauses may refer to.
	Label string
}

// IsColumn reports whether the item is a plain column.
func (it SelectItem) IsColumn() bool { return it.Agg == AggNone && it.Expr == nil && it.Arg != nil }

// ReadsNoRow reports whether the query provably reads no row: LIMIT 0, or a
// WHERE that folds to false or NULL from its literals alone (1 <> 1, false,
// 1 = 0). Such a query (the table-permission probe of BI tools, SELECT TRUE
// FROM t WHERE 1 <> 1) is answered with its typed, empty result without
// touching the table or the budget. A parameter is not a literal: bind first.
func (q *Query) ReadsNoRow() bool {
	if q.Limit != nil && *q.Limit == 0 {
		return true
	}
	return q.Where != nil && foldsFalse(q.Where)
}

// HavingFalse reports whether the query's HAVING folds to false or NULL
// from its literals alone, so that its answer has no row whatever the
// data. An outer WHERE 1 = 0 over an aggregate subquery becomes such a
// HAVING (a BI tool's probe of a custom query's columns).
func (q *Query) HavingFalse() bool {
	return q.Having != nil && foldsFalse(q.Having)
}

// foldsFalse reports whether e folds to a value that keeps no row: false,
// NULL, or a zero, which MySQL reads as false (WHERE 0 reads nothing).
func foldsFalse(e Expr) bool {
	v, ok := FoldConst(e)
	zero := (v.Kind == KindInt && v.Int == 0) || (v.Kind == KindFloat && v.Float == 0)
	return ok && (v.IsNull() || (v.Kind == KindBool && !v.Bool) || zero)
}

// FoldConst evaluates a predicate made only of literals, comparisons of
// literals, AND, OR, NOT and IS NULL. ok is false when the expression
// depends on anything else (a column, a parameter, a function) or mixes
// kinds that do not compare. SQL three-valued logic applies.
func FoldConst(e Expr) (v Value, ok bool) {
	switch n := e.(type) {
	case Literal:
		return n.Value, true
	case Not:
		x, ok := FoldConst(n.X)
		switch {
		case !ok:
			return Value{}, false
		case x.IsNull():
			return Null(), true
		case x.Kind == KindBool:
			return Bool(!x.Bool), true
		}
	case And, Or:
		var l, r Value
		var lok, rok bool
		_, isAnd := n.(And)
		if isAnd {
			l, lok = FoldConst(n.(And).L)
			r, rok = FoldConst(n.(And).R)
		} else {
			l, lok = FoldConst(n.(Or).L)
			r, rok = FoldConst(n.(Or).R)
		}
		// One decisive side settles it even when the other is unknown.
		decisive := func(x Value, ok bool) bool { return ok && x.Kind == KindBool && x.Bool != isAnd }
		if decisive(l, lok) || decisive(r, rok) {
			return Bool(!isAnd), true
		}
		if !lok || !rok || (!l.IsNull() && l.Kind != KindBool) || (!r.IsNull() && r.Kind != KindBool) {
			return Value{}, false
		}
		if l.IsNull() || r.IsNull() {
			return Null(), true
		}
		return Bool(isAnd), true
	case IsNull:
		x, ok := FoldConst(n.X)
		if !ok {
			return Value{}, false
		}
		return Bool(x.IsNull() != n.Not), true
	case Compare:
		l, lok := FoldConst(n.L)
		r, rok := FoldConst(n.R)
		if !lok || !rok {
			return Value{}, false
		}
		if l.IsNull() || r.IsNull() {
			return Null(), true
		}
		if l.IsNumber() != r.IsNumber() || (!l.IsNumber() && l.Kind != r.Kind) {
			return Value{}, false
		}
		c := CompareValues(l, r)
		switch n.Op {
		case OpEq:
			return Bool(c == 0), true
		case OpNe:
			return Bool(c != 0), true
		case OpLt:
			return Bool(c < 0), true
		case OpLe:
			return Bool(c <= 0), true
		case OpGt:
			return Bool(c > 0), true
		case OpGe:
			return Bool(c >= 0), true
		}
	}
	return Value{}, false
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr // ColumnRef (a grouping column or an alias), Aggregate, or OutputRef
	Desc bool
	// Nulls is an explicit NULLS FIRST / NULLS LAST (PostgreSQL; Looker
	// sorts its pivots by a measure DESC NULLS LAST).
	Nulls NullsOrder
}

// NullsOrder places NULL among a sort key's values.
type NullsOrder uint8

const (
	NullsDefault NullsOrder = iota // the client's dialect's order
	NullsFirst
	NullsLast
)

// High reports whether NULL sorts as if above every value in a key
// ordered desc (last ascending, first descending), given the client's
// dialect's default dflt (PostgreSQL's; MySQL sorts NULL low).
func (n NullsOrder) High(desc, dflt bool) bool {
	switch n {
	case NullsLast:
		return !desc
	case NullsFirst:
		return desc
	}
	return dflt
}

// Query is a SELECT in the aggregate subset the proxy answers:
//
//	SELECT items FROM table [JOIN ...] [WHERE] [GROUP BY cols] [HAVING]
//	[ORDER BY] [LIMIT] [OFFSET]
//
// WHERE applies to input rows (and is sent to the backend); HAVING, ORDER BY,
// LIMIT and OFFSET apply to the noisy output rows (post-processing).
type Query struct {
	From   TableRef
	Joins  []Join
	Select []SelectItem
	Where  Expr // nil when absent
	// GroupBy are the grouping keys as written: a bare column stays a
	// ColumnRef; an expression (floor(age / 10) * 10, a CASE) is any
	// other node. Parsers resolve positions and output aliases to the
	// select item's expression.
	GroupBy []Expr
	// GroupingSets, when not nil, are the grouping sets of GROUP BY
	// ROLLUP / CUBE / GROUPING SETS (MySQL WITH ROLLUP), expanded, in the
	// order written, duplicates kept: each set lists indexes into GroupBy
	// (ascending; empty for the grand total ()). GroupBy then holds every
	// key of any set once. Nil is a plain GROUP BY (one set, all keys).
	GroupingSets [][]int
	Having       Expr // nil when absent
	OrderBy      []OrderItem
	Limit        *int64
	Offset       *int64
	// Stages are the SELECT levels wrapped around the query, innermost
	// first: post-processing of its output rows (see Stage).
	Stages []Stage
}

// NumParams returns the highest parameter index used in the query (0 when
// none), so a front end can describe a prepared statement.
func (q *Query) NumParams() int {
	n := 0
	q.WalkExprs(func(e Expr) bool {
		if p, ok := e.(Param); ok && p.Index > n {
			n = p.Index
		}
		return true
	})
	return n
}

// WalkExprs walks (Walk) every expression RewriteExprs rewrites.
func (q *Query) WalkExprs(visit func(Expr) bool) {
	Walk(q.Where, visit)
	Walk(q.Having, visit)
	for _, g := range q.GroupBy {
		Walk(g, visit)
	}
	for _, it := range q.Select {
		Walk(it.ArgExpr, visit)
		Walk(it.Expr, visit) // GROUP BY 1 may make it a key
	}
	stageExprs(q.Stages, func(e *Expr) { Walk(*e, visit) })
}

// Bind returns a copy of q with every Param replaced by args[Index-1].
func (q *Query) Bind(args []Value) (*Query, error) { return q.RewriteExprs(bindParams(args)) }

// bindParams replaces each Param with its value.
func bindParams(args []Value) func(Expr) (Expr, error) {
	return func(e Expr) (Expr, error) {
		if p, ok := e.(Param); ok {
			if p.Index < 1 || p.Index > len(args) {
				return nil, &BindError{Index: p.Index, Have: len(args)}
			}
			return Literal{Value: args[p.Index-1]}, nil
		}
		return e, nil
	}
}

// RewriteExprs returns a copy of q with every expression rewritten by
// bind (Rewrite: bottom up), q itself unchanged.
func (q *Query) RewriteExprs(bind func(Expr) (Expr, error)) (*Query, error) {
	c := *q
	var err error
	if c.Where, err = Rewrite(q.Where, bind); err != nil {
		return nil, err
	}
	if c.Having, err = Rewrite(q.Having, bind); err != nil {
		return nil, err
	}
	if q.GroupBy != nil {
		c.GroupBy = make([]Expr, len(q.GroupBy))
		for i, g := range q.GroupBy {
			if c.GroupBy[i], err = Rewrite(g, bind); err != nil {
				return nil, err
			}
		}
	}
	c.Select = make([]SelectItem, len(q.Select))
	for i, it := range q.Select {
		if it.ArgExpr, err = Rewrite(it.ArgExpr, bind); err != nil {
			return nil, err
		}
		if it.Expr, err = Rewrite(it.Expr, bind); err != nil {
			return nil, err
		}
		c.Select[i] = it
	}
	c.Stages = copyStages(q.Stages)
	stageExprs(c.Stages, func(e *Expr) {
		if err == nil {
			*e, err = Rewrite(*e, bind)
		}
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// BindError reports a parameter with no bound value.
type BindError struct{ Index, Have int }

func (e *BindError) Error() string {
	return "parameter $" + itoa(e.Index) + " has no value (" + itoa(e.Have) + " bound)"
}

func itoa(i int) string { return Int(int64(i)).Text() }
