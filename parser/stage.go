package parser

import (
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// This file turns a SELECT over an aggregate query that cannot be merged
// into it (flattener.overAggregate) into a post-processing stage of that
// query (ir.Stage): Looker's pivot wrapper computes, level by level,
// windows over the previous level's windows and filters on the last.
// Merging would nest those windows or move the filter before them; a
// stage keeps SQL's order of evaluation and still reads only the one
// release of the aggregate query.

// needsStage reports whether the SELECT r over the aggregate query inner
// must be a stage: when merging would evaluate something in the wrong
// order. Its WHERE must filter after the windows and the LIMIT of the
// level below (a HAVING runs before both), its windows must run over the
// rows that level returns (after its windows and LIMIT), its ORDER BY and
// LIMIT after that LIMIT, and a level over a stage is a stage too.
func (f flattener) needsStage(r *rowSelect, inner *ir.Query) bool {
	if len(inner.Stages) > 0 {
		return true
	}
	limited := inner.Limit != nil || inner.Offset != nil
	filters := r.where != nil
	windows := false
	for _, it := range r.items {
		windows = windows || hasWindow(it.expr)
	}
	for _, o := range r.orderBy {
		windows = windows || hasWindow(o.Expr)
	}
	innerWindows := false
	for _, it := range inner.Select {
		innerWindows = innerWindows || hasWindow(it.Expr)
	}
	for _, o := range inner.OrderBy {
		innerWindows = innerWindows || hasWindow(o.Expr)
	}
	reorders := len(r.orderBy) > 0 || r.limit != nil || r.offset != nil
	return (limited && (filters || windows || reorders)) || (innerWindows && (filters || windows))
}

func hasWindow(e ir.Expr) bool { return contains[ir.Window](e) }

// levelNames lists the output names of a query with its stages, as the
// planner names them ("" for a column a query cannot name).
func levelNames(q *ir.Query) []string {
	var names []string
	if n := len(q.Stages); n > 0 {
		for _, it := range q.Stages[n-1].Select {
			names = append(names, it.Name)
		}
		return names
	}
	for _, it := range q.Select {
		name, _ := aggOutputOf(it)
		names = append(names, name)
	}
	return names
}

// stage adds r to inner as a post-processing stage over inner's result
// (alias and columns name that result as r's FROM does).
func (f flattener) stage(r *rowSelect, inner *ir.Query, alias string, columns []string) (*ir.Query, error) {
	if len(inner.Stages) == 0 {
		if _, err := aggOutputs(inner); err != nil {
			return nil, err
		}
	}
	in := levelNames(inner)
	if len(columns) > len(in) {
		return nil, notAgg("subquery %s has %d columns available but %d column names were given", alias, len(in), len(columns))
	}
	copy(in, columns)
	// subst reads a column of the level below as its position there.
	subst := func(e ir.Expr) (ir.Expr, error) {
		return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
			switch n := n.(type) {
			case ir.ColumnRef:
				i, err := f.levelColumn(n, in, alias)
				if err != nil {
					return nil, err
				}
				return ir.OutputRef{Index: i}, nil
			case ir.OutputRef:
				return nil, notAgg("a position is not supported here; name the column")
			case ir.Aggregate:
				return nil, notAgg(msgNestedAggr, "aggregates or GROUP BY")
			}
			return n, nil
		})
	}
	var st ir.Stage
	for _, it := range r.items {
		if it.star {
			if it.schema != "" || (it.qual != "" && (alias == "" || !f.same(it.qual, alias))) {
				return nil, notAgg("missing FROM-clause entry for table %s in %s.*", it.qual, it.qual)
			}
			for i, name := range in {
				st.Select = append(st.Select, ir.StageItem{Name: name, Expr: ir.OutputRef{Index: i}})
			}
			continue
		}
		e, err := subst(it.expr)
		if err != nil {
			return nil, err
		}
		name := it.name
		if name == "" {
			name = stageItemName(e, in)
		}
		st.Select = append(st.Select, ir.StageItem{Name: name, Expr: e})
	}
	if r.where != nil {
		if hasWindow(r.where) {
			return nil, notAgg(msgWindowWhere)
		}
		w, err := subst(r.where)
		if err != nil {
			return nil, err
		}
		st.Where = w
	}
	for _, o := range r.orderBy {
		e, err := f.stageOrderKey(o.Expr, st.Select, subst)
		if err != nil {
			return nil, err
		}
		o.Expr = e
		st.OrderBy = append(st.OrderBy, o)
	}
	st.Limit, st.Offset = r.limit, r.offset
	out := *inner
	out.Stages = append(append([]ir.Stage(nil), inner.Stages...), st)
	return &out, nil
}

// stageOrderKey converts an ORDER BY key of a stage: a position or a bare
// output name is that item's expression (SQL reads a bare name as an
// output first), anything else an expression over the level below.
func (f flattener) stageOrderKey(e ir.Expr, items []ir.StageItem, subst func(ir.Expr) (ir.Expr, error)) (ir.Expr, error) {
	switch n := e.(type) {
	case ir.OutputRef:
		if n.Index < 0 || n.Index >= len(items) {
			return nil, notAgg("ORDER BY position %d is not in the select list", n.Index+1)
		}
		return items[n.Index].Expr, nil
	case ir.ColumnRef:
		if n.Qualifier != "" {
			break
		}
		var found ir.Expr
		count := 0
		for _, it := range items {
			if it.Name != "" && f.same(it.Name, n.Name) {
				found, count = it.Expr, count+1
			}
		}
		switch {
		case count == 1:
			return found, nil
		case count > 1:
			return nil, notAgg("ORDER BY %s is ambiguous: the select list has %d columns of that name", n.Name, count)
		}
	}
	return subst(e)
}

// levelColumn finds a column of the level below by name.
func (f flattener) levelColumn(c ir.ColumnRef, names []string, alias string) (int, error) {
	if c.Schema != "" || (c.Qualifier != "" && (alias == "" || !f.same(c.Qualifier, alias))) {
		return 0, notAgg("missing FROM-clause entry for table %s: the tables inside subquery %s are not visible outside it; qualify the column with %s",
			colText(ir.ColumnRef{Schema: c.Schema, Name: c.Qualifier}), alias, alias)
	}
	found, n := -1, 0
	for i, name := range names {
		if name != "" && f.same(name, c.Name) {
			found, n = i, n+1
		}
	}
	switch n {
	case 0:
		return 0, notAgg("column %s does not exist in subquery %s", c.Name, alias)
	case 1:
		return found, nil
	}
	return 0, notAgg("column reference %s is ambiguous: subquery %s has %d columns of that name", c.Name, alias, n)
}

// stageItemName names an unnamed stage item as PostgreSQL does: a column
// keeps its name, a function or window its function's name.
func stageItemName(e ir.Expr, in []string) string {
	switch n := e.(type) {
	case ir.OutputRef:
		return in[n.Index]
	case ir.Func:
		return n.Name
	case ir.Window:
		return n.Func.String()
	}
	return "?column?"
}
