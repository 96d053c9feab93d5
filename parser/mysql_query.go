package parser

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// myQueryBuilder builds the aggregate Query of a MySQL SELECT.
type myQueryBuilder struct {
	params map[*test_driver.ParamMarkerExpr]int
}

func (m *myQueryBuilder) query(s *ast.SelectStmt) (*ir.Query, error) {
	b := queryBuilder{fold: true}
	switch {
	case s.With != nil:
		return nil, notAgg(msgCTE)
	case s.Kind == ast.SelectStmtKindTable:
		return nil, notAgg("TABLE reads individual rows; use an aggregate SELECT")
	case s.Kind != ast.SelectStmtKindSelect:
		return nil, notAgg("VALUES lists are not aggregates over a table")
	case s.Distinct:
		return nil, notAgg(msgDistinct)
	case len(s.WindowSpecs) > 0:
		return nil, notAgg(msgWindow)
	case s.From == nil || s.From.TableRefs == nil:
		return nil, notAgg(msgNoFrom)
	}
	q := &ir.Query{}
	var err error
	if q.From, q.Joins, err = myFrom(s.From.TableRefs); err != nil {
		return nil, err
	}
	if q.Select, err = m.fields(s.Fields); err != nil {
		return nil, err
	}
	if s.Where != nil {
		if q.Where, err = m.expr(s.Where, false); err != nil {
			return nil, err
		}
	}
	if s.GroupBy != nil {
		if s.GroupBy.Rollup {
			return nil, notAgg(msgGroupingSet)
		}
		keys := make([]groupKey, 0, len(s.GroupBy.Items))
		for _, it := range s.GroupBy.Items {
			k, err := myGroupKey(it.Expr)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		if q.GroupBy, err = b.resolveGroupBy(q.Select, keys); err != nil {
			return nil, err
		}
	}
	if err := b.checkGrouped(q); err != nil {
		return nil, err
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
	if s.Limit != nil {
		if q.Limit, err = myLimit(s.Limit.Count); err != nil {
			return nil, err
		}
		if q.Offset, err = myLimit(s.Limit.Offset); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// myFrom flattens a left-deep chain of inner and LEFT equi-joins. TiDB represents a
// single table as a Join with no right side, and INNER JOIN, CROSS JOIN,
// plain JOIN and the comma alike as CrossJoin (distinguished by ON/USING).
func myFrom(rs ast.ResultSetNode) (ir.TableRef, []ir.Join, error) {
	switch x := rs.(type) {
	case *ast.TableSource:
		t, err := myTable(x)
		return t, nil, err
	case *ast.Join:
		if x.Right == nil {
			return myFrom(x.Left)
		}
		if x.Tp == ast.RightJoin {
			return ir.TableRef{}, nil, notAgg(msgJoinOuter)
		}
		if (x.Tp != ast.CrossJoin && x.Tp != ast.LeftJoin) || x.NaturalJoin || (x.On == nil && len(x.Using) == 0) {
			if x.Tp == ast.CrossJoin && !x.NaturalJoin {
				return ir.TableRef{}, nil, notAgg(msgCommaJoin)
			}
			return ir.TableRef{}, nil, notAgg(msgJoinKind)
		}
		from, joins, err := myFrom(x.Left)
		if err != nil {
			return ir.TableRef{}, nil, err
		}
		ts, ok := x.Right.(*ast.TableSource)
		if !ok {
			return ir.TableRef{}, nil, notAgg("parenthesised joins are not supported; write the joins one after another")
		}
		right, err := myTable(ts)
		if err != nil {
			return ir.TableRef{}, nil, err
		}
		join := ir.Join{Table: right, Outer: x.Tp == ast.LeftJoin}
		if len(x.Using) > 0 {
			if len(x.Using) != 1 {
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			}
			col := x.Using[0].Name.O
			left := ""
			if len(joins) == 0 {
				left = from.RefName()
			}
			join.Left = ir.ColumnRef{Qualifier: left, Name: col}
			join.Right = ir.ColumnRef{Qualifier: right.RefName(), Name: col}
		} else {
			e := unparen(x.On.Expr)
			bin, ok := e.(*ast.BinaryOperationExpr)
			if !ok || (bin.Op != opcode.EQ && bin.Op != opcode.NullEQ) {
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			}
			join.NullSafe = bin.Op == opcode.NullEQ
			l, lok := myColumn(bin.L)
			r, rok := myColumn(bin.R)
			if !lok || !rok {
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			}
			join.Left, join.Right = l, r
		}
		return from, append(joins, join), nil
	}
	return ir.TableRef{}, nil, notAgg("this FROM item is not supported; query a table")
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
		return ir.TableRef{Schema: src.Schema.O, Name: src.Name.O, Alias: ts.AsName.O}, nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		return ir.TableRef{}, notAgg(msgFromSubq)
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
			items = append(items, ir.SelectItem{Agg: agg.Func, Arg: agg.Arg, ArgExpr: agg.ArgExpr, Distinct: x.Distinct, Alias: f.AsName.O})
			continue
		case *ast.WindowFuncExpr:
			return nil, notAgg(msgWindow)
		}
		// Anything else is post-processing over aggregates, grouping
		// columns and constants, converted as HAVING is.
		x, err := m.expr(e, true)
		if err != nil {
			return nil, err
		}
		items = append(items, ir.SelectItem{Expr: x, Alias: f.AsName.O})
	}
	return items, nil
}

// aggregate converts COUNT/SUM/AVG of one column or expression. TiDB parses COUNT(*)
// as COUNT(1), and MySQL users write COUNT(1) and COUNT(0) for COUNT(*):
// any non-NULL constant counts every row (COUNT(NULL) is refused).
func (m *myQueryBuilder) aggregate(a *ast.AggregateFuncExpr) (ir.Aggregate, error) {
	var fn ir.AggFunc
	switch strings.ToLower(a.F) {
	case ast.AggFuncCount:
		fn = ir.AggCount
	case ast.AggFuncSum:
		fn = ir.AggSum
	case ast.AggFuncAvg:
		fn = ir.AggAvg
	default:
		return ir.Aggregate{}, notAgg("function %s is not supported in the select list; use COUNT, SUM or AVG of a column", strings.ToLower(a.F))
	}
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
		return ir.Aggregate{Func: fn, Arg: &col}, nil
	}
	// An expression of the row (SUM(age * 2)), converted as a WHERE
	// operand is: no aggregate inside; the planner types it and infers its
	// range.
	x, err := m.expr(a.Args[0], false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	return ir.Aggregate{Func: fn, ArgExpr: x}, nil
}

func myGroupKey(e ast.ExprNode) (groupKey, error) {
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
	}
	return groupKey{}, notAgg(msgGroupExpr)
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
		if x.Distinct {
			return ir.OrderItem{}, notAgg("DISTINCT aggregates are not supported in ORDER BY")
		}
		agg, err := m.aggregate(x)
		if err != nil {
			return ir.OrderItem{}, err
		}
		o.Expr = agg
	default:
		// An expression over aggregates, grouping columns and constants:
		// post-processing, as in the select list.
		e, err := m.expr(it.Expr, true)
		if err != nil {
			return ir.OrderItem{}, err
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
		if x.Distinct {
			return nil, notAgg("DISTINCT aggregates are not supported in HAVING")
		}
		return m.aggregate(x)
	case *ast.FuncCallExpr:
		return m.funcCall(x, aggs)
	case *ast.CaseExpr:
		if aggs {
			return nil, notAgg(msgNotInHaving, "CASE")
		}
		return m.caseExpr(x, aggs)
	case *ast.FuncCastExpr:
		to, ok := myCastType(x)
		if !ok {
			return nil, notAgg(msgCast)
		}
		if aggs {
			return nil, notAgg(msgNotInHaving, "CAST")
		}
		v, err := m.expr(x.Expr, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Cast{X: v, To: to}, nil
	}
	return nil, notAgg("%s", myUnsupportedExpr(e))
}

// myCastType maps CAST(x AS SIGNED|DOUBLE|CHAR) and CONVERT(x, ...);
// DATE and DATETIME; UNSIGNED (which wraps negative values), CHAR(n)
// (which truncates), DECIMAL, FLOAT, TIME and BINARY are refused.
func myCastType(c *ast.FuncCastExpr) (ir.CastType, bool) {
	tp := c.Tp
	if tp == nil || c.FunctionType == ast.CastBinaryOperator {
		return 0, false
	}
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
	case "char_length", "character_length":
		canon = "length"
	case "length", "octet_length":
		// MySQL's LENGTH counts bytes; the IR's length counts characters.
		return nil, notAgg("LENGTH counts bytes in MySQL; use CHAR_LENGTH(x) for the number of characters")
	case "ceiling":
		canon = "ceil"
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
	case "year", "quarter", "month", "day", "dayofmonth", "hour", "minute":
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
		field := name
		if field == "dayofmonth" {
			field = "day"
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
		return ir.Func{Name: "extract", Args: []ir.Expr{ir.Literal{Value: ir.String(strings.ToLower(u.Unit.String()))}, x}}, nil
	case "concat":
		// MySQL's CONCAT is NULL when any argument is: PostgreSQL's ||
		// (textcat), chained.
		if aggs {
			return nil, notAgg(msgNotInHaving, "function concat")
		}
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
	case "mod":
		if len(f.Args) != 2 {
			return nil, notAgg("function mod takes 2 arguments, not %d", len(f.Args))
		}
		args, err := m.exprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Arith{Op: ir.OpMod, L: args[0], R: args[1]}, nil
	case "round", "coalesce", "abs", "lower", "upper", "ltrim", "rtrim", "floor", "ceil", "nullif":
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
