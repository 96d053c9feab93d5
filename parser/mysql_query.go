package parser

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// myQueryBuilder builds the aggregate Query of a MySQL SELECT.
type myQueryBuilder struct {
	params map[*test_driver.ParamMarkerExpr]int
}

func (m *myQueryBuilder) query(s *ast.SelectStmt) (*ir.Query, error) { return m.queryIn(s, nil) }

// queryIn is query in the scope of enclosing WITH clauses.
func (m *myQueryBuilder) queryIn(s *ast.SelectStmt, parent *cteEnv) (out *ir.Query, err error) {
	b := queryBuilder{fold: true}
	switch {
	case s.Kind == ast.SelectStmtKindTable:
		return nil, notAgg("TABLE reads individual rows; use an aggregate SELECT")
	case s.Kind != ast.SelectStmtKindSelect:
		return nil, notAgg("VALUES lists are not aggregates over a table")
	case s.Distinct:
		return nil, notAgg(msgDistinct)
	case len(s.WindowSpecs) > 0:
		return nil, notAgg(msgNamedWindow)
	case s.From == nil || s.From.TableRefs == nil:
		return nil, notAgg(msgNoFrom)
	}
	env, err := m.with(s.With, parent)
	if err != nil {
		return nil, err
	}
	q := &ir.Query{}
	from, err := m.from(s.From.TableRefs, env)
	if err != nil {
		return nil, err
	}
	if from.derived.aggValued() {
		// A SELECT over an aggregate subquery: post-processing of its rows.
		if err := myRowSelectFields(s); err != nil {
			return nil, err
		}
		r, err := m.rowSelectFrom(s, from)
		if err != nil {
			return nil, err
		}
		return flattenOverAggregate(r, true)
	}
	if q.Select, err = m.fields(s.Fields); err != nil {
		return nil, err
	}
	if s.Where != nil {
		if q.Where, err = m.expr(s.Where, false); err != nil {
			return nil, err
		}
	}
	var sets [][]int
	if s.GroupBy != nil {
		if s.GroupBy.Rollup {
			// GROUP BY k1, ..., kn WITH ROLLUP: the prefixes down to ().
			sets = rollupKeys(len(s.GroupBy.Items))
		}
		keys := make([]groupKey, 0, len(s.GroupBy.Items))
		for _, it := range s.GroupBy.Items {
			k, err := m.groupKey(it.Expr)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		if q.GroupBy, err = b.resolveGroupBy(q.Select, keys); err != nil {
			return nil, err
		}
	}
	// LIMIT before the grouping check, which lets a query with LIMIT 0
	// select anything (it reads no row: a BI tool's probe of the columns).
	if s.Limit != nil {
		if q.Limit, err = myLimit(s.Limit.Count); err != nil {
			return nil, err
		}
		if q.Offset, err = myLimit(s.Limit.Offset); err != nil {
			return nil, err
		}
	}
	if grouped := b.checkGrouped(q); grouped != nil {
		// Refused, but built on for the planner (withUngrouped).
		defer func() { out, err = nil, withUngrouped(grouped, out, err) }()
	}
	if s.Having != nil {
		if q.Having, err = m.expr(s.Having.Expr, true); err != nil {
			return nil, err
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			o, err := m.orderItem(it, q.Select)
			if err != nil {
				return nil, err
			}
			q.OrderBy = append(q.OrderBy, o)
		}
	}
	if err := b.groupingSets(q, sets); err != nil {
		return nil, err
	}
	return flattenQuery(q, from, true)
}

// with converts a WITH clause into the scope of the SELECT it belongs to.
// Each CTE body is converted once, in the scope of the CTEs before it.
func (m *myQueryBuilder) with(w *ast.WithClause, parent *cteEnv) (*cteEnv, error) {
	if w == nil {
		return parent, nil
	}
	if w.IsRecursive {
		return nil, notAgg(msgRecursive)
	}
	env := &cteEnv{parent: parent, fold: true}
	for _, c := range w.CTEs {
		if c.IsRecursive {
			return nil, notAgg(msgRecursive)
		}
		if c.Query == nil {
			return nil, notAgg("this WITH item is not supported")
		}
		sel, ok := c.Query.Query.(*ast.SelectStmt)
		if !ok {
			return nil, notAgg(msgInnerSetOp)
		}
		def := &cteDef{name: c.Name.O}
		var err error
		if myIsAggregateSelect(sel) {
			def.agg, err = m.queryIn(sel, env)
		} else {
			def.body, err = m.rowSelect(sel, env)
		}
		if err != nil {
			return nil, err
		}
		for _, n := range c.ColNameList {
			def.columns = append(def.columns, n.O)
		}
		env.defs = append(env.defs, def)
	}
	return env, nil
}

// rowSelect converts a SELECT in FROM (or a CTE body): it may only
// project, filter and join. Every field of the node that is set must be
// one this function reads, so a clause added to the grammar later is
// refused rather than dropped.
func (m *myQueryBuilder) rowSelect(s *ast.SelectStmt, parent *cteEnv) (*rowSelect, error) {
	if err := myRowSelectFields(s); err != nil {
		return nil, err
	}
	switch {
	case s.Kind != ast.SelectStmtKindSelect:
		return nil, notAgg(msgInnerClause, "TABLE or VALUES")
	case s.AfterSetOperator != nil:
		return nil, notAgg(msgInnerSetOp)
	case s.From == nil || s.From.TableRefs == nil:
		return nil, notAgg(msgInnerNoFrom)
	}
	env, err := m.with(s.With, parent)
	if err != nil {
		return nil, err
	}
	from, err := m.from(s.From.TableRefs, env)
	if err != nil {
		return nil, err
	}
	return m.rowSelectFrom(s, from)
}

// myIsAggregateSelect reports whether a SELECT aggregates: GROUP BY,
// HAVING or an aggregate call in its select list.
func myIsAggregateSelect(s *ast.SelectStmt) bool {
	if s.GroupBy != nil || s.Having != nil {
		return true
	}
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.Expr != nil && myHasAggregate(f.Expr) {
				return true
			}
		}
	}
	return false
}

// rowSelectFrom converts the rest of a row SELECT whose FROM is converted.
// Over an aggregate subquery its expressions are post-processing (as in a
// select list) and it may order and limit.
func (m *myQueryBuilder) rowSelectFrom(s *ast.SelectStmt, from fromTree) (*rowSelect, error) {
	over := from.derived.aggValued()
	switch {
	case s.Distinct:
		return nil, notAgg(msgInnerDist)
	case len(s.WindowSpecs) > 0:
		return nil, notAgg(msgInnerWindow)
	case s.GroupBy != nil:
		return nil, notAgg(msgNestedAggr, "GROUP BY")
	case s.Having != nil:
		return nil, notAgg(msgNestedAggr, "HAVING")
	case s.Limit != nil && !over:
		return nil, notAgg(msgInnerLimit)
	case s.Fields == nil:
		return nil, notAgg(msgInnerClause, "this select list")
	}
	r := &rowSelect{from: from}
	star := false
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			r.items = append(r.items, rowItem{star: true, schema: f.WildCard.Schema.O, qual: f.WildCard.Table.O})
			star = true
			continue
		}
		if myHasAggregate(f.Expr) {
			return nil, notAgg(msgNestedAggr, "an aggregate")
		}
		e, err := m.expr(f.Expr, over)
		if err != nil {
			return nil, err
		}
		name := f.AsName.O
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok && name == "" {
			name = c.Name.Name.O
		}
		r.items = append(r.items, rowItem{name: name, expr: e})
	}
	if s.Where != nil {
		if over && myHasAggregate(s.Where) {
			return nil, notAgg(msgAggInWhere)
		}
		var err error
		if r.where, err = m.expr(s.Where, over); err != nil {
			return nil, err
		}
	}
	if !over {
		// ORDER BY without LIMIT does not change which rows the subquery
		// returns: it is dropped.
		return r, nil
	}
	// Positions count the select list as written; a star hides it.
	items := make([]ir.SelectItem, len(r.items))
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			if myHasAggregate(it.Expr) {
				return nil, notAgg(msgNestedAggr, "an aggregate")
			}
			if _, pos := unparen(it.Expr).(*ast.PositionExpr); pos && star {
				return nil, notAgg("ORDER BY a position over SELECT * of a subquery is not supported; order by the column name")
			}
			o, err := m.orderItem(it, items)
			if err != nil {
				return nil, err
			}
			r.orderBy = append(r.orderBy, o)
		}
	}
	if s.Limit != nil {
		var err error
		if r.limit, err = myLimit(s.Limit.Count); err != nil {
			return nil, err
		}
		if r.offset, err = myLimit(s.Limit.Offset); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// myRowSelectFields refuses a set field of an inner SELECT that rowSelect
// does not read (index hints, locking, INTO, anything added later).
func myRowSelectFields(s *ast.SelectStmt) error {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "dmlNode", "SelectStmtOpts", "Distinct", "From", "Where", "Fields", "GroupBy", "Having",
			"WindowSpecs", "OrderBy", "Limit", "IsInBraces", "WithBeforeBraces", "QueryBlockOffset",
			"AfterSetOperator", "Kind", "Lists", "With", "AsViewSchema":
			continue
		}
		if !v.Field(i).IsZero() {
			return notAgg(msgInnerClause, t.Field(i).Name)
		}
	}
	return nil
}

// myHasAggregate reports whether an expression calls an aggregate.
func myHasAggregate(e ast.ExprNode) bool {
	v := &aggFinder{}
	e.Accept(v)
	return v.found
}

type aggFinder struct{ found bool }

func (a *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.AggregateFuncExpr); ok {
		a.found = true
	}
	return n, a.found
}

func (a *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// from converts FROM: a table, a subquery or a CTE reference, then a
// left-deep chain of inner and LEFT equi-joins of tables. TiDB represents
// a single table as a Join with no right side, and INNER JOIN, CROSS JOIN,
// plain JOIN and the comma alike as CrossJoin (distinguished by ON/USING).
func (m *myQueryBuilder) from(rs ast.ResultSetNode, env *cteEnv) (fromTree, error) {
	switch x := rs.(type) {
	case *ast.TableSource:
		return m.fromItem(x, env)
	case *ast.Join:
		if x.Right == nil {
			return m.from(x.Left, env)
		}
		if x.Tp == ast.RightJoin {
			return fromTree{}, notAgg(msgJoinOuter)
		}
		if (x.Tp != ast.CrossJoin && x.Tp != ast.LeftJoin) || x.NaturalJoin || (x.On == nil && len(x.Using) == 0) {
			if x.Tp == ast.CrossJoin && !x.NaturalJoin {
				return fromTree{}, notAgg(msgCommaJoin)
			}
			return fromTree{}, notAgg(msgJoinKind)
		}
		from, err := m.from(x.Left, env)
		if err != nil {
			return fromTree{}, err
		}
		ts, ok := x.Right.(*ast.TableSource)
		if !ok {
			return fromTree{}, notAgg("parenthesised joins are not supported; write the joins one after another")
		}
		r, err := m.fromItem(ts, env)
		if err != nil {
			return fromTree{}, err
		}
		if r.derived != nil {
			return fromTree{}, notAgg(msgSubqNotFirst)
		}
		right := r.table
		join := ir.Join{Table: right, Outer: x.Tp == ast.LeftJoin}
		if len(x.Using) > 0 {
			if len(x.Using) != 1 {
				return fromTree{}, notAgg(msgJoinKind)
			}
			col := x.Using[0].Name.O
			left := ""
			if len(from.joins) == 0 {
				left = from.table.RefName()
				if from.derived != nil {
					left = from.derived.refName()
				}
			}
			join.Left = ir.ColumnRef{Qualifier: left, Name: col}
			join.Right = ir.ColumnRef{Qualifier: right.RefName(), Name: col}
		} else {
			e := unparen(x.On.Expr)
			bin, ok := e.(*ast.BinaryOperationExpr)
			if !ok || (bin.Op != opcode.EQ && bin.Op != opcode.NullEQ) {
				return fromTree{}, notAgg(msgJoinKind)
			}
			join.NullSafe = bin.Op == opcode.NullEQ
			l, lok := myColumn(bin.L)
			r, rok := myColumn(bin.R)
			if !lok || !rok {
				return fromTree{}, notAgg(msgJoinKind)
			}
			join.Left, join.Right = l, r
		}
		from.joins = append(from.joins, join)
		return from, nil
	}
	return fromTree{}, notAgg("this FROM item is not supported; query a table")
}

// fromItem converts one FROM item: a table, a CTE reference or a subquery.
func (m *myQueryBuilder) fromItem(ts *ast.TableSource, env *cteEnv) (fromTree, error) {
	if ts.Lateral {
		return fromTree{}, notAgg(msgLateral)
	}
	var cols []string
	for _, c := range ts.ColumnNames {
		cols = append(cols, c.O)
	}
	switch src := ts.Source.(type) {
	case *ast.TableName:
		if src.Schema.O == "" && src.TableSample == nil && len(src.PartitionNames) == 0 && src.AsOf == nil {
			if def := env.lookup(src.Name.O); def != nil {
				if len(src.IndexHints) > 0 {
					return fromTree{}, notAgg(msgInnerClause, "an index hint")
				}
				return fromTree{derived: &derivedTable{alias: ts.AsName.O, columns: cols, cte: def}}, nil
			}
		}
		t, err := myTable(ts)
		return fromTree{table: t}, err
	case *ast.SelectStmt:
		d := &derivedTable{alias: ts.AsName.O, columns: cols}
		var err error
		if myIsAggregateSelect(src) {
			d.agg, err = m.queryIn(src, env)
		} else {
			d.body, err = m.rowSelect(src, env)
		}
		if err != nil {
			return fromTree{}, err
		}
		return fromTree{derived: d}, nil
	case *ast.SetOprStmt:
		return fromTree{}, notAgg(msgInnerSetOp)
	}
	t, err := myTable(ts)
	return fromTree{table: t}, err
}

func myTable(ts *ast.TableSource) (ir.TableRef, error) {
	if ts.Lateral {
		return ir.TableRef{}, notAgg(msgLateral)
	}
	switch src := ts.Source.(type) {
	case *ast.TableName:
		switch {
		case src.TableSample != nil:
			return ir.TableRef{}, notAgg(msgTableSample)
		case len(src.PartitionNames) > 0:
			return ir.TableRef{}, notAgg("PARTITION selection is not supported; query the whole table")
		case src.AsOf != nil:
			return ir.TableRef{}, notAgg("AS OF is not supported")
		}
		if len(ts.ColumnNames) > 0 {
			return ir.TableRef{}, notAgg("column aliases on tables are not supported; use the column names")
		}
		return ir.TableRef{Schema: src.Schema.O, Name: src.Name.O, Alias: ts.AsName.O}, nil
	case *ast.Join:
		return ir.TableRef{}, notAgg("parenthesised joins are not supported; write the joins one after another")
	}
	return ir.TableRef{}, notAgg("this FROM item is not supported; query a table")
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// myColumn converts a column reference, db.table.column included.
func myColumn(e ast.ExprNode) (ir.ColumnRef, bool) {
	c, ok := unparen(e).(*ast.ColumnNameExpr)
	if !ok {
		return ir.ColumnRef{}, false
	}
	return ir.ColumnRef{Schema: c.Name.Schema.O, Qualifier: c.Name.Table.O, Name: c.Name.Name.O}, true
}

func (m *myQueryBuilder) fields(fl *ast.FieldList) ([]ir.SelectItem, error) {
	if fl == nil {
		return nil, notAgg(msgStar)
	}
	items := make([]ir.SelectItem, 0, len(fl.Fields))
	for _, f := range fl.Fields {
		if f.WildCard != nil {
			return nil, notAgg(msgStar)
		}
		// MySQL names an item without alias after its text as written,
		// case and inner spacing kept ("COUNT(*)", "count( * )"); a
		// column, even in parentheses, after the column.
		label := ""
		if f.AsName.O == "" {
			label = strings.TrimSpace(f.Text())
		}
		e := unparen(f.Expr)
		switch x := e.(type) {
		case *ast.ColumnNameExpr:
			col, ok := myColumn(x)
			if !ok {
				return nil, notAgg(msgThreePart)
			}
			items = append(items, ir.SelectItem{Agg: ir.AggNone, Arg: &col, Alias: f.AsName.O})
			continue
		case *ast.AggregateFuncExpr:
			agg, err := m.aggregate(x)
			if err != nil {
				return nil, err
			}
			items = append(items, ir.SelectItem{Agg: agg.Func, Arg: agg.Arg, ArgExpr: agg.ArgExpr, Distinct: agg.Distinct, Fraction: agg.Fraction, Name: agg.Name, Alias: f.AsName.O, Label: label})
			continue
		case *ast.FuncCallExpr:
			if u := myCallAggregate(x); u != nil {
				agg, err := m.myAggregateCall(x, u)
				if err != nil {
					return nil, err
				}
				items = append(items, ir.SelectItem{Agg: agg.Func, Arg: agg.Arg, ArgExpr: agg.ArgExpr, Name: agg.Name, Alias: f.AsName.O, Label: label})
				continue
			}
		}
		// Anything else is post-processing over aggregates, grouping
		// columns and constants, converted as HAVING is.
		x, err := m.expr(e, true)
		if err != nil {
			// A row-level expression the post-processing evaluator does
			// not compute (CASE, width_bucket) may still be a grouping
			// key: the planner decides, before any charge.
			row, rerr := m.expr(e, false)
			if rerr != nil {
				return nil, err
			}
			x = row
		}
		items = append(items, ir.SelectItem{Expr: x, Alias: f.AsName.O, Label: label})
	}
	return items, nil
}

// aggregate converts an aggregate of package aggregate (COUNT, SUM, AVG,
// VAR_POP, ...) of one column or expression. TiDB parses COUNT(*)
// as COUNT(1), and MySQL users write COUNT(1) and COUNT(0) for COUNT(*):
// any non-NULL constant counts every row (COUNT(NULL) is refused).
func (m *myQueryBuilder) aggregate(a *ast.AggregateFuncExpr) (ir.Aggregate, error) {
	out, err := m.aggregateCall(a)
	out.Name = spelling(out.Func, strings.ToLower(a.F))
	return out, err
}

// spelling is an aggregate's ir Name: the function name as written when
// it is not the unit's own (stddev for stddev_samp), else "".
func spelling(fn ir.AggFunc, written string) string {
	if written == string(fn) {
		return ""
	}
	return written
}

func (m *myQueryBuilder) aggregateCall(a *ast.AggregateFuncExpr) (ir.Aggregate, error) {
	u := aggregate.Lookup(aggregate.MySQL, a.F)
	if u == nil {
		return ir.Aggregate{}, notAgg(msgNoAggregate, strings.ToLower(a.F), aggregate.NamesText())
	}
	fn := u.Func()
	if a.Order != nil {
		return ir.Aggregate{}, notAgg("ORDER BY inside an aggregate is not supported")
	}
	if len(a.Args) != 1 {
		return ir.Aggregate{}, notAgg(msgAggArg)
	}
	if fn == ir.AggCount && !a.Distinct {
		if ve, ok := a.Args[0].(*test_driver.ValueExpr); ok {
			return countConst(ve.Kind() == test_driver.KindNull)
		}
	}
	if c, isCol := unparen(a.Args[0]).(*ast.ColumnNameExpr); isCol {
		col, ok := myColumn(c)
		if !ok {
			return ir.Aggregate{}, notAgg(msgAggArg)
		}
		return ir.Aggregate{Func: fn, Arg: &col, Distinct: a.Distinct}, nil
	}
	// An expression of the row (SUM(age * 2)), converted as a WHERE
	// operand is: no aggregate inside; the planner types it and infers its
	// range.
	x, err := m.expr(a.Args[0], false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	if isBoolean(x) {
		// MySQL's truth values are the integers 1 and 0 (SUM(age > 40)
		// counts the rows over 40); NULL stays NULL, so COUNT and AVG
		// skip the rows where the condition is unknown, as MySQL does.
		x = ir.Case{Whens: []ir.When{
			{Cond: x, Then: ir.Literal{Value: ir.Int(1)}},
			{Cond: ir.Not{X: x}, Then: ir.Literal{Value: ir.Int(0)}},
		}}
	}
	return ir.Aggregate{Func: fn, ArgExpr: x, Distinct: a.Distinct}, nil
}

func (m *myQueryBuilder) groupKey(e ast.ExprNode) (groupKey, error) {
	switch x := unparen(e).(type) {
	case *ast.PositionExpr:
		if x.P != nil {
			return groupKey{}, notAgg("GROUP BY positions must be constants")
		}
		return groupKey{pos: int64(x.N), isPos: true}, nil
	case *ast.ColumnNameExpr:
		col, ok := myColumn(x)
		if !ok {
			return groupKey{}, notAgg(msgThreePart)
		}
		return groupKey{col: col}, nil
	case ast.ValueExpr:
		return groupKey{}, notAgg(msgGroupConst)
	}
	// An expression key is read as a WHERE operand is: row-level, no
	// aggregate.
	x, err := m.expr(e, false)
	if err != nil {
		return groupKey{}, err
	}
	return groupKey{expr: x}, nil
}

func (m *myQueryBuilder) orderItem(it *ast.ByItem, items []ir.SelectItem) (ir.OrderItem, error) {
	o := ir.OrderItem{Desc: it.Desc}
	switch x := unparen(it.Expr).(type) {
	case *ast.PositionExpr:
		if x.P != nil {
			return ir.OrderItem{}, notAgg("ORDER BY positions must be constants")
		}
		ref, err := outputRef(int64(x.N), items)
		if err != nil {
			return ir.OrderItem{}, err
		}
		o.Expr = ref
	case *ast.ColumnNameExpr:
		col, ok := myColumn(x)
		if !ok {
			return ir.OrderItem{}, notAgg(msgThreePart)
		}
		o.Expr = col
	case *ast.AggregateFuncExpr:
		if x.Distinct && !distinctAccepted(aggregate.MySQL, x.F) {
			return ir.OrderItem{}, notAgg("DISTINCT aggregates are not supported in ORDER BY")
		}
		agg, err := m.aggregate(x)
		if err != nil {
			return ir.OrderItem{}, err
		}
		o.Expr = agg
	default:
		// An expression over aggregates, grouping columns and constants:
		// post-processing, as in the select list. One the post-processing
		// evaluator does not compute may still be a grouping key (ORDER
		// BY DATE(t) after GROUP BY DATE(t)): the planner decides.
		e, err := m.expr(it.Expr, true)
		if err != nil {
			row, rerr := m.expr(it.Expr, false)
			if rerr != nil {
				return ir.OrderItem{}, err
			}
			e = row
		}
		o.Expr = e
	}
	return o, nil
}

func myLimit(e ast.ExprNode) (*int64, error) {
	if e == nil {
		return nil, nil
	}
	switch x := e.(type) {
	case *test_driver.ParamMarkerExpr:
		return nil, notAgg(msgParamLimit)
	case *test_driver.ValueExpr:
		switch x.Kind() {
		case test_driver.KindInt64:
			return nonNegative(x.GetInt64())
		case test_driver.KindUint64:
			if x.GetUint64() > math.MaxInt64 {
				return nil, notAgg(msgLimit)
			}
			return nonNegative(int64(x.GetUint64()))
		}
	}
	return nil, notAgg(msgLimit)
}

// expr converts a WHERE (aggs false) or HAVING (aggs true) predicate.
func (m *myQueryBuilder) expr(e ast.ExprNode, aggs bool) (ir.Expr, error) {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return m.expr(x.Expr, aggs)
	case *ast.ColumnNameExpr:
		col, ok := myColumn(x)
		if !ok {
			return nil, notAgg(msgThreePart)
		}
		return col, nil
	case *test_driver.ParamMarkerExpr:
		return ir.Param{Index: m.params[x]}, nil
	case *test_driver.ValueExpr:
		v, err := myValue(x)
		if err != nil {
			return nil, err
		}
		return ir.Literal{Value: v}, nil
	case *ast.BinaryOperationExpr:
		return m.binary(x, aggs)
	case *ast.UnaryOperationExpr:
		v, err := m.expr(x.V, aggs)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case opcode.Minus:
			return ir.Neg{X: v}, nil
		case opcode.Plus:
			return v, nil
		case opcode.Not, opcode.Not2:
			return ir.Not{X: v}, nil
		}
		return nil, notAgg("operator %s is not allowed in predicates", x.Op)
	case *ast.BetweenExpr:
		xs, err := m.exprs([]ast.ExprNode{x.Expr, x.Left, x.Right}, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Between{X: xs[0], Lo: xs[1], Hi: xs[2], Not: x.Not}, nil
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return nil, notAgg(msgSubquery)
		}
		v, err := m.expr(x.Expr, aggs)
		if err != nil {
			return nil, err
		}
		list, err := m.exprs(x.List, aggs)
		if err != nil {
			return nil, err
		}
		return ir.In{X: v, List: list, Not: x.Not}, nil
	case *ast.PatternLikeOrIlikeExpr:
		if x.EscapeExplicit && x.Escape != '\\' {
			return nil, notAgg(msgEscape)
		}
		xs, err := m.exprs([]ast.ExprNode{x.Expr, x.Pattern}, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Like{X: xs[0], Pattern: xs[1], Not: x.Not, CaseInsensitive: !x.IsLike}, nil
	case *ast.IsNullExpr:
		v, err := m.expr(x.Expr, aggs)
		if err != nil {
			return nil, err
		}
		return ir.IsNull{X: v, Not: x.Not}, nil
	case *ast.AggregateFuncExpr:
		if !aggs {
			return nil, notAgg(msgAggInWhere)
		}
		if x.Distinct && !distinctAccepted(aggregate.MySQL, x.F) {
			return nil, notAgg("DISTINCT aggregates are not supported in HAVING")
		}
		return m.aggregate(x)
	case *ast.FuncCallExpr:
		if u := myCallAggregate(x); u != nil {
			if !aggs {
				return nil, notAgg(msgAggInWhere)
			}
			return m.myAggregateCall(x, u)
		}
		return m.funcCall(x, aggs)
	case *ast.CaseExpr:
		return m.caseExpr(x, aggs)
	case *ast.WindowFuncExpr:
		if !aggs {
			return nil, notAgg(msgWindowWhere)
		}
		return m.window(x)
	case *ast.FuncCastExpr:
		to, ok := myCastType(x)
		if !ok {
			return nil, notAgg(msgCast)
		}
		v, err := m.expr(x.Expr, aggs)
		if err != nil {
			return nil, err
		}
		to.X = v
		return to, nil
	}
	return nil, notAgg("%s", myUnsupportedExpr(e))
}

// window converts a MySQL 8 window function of the select list or ORDER
// BY: post-processing over the output rows (ir.Window), as pgWindow.
func (m *myQueryBuilder) window(x *ast.WindowFuncExpr) (ir.Expr, error) {
	fn, ok := windowFuncs[strings.ToLower(x.Name)]
	if !ok {
		return nil, notAgg("window function %s is not supported; supported: %s", strings.ToLower(x.Name), windowFuncNames)
	}
	spec := x.Spec
	switch {
	case spec.Name.O != "" || spec.Ref.O != "" || spec.OnlyAlias:
		return nil, notAgg(msgNamedWindow)
	case spec.Frame != nil:
		return nil, notAgg(msgWindowFrame)
	case x.Distinct || x.IgnoreNull || x.FromLast:
		return nil, notAgg("DISTINCT, IGNORE NULLS and FROM LAST in a window function are not supported")
	}
	w := ir.Window{Func: fn}
	switch {
	case fn.Ranking():
		if len(x.Args) > 0 {
			return nil, notAgg("%s() takes no argument", fn)
		}
	case len(x.Args) != 1:
		return nil, notAgg(msgAggArg)
	default:
		// COUNT(*) arrives as COUNT(1): a constant counts every row.
		if ve, isConst := x.Args[0].(*test_driver.ValueExpr); fn == ir.WinCount && isConst {
			if ve.Kind() == test_driver.KindNull {
				return nil, notAgg("COUNT(NULL) is always 0; write COUNT(*) to count rows")
			}
			break
		}
		arg, err := m.expr(x.Args[0], true)
		if err != nil {
			return nil, err
		}
		w.Arg = arg
	}
	if spec.PartitionBy != nil {
		for _, it := range spec.PartitionBy.Items {
			e, err := m.expr(it.Expr, true)
			if err != nil {
				return nil, err
			}
			w.PartitionBy = append(w.PartitionBy, e)
		}
	}
	if spec.OrderBy != nil {
		for _, it := range spec.OrderBy.Items {
			e, err := m.expr(it.Expr, true)
			if err != nil {
				return nil, err
			}
			w.OrderBy = append(w.OrderBy, ir.OrderItem{Expr: e, Desc: it.Desc})
		}
	}
	return w, nil
}

// myCurrentTime converts NOW([fsp]) and its synonyms (CURRENT_TIMESTAMP,
// LOCALTIMESTAMP, LOCALTIME, UTC_TIMESTAMP: a DATETIME of fsp fractional
// digits, 0 by default) and CURDATE() (CURRENT_DATE, UTC_DATE) into the
// statement's time, in UTC (every session's time zone).
func myCurrentTime(name string, args []ast.ExprNode) (ir.Expr, error) {
	if name == "curdate" || name == "current_date" || name == "utc_date" {
		if len(args) != 0 {
			return nil, notAgg("function %s takes no arguments", name)
		}
		return ir.CurrentTime{Kind: ir.KindDate}, nil
	}
	fsp := 0
	if len(args) > 1 {
		return nil, notAgg("function %s takes at most one argument", name)
	}
	if len(args) == 1 {
		v, ok := args[0].(ast.ValueExpr)
		n, isInt := int64(0), false
		if ok {
			switch d := v.GetValue().(type) {
			case int64:
				n, isInt = d, true
			case uint64:
				n, isInt = int64(d), d <= 6
			}
		}
		if !isInt || n < 0 || n > 6 {
			return nil, notAgg("the precision of %s must be a whole number from 0 to 6", name)
		}
		fsp = int(n)
	}
	return ir.CurrentTime{Kind: ir.KindTimestamp, Precision: fsp}, nil
}

// myCastType maps CAST(x AS SIGNED|DOUBLE|CHAR|DECIMAL(M,D)) and
// CONVERT(x, ...) (the returned Cast has no operand); DATE and DATETIME;
// UNSIGNED (which wraps negative values), CHAR(n) (which truncates),
// FLOAT, TIME and BINARY are refused. DECIMAL is DECIMAL(10,0) and
// DECIMAL(M) DECIMAL(M,0), as in MySQL.
func myCastType(c *ast.FuncCastExpr) (ir.Cast, bool) {
	tp := c.Tp
	if tp == nil || c.FunctionType == ast.CastBinaryOperator {
		return ir.Cast{}, false
	}
	if tp.GetType() == mysql.TypeNewDecimal {
		out := ir.Cast{To: ir.CastNumeric, Precision: 10}
		if tp.GetFlen() != types.UnspecifiedLength {
			out.Precision = tp.GetFlen()
		}
		if tp.GetDecimal() != types.UnspecifiedLength {
			out.Scale = tp.GetDecimal()
		}
		// MySQL's limits: 65 digits, 30 after the point.
		if out.Precision < 1 || out.Precision > 65 || out.Scale < 0 || out.Scale > 30 || out.Scale > out.Precision {
			return ir.Cast{}, false
		}
		return out, true
	}
	to, ok := myPlainCastType(tp)
	return ir.Cast{To: to}, ok
}

// myPlainCastType maps the target types other than DECIMAL.
func myPlainCastType(tp *types.FieldType) (ir.CastType, bool) {
	switch tp.GetType() {
	case mysql.TypeLonglong:
		if mysql.HasUnsignedFlag(tp.GetFlag()) {
			return 0, false
		}
		return ir.CastBigint, true
	case mysql.TypeDouble:
		return ir.CastDouble, true
	case mysql.TypeDate:
		return ir.CastDate, true
	case mysql.TypeDatetime:
		// DATETIME(n) keeps n fractional digits; plain DATETIME none.
		if tp.GetDecimal() > 0 && tp.GetDecimal() != 6 {
			return 0, false
		}
		return ir.CastTimestamp, true
	case mysql.TypeVarString, mysql.TypeString:
		if tp.GetFlen() >= 0 || mysql.HasBinaryFlag(tp.GetFlag()) || tp.GetCharset() == "binary" {
			return 0, false
		}
		return ir.CastText, true
	}
	return 0, false
}

// caseExpr converts CASE; the simple form CASE x WHEN v THEN a becomes
// the searched WHEN x = v THEN a (x is written once per arm).
func (m *myQueryBuilder) caseExpr(k *ast.CaseExpr, aggs bool) (ir.Expr, error) {
	var subject ir.Expr
	if k.Value != nil {
		var err error
		if subject, err = m.expr(k.Value, aggs); err != nil {
			return nil, err
		}
	}
	out := ir.Case{Whens: make([]ir.When, 0, len(k.WhenClauses))}
	for _, w := range k.WhenClauses {
		xs, err := m.exprs([]ast.ExprNode{w.Expr, w.Result}, aggs)
		if err != nil {
			return nil, err
		}
		cond := xs[0]
		if subject != nil {
			cond = ir.Compare{Op: ir.OpEq, L: subject, R: cond}
		}
		out.Whens = append(out.Whens, ir.When{Cond: cond, Then: xs[1]})
	}
	if k.ElseClause != nil {
		els, err := m.expr(k.ElseClause, aggs)
		if err != nil {
			return nil, err
		}
		out.Else = els
	}
	return out, nil
}

func (m *myQueryBuilder) exprs(es []ast.ExprNode, aggs bool) ([]ir.Expr, error) {
	out := make([]ir.Expr, 0, len(es))
	for _, e := range es {
		x, err := m.expr(e, aggs)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func (m *myQueryBuilder) binary(x *ast.BinaryOperationExpr, aggs bool) (ir.Expr, error) {
	var build func(l, r ir.Expr) ir.Expr
	cmp := func(op ir.CmpOp) func(l, r ir.Expr) ir.Expr {
		return func(l, r ir.Expr) ir.Expr { return ir.Compare{Op: op, L: l, R: r} }
	}
	arith := func(op ir.ArithOp) func(l, r ir.Expr) ir.Expr {
		return func(l, r ir.Expr) ir.Expr { return ir.Arith{Op: op, L: l, R: r} }
	}
	switch x.Op {
	case opcode.EQ:
		build = cmp(ir.OpEq)
	case opcode.NE:
		build = cmp(ir.OpNe)
	case opcode.LT:
		build = cmp(ir.OpLt)
	case opcode.LE:
		build = cmp(ir.OpLe)
	case opcode.GT:
		build = cmp(ir.OpGt)
	case opcode.GE:
		build = cmp(ir.OpGe)
	case opcode.Plus:
		build = arith(ir.OpAdd)
	case opcode.Minus:
		build = arith(ir.OpSub)
	case opcode.Mul:
		build = arith(ir.OpMul)
	case opcode.LogicAnd:
		build = func(l, r ir.Expr) ir.Expr { return ir.And{L: l, R: r} }
	case opcode.LogicOr:
		build = func(l, r ir.Expr) ir.Expr { return ir.Or{L: l, R: r} }
	case opcode.Div, opcode.IntDiv, opcode.Mod:
		// MySQL's / never truncates (it returns a decimal, read here as
		// a real); DIV truncates integers (exprtype refuses it on reals).
		build = arith(map[opcode.Op]ir.ArithOp{opcode.Div: ir.OpRealDiv, opcode.IntDiv: ir.OpIntDiv, opcode.Mod: ir.OpMod}[x.Op])
	case opcode.NullEQ:
		return nil, notAgg("the <=> operator is not supported; use = with IS NULL")
	default:
		return nil, notAgg("operator %s is not allowed in predicates; use comparisons, AND/OR/NOT and + - * / DIV %%", x.Op)
	}
	l, err := m.expr(x.L, aggs)
	if err != nil {
		return nil, err
	}
	r, err := m.expr(x.R, aggs)
	if err != nil {
		return nil, err
	}
	return build(l, r), nil
}

func (m *myQueryBuilder) funcCall(f *ast.FuncCallExpr, aggs bool) (ir.Expr, error) {
	name := f.FnName.L
	if f.Schema.O != "" {
		return nil, notAgg("function %s.%s is not allowed in predicates; allowed: %s", f.Schema.L, name, allowedFuncs())
	}
	canon := name
	switch name {
	case "now", "current_timestamp", "localtimestamp", "localtime", "utc_timestamp", "curdate", "current_date", "utc_date":
		return myCurrentTime(name, f.Args)
	case "sysdate":
		return nil, notAgg("function sysdate changes during the statement; use NOW()")
	case "grouping":
		// MySQL 8's GROUPING(k, ...) of a WITH ROLLUP query.
		if !aggs {
			return nil, notAgg("GROUPING is allowed only in the select list, HAVING and ORDER BY")
		}
		args, err := m.exprs(f.Args, false)
		if err != nil {
			return nil, err
		}
		return ir.Grouping{Args: args}, nil
	case "date", "date_add", "date_sub":
		// Superset's time grains, before the general forms (which refuse
		// an interval of a column's value).
		unit, t, ok, err := supersetTrunc(f)
		if err != nil {
			return nil, err
		}
		if ok {
			return m.lowerTrunc(unit, t, aggs)
		}
	}
	switch name {
	case "char_length", "character_length":
		canon = "length"
	case "length", "octet_length":
		// MySQL's LENGTH counts bytes; the IR's length counts characters.
		return nil, notAgg("LENGTH counts bytes in MySQL; use CHAR_LENGTH(x) for the number of characters")
	case "ceiling":
		canon = "ceil"
	case "pow":
		canon = "power"
	case "log":
		// MySQL's one-argument LOG is the natural logarithm.
		if len(f.Args) != 1 {
			return nil, notAgg("only the one-argument LOG(x) is supported; use LN(x) / LN(b) for another base")
		}
		canon = "ln"
	case "power", "sqrt", "exp", "ln", "log10", "pi":
	case "ifnull":
		canon = "coalesce"
	case "lcase":
		canon = "lower"
	case "ucase":
		canon = "upper"
	case ast.DateLiteral, ast.TimestampLiteral:
		// DATE '…' and TIMESTAMP '…': the analysis parses the text.
		if aggs {
			return nil, notAgg(msgNotInHaving, "a date literal")
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		if len(args) != 1 {
			return nil, notAgg(msgTypedLit)
		}
		to := ir.CastDate
		if name == ast.TimestampLiteral {
			to = ir.CastTimestamp
		}
		return ir.Cast{X: args[0], To: to}, nil
	case ast.TimeLiteral:
		return nil, notAgg(msgTypedLit)
	case "trim":
		// TRIM(x) has one argument; TRIM(BOTH 'a' FROM x) and friends
		// carry a removal string and a direction, which the IR lacks.
		if len(f.Args) != 1 {
			return nil, notAgg("only the one-argument TRIM(x) is supported in predicates")
		}
	case "substring", "substr", "mid":
		canon = "substr"
	case "str_to_date", "makedate":
		if name == "str_to_date" && allConstant(f.Args) {
			// A constant date or time (Superset's time filters,
			// timelit.go); otherwise Metabase's truncations.
			args, err := m.exprs(f.Args, aggs)
			if err != nil {
				return nil, err
			}
			if lit, ok := timeLiteralCall(true, name, args); ok {
				return lit, nil
			}
		}
		return m.metabaseTrunc(f, aggs)
	case "left", "right", "replace":
	case "date":
		if aggs {
			return nil, notAgg(msgNotInHaving, "function date")
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		if len(args) != 1 {
			return nil, notAgg("function date takes 1 argument, not %d", len(args))
		}
		return ir.Cast{X: args[0], To: ir.CastDate}, nil
	case "year", "quarter", "month", "day", "dayofmonth", "hour", "minute", "dayofyear", "weekofyear", "dayofweek", "weekday":
		// MySQL's spellings of extract(field FROM x).
		if aggs {
			return nil, notAgg(msgNotInHaving, "function "+name)
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		if len(args) != 1 {
			return nil, notAgg("function %s takes 1 argument, not %d", name, len(args))
		}
		switch name {
		case "dayofweek":
			return weekday(args[0], 1, false), nil // Sunday 1 … Saturday 7
		case "weekday":
			return weekday(args[0], 0, true), nil // Monday 0 … Sunday 6
		}
		field := map[string]string{"dayofmonth": "day", "dayofyear": "doy", "weekofyear": "week"}[name]
		if field == "" {
			field = name
		}
		return ir.Func{Name: "extract", Args: []ir.Expr{ir.Literal{Value: ir.String(field)}, args[0]}}, nil
	case "date_add", "date_sub", "adddate", "subdate":
		// t + INTERVAL n UNIT parses as DATE_ADD(t, n, unit) too.
		if aggs {
			return nil, notAgg(msgNotInHaving, "interval arithmetic")
		}
		u, ok := f.Args[len(f.Args)-1].(*ast.TimeUnitExpr)
		if len(f.Args) != 3 || !ok {
			return nil, notAgg("%s takes a date and INTERVAL n UNIT", strings.ToUpper(name))
		}
		args, err := m.exprs(f.Args[:2], aggs)
		if err != nil {
			return nil, err
		}
		n, ok := constInt(args[1])
		unit := strings.ToLower(u.Unit.String())
		if !ok || !slices.Contains(exprtype.IntervalUnits, unit) {
			return nil, notAgg("only intervals of a constant whole number of %s are supported", strings.Join(exprtype.IntervalUnits, ", "))
		}
		if name == "date_sub" || name == "subdate" {
			n = -n
		}
		return ir.Func{Name: "date_add", Args: []ir.Expr{args[0], ir.Literal{Value: ir.Int(n)}, ir.Literal{Value: ir.String(unit)}}}, nil
	case "date_format":
		// DATE_FORMAT(t, '%Y-%m'): to_char with the PostgreSQL spelling
		// of one of the formats every backend writes alike.
		if aggs {
			return nil, notAgg(msgNotInHaving, "function date_format")
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		if len(args) != 2 {
			return nil, notAgg("DATE_FORMAT takes a date and a format")
		}
		if l, ok := args[1].(ir.Literal); ok && l.Value.Kind == ir.KindString {
			cf, known := exprtype.LookupCharFormat(l.Value.Str, true)
			if !known {
				return nil, notAgg("DATE_FORMAT format %q is not supported; use one of '%%Y', '%%Y-%%m', '%%Y-%%m-01', '%%Y-%%m-%%d', '%%Y-%%m-%%d %%H', '%%Y-%%m-%%d %%H:%%i'", l.Value.Str)
			}
			args[1] = ir.Literal{Value: ir.String(cf.Postgres)}
		}
		return ir.Func{Name: "to_char", Args: args}, nil
	case "extract":
		if aggs {
			return nil, notAgg(msgNotInHaving, "function extract")
		}
		if len(f.Args) != 2 {
			return nil, notAgg("EXTRACT takes a unit and a value")
		}
		u, ok := f.Args[0].(*ast.TimeUnitExpr)
		if !ok {
			return nil, notAgg("EXTRACT takes a unit and a value")
		}
		x, err := m.expr(f.Args[1], aggs)
		if err != nil {
			return nil, err
		}
		unit := strings.ToLower(u.Unit.String())
		if unit == "week" {
			// MySQL's is WEEK(x, 0), weeks from Sunday, not extract's
			// ISO week.
			return nil, notAgg("EXTRACT(WEEK FROM x) is not supported: MySQL numbers those weeks from Sunday (WEEK(x, 0)); WEEKOFYEAR(x) is the ISO week")
		}
		return ir.Func{Name: "extract", Args: []ir.Expr{ir.Literal{Value: ir.String(unit)}, x}}, nil
	case "concat":
		// MySQL's CONCAT is NULL when any argument is: PostgreSQL's ||
		// (textcat), chained.
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		if len(args) == 0 {
			return nil, notAgg("function concat takes at least 1 argument")
		}
		out := args[0]
		for _, a := range args[1:] {
			out = ir.Func{Name: "textcat", Args: []ir.Expr{out, a}}
		}
		return out, nil
	case "if":
		// IF(c, a, b) is CASE WHEN c THEN a ELSE b END.
		if len(f.Args) != 3 {
			return nil, notAgg("function if takes 3 arguments, not %d", len(f.Args))
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Case{Whens: []ir.When{{Cond: args[0], Then: args[1]}}, Else: args[2]}, nil
	case "mod":
		if len(f.Args) != 2 {
			return nil, notAgg("function mod takes 2 arguments, not %d", len(f.Args))
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Arith{Op: ir.OpMod, L: args[0], R: args[1]}, nil
	case "convert_tz":
		if len(f.Args) != 3 {
			return nil, notAgg("function convert_tz takes 3 arguments, not %d", len(f.Args))
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		return convertTZ(args)
	case "from_unixtime", "timestamp":
		// Constant dates and times spelled as calls (timelit.go).
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		if lit, ok := timeLiteralCall(true, name, args); ok {
			return lit, nil
		}
		return nil, notAgg("function %s is supported only as a constant: a quoted date or time with an ISO format ('%%Y-%%m-%%d %%H:%%i:%%s'), or a constant number of seconds", name)
	case "round", "coalesce", "abs", "lower", "upper", "ltrim", "rtrim", "floor", "ceil", "nullif", "unix_timestamp":
	case "greatest", "least":
		// The IR's greatest and least skip NULL arguments, as
		// PostgreSQL's do (exprtype.Func.SkipsNull); MySQL's own return
		// NULL when any argument is NULL. README documents the choice.
	default:
		return nil, notAgg("function %s is not allowed in predicates; allowed: %s", name, allowedFuncs())
	}
	args, err := m.exprs(f.Args, aggs)
	if err != nil {
		return nil, err
	}
	return callFunc(canon, name, args, aggs)
}

// myValue converts a literal.
func myValue(v *test_driver.ValueExpr) (ir.Value, error) {
	switch v.Kind() {
	case test_driver.KindNull:
		return ir.Null(), nil
	case test_driver.KindInt64:
		if mysql.HasIsBooleanFlag(v.Type.GetFlag()) { // TRUE and FALSE
			return ir.Bool(v.GetInt64() != 0), nil
		}
		return ir.Int(v.GetInt64()), nil
	case test_driver.KindUint64:
		if v.GetUint64() > math.MaxInt64 {
			return ir.Value{}, notAgg("integer literal %d is out of range", v.GetUint64())
		}
		return ir.Int(int64(v.GetUint64())), nil
	case test_driver.KindFloat32, test_driver.KindFloat64:
		return ir.Float(v.GetFloat64()), nil
	case test_driver.KindMysqlDecimal:
		f, err := strconv.ParseFloat(v.GetMysqlDecimal().String(), 64)
		if err != nil {
			return ir.Value{}, notAgg("numeric literal %s is not supported", v.GetMysqlDecimal().String())
		}
		return ir.Float(f), nil
	case test_driver.KindString:
		return ir.String(v.GetString()), nil
	case test_driver.KindBinaryLiteral:
		return ir.Value{}, notAgg("hexadecimal and bit literals are not supported in predicates; use a number or a string")
	}
	return ir.Value{}, notAgg("this literal is not supported in predicates")
}

// myUnsupportedExpr explains why an expression is outside the whitelist.
func myUnsupportedExpr(e ast.ExprNode) string {
	switch e.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return msgSubquery
	case *ast.WindowFuncExpr:
		return msgWindow
	case *ast.IsTruthExpr:
		return msgIsTruth
	case *ast.PatternRegexpExpr:
		return msgRegex
	case *ast.RowExpr:
		return msgRow
	case *ast.VariableExpr:
		return msgVariable
	case *ast.SetCollationExpr:
		return msgCollate
	}
	return myDescribe(e) + " is not allowed in predicates; use comparisons, BETWEEN, IN, LIKE, IS NULL, AND/OR/NOT, + - * / %, CASE, CAST and the functions " + allowedFuncs()
}

// myDescribe names a construct for a NotAggregate message.
func myDescribe(e ast.ExprNode) string {
	switch x := e.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return "a subquery"
	case *ast.CaseExpr:
		return "CASE"
	case *ast.FuncCastExpr:
		return "a cast"
	case *ast.FuncCallExpr:
		return "function " + x.FnName.L
	case *ast.AggregateFuncExpr:
		return "function " + strings.ToLower(x.F)
	case *ast.WindowFuncExpr:
		return "a window function"
	case *ast.BinaryOperationExpr:
		return "operator " + x.Op.String()
	case *ast.VariableExpr:
		return "a variable"
	case *ast.ColumnNameExpr:
		return "a column"
	case *test_driver.ValueExpr:
		return "a constant"
	case *ast.DefaultExpr:
		return "DEFAULT"
	case *ast.MatchAgainst:
		return "MATCH ... AGAINST"
	}
	return "this expression"
}

// isBoolean reports whether e is a condition by its form (a comparison, a
// connective, IS NULL, LIKE, IN, BETWEEN or a boolean literal).
func isBoolean(e ir.Expr) bool {
	switch n := e.(type) {
	case ir.Compare, ir.Between, ir.In, ir.Like, ir.IsNull, ir.And, ir.Or, ir.Not:
		return true
	case ir.Literal:
		return n.Value.Kind == ir.KindBool
	}
	return false
}

// constInt reads an integer constant, possibly negated.
func constInt(e ir.Expr) (int64, bool) {
	switch x := e.(type) {
	case ir.Literal:
		return x.Value.Int, x.Value.Kind == ir.KindInt
	case ir.Neg:
		n, ok := constInt(x.X)
		return -n, ok && n != math.MinInt64
	}
	return 0, false
}

// allConstant reports whether every argument is a literal.
func allConstant(args []ast.ExprNode) bool {
	for _, a := range args {
		if _, ok := a.(*test_driver.ValueExpr); !ok {
			return false
		}
	}
	return true
}

// distinctAccepted reports whether the aggregate a client spells name
// takes DISTINCT (its unit says so); an unknown name is refused later
// with its own message.
func distinctAccepted(d aggregate.Dialect, name string) bool {
	u := aggregate.Lookup(d, name)
	return u != nil && u.Distinct
}
