package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// This file builds Statement.Rows, the row-level reading of a SELECT
// (ir.RowQuery): what the planner renders in the backend's dialect when a
// statement reads only public tables and the client speaks another
// dialect. The shape is deliberately small (one FROM table, equi-joins,
// expressions, WHERE, ORDER BY, LIMIT/OFFSET); everything else keeps its
// reason in RowsRefusal.

const msgRowsWith = "WITH is not supported in a row-level read; query the tables directly"

// rowsResult sets st.Rows or st.RowsRefusal from a conversion.
func rowsResult(st *ir.Statement, q *ir.RowQuery, err error) {
	if err != nil {
		st.RowsRefusal = err.Error()
		return
	}
	st.Rows = q
}

// resolveOrderName turns an unqualified ORDER BY name that is an output
// name into a position, as both dialects do (an output name wins over an
// input column); fold compares case-insensitively (MySQL).
func resolveOrderName(e ir.Expr, items []ir.RowItem, fold bool) ir.Expr {
	c, ok := e.(ir.ColumnRef)
	if !ok || c.Qualifier != "" || c.Schema != "" {
		return e
	}
	for i, it := range items {
		if it.Star || it.Name == "" {
			continue
		}
		if it.Name == c.Name || (fold && strings.EqualFold(it.Name, c.Name)) {
			return ir.OutputRef{Index: i}
		}
	}
	return e
}

// position converts ORDER BY n. A star hides how many columns come
// before n, so positions over a star are refused.
func position(n int64, items []ir.RowItem) (ir.Expr, error) {
	for _, it := range items {
		if it.Star {
			return nil, notAgg("ORDER BY a position over SELECT * is not supported here; order by the column name")
		}
	}
	if n < 1 || n > int64(len(items)) {
		return nil, notAgg("ORDER BY position %d is not in the select list", n)
	}
	return ir.OutputRef{Index: int(n - 1)}, nil
}

// pgRows converts a PostgreSQL SELECT into a RowQuery; nil, nil for an
// aggregate SELECT (not a row-level read).
func pgRows(s *pg.SelectStmt) (*ir.RowQuery, error) {
	if pgIsAggregateSelect(s) {
		return nil, nil
	}
	if err := pgRowSelectFields(s); err != nil {
		return nil, err
	}
	switch {
	case s.Op != pg.SetOperation_SETOP_NONE:
		return nil, notAgg(msgSetOp)
	case len(s.ValuesLists) > 0:
		return nil, notAgg("VALUES lists are not supported in a row-level read")
	case s.WithClause != nil:
		return nil, notAgg(msgRowsWith)
	case len(s.DistinctClause) > 0:
		return nil, notAgg("SELECT DISTINCT is not supported in a row-level read")
	case len(s.WindowClause) > 0:
		return nil, notAgg(msgNamedWindow)
	case len(s.FromClause) == 0:
		return nil, notAgg(msgNoFrom)
	case len(s.FromClause) > 1:
		return nil, notAgg(msgCommaJoin)
	case s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return nil, notAgg("FETCH ... WITH TIES is not supported; use LIMIT")
	}
	from, err := pgFrom(s.FromClause[0], nil)
	if err != nil {
		return nil, err
	}
	if from.derived != nil {
		return nil, notAgg(msgFromSubq)
	}
	q := &ir.RowQuery{From: from.table, Joins: from.joins}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, notAgg("this select item is not supported")
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			qual := pgStrings(cr.Fields[:len(cr.Fields)-1])
			if len(qual) != len(cr.Fields)-1 || len(qual) > 1 {
				return nil, notAgg("only * and table.* are supported in a row-level read")
			}
			it := ir.RowItem{Star: true}
			if len(qual) == 1 {
				it.Qualifier = qual[0]
			}
			q.Items = append(q.Items, it)
			continue
		}
		e, err := pgExpr(rt.Val, false)
		if err != nil {
			return nil, err
		}
		name := pgItemName(rt)
		if name == "" {
			name = "?column?"
		}
		q.Items = append(q.Items, ir.RowItem{Expr: e, Name: name})
	}
	if s.WhereClause != nil {
		if q.Where, err = pgExpr(s.WhereClause, false); err != nil {
			return nil, err
		}
	}
	for _, n := range s.SortClause {
		sb := n.GetSortBy()
		if sb == nil {
			return nil, notAgg("this ORDER BY item is not supported")
		}
		var o ir.OrderItem
		switch sb.SortbyDir {
		case pg.SortByDir_SORTBY_DEFAULT, pg.SortByDir_SORTBY_ASC:
		case pg.SortByDir_SORTBY_DESC:
			o.Desc = true
		default:
			return nil, notAgg("ORDER BY ... USING is not supported; use ASC or DESC")
		}
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			o.Nulls = ir.NullsFirst
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			o.Nulls = ir.NullsLast
		}
		if c := sb.Node.GetAConst(); c != nil {
			i, ok := c.Val.(*pg.A_Const_Ival)
			if !ok {
				return nil, notAgg("ORDER BY a constant other than a select-list position is not supported")
			}
			if o.Expr, err = position(int64(i.Ival.Ival), q.Items); err != nil {
				return nil, err
			}
		} else {
			e, err := pgExpr(sb.Node, false)
			if err != nil {
				return nil, err
			}
			o.Expr = resolveOrderName(e, q.Items, false)
		}
		q.OrderBy = append(q.OrderBy, o)
	}
	if q.Limit, err = pgLimit(s.LimitCount); err != nil {
		return nil, err
	}
	if q.Offset, err = pgLimit(s.LimitOffset); err != nil {
		return nil, err
	}
	return q, nil
}

// rows converts a MySQL SELECT into a RowQuery; nil, nil for an aggregate
// SELECT (not a row-level read).
func (m *myQueryBuilder) rows(s *ast.SelectStmt) (*ir.RowQuery, error) {
	if myIsAggregateSelect(s) {
		return nil, nil
	}
	if err := myRowSelectFields(s); err != nil {
		return nil, err
	}
	switch {
	case s.Kind != ast.SelectStmtKindSelect:
		return nil, notAgg("TABLE and VALUES are not supported in a row-level read")
	case s.AfterSetOperator != nil:
		return nil, notAgg(msgSetOp)
	case s.With != nil:
		return nil, notAgg(msgRowsWith)
	case s.Distinct:
		return nil, notAgg("SELECT DISTINCT is not supported in a row-level read")
	case len(s.WindowSpecs) > 0:
		return nil, notAgg(msgNamedWindow)
	case s.From == nil || s.From.TableRefs == nil:
		return nil, notAgg(msgNoFrom)
	case s.Fields == nil:
		return nil, notAgg("this select list is not supported")
	}
	from, err := m.from(s.From.TableRefs, nil)
	if err != nil {
		return nil, err
	}
	if from.derived != nil {
		return nil, notAgg(msgFromSubq)
	}
	q := &ir.RowQuery{From: from.table, Joins: from.joins}
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			if f.WildCard.Schema.O != "" {
				return nil, notAgg("only * and table.* are supported in a row-level read")
			}
			q.Items = append(q.Items, ir.RowItem{Star: true, Qualifier: f.WildCard.Table.O})
			continue
		}
		e, err := m.expr(f.Expr, false)
		if err != nil {
			return nil, err
		}
		name := f.AsName.O
		if name == "" {
			if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok {
				name = c.Name.Name.O
			} else {
				name = strings.TrimSpace(f.Text())
			}
		}
		q.Items = append(q.Items, ir.RowItem{Expr: e, Name: name})
	}
	if s.Where != nil {
		if q.Where, err = m.expr(s.Where, false); err != nil {
			return nil, err
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			o := ir.OrderItem{Desc: it.Desc}
			if p, ok := unparen(it.Expr).(*ast.PositionExpr); ok {
				if p.P != nil {
					return nil, notAgg("ORDER BY positions must be constants")
				}
				if o.Expr, err = position(int64(p.N), q.Items); err != nil {
					return nil, err
				}
			} else {
				e, err := m.expr(it.Expr, false)
				if err != nil {
					return nil, err
				}
				o.Expr = resolveOrderName(e, q.Items, true)
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
