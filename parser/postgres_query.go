package parser

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// pgQuery builds the aggregate Query of a SELECT, or returns an
// *unsupported error naming the first construct outside the subset.
func pgQuery(s *pg.SelectStmt) (*ir.Query, error) {
	b := queryBuilder{}
	switch {
	case s.Op != pg.SetOperation_SETOP_NONE:
		return nil, notAgg(msgSetOp)
	case s.WithClause != nil:
		return nil, notAgg(msgCTE)
	case len(s.ValuesLists) > 0:
		return nil, notAgg("VALUES lists are not aggregates over a table")
	case len(s.DistinctClause) > 0:
		return nil, notAgg(msgDistinct)
	case len(s.WindowClause) > 0:
		return nil, notAgg(msgWindow)
	case s.GroupDistinct:
		return nil, notAgg("GROUP BY DISTINCT is not supported")
	case len(s.FromClause) == 0:
		return nil, notAgg(msgNoFrom)
	case len(s.FromClause) > 1:
		return nil, notAgg(msgCommaJoin)
	}
	q := &ir.Query{}
	var err error
	if q.From, q.Joins, err = pgFrom(s.FromClause[0]); err != nil {
		return nil, err
	}
	if q.Select, err = pgTargets(s.TargetList); err != nil {
		return nil, err
	}
	if s.WhereClause != nil {
		if q.Where, err = pgExpr(s.WhereClause, false); err != nil {
			return nil, err
		}
	}
	keys := make([]groupKey, 0, len(s.GroupClause))
	for _, g := range s.GroupClause {
		k, err := pgGroupKey(g)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if q.GroupBy, err = b.resolveGroupBy(q.Select, keys); err != nil {
		return nil, err
	}
	if err := b.checkGrouped(q); err != nil {
		return nil, err
	}
	if s.HavingClause != nil {
		if q.Having, err = pgExpr(s.HavingClause, true); err != nil {
			return nil, err
		}
	}
	for _, n := range s.SortClause {
		o, err := pgOrderItem(n, q.Select)
		if err != nil {
			return nil, err
		}
		q.OrderBy = append(q.OrderBy, o)
	}
	if s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, notAgg("FETCH ... WITH TIES is not supported; use LIMIT")
	}
	if q.Limit, err = pgLimit(s.LimitCount); err != nil {
		return nil, err
	}
	if q.Offset, err = pgLimit(s.LimitOffset); err != nil {
		return nil, err
	}
	return q, nil
}

// pgFrom flattens a left-deep chain of inner and LEFT equi-joins.
func pgFrom(n *pg.Node) (ir.TableRef, []ir.Join, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeVar:
		t, err := pgFromTable(x.RangeVar)
		return t, nil, err
	case *pg.Node_JoinExpr:
		j := x.JoinExpr
		switch j.Jointype {
		case pg.JoinType_JOIN_INNER, pg.JoinType_JOIN_LEFT:
		case pg.JoinType_JOIN_RIGHT, pg.JoinType_JOIN_FULL:
			return ir.TableRef{}, nil, notAgg(msgJoinOuter)
		default:
			return ir.TableRef{}, nil, notAgg(msgJoinKind)
		}
		if j.IsNatural || (j.Quals == nil && len(j.UsingClause) == 0) {
			return ir.TableRef{}, nil, notAgg(msgJoinKind)
		}
		if j.Alias != nil || j.JoinUsingAlias != nil {
			return ir.TableRef{}, nil, notAgg("aliases on joins are not supported; alias the tables instead")
		}
		from, joins, err := pgFrom(j.Larg)
		if err != nil {
			return ir.TableRef{}, nil, err
		}
		rv := j.Rarg.GetRangeVar()
		if rv == nil {
			if j.Rarg.GetJoinExpr() != nil {
				return ir.TableRef{}, nil, notAgg("parenthesised joins are not supported; write the joins one after another")
			}
			return ir.TableRef{}, nil, pgFromItemError(j.Rarg)
		}
		right, err := pgFromTable(rv)
		if err != nil {
			return ir.TableRef{}, nil, err
		}
		join := ir.Join{Table: right, Outer: j.Jointype == pg.JoinType_JOIN_LEFT}
		if len(j.UsingClause) > 0 {
			cols := pgStrings(j.UsingClause)
			if len(cols) != 1 || len(j.UsingClause) != 1 {
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			}
			// With a join chain on the left, PostgreSQL merges the USING
			// column of several tables; leave it unqualified for the
			// planner to resolve.
			left := ""
			if len(joins) == 0 {
				left = from.RefName()
			}
			join.Left = ir.ColumnRef{Qualifier: left, Name: cols[0]}
			join.Right = ir.ColumnRef{Qualifier: right.RefName(), Name: cols[0]}
		} else {
			a := j.Quals.GetAExpr()
			switch {
			case a == nil:
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			case a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
				join.NullSafe = true
			case a.Kind != pg.A_Expr_Kind_AEXPR_OP || !pgIsOp(a.Name, "="):
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			}
			l, lok := pgColumn(a.Lexpr)
			r, rok := pgColumn(a.Rexpr)
			if !lok || !rok {
				return ir.TableRef{}, nil, notAgg(msgJoinKind)
			}
			join.Left, join.Right = l, r
		}
		return from, append(joins, join), nil
	}
	return ir.TableRef{}, nil, pgFromItemError(n)
}

func pgFromTable(r *pg.RangeVar) (ir.TableRef, error) {
	if !r.Inh {
		return ir.TableRef{}, notAgg("ONLY is not supported; name the table without it")
	}
	if r.Alias != nil && len(r.Alias.Colnames) > 0 {
		return ir.TableRef{}, notAgg("column aliases on tables are not supported; use the column names")
	}
	return pgTableRef(r), nil
}

func pgFromItemError(n *pg.Node) error {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeSubselect:
		if x.RangeSubselect.Lateral {
			return notAgg(msgLateral)
		}
		return notAgg(msgFromSubq)
	case *pg.Node_RangeFunction:
		if x.RangeFunction.Lateral {
			return notAgg(msgLateral)
		}
		return notAgg(msgFromFunc)
	case *pg.Node_RangeTableSample:
		return notAgg(msgTableSample)
	}
	return notAgg("this FROM item is not supported; query a table")
}

// pgColumn converts a plain (optionally table-qualified) column reference.
func pgColumn(n *pg.Node) (ir.ColumnRef, bool) {
	c := n.GetColumnRef()
	if c == nil {
		return ir.ColumnRef{}, false
	}
	f := pgStrings(c.Fields)
	if len(f) != len(c.Fields) {
		return ir.ColumnRef{}, false // contains *
	}
	switch len(f) {
	case 1:
		return ir.ColumnRef{Name: f[0]}, true
	case 2:
		return ir.ColumnRef{Qualifier: f[0], Name: f[1]}, true
	case 3:
		return ir.ColumnRef{Schema: f[0], Qualifier: f[1], Name: f[2]}, true
	}
	return ir.ColumnRef{}, false // catalog.schema.table.column
}

func pgIsOp(name []*pg.Node, op string) bool {
	s := pgStrings(name)
	return len(s) == 1 && len(name) == 1 && s[0] == op
}

func pgTargets(targets []*pg.Node) ([]ir.SelectItem, error) {
	items := make([]ir.SelectItem, 0, len(targets))
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, notAgg(msgStar)
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			col, ok := pgColumn(rt.Val)
			if !ok {
				if len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
					return nil, notAgg(msgStar)
				}
				return nil, notAgg(msgThreePart)
			}
			items = append(items, ir.SelectItem{Agg: ir.AggNone, Arg: &col, Alias: rt.Name})
			continue
		}
		if f := rt.Val.GetFuncCall(); f != nil && pgIsAggregateName(pgFuncName(f)) {
			agg, err := pgAggregate(f)
			if err != nil {
				return nil, err
			}
			items = append(items, ir.SelectItem{Agg: agg.Func, Arg: agg.Arg, ArgExpr: agg.ArgExpr, Distinct: f.AggDistinct, Alias: rt.Name})
			continue
		}
		// Anything else is post-processing over aggregates, grouping
		// columns and constants, converted as HAVING is.
		e, err := pgExpr(rt.Val, true)
		if err != nil {
			return nil, err
		}
		items = append(items, ir.SelectItem{Expr: e, Alias: rt.Name})
	}
	return items, nil
}

// pgIsAggregateName reports whether a function name is COUNT, SUM or AVG,
// or another aggregate that pgAggregate refuses with its own message.
func pgIsAggregateName(name string) bool {
	switch strings.TrimPrefix(name, "pg_catalog.") {
	case "count", "sum", "avg", "min", "max", "stddev", "variance", "array_agg", "string_agg", "bool_and", "bool_or", "every":
		return true
	}
	return false
}

// pgAggregate converts COUNT/SUM/AVG of one column or expression (or
// COUNT(*)).
func pgAggregate(f *pg.FuncCall) (ir.Aggregate, error) {
	name := pgFuncName(f)
	var fn ir.AggFunc
	switch name {
	case "count", "pg_catalog.count":
		fn = ir.AggCount
	case "sum", "pg_catalog.sum":
		fn = ir.AggSum
	case "avg", "pg_catalog.avg":
		fn = ir.AggAvg
	default:
		if f.Over != nil {
			return ir.Aggregate{}, notAgg(msgWindow)
		}
		return ir.Aggregate{}, notAgg("function %s is not supported in the select list; use COUNT, SUM or AVG of a column", name)
	}
	switch {
	case f.Over != nil:
		return ir.Aggregate{}, notAgg(msgWindow)
	case f.AggFilter != nil:
		return ir.Aggregate{}, notAgg("aggregate FILTER clauses are not supported; move the condition into WHERE")
	case len(f.AggOrder) > 0 || f.AggWithinGroup:
		return ir.Aggregate{}, notAgg("ORDER BY inside an aggregate is not supported")
	case f.FuncVariadic:
		return ir.Aggregate{}, notAgg(msgAggArg)
	case f.AggStar:
		if fn != ir.AggCount {
			return ir.Aggregate{}, notAgg(msgAggArg)
		}
		return ir.Aggregate{Func: ir.AggCount}, nil
	case len(f.Args) != 1:
		return ir.Aggregate{}, notAgg(msgAggArg)
	}
	if c := f.Args[0].GetAConst(); c != nil && fn == ir.AggCount && !f.AggDistinct {
		return countConst(c.Isnull)
	}
	if f.Args[0].GetColumnRef() != nil {
		col, ok := pgColumn(f.Args[0])
		if !ok {
			return ir.Aggregate{}, notAgg(msgAggArg)
		}
		return ir.Aggregate{Func: fn, Arg: &col}, nil
	}
	// An expression of the row (SUM(age * 2)), converted as a WHERE
	// operand is: no aggregate inside; the planner types it and infers its
	// range.
	x, err := pgExpr(f.Args[0], false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	return ir.Aggregate{Func: fn, ArgExpr: x}, nil
}

func pgGroupKey(n *pg.Node) (groupKey, error) {
	if c := n.GetAConst(); c != nil {
		if i, ok := c.Val.(*pg.A_Const_Ival); ok {
			return groupKey{pos: int64(i.Ival.Ival), isPos: true}, nil
		}
		return groupKey{}, notAgg(msgGroupExpr)
	}
	if n.GetGroupingSet() != nil {
		return groupKey{}, notAgg(msgGroupingSet)
	}
	col, ok := pgColumn(n)
	if !ok {
		if n.GetColumnRef() != nil {
			return groupKey{}, notAgg(msgThreePart)
		}
		return groupKey{}, notAgg(msgGroupExpr)
	}
	return groupKey{col: col}, nil
}

func pgOrderItem(n *pg.Node, items []ir.SelectItem) (ir.OrderItem, error) {
	sb := n.GetSortBy()
	if sb == nil {
		return ir.OrderItem{}, notAgg("this ORDER BY item is not supported")
	}
	if sb.SortbyNulls != pg.SortByNulls_SORTBY_NULLS_DEFAULT {
		return ir.OrderItem{}, notAgg("NULLS FIRST / NULLS LAST is not supported in ORDER BY")
	}
	var o ir.OrderItem
	switch sb.SortbyDir {
	case pg.SortByDir_SORTBY_DEFAULT, pg.SortByDir_SORTBY_ASC:
	case pg.SortByDir_SORTBY_DESC:
		o.Desc = true
	default:
		return ir.OrderItem{}, notAgg("ORDER BY ... USING is not supported; use ASC or DESC")
	}
	switch x := sb.Node.GetNode().(type) {
	case *pg.Node_AConst:
		i, ok := x.AConst.Val.(*pg.A_Const_Ival)
		if !ok {
			return ir.OrderItem{}, notAgg("ORDER BY supports select-list positions, grouping columns, aliases and aggregates only")
		}
		ref, err := outputRef(int64(i.Ival.Ival), items)
		if err != nil {
			return ir.OrderItem{}, err
		}
		o.Expr = ref
	case *pg.Node_ColumnRef:
		col, ok := pgColumn(sb.Node)
		if !ok {
			return ir.OrderItem{}, notAgg(msgThreePart)
		}
		o.Expr = col
	case *pg.Node_FuncCall:
		if !pgIsAggregateName(pgFuncName(x.FuncCall)) {
			return pgOrderExpr(sb.Node, o)
		}
		agg, err := pgAggregate(x.FuncCall)
		if err != nil {
			return ir.OrderItem{}, err
		}
		if x.FuncCall.AggDistinct {
			return ir.OrderItem{}, notAgg("DISTINCT aggregates are not supported in ORDER BY")
		}
		o.Expr = agg
	default:
		return pgOrderExpr(sb.Node, o)
	}
	return o, nil
}

// pgLimit reads LIMIT/OFFSET: an integer constant, or nothing (LIMIT ALL
// is a NULL constant).
// pgOrderExpr converts an ORDER BY expression over aggregates, grouping
// columns and constants: post-processing, as in the select list.
func pgOrderExpr(n *pg.Node, o ir.OrderItem) (ir.OrderItem, error) {
	e, err := pgExpr(n, true)
	if err != nil {
		return ir.OrderItem{}, err
	}
	o.Expr = e
	return o, nil
}

func pgLimit(n *pg.Node) (*int64, error) {
	if n == nil {
		return nil, nil
	}
	c := n.GetAConst()
	if c == nil {
		if n.GetParamRef() != nil {
			return nil, notAgg(msgParamLimit)
		}
		return nil, notAgg(msgLimit)
	}
	if c.Isnull {
		return nil, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return nonNegative(int64(v.Ival.Ival))
	case *pg.A_Const_Fval:
		// Integers beyond int32 arrive as Float nodes holding digits.
		i, err := strconv.ParseInt(v.Fval.Fval, 10, 64)
		if err != nil {
			return nil, notAgg(msgLimit)
		}
		return nonNegative(i)
	}
	return nil, notAgg(msgLimit)
}

// pgExpr converts a WHERE (aggs false) or HAVING (aggs true) predicate.
func pgExpr(n *pg.Node, aggs bool) (ir.Expr, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		col, ok := pgColumn(n)
		if !ok {
			return nil, notAgg(msgThreePart)
		}
		return col, nil
	case *pg.Node_AConst:
		v, err := pgConst(x.AConst)
		if err != nil {
			return nil, err
		}
		return ir.Literal{Value: v}, nil
	case *pg.Node_ParamRef:
		return ir.Param{Index: int(x.ParamRef.Number)}, nil
	case *pg.Node_BoolExpr:
		return pgBool(x.BoolExpr, aggs)
	case *pg.Node_AExpr:
		return pgAExpr(x.AExpr, aggs)
	case *pg.Node_NullTest:
		if x.NullTest.Argisrow {
			return nil, notAgg(msgRow)
		}
		arg, err := pgExpr(x.NullTest.Arg, aggs)
		if err != nil {
			return nil, err
		}
		return ir.IsNull{X: arg, Not: x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case *pg.Node_CoalesceExpr:
		args, err := pgExprs(x.CoalesceExpr.Args, aggs)
		if err != nil {
			return nil, err
		}
		return safeFunc("coalesce", "coalesce", args)
	case *pg.Node_FuncCall:
		return pgFunc(x.FuncCall, aggs)
	case *pg.Node_CaseExpr:
		if aggs {
			return nil, notAgg(msgNotInHaving, "CASE")
		}
		return pgCase(x.CaseExpr, aggs)
	case *pg.Node_MinMaxExpr:
		name := "greatest"
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			name = "least"
		}
		args, err := pgExprs(x.MinMaxExpr.Args, aggs)
		if err != nil {
			return nil, err
		}
		return callFunc(name, name, args, aggs)
	case *pg.Node_TypeCast:
		to, ok := pgCastType(x.TypeCast.TypeName)
		switch {
		case !ok && x.TypeCast.Arg.GetAConst() != nil:
			return nil, notAgg(msgTypedLit)
		case !ok:
			return nil, notAgg(msgCast)
		}
		if aggs {
			return nil, notAgg(msgNotInHaving, "CAST")
		}
		arg, err := pgExpr(x.TypeCast.Arg, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Cast{X: arg, To: to}, nil
	}
	return nil, notAgg("%s", pgUnsupportedExpr(n))
}

// pgCastType maps a cast's target type; modifiers (varchar(3),
// numeric(5,2)) and arrays are refused.
func pgCastType(tn *pg.TypeName) (ir.CastType, bool) {
	if tn == nil || len(tn.Typmods) > 0 || len(tn.ArrayBounds) > 0 || tn.Setof {
		return 0, false
	}
	names := pgStrings(tn.Names)
	if len(names) == 0 || len(names) > 2 || len(names) == 2 && names[0] != "pg_catalog" {
		return 0, false
	}
	switch names[len(names)-1] {
	case "int8", "bigint":
		return ir.CastBigint, true
	case "int4", "integer", "int":
		return ir.CastInteger, true
	case "float8":
		return ir.CastDouble, true
	case "text":
		return ir.CastText, true
	case "date":
		return ir.CastDate, true
	case "timestamp":
		return ir.CastTimestamp, true
	case "timestamptz":
		return ir.CastTimestampTZ, true
	}
	return 0, false
}

// pgCase converts CASE; the simple form CASE x WHEN v THEN a becomes the
// searched WHEN x = v THEN a (x is written once per arm).
func pgCase(k *pg.CaseExpr, aggs bool) (ir.Expr, error) {
	var subject ir.Expr
	if k.Arg != nil {
		var err error
		if subject, err = pgExpr(k.Arg, aggs); err != nil {
			return nil, err
		}
	}
	out := ir.Case{Whens: make([]ir.When, 0, len(k.Args))}
	for _, a := range k.Args {
		w := a.GetCaseWhen()
		if w == nil {
			return nil, notAgg("this CASE form is not supported")
		}
		cond, err := pgExpr(w.Expr, aggs)
		if err != nil {
			return nil, err
		}
		then, err := pgExpr(w.Result, aggs)
		if err != nil {
			return nil, err
		}
		if subject != nil {
			cond = ir.Compare{Op: ir.OpEq, L: subject, R: cond}
		}
		out.Whens = append(out.Whens, ir.When{Cond: cond, Then: then})
	}
	if k.Defresult != nil {
		els, err := pgExpr(k.Defresult, aggs)
		if err != nil {
			return nil, err
		}
		out.Else = els
	}
	return out, nil
}

// pgUnsupportedExpr explains why an expression is outside the whitelist.
func pgUnsupportedExpr(n *pg.Node) string {
	switch x := n.GetNode().(type) {
	case *pg.Node_SubLink:
		return msgSubquery
	case *pg.Node_BooleanTest:
		return msgIsTruth
	case *pg.Node_RowExpr:
		return msgRow
	case *pg.Node_CollateClause:
		return msgCollate
	case *pg.Node_AArrayExpr, *pg.Node_AIndirection:
		return msgArray
	case *pg.Node_SqlvalueFunction:
		return fmt.Sprintf("function %s is not allowed in predicates; allowed: %s", pgDescribe(n), allowedFuncs())
	case *pg.Node_FuncCall:
		if x.FuncCall.Over != nil {
			return msgWindow
		}
	}
	return pgDescribe(n) + " is not allowed in predicates; use comparisons, BETWEEN, IN, LIKE, IS NULL, AND/OR/NOT, + - * / %, CASE, CAST and the functions " + allowedFuncs()
}

func pgExprs(ns []*pg.Node, aggs bool) ([]ir.Expr, error) {
	out := make([]ir.Expr, 0, len(ns))
	for _, n := range ns {
		e, err := pgExpr(n, aggs)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func pgConst(c *pg.A_Const) (ir.Value, error) {
	if c.Isnull {
		return ir.Null(), nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return ir.Int(int64(v.Ival.Ival)), nil
	case *pg.A_Const_Fval:
		return numericLiteral(v.Fval.Fval)
	case *pg.A_Const_Sval:
		return ir.String(v.Sval.Sval), nil
	case *pg.A_Const_Boolval:
		return ir.Bool(v.Boolval.Boolval), nil
	}
	return ir.Value{}, notAgg("bit-string literals are not supported in predicates")
}

// numericLiteral reads a literal the grammar did not type as a small
// integer: digits only is an integer (PostgreSQL hands out-of-int32
// integers over as "Float" nodes), anything else a real.
func numericLiteral(s string) (ir.Value, error) {
	if strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0 ||
		(strings.HasPrefix(s, "-") && strings.IndexFunc(s[1:], func(r rune) bool { return r < '0' || r > '9' }) < 0) {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return ir.Value{}, notAgg("integer literal %s is out of range", s)
		}
		return ir.Int(i), nil
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		return ir.Value{}, notAgg("numeric literal %s is not supported", s)
	}
	return ir.Float(f), nil
}

func pgBool(b *pg.BoolExpr, aggs bool) (ir.Expr, error) {
	args, err := pgExprs(b.Args, aggs)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, notAgg("empty boolean expression")
	}
	switch b.Boolop {
	case pg.BoolExprType_NOT_EXPR:
		return ir.Not{X: args[0]}, nil
	case pg.BoolExprType_AND_EXPR:
		e := args[0]
		for _, a := range args[1:] {
			e = ir.And{L: e, R: a}
		}
		return e, nil
	case pg.BoolExprType_OR_EXPR:
		e := args[0]
		for _, a := range args[1:] {
			e = ir.Or{L: e, R: a}
		}
		return e, nil
	}
	return nil, notAgg("this boolean operator is not supported")
}

func pgAExpr(a *pg.A_Expr, aggs bool) (ir.Expr, error) {
	op := ""
	if s := pgStrings(a.Name); len(s) == 1 && len(a.Name) == 1 {
		op = s[0]
	} else if a.Kind != pg.A_Expr_Kind_AEXPR_BETWEEN && a.Kind != pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		return nil, notAgg("OPERATOR(...) syntax is not allowed in predicates; use the plain operator")
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		return pgOp(op, a, aggs)
	case pg.A_Expr_Kind_AEXPR_IN:
		list := a.Rexpr.GetList()
		if list == nil {
			return nil, notAgg(msgSubquery)
		}
		x, err := pgExpr(a.Lexpr, aggs)
		if err != nil {
			return nil, err
		}
		items, err := pgExprs(list.Items, aggs)
		if err != nil {
			return nil, err
		}
		return ir.In{X: x, List: items, Not: op == "<>"}, nil
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		if f := a.Rexpr.GetFuncCall(); f != nil && pgFuncName(f) == "pg_catalog.like_escape" {
			return nil, notAgg(msgEscape)
		}
		x, err := pgExpr(a.Lexpr, aggs)
		if err != nil {
			return nil, err
		}
		p, err := pgExpr(a.Rexpr, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Like{X: x, Pattern: p, Not: strings.HasPrefix(op, "!"), CaseInsensitive: a.Kind == pg.A_Expr_Kind_AEXPR_ILIKE}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		list := a.Rexpr.GetList()
		if list == nil || len(list.Items) != 2 {
			return nil, notAgg("malformed BETWEEN")
		}
		x, err := pgExpr(a.Lexpr, aggs)
		if err != nil {
			return nil, err
		}
		bounds, err := pgExprs(list.Items, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Between{X: x, Lo: bounds[0], Hi: bounds[1], Not: a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return nil, notAgg("BETWEEN SYMMETRIC is not supported; order the bounds and use BETWEEN")
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		return nil, notAgg(msgDistinctOp)
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		args, err := pgExprs([]*pg.Node{a.Lexpr, a.Rexpr}, aggs)
		if err != nil {
			return nil, err
		}
		return callFunc("nullif", "nullif", args, aggs)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return nil, notAgg(msgRegex)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return nil, notAgg(msgArray)
	}
	return nil, notAgg("operator %s is not allowed in predicates", op)
}

func pgOp(op string, a *pg.A_Expr, aggs bool) (ir.Expr, error) {
	switch op {
	case "~", "!~", "~*", "!~*":
		if a.Lexpr != nil { // prefix ~ is bitwise NOT
			return nil, notAgg(msgRegex)
		}
	}
	if op == "||" && a.Lexpr != nil {
		args, err := pgExprs([]*pg.Node{a.Lexpr, a.Rexpr}, aggs)
		if err != nil {
			return nil, err
		}
		return callFunc("textcat", "||", args, aggs)
	}
	if a.Lexpr == nil { // prefix operator
		x, err := pgExpr(a.Rexpr, aggs)
		if err != nil {
			return nil, err
		}
		switch op {
		case "-":
			return ir.Neg{X: x}, nil
		case "+":
			return x, nil
		}
		return nil, notAgg("operator %s is not allowed in predicates", op)
	}
	var cmp ir.CmpOp
	var arith ir.ArithOp
	isCmp := true
	switch op {
	case "=":
		cmp = ir.OpEq
	case "<>", "!=":
		cmp = ir.OpNe
	case "<":
		cmp = ir.OpLt
	case "<=":
		cmp = ir.OpLe
	case ">":
		cmp = ir.OpGt
	case ">=":
		cmp = ir.OpGe
	case "+":
		isCmp, arith = false, ir.OpAdd
	case "-":
		isCmp, arith = false, ir.OpSub
	case "*":
		isCmp, arith = false, ir.OpMul
	case "/":
		// Truncating on two integers, real otherwise (exprtype decides).
		isCmp, arith = false, ir.OpDiv
	case "%":
		isCmp, arith = false, ir.OpMod
	default:
		return nil, notAgg("operator %s is not allowed in predicates; use comparisons, + - * / %% and ||", op)
	}
	if n, unit, isInterval, err := pgInterval(a.Rexpr); isInterval {
		// t ± INTERVAL 'n unit': date_add(t, ±n, 'unit').
		if err != nil {
			return nil, err
		}
		if isCmp || arith != ir.OpAdd && arith != ir.OpSub || aggs {
			return nil, notAgg("an interval can only be added to or subtracted from a date or timestamp in predicates")
		}
		t, err := pgExpr(a.Lexpr, aggs)
		if err != nil {
			return nil, err
		}
		if arith == ir.OpSub {
			n = -n
		}
		return ir.Func{Name: "date_add", Args: []ir.Expr{t, ir.Literal{Value: ir.Int(n)}, ir.Literal{Value: ir.String(unit)}}}, nil
	}
	l, err := pgExpr(a.Lexpr, aggs)
	if err != nil {
		return nil, err
	}
	r, err := pgExpr(a.Rexpr, aggs)
	if err != nil {
		return nil, err
	}
	if isCmp {
		return ir.Compare{Op: cmp, L: l, R: r}, nil
	}
	return ir.Arith{Op: arith, L: l, R: r}, nil
}

// pgInterval reads INTERVAL 'n unit' (and 'n unit'::interval); isInterval
// is set for any interval constant, err when it is not one the
// expression language supports.
func pgInterval(n *pg.Node) (count int64, unit string, isInterval bool, err error) {
	tc := n.GetTypeCast()
	if tc == nil || tc.TypeName == nil {
		return 0, "", false, nil
	}
	names := pgStrings(tc.TypeName.Names)
	if len(names) == 0 || names[len(names)-1] != "interval" {
		return 0, "", false, nil
	}
	c := tc.Arg.GetAConst()
	if c == nil || c.GetSval() == nil || len(tc.TypeName.Typmods) > 0 {
		return 0, "", true, notAgg("only intervals of one whole unit are supported: INTERVAL '3 months', '1 day', '2 hours'")
	}
	count, unit, ok := exprtype.ParseInterval(c.GetSval().Sval)
	if !ok {
		return 0, "", true, notAgg("only intervals of one whole unit are supported: INTERVAL '3 months', '1 day', '2 hours'")
	}
	return count, unit, true, nil
}

// pgFunc converts a call in a predicate: an aggregate (HAVING only) or a
// whitelisted scalar function under its canonical name.
func pgFunc(f *pg.FuncCall, aggs bool) (ir.Expr, error) {
	name := pgFuncName(f)
	switch name {
	case "count", "sum", "avg", "pg_catalog.count", "pg_catalog.sum", "pg_catalog.avg":
		if !aggs {
			return nil, notAgg(msgAggInWhere)
		}
		if f.AggDistinct {
			return nil, notAgg("DISTINCT aggregates are not supported in HAVING")
		}
		return pgAggregate(f)
	}
	if f.Over != nil {
		return nil, notAgg(msgWindow)
	}
	if f.AggStar || f.AggDistinct || f.AggFilter != nil || len(f.AggOrder) > 0 || f.FuncVariadic || f.AggWithinGroup {
		return nil, notAgg("function %s is not allowed in predicates; allowed: %s", name, allowedFuncs())
	}
	canon := strings.TrimPrefix(name, "pg_catalog.")
	if canon == "mod" {
		if len(f.Args) != 2 {
			return nil, notAgg("function mod takes 2 arguments, not %d", len(f.Args))
		}
		args, err := pgExprs(f.Args, aggs)
		if err != nil {
			return nil, err
		}
		return ir.Arith{Op: ir.OpMod, L: args[0], R: args[1]}, nil
	}
	switch canon {
	case "char_length", "character_length":
		canon = "length"
	case "ceiling":
		canon = "ceil"
	case "btrim":
		canon = "trim"
	case "substring":
		canon = "substr"
	case "date_part":
		canon = "extract"
	}
	args, err := pgExprs(f.Args, aggs)
	if err != nil {
		return nil, err
	}
	if canon == "date" && len(args) == 1 && !aggs {
		// date(x) is PostgreSQL's function-style cast.
		return ir.Cast{X: args[0], To: ir.CastDate}, nil
	}
	return callFunc(canon, name, args, aggs)
}

// pgDescribe names a construct for a NotAggregate message.
func pgDescribe(n *pg.Node) string {
	switch x := n.GetNode().(type) {
	case *pg.Node_SubLink:
		return "a subquery"
	case *pg.Node_CaseExpr:
		return "CASE"
	case *pg.Node_TypeCast:
		return "a cast"
	case *pg.Node_AExpr:
		if s := pgStrings(x.AExpr.Name); len(s) > 0 {
			return "operator " + s[len(s)-1]
		}
	case *pg.Node_FuncCall:
		if x.FuncCall.Over != nil {
			return "a window function"
		}
		return "function " + pgFuncName(x.FuncCall)
	case *pg.Node_BooleanTest:
		return "IS TRUE / IS FALSE / IS UNKNOWN"
	case *pg.Node_RowExpr:
		return "a row constructor"
	case *pg.Node_AArrayExpr:
		return "an array"
	case *pg.Node_CollateClause:
		return "COLLATE"
	case *pg.Node_AIndirection:
		return "subscripting"
	case *pg.Node_SqlvalueFunction:
		return strings.ToLower(strings.TrimPrefix(x.SqlvalueFunction.Op.String(), "SVFOP_"))
	case *pg.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case *pg.Node_GroupingFunc:
		return "GROUPING()"
	case *pg.Node_ColumnRef:
		return "a column"
	case *pg.Node_AConst:
		return "a constant"
	}
	return "this expression"
}
