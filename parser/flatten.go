package parser

import (
	"slices"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// This file is the one flattening pass for subqueries and CTEs in FROM,
// shared by both dialects. A dialect walker converts its tree into the
// small nested form below (fromTree, derivedTable, rowSelect) and refuses,
// with the messages of classify.go, every clause that makes an inner
// SELECT more than a projection, filter or join (aggregates, GROUP BY,
// HAVING, DISTINCT, LIMIT/OFFSET, windows, set operations, LATERAL,
// recursive or data-modifying WITH). The pass then merges each derived
// table into the query that reads it: the outer references to its columns
// become the inner select expressions, the inner WHERE is ANDed before
// the outer one and the inner joins come before the outer ones. The
// planner only ever sees a flat ir.Query, so a wrapped query and the
// equivalent flat one plan to the same backend SQL and share one release.

// fromTree is a FROM clause before flattening: its first item (a table,
// or a derived table when derived is set) and the joins after it. Only
// the first item may be a derived table.
type fromTree struct {
	table   ir.TableRef
	derived *derivedTable
	joins   []ir.Join
}

// derivedTable is a subquery in FROM or a reference to a CTE.
type derivedTable struct {
	alias string // the name the reading query qualifies with ("" when none)
	// columns renames the first len(columns) output columns (AS s(a, b),
	// WITH t(a, b) AS ...).
	columns []string
	body    *rowSelect // a subquery that projects; nil otherwise
	agg     *ir.Query  // an aggregate subquery, already flat; nil otherwise
	cte     *cteDef    // a CTE reference; nil for a subquery
}

// source returns what a derived table reads (a CTE's body for a
// reference), its name and column alias list, counting a CTE's use.
func (d *derivedTable) source() (body *rowSelect, agg *ir.Query, alias string, columns []string, err error) {
	body, agg, alias, columns = d.body, d.agg, d.alias, d.columns
	if d.cte != nil {
		d.cte.uses++
		if d.cte.uses > 1 {
			return nil, nil, "", nil, notAgg(msgCTETwice, d.cte.name)
		}
		body, agg = d.cte.body, d.cte.agg
		if alias == "" {
			alias = d.cte.name
		}
		if columns == nil {
			columns = d.cte.columns
		}
	}
	return body, agg, alias, columns, nil
}

// aggValued reports whether a FROM item's rows are the output of an
// aggregate query: an aggregate subquery, or a projection of one.
func (d *derivedTable) aggValued() bool {
	if d == nil {
		return false
	}
	body, agg := d.body, d.agg
	if d.cte != nil {
		body, agg = d.cte.body, d.cte.agg
	}
	return agg != nil || (body != nil && body.from.derived.aggValued())
}

// cteDef is one non-recursive CTE of a WITH clause, converted once.
// uses counts its expansions during flattening: a second one would join
// the (private) relation with itself and is refused.
type cteDef struct {
	name    string
	columns []string
	body    *rowSelect // as derivedTable: one of body and agg is set
	agg     *ir.Query
	uses    int
}

// cteEnv is the WITH scope a walker converts a SELECT in: the CTEs of the
// enclosing WITH clauses, innermost last. A CTE sees only those before it.
type cteEnv struct {
	parent *cteEnv
	defs   []*cteDef
	fold   bool
}

// lookup finds the CTE an unqualified table name refers to, or nil.
func (e *cteEnv) lookup(name string) *cteDef {
	for s := e; s != nil; s = s.parent {
		for i := len(s.defs) - 1; i >= 0; i-- {
			if sameIdent(s.fold, s.defs[i].name, name) {
				return s.defs[i]
			}
		}
	}
	return nil
}

// rowSelect is an inner SELECT that only projects, filters and joins, or
// a SELECT over an aggregate subquery (its FROM is aggValued): that one
// post-processes the aggregate's rows and may order and limit them, its
// expressions converted as post-processing (the select list's rules).
type rowSelect struct {
	items   []rowItem
	from    fromTree
	where   ir.Expr // nil when absent
	orderBy []ir.OrderItem
	limit   *int64
	offset  *int64
}

// rowItem is one item of an inner select list: an expression with its
// output name ("" when the dialect gives it none a query could name), or
// a star (* when qual is "", else schema.qual.*).
type rowItem struct {
	star         bool
	schema, qual string
	name         string
	expr         ir.Expr
}

func sameIdent(fold bool, x, y string) bool { return queryBuilder{fold: fold}.sameName(x, y) }

// flatRows is a rowSelect after flattening: its FROM is a table and the
// joins after it, its outputs expressions over them.
type flatRows struct {
	items []flatItem
	from  ir.TableRef
	joins []ir.Join
	where ir.Expr
}

// flatItem is one output: a named expression, or a star whose columns
// are not known here (they pass through by name to the planner).
type flatItem struct {
	name string
	expr ir.Expr
	star *starRef
}

// starRef is a star's table: a name not among the explicit outputs is
// the column schema.qual.name, or an unqualified name when qual is ""
// (* over several tables: the planner resolves it, refusing ambiguity).
type starRef struct{ schema, qual string }

// flattener runs the pass with one dialect's identifier rule.
type flattener struct{ fold bool }

func (f flattener) same(x, y string) bool { return sameIdent(f.fold, x, y) }

// flattenQuery merges the derived table of an aggregate query's FROM (if
// any) into it. q was converted and checked on the names as written (the
// outer names: GROUP BY resolution, grouping of the select list).
func flattenQuery(q *ir.Query, from fromTree, fold bool) (*ir.Query, error) {
	if from.derived == nil {
		q.From, q.Joins = from.table, from.joins
		return q, nil
	}
	if len(q.Stages) > 0 {
		// Stages wrap an aggregate query, which is never itself over a
		// stage: aggregating a stage's rows is refused before this.
		return nil, notAgg(msgNestedAggr, "window functions or a LIMIT")
	}
	f := flattener{fold: fold}
	sc, err := f.scope(from)
	if err != nil {
		return nil, err
	}
	// HAVING and ORDER BY read a bare name as an output column first (the
	// planner's rule): those stay as written.
	var outNames []string
	for _, it := range q.Select {
		switch {
		case it.Alias != "":
			outNames = append(outNames, it.Alias)
		case it.IsColumn():
			outNames = append(outNames, it.Arg.Name)
		}
	}
	out := *q
	out.From, out.Joins = sc.from, sc.joins
	out.Select = make([]ir.SelectItem, len(q.Select))
	for i, it := range q.Select {
		if out.Select[i], err = sc.selectItem(it); err != nil {
			return nil, err
		}
	}
	where, err := sc.subst(q.Where, nil)
	if err != nil {
		return nil, err
	}
	out.Where = andExpr(sc.where, where)
	// One key out per key in: GroupingSets (indexes into GroupBy, copied
	// with out) and Grouping nodes stay valid.
	out.GroupBy = nil
	for _, g := range q.GroupBy {
		key, err := sc.groupKey(g, outNames)
		if err != nil {
			return nil, err
		}
		out.GroupBy = append(out.GroupBy, key)
	}
	if out.Having, err = sc.subst(q.Having, outNames); err != nil {
		return nil, err
	}
	out.OrderBy = nil
	for _, o := range q.OrderBy {
		if o.Expr, err = sc.subst(o.Expr, outNames); err != nil {
			return nil, err
		}
		out.OrderBy = append(out.OrderBy, o)
	}
	return &out, nil
}

// groupKey substitutes an outer grouping key: a derived column becomes
// the inner expression it names (a computed column groups by that
// expression, GROUP BY s.d over SELECT age / 10 AS d), an expression is
// substituted throughout. A bare name that is no derived column but names
// an output of the outer select list stays as written: SQL reads a GROUP
// BY name as an input column first, then as an output alias, and the
// planner resolves the alias.
func (s *scope) groupKey(g ir.Expr, outNames []string) (ir.Expr, error) {
	c, bare := g.(ir.ColumnRef)
	if !bare {
		return s.subst(g, nil)
	}
	e, err := s.column(c)
	if err != nil && c.Qualifier == "" && slices.ContainsFunc(outNames, func(n string) bool { return s.f.same(n, c.Name) }) {
		return c, nil
	}
	return e, err
}

func andExpr(a, b ir.Expr) ir.Expr {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return ir.And{L: a, R: b}
}

// rows flattens an inner SELECT.
func (f flattener) rows(r *rowSelect) (*flatRows, error) {
	sc, err := f.scope(r.from)
	if err != nil {
		return nil, err
	}
	out := &flatRows{from: sc.from, joins: sc.joins}
	for _, it := range r.items {
		if it.star {
			items, err := sc.star(it.schema, it.qual)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, items...)
			continue
		}
		e, err := sc.subst(it.expr, nil)
		if err != nil {
			return nil, err
		}
		out.items = append(out.items, flatItem{name: it.name, expr: e})
	}
	where, err := sc.subst(r.where, nil)
	if err != nil {
		return nil, err
	}
	out.where = andExpr(sc.where, where)
	return out, nil
}

// scope is what one SELECT's FROM makes visible: a derived table d
// (already flat) under alias, or a table, plus the joins written after it.
type scope struct {
	f     flattener
	d     *flatRows // nil when FROM's first item is a table
	alias string
	table ir.TableRef // when d is nil
	own   []ir.Join   // the joins written at this level, as written
	// The merged FROM: d's table and joins, then own (substituted).
	from  ir.TableRef
	joins []ir.Join
	where ir.Expr // d's WHERE
}

func (f flattener) scope(from fromTree) (*scope, error) {
	sc := &scope{f: f, table: from.table, own: from.joins}
	if from.derived == nil {
		for _, j := range from.joins {
			for _, c := range []ir.ColumnRef{j.Left, j.Right} {
				if _, err := sc.column(c); err != nil {
					return nil, err
				}
			}
		}
		sc.from, sc.joins = from.table, from.joins
		return sc, nil
	}
	if from.derived.aggValued() {
		return nil, notAgg(msgNestedAggr, "aggregates or GROUP BY")
	}
	body, _, alias, columns, err := from.derived.source()
	if err != nil {
		return nil, err
	}
	d, err := f.rows(body)
	if err != nil {
		return nil, err
	}
	if err := renameOutputs(d, columns, alias); err != nil {
		return nil, err
	}
	sc.d, sc.alias = d, alias
	sc.from, sc.where = d.from, d.where
	sc.joins = append([]ir.Join(nil), d.joins...)
	inner := []ir.TableRef{d.from}
	for _, j := range d.joins {
		inner = append(inner, j.Table)
	}
	for _, j := range from.joins {
		if alias != "" && sameIdent(f.fold, alias, j.Table.RefName()) {
			return nil, notAgg("table name %s is specified more than once (a subquery and a joined table); give one of them another alias", alias)
		}
		for _, t := range inner {
			if f.same(t.RefName(), j.Table.RefName()) {
				return nil, notAgg("table name %s is used both inside subquery %s and outside it; give one of them another alias", j.Table.RefName(), alias)
			}
		}
		for _, side := range []*ir.ColumnRef{&j.Left, &j.Right} {
			e, err := sc.column(*side)
			if err != nil {
				return nil, err
			}
			c, ok := e.(ir.ColumnRef)
			if !ok {
				return nil, notAgg("joining on a computed column of a subquery is not supported (%s); join on a column", colText(*side))
			}
			*side = c
		}
		sc.joins = append(sc.joins, j)
	}
	return sc, nil
}

// renameOutputs applies a column alias list. A star before a renamed
// position hides how many columns precede it, so it is refused.
func renameOutputs(d *flatRows, columns []string, alias string) error {
	if len(columns) > len(d.items) {
		return notAgg("subquery %s has %d columns available but %d column names were given", alias, len(d.items), len(columns))
	}
	for i, c := range columns {
		if d.items[i].star != nil {
			return notAgg("a column alias list over SELECT * is not supported (subquery %s); name the columns in the subquery", alias)
		}
		d.items[i].name = c
	}
	return nil
}

// ownJoin reports whether qualifier names a table joined at this level.
func (s *scope) ownJoin(schema, qual string) bool {
	for _, j := range s.own {
		if schema != "" {
			if j.Table.Alias == "" && s.f.same(j.Table.Name, qual) && (j.Table.Schema == "" || s.f.same(j.Table.Schema, schema)) {
				return true
			}
			continue
		}
		if s.f.same(j.Table.RefName(), qual) {
			return true
		}
	}
	return false
}

// isTable reports whether schema.qual names this level's first table.
func (s *scope) isTable(schema, qual string) bool {
	t := s.table
	if schema != "" {
		return t.Alias == "" && s.f.same(t.Name, qual) && (t.Schema == "" || s.f.same(t.Schema, schema))
	}
	return s.f.same(t.RefName(), qual)
}

// column resolves a column reference of this level to what it reads.
func (s *scope) column(c ir.ColumnRef) (ir.Expr, error) {
	if s.d == nil {
		// A table: qualify a bare name when it is the only table, so that
		// tables joined at an outer level cannot make it ambiguous. A
		// qualifier must name a table of this level: once merged, an
		// outer table of that name would otherwise answer for it.
		switch {
		case c.Qualifier == "" && len(s.own) == 0:
			c.Qualifier = s.table.RefName()
		case c.Qualifier != "" && !s.ownJoin(c.Schema, c.Qualifier) && !s.isTable(c.Schema, c.Qualifier):
			return nil, notAgg("missing FROM-clause entry for table %s inside a subquery", colText(ir.ColumnRef{Schema: c.Schema, Name: c.Qualifier}))
		}
		return c, nil
	}
	switch {
	case c.Qualifier != "" && s.ownJoin(c.Schema, c.Qualifier):
		return c, nil
	case c.Qualifier != "" && c.Schema == "" && s.alias != "" && s.f.same(c.Qualifier, s.alias):
		return s.lookup(c.Name)
	case c.Qualifier != "":
		return nil, notAgg("missing FROM-clause entry for table %s: the tables inside subquery %s are not visible outside it; qualify the column with %s", colText(ir.ColumnRef{Schema: c.Schema, Name: c.Qualifier}), s.alias, s.alias)
	}
	if e, ok, err := s.explicit(c.Name); ok || err != nil {
		return e, err
	}
	if s.hasStar() {
		if len(s.own) == 0 {
			return s.lookup(c.Name)
		}
		return c, nil // the planner resolves it among every table, refusing ambiguity
	}
	switch len(s.own) {
	case 0:
		return nil, notAgg("column %s does not exist in subquery %s", c.Name, s.alias)
	case 1:
		c.Qualifier = s.own[0].Table.RefName()
		return c, nil
	}
	return nil, notAgg("column %s is not a column of subquery %s; qualify it with its table", c.Name, s.alias)
}

func (s *scope) hasStar() bool {
	for _, it := range s.d.items {
		if it.star != nil {
			return true
		}
	}
	return false
}

// explicit finds a named output of the derived table.
func (s *scope) explicit(name string) (ir.Expr, bool, error) {
	var found ir.Expr
	n := 0
	for _, it := range s.d.items {
		if it.star == nil && it.name != "" && s.f.same(it.name, name) {
			found = it.expr
			n++
		}
	}
	if n > 1 {
		return nil, true, notAgg("column reference %s is ambiguous: subquery %s has %d columns of that name", name, s.alias, n)
	}
	return found, n == 1, nil
}

// lookup resolves a column of the derived table by name.
func (s *scope) lookup(name string) (ir.Expr, error) {
	if e, ok, err := s.explicit(name); ok || err != nil {
		return e, err
	}
	var stars []*starRef
	for _, it := range s.d.items {
		if it.star != nil {
			stars = append(stars, it.star)
		}
	}
	switch len(stars) {
	case 0:
		return nil, notAgg("column %s does not exist in subquery %s", name, s.alias)
	case 1:
		return ir.ColumnRef{Schema: stars[0].schema, Qualifier: stars[0].qual, Name: name}, nil
	}
	return nil, notAgg("column reference %s is ambiguous: subquery %s selects several *; name its columns", name, s.alias)
}

// star expands * (qual "") or schema.qual.* of an inner select list.
func (s *scope) star(schema, qual string) ([]flatItem, error) {
	if s.d == nil {
		switch {
		case qual == "" && len(s.own) == 0:
			return []flatItem{{star: &starRef{qual: s.table.RefName()}}}, nil
		case qual == "":
			return []flatItem{{star: &starRef{}}}, nil
		}
		return []flatItem{{star: &starRef{schema: schema, qual: qual}}}, nil
	}
	switch {
	case qual == "" && len(s.own) == 0, qual != "" && schema == "" && s.alias != "" && s.f.same(qual, s.alias):
		return append([]flatItem(nil), s.d.items...), nil
	case qual != "" && s.ownJoin(schema, qual):
		return []flatItem{{star: &starRef{schema: schema, qual: qual}}}, nil
	case qual == "":
		return nil, notAgg("SELECT * over subquery %s joined with other tables is not supported; name the columns", s.alias)
	}
	return nil, notAgg("missing FROM-clause entry for table %s in %s.*", qual, qual)
}

// subst rewrites an expression of this level: column references become
// what they read, aggregate arguments included. A bare name in keep (the
// output names, for HAVING and ORDER BY) stays as written.
func (s *scope) subst(e ir.Expr, keep []string) (ir.Expr, error) {
	return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		switch n := n.(type) {
		case ir.ColumnRef:
			if n.Qualifier == "" {
				for _, k := range keep {
					if s.f.same(k, n.Name) {
						return n, nil
					}
				}
			}
			v, err := s.column(n)
			if err != nil || keep == nil {
				return v, err
			}
			return qualifyBare(s.f, v, keep, s.from, s.joins)
		case ir.Aggregate:
			fn, arg, argExpr, err := s.aggArg(n.Func, n.Arg, n.ArgExpr)
			if err != nil {
				return nil, err
			}
			return ir.Aggregate{Func: fn, Arg: arg, ArgExpr: argExpr, Distinct: n.Distinct, Fraction: n.Fraction}, nil
		}
		return n, nil
	})
}

// aggArg substitutes an aggregate's argument, keeping the IR's one
// representation per argument (a bare column is Arg). COUNT of a constant
// output counts rows, as COUNT(1) does.
func (s *scope) aggArg(fn ir.AggFunc, arg *ir.ColumnRef, argExpr ir.Expr) (ir.AggFunc, *ir.ColumnRef, ir.Expr, error) {
	var e ir.Expr
	var err error
	switch {
	case arg != nil:
		e, err = s.column(*arg)
	case argExpr != nil:
		e, err = s.subst(argExpr, nil)
	default:
		return fn, nil, nil, nil
	}
	if err != nil {
		return ir.AggNone, nil, nil, err
	}
	switch x := e.(type) {
	case ir.ColumnRef:
		return fn, &x, nil, nil
	case ir.Literal:
		if fn == ir.AggCount {
			a, err := countConst(x.Value.IsNull())
			return a.Func, nil, nil, err
		}
	}
	return fn, nil, e, nil
}

// selectItem substitutes one item of the aggregate query's select list.
// An item keeps the output name it had as written.
func (s *scope) selectItem(it ir.SelectItem) (ir.SelectItem, error) {
	switch {
	case it.Expr != nil:
		e, err := s.subst(it.Expr, nil)
		if err != nil {
			return ir.SelectItem{}, err
		}
		if it.Alias == "" {
			if c, ok := it.Expr.(ir.ColumnRef); ok {
				it.Alias = c.Name
			}
		}
		it.Expr = e
		return it, nil
	case it.Agg == ir.AggNone:
		e, err := s.column(*it.Arg)
		if err != nil {
			return ir.SelectItem{}, err
		}
		if it.Alias == "" {
			it.Alias = it.Arg.Name
		}
		if c, ok := e.(ir.ColumnRef); ok {
			it.Arg = &c
			return it, nil
		}
		// A computed column of the subquery: post-processing over the
		// grouping keys (the planner checks they are grouped).
		return ir.SelectItem{Expr: e, Alias: it.Alias}, nil
	}
	fn, arg, argExpr, err := s.aggArg(it.Agg, it.Arg, it.ArgExpr)
	if err != nil {
		return ir.SelectItem{}, err
	}
	it.Agg, it.Arg, it.ArgExpr = fn, arg, argExpr
	return it, nil
}

// refName is the name a USING join qualifies the derived table with.
func (d *derivedTable) refName() string {
	if d.alias == "" && d.cte != nil {
		return d.cte.name
	}
	return d.alias
}

// flattenOverAggregate merges a SELECT over an aggregate subquery into that
// aggregate query: its select list becomes post-processing over the
// subquery's outputs (grouping columns, aggregates, expressions), its
// WHERE a HAVING ANDed after the inner one, its ORDER BY, LIMIT and
// OFFSET those of the query. The planner then checks the result as any
// query: everything outside the aggregates reads only noisy outputs. A
// SELECT that merging would evaluate out of SQL's order (windows over
// windows, a filter after windows or a LIMIT) becomes a stage of that
// query instead (stage.go).
func flattenOverAggregate(r *rowSelect, fold bool) (*ir.Query, error) {
	return flattener{fold: fold}.overAggregate(r)
}

// aggOutput is one output column of an aggregate subquery: its name and
// what it is as an expression of the merged query.
type aggOutput struct {
	name  string
	item  ir.SelectItem
	value ir.Expr
}

func (f flattener) overAggregate(r *rowSelect) (*ir.Query, error) {
	if len(r.from.joins) > 0 {
		return nil, notAgg("joining the result of an aggregate query is not supported; join the tables inside it")
	}
	body, agg, alias, columns, err := r.from.derived.source()
	if err != nil {
		return nil, err
	}
	inner := agg
	if inner == nil {
		if inner, err = f.overAggregate(body); err != nil {
			return nil, err
		}
	}
	if f.needsStage(r, inner) {
		return f.stage(r, inner, alias, columns)
	}
	outs, err := aggOutputs(inner)
	if err != nil {
		return nil, err
	}
	if len(columns) > len(outs) {
		return nil, notAgg("subquery %s has %d columns available but %d column names were given", alias, len(outs), len(columns))
	}
	for i, c := range columns {
		outs[i].name = c
		outs[i].item.Alias = c
	}
	lookup := func(c ir.ColumnRef) (ir.Expr, error) {
		if c.Schema != "" || (c.Qualifier != "" && (alias == "" || !f.same(c.Qualifier, alias))) {
			return nil, notAgg("missing FROM-clause entry for table %s: the tables inside subquery %s are not visible outside it; qualify the column with %s",
				colText(ir.ColumnRef{Schema: c.Schema, Name: c.Qualifier}), alias, alias)
		}
		var found ir.Expr
		n := 0
		for _, o := range outs {
			if o.name != "" && f.same(o.name, c.Name) {
				found, n = o.value, n+1
			}
		}
		switch n {
		case 0:
			return nil, notAgg("column %s does not exist in subquery %s", c.Name, alias)
		case 1:
			return found, nil
		}
		return nil, notAgg("column reference %s is ambiguous: subquery %s has %d columns of that name", c.Name, alias, n)
	}
	// subst rewrites an outer expression; a bare name in keep stays as
	// written (an output name in ORDER BY), a bare column the substitution
	// brings in under a name of guard is qualified (see qualifyBare).
	subst := func(e ir.Expr, keep, guard []string) (ir.Expr, error) {
		return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
			switch n := n.(type) {
			case ir.ColumnRef:
				if n.Qualifier == "" && slicesContainsFold(f, keep, n.Name) {
					return n, nil
				}
				v, err := lookup(n)
				if err != nil || guard == nil {
					return v, err
				}
				return qualifyBare(f, v, guard, inner.From, inner.Joins)
			case ir.Aggregate:
				return nil, notAgg(msgNestedAggr, "aggregates or GROUP BY")
			}
			return n, nil
		})
	}
	out := *inner
	out.Select = nil
	for _, it := range r.items {
		if it.star {
			if it.schema != "" || (it.qual != "" && (alias == "" || !f.same(it.qual, alias))) {
				return nil, notAgg("missing FROM-clause entry for table %s in %s.*", it.qual, it.qual)
			}
			for _, o := range outs {
				out.Select = append(out.Select, o.item)
			}
			continue
		}
		e, err := subst(it.expr, nil, nil)
		if err != nil {
			return nil, err
		}
		out.Select = append(out.Select, outputItem(e, it.name))
	}
	// A LIMIT or OFFSET inside made r a stage (needsStage) if it filters,
	// orders or limits.
	if r.where != nil {
		w, err := subst(r.where, nil, outputNames(out.Select))
		if err != nil {
			return nil, err
		}
		out.Having = andExpr(inner.Having, w)
	}
	if len(r.orderBy) > 0 {
		names := outputNames(out.Select)
		out.OrderBy = nil
		for _, o := range r.orderBy {
			if c, bare := o.Expr.(ir.ColumnRef); bare && c.Qualifier == "" && slicesContainsFold(f, names, c.Name) {
				// An output name alone: the merged query's output.
				out.OrderBy = append(out.OrderBy, o)
				continue
			}
			// Inside an expression a name is the subquery's column
			// (PostgreSQL), never the merged query's output name, which
			// the aggregate query would read as a column of its table.
			// MySQL reads a select-list alias first: refused where the
			// two readings differ.
			if err := sameOutputReading(f, o.Expr, out.Select, lookup); err != nil {
				return nil, err
			}
			if o.Expr, err = subst(o.Expr, nil, names); err != nil {
				return nil, err
			}
			out.OrderBy = append(out.OrderBy, o)
		}
	} else {
		if out.OrderBy, err = innerOrder(f, inner, outs); err != nil {
			return nil, err
		}
		for i, o := range out.OrderBy {
			if out.OrderBy[i].Expr, err = qualifyBare(f, o.Expr, outputNames(out.Select), inner.From, inner.Joins); err != nil {
				return nil, err
			}
		}
	}
	if r.limit != nil || r.offset != nil {
		out.Limit, out.Offset = r.limit, r.offset
	}
	return &out, nil
}

func slicesContainsFold(f flattener, names []string, name string) bool {
	for _, n := range names {
		if f.same(n, name) {
			return true
		}
	}
	return false
}

// aggOutputs lists an aggregate query's outputs as the planner names them:
// the alias, else a column's name, an aggregate's function name or a
// function's name.
func aggOutputs(q *ir.Query) ([]aggOutput, error) {
	outs := make([]aggOutput, 0, len(q.Select))
	for _, it := range q.Select {
		if u := aggregate.ByName(string(it.Agg)); it.Distinct && (u == nil || !u.Distinct) {
			return nil, notAgg("DISTINCT aggregates are not supported")
		}
		name, value := aggOutputOf(it)
		outs = append(outs, aggOutput{name: name, item: it, value: value})
	}
	return outs, nil
}

// aggOutputOf is one select item's output name and its value as an
// expression of the query (a column, an Aggregate node or the expression).
func aggOutputOf(it ir.SelectItem) (string, ir.Expr) {
	name := it.Alias
	if name == "" {
		name = it.Label // MySQL's name for the item: the text as written
	}
	var value ir.Expr
	switch {
	case it.Expr != nil:
		value = it.Expr
		if f, ok := it.Expr.(ir.Func); ok && name == "" {
			name = f.Name
		}
	case it.Agg == ir.AggNone:
		value = *it.Arg
		if name == "" {
			name = it.Arg.Name
		}
	default:
		value = ir.Aggregate{Func: it.Agg, Arg: it.Arg, ArgExpr: it.ArgExpr, Distinct: it.Distinct, Fraction: it.Fraction}
		if name == "" {
			name = it.Agg.String()
		}
	}
	return name, value
}

// outputItem is the select item computing e under name.
func outputItem(e ir.Expr, name string) ir.SelectItem {
	switch x := e.(type) {
	case ir.ColumnRef:
		return ir.SelectItem{Arg: &x, Alias: name}
	case ir.Aggregate:
		return ir.SelectItem{Agg: x.Func, Arg: x.Arg, ArgExpr: x.ArgExpr, Distinct: x.Distinct, Fraction: x.Fraction, Name: x.Name, Alias: name}
	}
	return ir.SelectItem{Expr: e, Alias: name}
}

// innerOrder rewrites an aggregate subquery's ORDER BY for the merged
// query, whose select list differs: positions and output names become
// what they named.
func innerOrder(f flattener, inner *ir.Query, outs []aggOutput) ([]ir.OrderItem, error) {
	var order []ir.OrderItem
	for _, o := range inner.OrderBy {
		e, err := ir.Rewrite(o.Expr, func(n ir.Expr) (ir.Expr, error) {
			switch n := n.(type) {
			case ir.OutputRef:
				if n.Index < 0 || n.Index >= len(outs) {
					return nil, notAgg("ORDER BY position %d is not in the select list", n.Index+1)
				}
				return outs[n.Index].value, nil
			case ir.ColumnRef:
				if n.Qualifier != "" {
					return n, nil
				}
				for _, it := range inner.Select {
					if name, value := aggOutputOf(it); name != "" && f.same(name, n.Name) {
						return value, nil
					}
				}
			}
			return n, nil
		})
		if err != nil {
			return nil, err
		}
		o.Expr = e
		order = append(order, o)
	}
	return order, nil
}

// outputNames lists the names the planner gives a select list's outputs
// (an alias, else a column's name), which a bare name in HAVING and ORDER
// BY refers to first.
func outputNames(items []ir.SelectItem) []string {
	names := []string{}
	for _, it := range items {
		switch {
		case it.Alias != "":
			names = append(names, it.Alias)
		case it.IsColumn():
			names = append(names, it.Arg.Name)
		}
	}
	return names
}

// qualifyBare qualifies the bare column references of an expression a
// substitution put into HAVING or ORDER BY when they carry an output's
// name: the planner would read them as that output. With one table the
// table's name qualifies them; with joins that is ambiguous, so refused.
func qualifyBare(f flattener, e ir.Expr, names []string, from ir.TableRef, joins []ir.Join) (ir.Expr, error) {
	return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		c, ok := n.(ir.ColumnRef)
		if !ok || c.Qualifier != "" || !slicesContainsFold(f, names, c.Name) {
			return n, nil
		}
		if len(joins) > 0 {
			return nil, notAgg("column %s of the subquery has the name of an output column here; qualify it with its table inside the subquery", c.Name)
		}
		c.Qualifier = from.RefName()
		return c, nil
	})
}

// sameOutputReading refuses an ORDER BY expression over a subquery whose
// bare name reads differently in the two dialects: as the subquery's
// column (PostgreSQL, and how the flattening substitutes it) or as the
// merged query's output of that name (MySQL reads a select-list alias
// first). Where the output of that name is the subquery's column itself
// (SELECT *, a column passed through) both read the same value.
func sameOutputReading(f flattener, e ir.Expr, items []ir.SelectItem, lookup func(ir.ColumnRef) (ir.Expr, error)) error {
	var err error
	ir.Walk(e, func(n ir.Expr) bool {
		c, ok := n.(ir.ColumnRef)
		if err != nil || !ok || c.Qualifier != "" {
			return err == nil
		}
		for _, it := range items {
			name, value := aggOutputOf(it)
			if !f.same(name, c.Name) {
				continue
			}
			col, lerr := lookup(c)
			if lerr != nil || ir.FormatExpr(col) != ir.FormatExpr(value) {
				err = notAgg("ORDER BY %s: %s names an output column that is not the subquery's column %s; qualify the subquery's column or order by the output name alone",
					ir.FormatExpr(e), c.Name, c.Name)
				return false
			}
		}
		return true
	})
	return err
}
