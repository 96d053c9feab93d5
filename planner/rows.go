package planner

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// This file answers a row-level read of public tables when the client
// speaks another dialect than the backend: the client's text cannot be
// forwarded, so the statement's row reading (ir.RowQuery, built by the
// client's parser) is checked against the policy and rendered in the
// backend's dialect by sqlrender. It reads only public tables (classify
// sent every statement touching a private one to the private path), so
// nothing is charged and no noise is added. Stars are expanded to the
// declared columns of a public table with a column list, and a column
// such a table does not list is refused as if it did not exist.

// rowTable is one table of a row read.
type rowTable struct {
	tbl *policies.Table
	ref string // the name its columns are qualified with (alias or name)
}

// listed reports whether the table shows only its declared columns.
func (t rowTable) listed() bool { return len(t.tbl.ColumnNames) > 0 }

// planRows plans a row-level read of public tables for a client whose
// dialect differs from the backend's.
func (p *Planner) planRows(req Request) (*Plan, error) {
	st := req.Statement
	backend := backendDialect(p.pol)
	for _, r := range st.Relations {
		if p.isCatalog(r) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"this %s front end cannot pass a query mixing the catalog and tables through to the %s backend", req.Dialect, backend)
		}
	}
	if st.Rows == nil {
		reason := st.RowsRefusal
		if reason == "" {
			reason = "aggregates over public tables are forwarded only when the client's dialect is the backend's"
		}
		if req.Dialect == backend || req.Dialect == "" {
			// Same dialect: refused only because a table has a column list.
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"this query reads a public table with a column list, whose other columns stay hidden: only row-level SELECTs the proxy checks may read it (%s)", reason).
				WithHint("select declared columns and expressions with WHERE, ORDER BY, LIMIT and equi-joins")
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"this query reads only public tables, but the %s front end can translate it to the %s backend only as a row-level SELECT: %s",
			req.Dialect, backend, reason).
			WithHint("select columns and expressions of public tables with WHERE, ORDER BY, LIMIT and equi-joins")
	}
	q, tables, err := p.bindRows(st.Rows, req.names())
	if err != nil {
		return nil, err
	}
	d := sqlrender.ByName(backend)
	if d == nil {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: no SQL dialect for backend %s", backend)
	}
	if err := checkRowExprs(q, backend); err != nil {
		return nil, err
	}
	rs, err := d.RenderRows(q, req.Dialect != "mysql")
	if err != nil {
		return nil, err
	}
	return &Plan{Class: ClassPassthrough, SQL: rs.SQL, Rendered: true, Args: rs.Args, Types: rowTypes(q, tables)}, nil
}

// bindRows resolves the tables and columns of a row read against the
// policy and returns the query in the backend's names, stars expanded.
func (p *Planner) bindRows(in *ir.RowQuery, names policies.Names) (*ir.RowQuery, []rowTable, error) {
	q := *in
	var tables []rowTable
	bind := func(r ir.TableRef) (ir.TableRef, error) {
		_, tbl := p.pol.Resolve(names, r.Schema, r.Name)
		if tbl == nil || !tbl.Public {
			// classify resolved every relation and sent private ones
			// elsewhere: this is a bug, refused closed.
			return ir.TableRef{}, sqlerr.New(sqlerr.Internal, "internal error: %s is not a public table", r.Name)
		}
		ref := r.RefName()
		for _, t := range tables {
			if strings.EqualFold(t.ref, ref) {
				return ir.TableRef{}, sqlerr.New(sqlerr.FeatureNotSupported, "table name %q is specified more than once; give each an alias", ref)
			}
		}
		tables = append(tables, rowTable{tbl: tbl, ref: ref})
		return ir.TableRef{Schema: tbl.Schema, Name: tbl.Name, Alias: ref}, nil
	}
	var err error
	if q.From, err = bind(in.From); err != nil {
		return nil, nil, err
	}
	q.Joins = make([]ir.Join, len(in.Joins))
	for i, j := range in.Joins {
		if j.Table, err = bind(j.Table); err != nil {
			return nil, nil, err
		}
		q.Joins[i] = j
	}
	col := func(c ir.ColumnRef) (ir.ColumnRef, error) { return resolveRowColumn(c, tables) }
	for i := range q.Joins {
		if q.Joins[i].Left, err = col(q.Joins[i].Left); err != nil {
			return nil, nil, err
		}
		if q.Joins[i].Right, err = col(q.Joins[i].Right); err != nil {
			return nil, nil, err
		}
	}
	// Items: stars expanded; where renumbers OutputRefs.
	var items []ir.RowItem
	where := make([]int, len(in.Items))
	for i, it := range in.Items {
		where[i] = len(items)
		if !it.Star {
			e, err := rewriteColumns(it.Expr, col)
			if err != nil {
				return nil, nil, err
			}
			items = append(items, ir.RowItem{Expr: e, Name: it.Name})
			continue
		}
		found := false
		for _, t := range tables {
			if it.Qualifier != "" && !strings.EqualFold(it.Qualifier, t.ref) {
				continue
			}
			found = true
			if !t.listed() {
				items = append(items, ir.RowItem{Star: true, Qualifier: t.ref})
				continue
			}
			for _, cn := range t.tbl.ColumnNames {
				items = append(items, ir.RowItem{Expr: ir.ColumnRef{Qualifier: t.ref, Name: cn}, Name: cn})
			}
		}
		if !found {
			return nil, nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", it.Qualifier)
		}
	}
	q.Items = items
	if q.Where, err = rewriteColumns(in.Where, col); err != nil {
		return nil, nil, err
	}
	q.OrderBy = make([]ir.OrderItem, len(in.OrderBy))
	for i, o := range in.OrderBy {
		if ref, ok := o.Expr.(ir.OutputRef); ok {
			if ref.Index < 0 || ref.Index >= len(where) {
				return nil, nil, sqlerr.New(sqlerr.Internal, "internal error: ORDER BY output %d", ref.Index+1)
			}
			o.Expr = ir.OutputRef{Index: where[ref.Index]}
		} else if o.Expr, err = rewriteColumns(o.Expr, col); err != nil {
			return nil, nil, err
		}
		q.OrderBy[i] = o
	}
	return &q, tables, nil
}

// rewriteColumns replaces every column of e by fn's resolution.
func rewriteColumns(e ir.Expr, fn func(ir.ColumnRef) (ir.ColumnRef, error)) (ir.Expr, error) {
	return ir.Rewrite(e, func(x ir.Expr) (ir.Expr, error) {
		if c, ok := x.(ir.ColumnRef); ok {
			return fn(c)
		}
		return x, nil
	})
}

// resolveRowColumn qualifies c with the one table it names. A column a
// listed table does not declare is refused as nonexistent whether or not
// the backend has it; an unqualified name that a table without a column
// list might hold is qualified only when that table is the one
// candidate, so the backend never resolves it to a hidden column.
func resolveRowColumn(c ir.ColumnRef, tables []rowTable) (ir.ColumnRef, error) {
	missing := func() error {
		return sqlerr.New(sqlerr.UndefinedColumn, "column %s does not exist", qualifiedColumn(c))
	}
	if c.Qualifier != "" {
		for _, t := range tables {
			if !strings.EqualFold(t.ref, c.Qualifier) {
				continue
			}
			if !t.listed() {
				return ir.ColumnRef{Qualifier: t.ref, Name: c.Name}, nil
			}
			if d := t.tbl.Column(c.Name); d != nil {
				return ir.ColumnRef{Qualifier: t.ref, Name: declaredName(t.tbl, c.Name)}, nil
			}
			return ir.ColumnRef{}, missing()
		}
		return ir.ColumnRef{}, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", c.Qualifier)
	}
	var hit []ir.ColumnRef
	for _, t := range tables {
		switch {
		case !t.listed():
			hit = append(hit, ir.ColumnRef{Qualifier: t.ref, Name: c.Name})
		case t.tbl.Column(c.Name) != nil:
			hit = append(hit, ir.ColumnRef{Qualifier: t.ref, Name: declaredName(t.tbl, c.Name)})
		}
	}
	switch len(hit) {
	case 0:
		return ir.ColumnRef{}, missing()
	case 1:
		return hit[0], nil
	}
	return ir.ColumnRef{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", c.Name).
		WithHint("qualify the column with its table's name or alias")
}

// declaredName is the policy's spelling of a declared column.
func declaredName(t *policies.Table, name string) string {
	for _, cn := range t.ColumnNames {
		if strings.EqualFold(cn, name) {
			return cn
		}
	}
	return name
}

func qualifiedColumn(c ir.ColumnRef) string {
	if c.Qualifier != "" {
		return c.Qualifier + "." + c.Name
	}
	return c.Name
}

// checkRowExprs refuses what the renderer cannot translate exactly
// without the column types the private path has: integer division (its
// operands' types decide between truncating and real division, which the
// MySQL backend spells differently).
func checkRowExprs(q *ir.RowQuery, backend string) error {
	var err error
	q.RowExprs(func(e *ir.Expr) {
		ir.Walk(*e, func(x ir.Expr) bool {
			a, ok := x.(ir.Arith)
			if !ok || err != nil {
				return err == nil
			}
			if a.Op == ir.OpIntDiv || (a.Op == ir.OpDiv && backend == "mysql") {
				err = sqlerr.New(sqlerr.FeatureNotSupported,
					"division %s cannot be translated exactly to the %s backend in a read of public tables: whether it truncates depends on its operands' types",
					map[bool]string{true: "DIV", false: "/"}[a.Op == ir.OpIntDiv], backend).
					WithHint("cast both operands to a real type, or divide in the client")
			}
			return err == nil
		})
	})
	return err
}

// rowTypes types each output of a rendered row read from the policy's
// declarations, where the backend cannot (SQLite has no type for an
// expression, and reports its integers and booleans alike): nil when a
// star of a table without a column list leaves the outputs unknown,
// ir.TypeUnknown for an output the backend's description should type.
func rowTypes(q *ir.RowQuery, tables []rowTable) []ir.ColType {
	colType := func(c ir.ColumnRef) ir.ColType {
		for _, t := range tables {
			if strings.EqualFold(t.ref, c.Qualifier) && t.listed() {
				if d := t.tbl.Column(c.Name); d != nil {
					return policies.ResultType(d.Type)
				}
			}
		}
		return ir.TypeUnknown
	}
	out := make([]ir.ColType, len(q.Items))
	for i, it := range q.Items {
		if it.Star {
			return nil
		}
		out[i] = exprColType(it.Expr, colType)
	}
	return out
}

// exprColType is the type of a row expression where operators alone
// decide it (predicates are boolean; arithmetic on integers is an
// integer); TypeUnknown elsewhere (functions, CASE).
func exprColType(e ir.Expr, col func(ir.ColumnRef) ir.ColType) ir.ColType {
	switch n := e.(type) {
	case ir.ColumnRef:
		return col(n)
	case ir.Literal:
		switch n.Value.Kind {
		case ir.KindInt:
			return ir.TypeInt8
		case ir.KindFloat:
			return ir.TypeFloat8
		case ir.KindString:
			return ir.TypeText
		case ir.KindBool:
			return ir.TypeBool
		}
	case ir.Compare, ir.Between, ir.In, ir.Like, ir.IsNull, ir.And, ir.Or, ir.Not:
		return ir.TypeBool
	case ir.Neg:
		if t := exprColType(n.X, col); t == ir.TypeInt8 || t == ir.TypeFloat8 {
			return t
		}
	case ir.Arith:
		l, r := exprColType(n.L, col), exprColType(n.R, col)
		num := func(t ir.ColType) bool { return t == ir.TypeInt8 || t == ir.TypeFloat8 }
		switch {
		case n.Op == ir.OpRealDiv:
			return ir.TypeFloat8
		case !num(l) || !num(r):
		case l == ir.TypeInt8 && r == ir.TypeInt8:
			return ir.TypeInt8
		default:
			return ir.TypeFloat8
		}
	case ir.Cast:
		switch n.To {
		case ir.CastBigint:
			return ir.TypeInt8
		case ir.CastDouble:
			return ir.TypeFloat8
		case ir.CastText:
			return ir.TypeText
		}
	}
	return ir.TypeUnknown
}

// readsListedPublic reports whether st reads a public table with a column
// list and no catalog relation: forwarding its text would let it read the
// columns the list leaves out, so it is planned as a checked row read in
// every dialect (a query mixing the catalog in keeps the catalog's rules).
func (p *Planner) readsListedPublic(st *ir.Statement, names policies.Names) bool {
	listed := false
	for _, r := range st.Relations {
		if p.isCatalog(r) {
			return false
		}
		if _, t := p.pol.Resolve(names, r.Schema, r.Name); t != nil && t.Public && len(t.ColumnNames) > 0 {
			listed = true
		}
	}
	return listed
}

// checkDeclared refuses an aggregate over public tables that names a
// column a table's column list leaves out (42703, as if it did not
// exist), before its text is forwarded. Unqualified names of the select
// list's aliases (ORDER BY n, HAVING n) are outputs, not columns.
func (p *Planner) checkDeclared(q *ir.Query, names policies.Names) error {
	var tables []rowTable
	for _, r := range append([]ir.TableRef{q.From}, joinedTables(q)...) {
		_, tbl := p.pol.Resolve(names, r.Schema, r.Name)
		if tbl == nil {
			return sqlerr.New(sqlerr.Internal, "internal error: %s is not a declared table", r.Name)
		}
		tables = append(tables, rowTable{tbl: tbl, ref: r.RefName()})
	}
	aliases := map[string]bool{}
	for _, it := range q.Select {
		if it.Alias != "" {
			aliases[strings.ToLower(it.Alias)] = true
		}
	}
	var err error
	check := func(c ir.ColumnRef) {
		if err != nil || (c.Qualifier == "" && aliases[strings.ToLower(c.Name)]) {
			return
		}
		_, err = resolveRowColumn(c, tables)
	}
	var visit func(e ir.Expr)
	visit = func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) bool {
			switch n := x.(type) {
			case ir.ColumnRef:
				check(n)
			case ir.Aggregate:
				if n.Arg != nil {
					check(*n.Arg)
				}
				visit(n.ArgExpr) // Walk does not descend into it
			}
			return err == nil
		})
	}
	for _, it := range q.Select {
		if it.Arg != nil {
			check(*it.Arg)
		}
		visit(it.ArgExpr)
		visit(it.Expr)
	}
	visit(q.Where)
	for _, g := range q.GroupBy {
		visit(g)
	}
	visit(q.Having)
	for _, o := range q.OrderBy {
		visit(o.Expr)
	}
	for _, j := range q.Joins {
		check(j.Left)
		check(j.Right)
	}
	return err
}

func joinedTables(q *ir.Query) []ir.TableRef {
	out := make([]ir.TableRef, len(q.Joins))
	for i, j := range q.Joins {
		out[i] = j.Table
	}
	return out
}
