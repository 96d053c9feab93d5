package ir

// AggFunc is an aggregate function of the select list.
type AggFunc uint8

const (
	AggNone  AggFunc = iota // a plain (grouping) column
	AggCount                // COUNT(*) when Arg is nil, COUNT(col) otherwise
	AggSum
	AggAvg
)

var aggText = [...]string{"", "count", "sum", "avg"}

func (a AggFunc) String() string { return aggText[a] }

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

// Join is an inner equi-join of the query's main table (or an earlier
// join) with Table: ON Left = Right. Parsers normalise `JOIN t USING (c)`
// and `ON a = b` into this form and refuse every other join.
type Join struct {
	Table TableRef
	Left  ColumnRef
	Right ColumnRef
}

// SelectItem is one output column: a grouping column (Agg == AggNone) or an
// aggregate. Alias is the output name as written ("" when none; the planner
// then names it as PostgreSQL would: the column name or the function name).
type SelectItem struct {
	Agg      AggFunc
	Arg      *ColumnRef // the column; nil for COUNT(*)
	Distinct bool       // COUNT(DISTINCT col) and friends: the planner refuses it
	Alias    string
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr // ColumnRef (a grouping column or an alias), Aggregate, or OutputRef
	Desc bool
}

// Query is a SELECT in the aggregate subset the proxy answers:
//
//	SELECT items FROM table [JOIN ...] [WHERE] [GROUP BY cols] [HAVING]
//	[ORDER BY] [LIMIT] [OFFSET]
//
// WHERE applies to input rows (and is sent to the backend); HAVING, ORDER BY,
// LIMIT and OFFSET apply to the noisy output rows (post-processing).
type Query struct {
	From    TableRef
	Joins   []Join
	Select  []SelectItem
	Where   Expr // nil when absent
	GroupBy []ColumnRef
	Having  Expr // nil when absent
	OrderBy []OrderItem
	Limit   *int64
	Offset  *int64
}

// NumParams returns the highest parameter index used in the query (0 when
// none), so a front end can describe a prepared statement.
func (q *Query) NumParams() int {
	n := 0
	visit := func(e Expr) bool {
		if p, ok := e.(Param); ok && p.Index > n {
			n = p.Index
		}
		return true
	}
	Walk(q.Where, visit)
	Walk(q.Having, visit)
	return n
}

// Bind returns a copy of q with every Param replaced by args[Index-1].
func (q *Query) Bind(args []Value) (*Query, error) {
	bind := func(e Expr) (Expr, error) {
		if p, ok := e.(Param); ok {
			if p.Index < 1 || p.Index > len(args) {
				return nil, &BindError{Index: p.Index, Have: len(args)}
			}
			return Literal{Value: args[p.Index-1]}, nil
		}
		return e, nil
	}
	c := *q
	var err error
	if c.Where, err = Rewrite(q.Where, bind); err != nil {
		return nil, err
	}
	if c.Having, err = Rewrite(q.Having, bind); err != nil {
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
