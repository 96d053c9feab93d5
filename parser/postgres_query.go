package parser

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// pgQuery builds the aggregate Query of a SELECT, or returns an
// *unsupported error naming the first construct outside the subset.
// Subqueries and CTEs in FROM are converted to the nested form of
// flatten.go and merged into the query there.
func pgQuery(s *pg.SelectStmt) (*ir.Query, error) { return pgQueryIn(s, nil) }

// pgQueryIn is pgQuery in the scope of enclosing WITH clauses.
func pgQueryIn(s *pg.SelectStmt, parent *cteEnv) (out *ir.Query, err error) {
	b := queryBuilder{}
	switch {
	case s.Op != pg.SetOperation_SETOP_NONE:
		return nil, notAgg(msgSetOp)
	case len(s.ValuesLists) > 0:
		return nil, notAgg("VALUES lists are not aggregates over a table")
	case len(s.DistinctClause) > 0:
		return nil, notAgg(msgDistinct)
	case len(s.WindowClause) > 0:
		return nil, notAgg(msgNamedWindow)
	case len(s.FromClause) == 0:
		return nil, notAgg(msgNoFrom)
	case len(s.FromClause) > 1:
		return nil, notAgg(msgCommaJoin)
	}
	env, err := pgWith(s.WithClause, parent)
	if err != nil {
		return nil, err
	}
	q := &ir.Query{}
	from, err := pgFrom(s.FromClause[0], env)
	if err != nil {
		return nil, err
	}
	if from.derived.aggValued() {
		// A SELECT over an aggregate subquery: post-processing of its rows.
		if err := pgRowSelectFields(s); err != nil {
			return nil, err
		}
		r, err := pgRowSelectFrom(s, from)
		if err != nil {
			return nil, err
		}
		return flattenOverAggregate(r, false)
	}
	if q.Select, err = pgTargets(s.TargetList); err != nil {
		return nil, err
	}
	if s.WhereClause != nil {
		if q.Where, err = pgExpr(s.WhereClause, false); err != nil {
			return nil, err
		}
	}
	keys, sets, err := pgGroupClause(s.GroupClause, s.GroupDistinct)
	if err != nil {
		return nil, err
	}
	if q.GroupBy, err = b.resolveGroupBy(q.Select, keys); err != nil {
		return nil, err
	}
	// LIMIT before the grouping check, which lets a query with LIMIT 0
	// select anything (it reads no row: a BI tool's probe of the columns).
	if s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return nil, notAgg("FETCH ... WITH TIES is not supported; use LIMIT")
	}
	if q.Limit, err = pgLimit(s.LimitCount); err != nil {
		return nil, err
	}
	if q.Offset, err = pgLimit(s.LimitOffset); err != nil {
		return nil, err
	}
	if grouped := b.checkGrouped(q); grouped != nil {
		// Refused, but built on for the planner (withUngrouped).
		defer func() { out, err = nil, withUngrouped(grouped, out, err) }()
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
	if err := b.groupingSets(q, sets); err != nil {
		return nil, err
	}
	return flattenQuery(q, from, false)
}

// pgWith converts a WITH clause into the scope of the SELECT it belongs
// to. Each CTE body is converted once, in the scope of the CTEs before it.
func pgWith(w *pg.WithClause, parent *cteEnv) (*cteEnv, error) {
	if w == nil {
		return parent, nil
	}
	if w.Recursive {
		return nil, notAgg(msgRecursive)
	}
	env := &cteEnv{parent: parent}
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		if c == nil {
			return nil, notAgg("this WITH item is not supported")
		}
		if c.SearchClause != nil || c.CycleClause != nil {
			return nil, notAgg(msgRecursive)
		}
		sel := c.Ctequery.GetSelectStmt()
		if sel == nil {
			return nil, notAgg(msgCTEModify)
		}
		def := &cteDef{name: c.Ctename, columns: pgStrings(c.Aliascolnames)}
		var err error
		if pgIsAggregateSelect(sel) {
			def.agg, err = pgQueryIn(sel, env)
		} else {
			def.body, err = pgRowSelect(sel, env)
		}
		if err != nil {
			return nil, err
		}
		env.defs = append(env.defs, def)
	}
	return env, nil
}

// pgRowSelect converts a SELECT in FROM (or a CTE body): it may only
// project, filter and join. Every field of the node that is set must be
// one this function reads, so a clause added to the grammar later is
// refused rather than dropped.
func pgRowSelect(s *pg.SelectStmt, parent *cteEnv) (*rowSelect, error) {
	if err := pgRowSelectFields(s); err != nil {
		return nil, err
	}
	switch {
	case s.Op != pg.SetOperation_SETOP_NONE:
		return nil, notAgg(msgInnerSetOp)
	case len(s.ValuesLists) > 0:
		return nil, notAgg(msgInnerClause, "VALUES")
	case len(s.FromClause) == 0:
		return nil, notAgg(msgInnerNoFrom)
	case len(s.FromClause) > 1:
		return nil, notAgg(msgCommaJoin)
	}
	env, err := pgWith(s.WithClause, parent)
	if err != nil {
		return nil, err
	}
	from, err := pgFrom(s.FromClause[0], env)
	if err != nil {
		return nil, err
	}
	return pgRowSelectFrom(s, from)
}

// pgIsAggregateSelect reports whether a SELECT aggregates: GROUP BY,
// HAVING or an aggregate call in its select list.
func pgIsAggregateSelect(s *pg.SelectStmt) bool {
	if s.Op != pg.SetOperation_SETOP_NONE {
		return false
	}
	if len(s.GroupClause) > 0 || s.GroupDistinct || s.HavingClause != nil {
		return true
	}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Val != nil && pgHasAggregate(rt.Val) {
			return true
		}
	}
	return false
}

// pgRowSelectFrom converts the rest of a row SELECT whose FROM is
// converted. Over an aggregate subquery its expressions are
// post-processing (as in a select list) and it may order and limit.
func pgRowSelectFrom(s *pg.SelectStmt, from fromTree) (*rowSelect, error) {
	over := from.derived.aggValued()
	switch {
	case len(s.DistinctClause) > 0:
		return nil, notAgg(msgInnerDist)
	case len(s.WindowClause) > 0:
		return nil, notAgg(msgInnerWindow)
	case len(s.GroupClause) > 0 || s.GroupDistinct:
		return nil, notAgg(msgNestedAggr, "GROUP BY")
	case s.HavingClause != nil:
		return nil, notAgg(msgNestedAggr, "HAVING")
	case s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return nil, notAgg("FETCH ... WITH TIES is not supported; use LIMIT")
	case !over && (s.LimitCount != nil || s.LimitOffset != nil):
		return nil, notAgg(msgInnerLimit)
	}
	r := &rowSelect{from: from}
	star := false
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, notAgg(msgInnerClause, "this select item")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			q := pgStrings(cr.Fields[:len(cr.Fields)-1])
			it := rowItem{star: true}
			switch {
			case len(q) != len(cr.Fields)-1 || len(q) > 2:
				return nil, notAgg(msgThreePart)
			case len(q) == 1:
				it.qual = q[0]
			case len(q) == 2:
				it.schema, it.qual = q[0], q[1]
			}
			r.items = append(r.items, it)
			star = true
			continue
		}
		if pgHasAggregate(rt.Val) {
			return nil, notAgg(msgNestedAggr, "an aggregate")
		}
		e, err := pgExpr(rt.Val, over)
		if err != nil {
			return nil, err
		}
		r.items = append(r.items, rowItem{name: pgItemName(rt), expr: e})
	}
	if s.WhereClause != nil {
		if over && pgHasAggregate(s.WhereClause) {
			return nil, notAgg(msgAggInWhere)
		}
		var err error
		if r.where, err = pgExpr(s.WhereClause, over); err != nil {
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
	for _, n := range s.SortClause {
		if pgHasAggregate(n) {
			return nil, notAgg(msgNestedAggr, "an aggregate")
		}
		if sb := n.GetSortBy(); star && sb != nil && sb.Node.GetAConst() != nil {
			return nil, notAgg("ORDER BY a position over SELECT * of a subquery is not supported; order by the column name")
		}
		o, err := pgOrderItem(n, items)
		if err != nil {
			return nil, err
		}
		r.orderBy = append(r.orderBy, o)
	}
	var err error
	if r.limit, err = pgLimit(s.LimitCount); err != nil {
		return nil, err
	}
	if r.offset, err = pgLimit(s.LimitOffset); err != nil {
		return nil, err
	}
	return r, nil
}

// pgRowSelectFields refuses a field of an inner SELECT that
// pgRowSelect does not read.
func pgRowSelectFields(s *pg.SelectStmt) error {
	var err error
	s.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		switch fd.Name() {
		case "target_list", "from_clause", "where_clause", "sort_clause", "with_clause", "op", "limit_option",
			"distinct_clause", "window_clause", "group_clause", "group_distinct", "having_clause",
			"limit_count", "limit_offset", "values_lists", "all", "larg", "rarg":
			return true
		}
		err = notAgg(msgInnerClause, strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(string(fd.Name()), "_clause"), "_", " ")))
		return false
	})
	return err
}

// pgHasAggregate reports whether an expression calls an aggregate outside
// a window (a nested aggregation when it is in a subquery in FROM).
func pgHasAggregate(n *pg.Node) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if f, ok := m.Interface().(*pg.FuncCall); ok && f.Over == nil && pgIsAggregateName(pgFuncName(f)) {
			found = true
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len() && !found; i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return !found
		})
	}
	walk(n.ProtoReflect())
	return found
}

// pgItemName is the name PostgreSQL gives an inner select item: its alias,
// a column's name or a function's name; "" for the others (?column?, which
// no query can name usefully).
func pgItemName(rt *pg.ResTarget) string {
	if rt.Name != "" {
		return rt.Name
	}
	switch v := rt.Val.GetNode().(type) {
	case *pg.Node_ColumnRef:
		f := v.ColumnRef.Fields
		return f[len(f)-1].GetString_().GetSval()
	case *pg.Node_FuncCall:
		fn := v.FuncCall.Funcname
		return fn[len(fn)-1].GetString_().GetSval()
	case *pg.Node_TypeCast:
		if c := v.TypeCast.Arg.GetColumnRef(); c != nil {
			return c.Fields[len(c.Fields)-1].GetString_().GetSval()
		}
	}
	return ""
}

// pgFrom converts FROM: a table, a subquery or a CTE reference, then a
// left-deep chain of inner and LEFT equi-joins of tables.
func pgFrom(n *pg.Node, env *cteEnv) (fromTree, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeVar:
		if d, err := pgCTERef(x.RangeVar, env); d != nil || err != nil {
			return fromTree{derived: d}, err
		}
		t, err := pgFromTable(x.RangeVar)
		return fromTree{table: t}, err
	case *pg.Node_RangeSubselect:
		rs := x.RangeSubselect
		if rs.Lateral {
			return fromTree{}, notAgg(msgLateral)
		}
		sel := rs.Subquery.GetSelectStmt()
		if sel == nil {
			return fromTree{}, notAgg(msgFromSubq)
		}
		d := &derivedTable{}
		var err error
		if pgIsAggregateSelect(sel) {
			d.agg, err = pgQueryIn(sel, env)
		} else {
			d.body, err = pgRowSelect(sel, env)
		}
		if err != nil {
			return fromTree{}, err
		}
		if rs.Alias != nil {
			d.alias, d.columns = rs.Alias.Aliasname, pgStrings(rs.Alias.Colnames)
		}
		return fromTree{derived: d}, nil
	case *pg.Node_JoinExpr:
		j := x.JoinExpr
		switch j.Jointype {
		case pg.JoinType_JOIN_INNER, pg.JoinType_JOIN_LEFT:
		case pg.JoinType_JOIN_RIGHT, pg.JoinType_JOIN_FULL:
			return fromTree{}, notAgg(msgJoinOuter)
		default:
			return fromTree{}, notAgg(msgJoinKind)
		}
		if j.IsNatural || (j.Quals == nil && len(j.UsingClause) == 0) {
			return fromTree{}, notAgg(msgJoinKind)
		}
		if j.Alias != nil || j.JoinUsingAlias != nil {
			return fromTree{}, notAgg("aliases on joins are not supported; alias the tables instead")
		}
		from, err := pgFrom(j.Larg, env)
		if err != nil {
			return fromTree{}, err
		}
		rv := j.Rarg.GetRangeVar()
		if rv == nil {
			switch {
			case j.Rarg.GetJoinExpr() != nil:
				return fromTree{}, notAgg("parenthesised joins are not supported; write the joins one after another")
			case j.Rarg.GetRangeSubselect() != nil && !j.Rarg.GetRangeSubselect().Lateral:
				return fromTree{}, notAgg(msgSubqNotFirst)
			}
			return fromTree{}, pgFromItemError(j.Rarg)
		}
		if d, err := pgCTERef(rv, env); d != nil || err != nil {
			if err != nil {
				return fromTree{}, err
			}
			return fromTree{}, notAgg(msgSubqNotFirst)
		}
		right, err := pgFromTable(rv)
		if err != nil {
			return fromTree{}, err
		}
		join := ir.Join{Table: right, Outer: j.Jointype == pg.JoinType_JOIN_LEFT}
		if len(j.UsingClause) > 0 {
			cols := pgStrings(j.UsingClause)
			if len(cols) != 1 || len(j.UsingClause) != 1 {
				return fromTree{}, notAgg(msgJoinKind)
			}
			// With a join chain on the left, PostgreSQL merges the USING
			// column of several tables; leave it unqualified for the
			// planner to resolve.
			left := ""
			if len(from.joins) == 0 {
				left = from.table.RefName()
				if from.derived != nil {
					left = from.derived.refName()
				}
			}
			join.Left = ir.ColumnRef{Qualifier: left, Name: cols[0]}
			join.Right = ir.ColumnRef{Qualifier: right.RefName(), Name: cols[0]}
		} else {
			a := j.Quals.GetAExpr()
			switch {
			case a == nil:
				return fromTree{}, notAgg(msgJoinKind)
			case a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
				join.NullSafe = true
			case a.Kind != pg.A_Expr_Kind_AEXPR_OP || !pgIsOp(a.Name, "="):
				return fromTree{}, notAgg(msgJoinKind)
			}
			l, lok := pgColumn(a.Lexpr)
			r, rok := pgColumn(a.Rexpr)
			if !lok || !rok {
				return fromTree{}, notAgg(msgJoinKind)
			}
			join.Left, join.Right = l, r
		}
		from.joins = append(from.joins, join)
		return from, nil
	}
	return fromTree{}, pgFromItemError(n)
}

// pgCTERef returns the derived table a FROM name refers to when it names
// a CTE in scope, nil otherwise.
func pgCTERef(r *pg.RangeVar, env *cteEnv) (*derivedTable, error) {
	if r.Schemaname != "" || r.Catalogname != "" {
		return nil, nil
	}
	def := env.lookup(r.Relname)
	if def == nil {
		return nil, nil
	}
	if !r.Inh {
		return nil, notAgg("ONLY is not supported; name the table without it")
	}
	d := &derivedTable{cte: def}
	if r.Alias != nil {
		d.alias, d.columns = r.Alias.Aliasname, pgStrings(r.Alias.Colnames)
	}
	return d, nil
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
		if f := rt.Val.GetFuncCall(); f != nil && f.Over == nil && pgIsAggregateName(pgFuncName(f)) {
			agg, err := pgAggregate(f)
			if err != nil {
				return nil, err
			}
			items = append(items, ir.SelectItem{Agg: agg.Func, Arg: agg.Arg, ArgExpr: agg.ArgExpr, Distinct: agg.Distinct, Fraction: agg.Fraction, Name: agg.Name, Alias: rt.Name})
			continue
		}
		// Anything else is post-processing over aggregates, grouping
		// columns and constants, converted as HAVING is.
		e, err := pgExpr(rt.Val, true)
		if err != nil {
			// A row-level expression the post-processing evaluator does
			// not compute (CASE, width_bucket) may still be a grouping
			// key: the planner decides, before any charge.
			row, rerr := pgExpr(rt.Val, false)
			if rerr != nil {
				return nil, err
			}
			e = row
		}
		items = append(items, ir.SelectItem{Expr: e, Alias: rt.Name})
	}
	return items, nil
}

// pgIsAggregateName reports whether a function name is an aggregate of
// package aggregate, or another aggregate that pgAggregate refuses with
// its own message.
func pgIsAggregateName(name string) bool {
	name = strings.TrimPrefix(name, "pg_catalog.")
	if aggregate.Lookup(aggregate.PostgreSQL, name) != nil {
		return true
	}
	switch name {
	case "min", "max", "stddev", "variance", "array_agg", "string_agg", "bool_and", "bool_or", "every":
		return true
	}
	return false
}

// pgAggregate converts an aggregate of package aggregate (COUNT, SUM, AVG,
// VAR_POP, ...) of one column or expression (or
// COUNT(*)), with its FILTER (WHERE ...) clause if any.
func pgAggregate(f *pg.FuncCall) (ir.Aggregate, error) {
	a, err := pgAggregateCall(f)
	a.Name = spelling(a.Func, strings.TrimPrefix(pgFuncName(f), "pg_catalog."))
	if err != nil || f.AggFilter == nil {
		return a, err
	}
	cond, err := pgExpr(f.AggFilter, false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	return filterAggregate(a, cond), nil
}

func pgAggregateCall(f *pg.FuncCall) (ir.Aggregate, error) {
	name := pgFuncName(f)
	u := aggregate.Lookup(aggregate.PostgreSQL, strings.TrimPrefix(name, "pg_catalog."))
	if u == nil {
		if f.Over != nil {
			return ir.Aggregate{}, notAgg(msgWindow)
		}
		return ir.Aggregate{}, notAgg(msgNoAggregate, name, aggregate.NamesText())
	}
	fn := u.Func()
	switch {
	case f.Over != nil:
		return ir.Aggregate{}, notAgg(msgWindow)
	case f.AggWithinGroup:
		return pgWithinGroup(f, u)
	case u.Fraction:
		return ir.Aggregate{}, notAgg("%s is an ordered-set aggregate: write %s(p) WITHIN GROUP (ORDER BY column)", u.Name, u.Name)
	case len(f.AggOrder) > 0:
		return ir.Aggregate{}, notAgg("ORDER BY inside an aggregate is not supported")
	case f.FuncVariadic:
		return ir.Aggregate{}, notAgg(msgAggArg)
	case f.AggStar:
		if !u.Star {
			return ir.Aggregate{}, notAgg(msgAggArg)
		}
		return ir.Aggregate{Func: fn}, nil
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
		return ir.Aggregate{Func: fn, Arg: &col, Distinct: f.AggDistinct}, nil
	}
	// An expression of the row (SUM(age * 2)), converted as a WHERE
	// operand is: no aggregate inside; the planner types it and infers its
	// range.
	x, err := pgExpr(f.Args[0], false)
	if err != nil {
		return ir.Aggregate{}, err
	}
	return ir.Aggregate{Func: fn, ArgExpr: x, Distinct: f.AggDistinct}, nil
}

func pgGroupKey(n *pg.Node) (groupKey, error) {
	if c := n.GetAConst(); c != nil {
		if i, ok := c.Val.(*pg.A_Const_Ival); ok {
			return groupKey{pos: int64(i.Ival.Ival), isPos: true}, nil
		}
		return groupKey{}, notAgg(msgGroupConst)
	}
	if n.GetGroupingSet() != nil {
		return groupKey{}, notAgg(msgGroupingSet)
	}
	if n.GetColumnRef() != nil {
		col, ok := pgColumn(n)
		if !ok {
			return groupKey{}, notAgg(msgThreePart)
		}
		return groupKey{col: col}, nil
	}
	// An expression key is read as a WHERE operand is: row-level, no
	// aggregate.
	e, err := pgExpr(n, false)
	if err != nil {
		return groupKey{}, err
	}
	return groupKey{expr: e}, nil
}

func pgOrderItem(n *pg.Node, items []ir.SelectItem) (ir.OrderItem, error) {
	sb := n.GetSortBy()
	if sb == nil {
		return ir.OrderItem{}, notAgg("this ORDER BY item is not supported")
	}
	o := ir.OrderItem{Nulls: pgNulls(sb.SortbyNulls)}
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
		if x.FuncCall.Over != nil || !pgIsAggregateName(pgFuncName(x.FuncCall)) {
			return pgOrderExpr(sb.Node, o)
		}
		agg, err := pgAggregate(x.FuncCall)
		if err != nil {
			return ir.OrderItem{}, err
		}
		if agg.Distinct && !aggregate.ByName(string(agg.Func)).Distinct {
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
		// One the post-processing evaluator does not compute may still
		// be a grouping key (ORDER BY date_trunc('month', t) after GROUP
		// BY date_trunc('month', t)): the planner decides.
		row, rerr := pgExpr(n, false)
		if rerr != nil {
			return ir.OrderItem{}, err
		}
		e = row
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
	case *pg.Node_SubLink:
		if e := pgScalarConst(x.SubLink); e != nil {
			return pgExpr(e, aggs)
		}
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
	case *pg.Node_GroupingFunc:
		return pgGroupingFunc(x.GroupingFunc, aggs)
	case *pg.Node_CaseExpr:
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
	case *pg.Node_SqlvalueFunction:
		return pgCurrentTime(x.SqlvalueFunction)
	case *pg.Node_TypeCast:
		to, ok := pgCastType(x.TypeCast.TypeName)
		switch {
		case !ok && x.TypeCast.Arg.GetAConst() != nil:
			return nil, notAgg(msgTypedLit)
		case !ok:
			return nil, notAgg(msgCast)
		}
		arg, err := pgExpr(x.TypeCast.Arg, aggs)
		if err != nil {
			return nil, err
		}
		to.X = arg
		return to, nil
	}
	return nil, notAgg("%s", pgUnsupportedExpr(n))
}

// pgCurrentTime converts CURRENT_DATE, CURRENT_TIMESTAMP[(p)] and
// LOCALTIMESTAMP[(p)] into the statement's time; CURRENT_TIME and
// LOCALTIME (a time of day, a type the proxy does not have) and the
// session's user and schema names are refused in a query over tables.
func pgCurrentTime(f *pg.SQLValueFunction) (ir.Expr, error) {
	precision := 6
	if f.Typmod >= 0 && f.Typmod < 6 {
		precision = int(f.Typmod)
	}
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return ir.CurrentTime{Kind: ir.KindDate}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return ir.CurrentTime{Kind: ir.KindTimestampTZ, Precision: precision}, nil
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return ir.CurrentTime{Kind: ir.KindTimestamp, Precision: precision}, nil
	}
	return nil, notAgg("%s", pgUnsupportedExpr(&pg.Node{Node: &pg.Node_SqlvalueFunction{SqlvalueFunction: f}}))
}

// pgCastType maps a cast's target type (the returned Cast has no
// operand); the modifiers of numeric(p[,s]) are kept, others (varchar(3))
// and arrays are refused.
func pgCastType(tn *pg.TypeName) (ir.Cast, bool) {
	if tn == nil || len(tn.ArrayBounds) > 0 || tn.Setof {
		return ir.Cast{}, false
	}
	names := pgStrings(tn.Names)
	if len(names) == 0 || len(names) > 2 || len(names) == 2 && names[0] != "pg_catalog" {
		return ir.Cast{}, false
	}
	name := names[len(names)-1]
	if name == "numeric" || name == "decimal" {
		return pgNumericType(tn.Typmods)
	}
	if len(tn.Typmods) > 0 {
		return ir.Cast{}, false
	}
	to, ok := pgPlainCastType(name)
	return ir.Cast{To: to}, ok
}

// maxNumericPrecision is PostgreSQL's NUMERIC_MAX_PRECISION; MySQL's
// DECIMAL allows 65 digits.
const maxNumericPrecision = 1000

// pgNumericType reads numeric's modifiers: none (unconstrained), (p) or
// (p, s) with 1 <= p <= 1000 and 0 <= s <= p. PostgreSQL 15 also allows a
// negative scale and one above the precision; those are refused.
func pgNumericType(mods []*pg.Node) (ir.Cast, bool) {
	out := ir.Cast{To: ir.CastNumeric}
	if len(mods) == 0 {
		return out, true
	}
	if len(mods) > 2 {
		return ir.Cast{}, false
	}
	var m [2]int
	for i, n := range mods {
		c := n.GetAConst()
		if c == nil || c.GetIval() == nil {
			return ir.Cast{}, false
		}
		m[i] = int(c.GetIval().Ival)
	}
	out.Precision, out.Scale = m[0], m[1]
	if out.Precision < 1 || out.Precision > maxNumericPrecision || out.Scale < 0 || out.Scale > out.Precision {
		return ir.Cast{}, false
	}
	return out, true
}

// pgPlainCastType maps the target types without modifiers.
func pgPlainCastType(name string) (ir.CastType, bool) {
	switch name {
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
		return pgIn(a.Lexpr, list.Items, op == "<>", aggs)
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
		// x = ANY(ARRAY[a, b]) is x IN (a, b), x <> ALL(ARRAY[a, b]) is
		// x NOT IN (a, b), NULLs alike (node-postgres and hand-written SQL
		// use the array form). Other operators, and arrays that are not a
		// written list, are refused.
		arr := a.Rexpr.GetAArrayExpr()
		anyEq := a.Kind == pg.A_Expr_Kind_AEXPR_OP_ANY && op == "="
		allNe := a.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL && (op == "<>" || op == "!=")
		if arr == nil || len(arr.Elements) == 0 || !(anyEq || allNe) {
			return nil, notAgg(msgArray)
		}
		return pgIn(a.Lexpr, arr.Elements, allNe, aggs)
	}
	return nil, notAgg("operator %s is not allowed in predicates", op)
}

// pgIn is x [NOT] IN (items), from IN or from ANY/ALL over an ARRAY.
func pgIn(x *pg.Node, items []*pg.Node, not, aggs bool) (ir.Expr, error) {
	lx, err := pgExpr(x, aggs)
	if err != nil {
		return nil, err
	}
	list, err := pgExprs(items, aggs)
	if err != nil {
		return nil, err
	}
	return ir.In{X: lx, List: list, Not: not}, nil
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

// pgIntervalText is the text an interval is read from: a string
// constant, or a whole number concatenated with one ((-6 || ' day'), as
// Looker writes its relative dates).
func pgIntervalText(n *pg.Node) (string, bool) {
	if c := n.GetAConst(); c != nil && c.GetSval() != nil {
		return c.GetSval().Sval, true
	}
	a := n.GetAExpr()
	if a == nil || a.Kind != pg.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || a.Name[0].GetString_().GetSval() != "||" {
		return "", false
	}
	l, r := a.Lexpr.GetAConst(), a.Rexpr.GetAConst()
	if l == nil || l.GetIval() == nil || r == nil || r.GetSval() == nil {
		return "", false
	}
	return strconv.FormatInt(int64(l.GetIval().Ival), 10) + r.GetSval().Sval, true
}

// pgScalarConst returns the expression of a scalar subquery that reads
// nothing — (SELECT expr), no FROM, WHERE, GROUP BY, HAVING, window,
// LIMIT, set operation or CTE —, which is that expression (its one row);
// nil for any other subquery. Looker wraps its relative date bounds so:
// ((SELECT (DATE_TRUNC('day', CURRENT_TIMESTAMP) + (-6 || ' day')::INTERVAL))).
func pgScalarConst(l *pg.SubLink) *pg.Node {
	if l.SubLinkType != pg.SubLinkType_EXPR_SUBLINK || l.Testexpr != nil {
		return nil
	}
	sel := l.Subselect.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 || sel.WhereClause != nil ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.DistinctClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.SortClause) > 0 || sel.WithClause != nil ||
		sel.Op != pg.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 || sel.IntoClause != nil || len(sel.LockingClause) > 0 {
		return nil
	}
	t := sel.TargetList[0].GetResTarget()
	if t == nil || t.Val == nil {
		return nil
	}
	return t.Val
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
	text, isText := pgIntervalText(tc.Arg)
	if !isText || len(tc.TypeName.Typmods) > 0 {
		return 0, "", true, notAgg("only intervals of one whole unit are supported: INTERVAL '3 months', '1 day', '2 hours'")
	}
	count, unit, ok := exprtype.ParseInterval(text)
	if !ok {
		return 0, "", true, notAgg("only intervals of one whole unit are supported: INTERVAL '3 months', '1 day', '2 hours'")
	}
	return count, unit, true, nil
}

// pgFunc converts a call in a predicate: an aggregate (HAVING only) or a
// whitelisted scalar function under its canonical name.
func pgFunc(f *pg.FuncCall, aggs bool) (ir.Expr, error) {
	name := pgFuncName(f)
	if f.Over != nil {
		if !aggs {
			return nil, notAgg(msgWindowWhere)
		}
		return pgWindow(f, name)
	}
	if u := aggregate.Lookup(aggregate.PostgreSQL, strings.TrimPrefix(name, "pg_catalog.")); u != nil {
		if !aggs {
			return nil, notAgg(msgAggInWhere)
		}
		if f.AggDistinct && !u.Distinct {
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
	switch canon {
	case "now", "transaction_timestamp", "statement_timestamp":
		// The statement's time (the transaction's is the same here: each
		// statement is its own transaction to the backend).
		if len(f.Args) != 0 {
			return nil, notAgg("function %s takes no arguments", canon)
		}
		return ir.CurrentTime{Kind: ir.KindTimestampTZ, Precision: 6}, nil
	case "clock_timestamp", "timeofday":
		return nil, notAgg("function %s changes during the statement; use now() or CURRENT_TIMESTAMP", canon)
	}
	if canon == "unix_timestamp" {
		// MySQL's; PostgreSQL would fail the query.
		return nil, notAgg("function unix_timestamp does not exist in PostgreSQL; write extract(epoch FROM t)")
	}
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
	case "log":
		if len(f.Args) == 1 {
			canon = "log10" // PostgreSQL's one-argument log is base 10
		}
	}
	args, err := pgExprs(f.Args, aggs)
	if err != nil {
		return nil, err
	}
	if canon == "date" && len(args) == 1 && !aggs {
		// date(x) is PostgreSQL's function-style cast.
		return ir.Cast{X: args[0], To: ir.CastDate}, nil
	}
	if lit, ok := timeLiteralCall(false, canon, args); ok {
		return lit, nil
	}
	if canon == "timezone" && len(args) == 2 {
		// t AT TIME ZONE z is timezone(z, t).
		return atTimeZone(args[0], args[1])
	}
	if l, ok := firstLiteral(args); ok && canon == "extract" && !aggs && len(args) == 2 && strings.EqualFold(l.Str, "isodow") {
		return weekday(args[1], 1, true), nil // Monday 1 … Sunday 7
	}
	return callFunc(canon, name, args, aggs)
}

// pgWindow converts a window function of the select list or ORDER BY:
// post-processing over the output rows (ir.Window). The planner refuses
// an argument or key that reads input rows.
func pgWindow(f *pg.FuncCall, name string) (ir.Expr, error) {
	fn, ok := windowFuncs[strings.TrimPrefix(name, "pg_catalog.")]
	if !ok {
		return nil, notAgg("window function %s is not supported; supported: %s", name, windowFuncNames)
	}
	over := f.Over
	switch {
	case over.Name != "" || over.Refname != "":
		return nil, notAgg(msgNamedWindow)
	case over.FrameOptions&pgFrameNonDefault != 0:
		return nil, notAgg(msgWindowFrame)
	case f.AggDistinct || f.AggFilter != nil || len(f.AggOrder) > 0 || f.FuncVariadic || f.AggWithinGroup:
		return nil, notAgg("DISTINCT, FILTER and ORDER BY inside a window function are not supported")
	}
	w := ir.Window{Func: fn}
	switch {
	case fn.Ranking():
		if len(f.Args) > 0 || f.AggStar {
			return nil, notAgg("%s() takes no argument", fn)
		}
	case f.AggStar:
		if fn != ir.WinCount {
			return nil, notAgg(msgAggArg)
		}
	case len(f.Args) != 1:
		return nil, notAgg(msgAggArg)
	default:
		arg, err := pgExpr(f.Args[0], true)
		if err != nil {
			return nil, err
		}
		w.Arg = arg
	}
	for _, p := range over.PartitionClause {
		x, err := pgExpr(p, true)
		if err != nil {
			return nil, err
		}
		w.PartitionBy = append(w.PartitionBy, x)
	}
	for _, n := range over.OrderClause {
		sb := n.GetSortBy()
		if sb == nil || sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, notAgg("the ORDER BY of a window supports ASC, DESC, NULLS FIRST and NULLS LAST only")
		}
		x, err := pgExpr(sb.Node, true)
		if err != nil {
			return nil, err
		}
		w.OrderBy = append(w.OrderBy, ir.OrderItem{Expr: x, Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC, Nulls: pgNulls(sb.SortbyNulls)})
	}
	return w, nil
}

// pgNulls maps a sort key's NULL order to the IR's (a window's keys:
// Looker sorts its pivot by a measure DESC NULLS LAST).
func pgNulls(n pg.SortByNulls) ir.NullsOrder {
	switch n {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		return ir.NullsFirst
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		return ir.NullsLast
	}
	return ir.NullsDefault
}

// pgFrameNonDefault is PostgreSQL's FRAMEOPTION_NONDEFAULT: the window
// has an explicit frame clause (ROWS/RANGE/GROUPS ...).
const pgFrameNonDefault = 0x1

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

// firstLiteral is the value of args[0] when it is a text literal.
func firstLiteral(args []ir.Expr) (ir.Value, bool) {
	if len(args) == 0 {
		return ir.Value{}, false
	}
	l, ok := args[0].(ir.Literal)
	return l.Value, ok && l.Value.Kind == ir.KindString
}
