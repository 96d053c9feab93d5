package parser

import (
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
	body    *rowSelect // a subquery; nil for a CTE reference
	cte     *cteDef    // a CTE reference; nil for a subquery
}

// cteDef is one non-recursive CTE of a WITH clause, converted once.
// uses counts its expansions during flattening: a second one would join
// the (private) relation with itself and is refused.
type cteDef struct {
	name    string
	columns []string
	body    *rowSelect
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

// rowSelect is an inner SELECT that only projects, filters and joins.
type rowSelect struct {
	items []rowItem
	from  fromTree
	where ir.Expr // nil when absent
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
	out.GroupBy = nil
	for _, g := range q.GroupBy {
		e, err := sc.column(g)
		if err != nil {
			return nil, err
		}
		key, err := groupingKey(g, e)
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

// groupingKey is the grouping key an outer GROUP BY column becomes once
// the derived table is merged. GROUP BY holds columns only for now: a key
// that becomes a computed expression of the subquery is refused. (When
// ir.Query.GroupBy takes expressions, this is the one place to lift.)
func groupingKey(written ir.ColumnRef, e ir.Expr) (ir.ColumnRef, error) {
	c, ok := e.(ir.ColumnRef)
	if !ok {
		return ir.ColumnRef{}, notAgg("grouping by a computed column of a subquery is not supported yet (GROUP BY %s); group by a column", colText(written))
	}
	return c, nil
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
		sc.from, sc.joins = from.table, from.joins
		return sc, nil
	}
	dt := from.derived
	body, alias := dt.body, dt.alias
	columns := dt.columns
	if dt.cte != nil {
		dt.cte.uses++
		if dt.cte.uses > 1 {
			return nil, notAgg(msgCTETwice, dt.cte.name)
		}
		body = dt.cte.body
		if alias == "" {
			alias = dt.cte.name
		}
		if columns == nil {
			columns = dt.cte.columns
		}
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

// column resolves a column reference of this level to what it reads.
func (s *scope) column(c ir.ColumnRef) (ir.Expr, error) {
	if s.d == nil {
		// A table: qualify a bare name when it is the only table, so that
		// tables joined at an outer level cannot make it ambiguous.
		if c.Qualifier == "" && len(s.own) == 0 {
			c.Qualifier = s.table.RefName()
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
			return s.column(n)
		case ir.Aggregate:
			fn, arg, argExpr, err := s.aggArg(n.Func, n.Arg, n.ArgExpr)
			if err != nil {
				return nil, err
			}
			return ir.Aggregate{Func: fn, Arg: arg, ArgExpr: argExpr}, nil
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
		return 0, nil, nil, err
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
