package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// builder accumulates one private plan.
type builder struct {
	p     *Planner
	sc    *scope
	plan  *Plan
	q     *ir.Query
	notes []string

	groupCols []resolved
	aggKeys   map[string]int
	// nullsHigh: the client speaks PostgreSQL, where NULL sorts after
	// every value (MySQL sorts it before).
	nullsHigh bool
	// exprSumTypes is the type (integer or real) of each SumClamped
	// aggregate over an expression, by aggregate index.
	exprSumTypes map[int]string
}

// resolveColumn binds a column reference to a table of the scope.
func (b *builder) resolveColumn(c ir.ColumnRef) (resolved, error) {
	name := strings.ToLower(c.Name)
	if c.Schema != "" {
		return b.resolveSchemaColumn(c, name)
	}
	if c.Qualifier != "" {
		q := strings.ToLower(c.Qualifier)
		for i := range b.sc.tables {
			if b.sc.refName(i) == q {
				return b.columnOf(i, name)
			}
		}
		return resolved{}, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", c.Qualifier)
	}
	main := b.sc.tables[0].tbl
	if main.Column(name) != nil {
		return b.columnOf(0, name)
	}
	var candidates []int
	var open []int // public tables without a column list
	for i := 1; i < len(b.sc.tables); i++ {
		t := b.sc.tables[i].tbl
		if t.Column(name) != nil {
			candidates = append(candidates, i)
		} else if len(t.Columns) == 0 {
			open = append(open, i)
		}
	}
	switch {
	case len(candidates) == 1:
		return b.columnOf(candidates[0], name)
	case len(candidates) > 1:
		return resolved{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", c.Name).
			WithHint("qualify it with a table name")
	case len(open) == 1 && !strings.EqualFold(name, main.Unit):
		return b.columnOf(open[0], name)
	case len(open) > 1:
		return resolved{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", c.Name).
			WithHint("qualify it with a table name")
	}
	return b.columnOf(0, name)
}

// resolveSchemaColumn binds schema.table.column: schema.table must name,
// by the policy's one naming rule, a table of FROM that has no alias (as
// in PostgreSQL and MySQL, an alias hides the table's own name).
func (b *builder) resolveSchemaColumn(c ir.ColumnRef, name string) (resolved, error) {
	_, named := b.p.pol.Resolve(b.sc.names, c.Schema, c.Qualifier)
	for i, bt := range b.sc.tables {
		if named != nil && bt.tbl == named && bt.ref.Alias == "" {
			return b.columnOf(i, name)
		}
	}
	return resolved{}, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table \"%s.%s\"", c.Schema, c.Qualifier).
		WithHint("a column may be qualified with schema.table only when FROM names that table without an alias")
}

func (b *builder) columnOf(i int, name string) (resolved, error) {
	bt := b.sc.tables[i]
	r := resolved{col: ir.ColumnRef{Qualifier: bt.alias, Name: name}, table: i, name: name}
	if d := bt.tbl.Column(name); d != nil {
		r.decl = d
		return r, nil
	}
	if bt.tbl.Public && len(bt.tbl.Columns) == 0 {
		return r, nil // public table exposing every column
	}
	path := "datasets." + b.sc.ds.Name + ".tables." + bt.tbl.Name + ".columns"
	if !bt.tbl.Public && strings.EqualFold(name, bt.tbl.Unit) {
		return resolved{}, sqlerr.New(sqlerr.InsufficientPrivilege,
			"column %s.%s is the privacy unit: it cannot be used in queries", bt.tbl.Name, name)
	}
	return resolved{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s is not exposed by the privacy policy", bt.tbl.Name, name).
		WithHint("the DBA declares queryable columns under %s", path)
}

func (b *builder) joins(q *ir.Query, bq *ir.BackendQuery) error {
	for i, j := range q.Joins {
		idx := i + 1
		bt := b.sc.tables[idx]
		if bt.tbl.Key == "" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "public table %s declares no join key", bt.tbl.Name).
				WithHint("declare datasets.%s.tables.%s.key (a unique column) to join it", b.sc.ds.Name, bt.tbl.Name)
		}
		l, err := b.resolveColumn(j.Left)
		if err != nil {
			return err
		}
		r, err := b.resolveColumn(j.Right)
		if err != nil {
			return err
		}
		// One side must be the joined table's key, the other an earlier table.
		if r.table != idx {
			l, r = r, l
		}
		if r.table != idx || l.table >= idx || !strings.EqualFold(r.col.Name, bt.tbl.Key) {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"JOIN %s must be ON <column of an earlier table> = %s.%s (its declared unique key), so that no private row is duplicated",
				bt.tbl.Name, bt.ref.RefName(), bt.tbl.Key)
		}
		// A LEFT join on a unique key keeps every row of the left side
		// exactly once (Table's columns NULL where nothing matches), so
		// sensitivities are those of the inner join. The null-safe
		// equality matches a NULL private value with a NULL key: the key
		// check (release) then allows at most one NULL key.
		bq.Joins = append(bq.Joins, ir.Join{
			Table:    ir.TableRef{Schema: bt.tbl.Schema, Name: bt.tbl.Name, Alias: bt.alias},
			Left:     l.col,
			Right:    r.col,
			Outer:    j.Outer,
			NullSafe: j.NullSafe,
		})
	}
	return nil
}

// where binds the WHERE clause: columns resolved, nothing but row-level
// predicates, and every expression total (exprtype: types checked,
// columns clamped where they are computed with, ranges within the
// backend's types). Params must have been bound already.
func (b *builder) where(e ir.Expr) (ir.Expr, error) {
	if e == nil {
		return nil, nil
	}
	var err error
	ir.Walk(e, func(n ir.Expr) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case ir.Aggregate:
			err = sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in WHERE").WithHint("use HAVING")
		case ir.OutputRef:
			err = sqlerr.New(sqlerr.SyntaxError, "positional references are not allowed in WHERE")
		case ir.Param:
			err = sqlerr.New(sqlerr.InvalidParameterValue, "parameter $%d has no value", n.Index)
		case ir.Clamp:
			err = sqlerr.New(sqlerr.Internal, "internal error: a clamp in the query as written")
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return exprtype.Predicate(e, b.exprColumn)
}

// exprColumn tells the expression analysis what the policy declares of a
// column: its type and the bounds it is clamped to when computed with
// (the declared bounds, else the extent of a declared numeric domain).
func (b *builder) exprColumn(c ir.ColumnRef) (exprtype.Column, error) {
	r, err := b.resolveColumn(c)
	if err != nil {
		return exprtype.Column{}, err
	}
	bt := b.sc.tables[r.table]
	path := "datasets." + b.sc.ds.Name + ".tables." + bt.tbl.Name + ".columns"
	if r.decl == nil {
		return exprtype.Column{Ref: r.col, Type: exprtype.Unknown, Declare: path + " (" + b.p.pol.Position(path) + ")"}, nil
	}
	path += "." + r.name
	col := exprtype.Column{Ref: r.col, Declare: path + " (" + b.p.pol.Position(path) + ")"}
	switch r.decl.Type {
	case policies.TypeInteger:
		col.Type = exprtype.Integer
	case policies.TypeReal:
		col.Type = exprtype.Real
	case policies.TypeText:
		col.Type = exprtype.Text
	case policies.TypeBoolean:
		col.Type = exprtype.Boolean
	case policies.TypeDate:
		col.Type = exprtype.Date
	case policies.TypeTimestamp:
		col.Type = exprtype.Timestamp
	case policies.TypeTimestampTZ:
		col.Type = exprtype.TimestampTZ
	default:
		col.Type = exprtype.Unknown
	}
	col.Lo, col.Hi, col.HasBounds = clampBounds(r.decl, col.Type)
	return col, nil
}

// timeDomainExtent is the smallest and largest value of a date or time
// column's declared static domain.
func timeDomainExtent(d *policies.Column, t exprtype.Type) (lo, hi ir.Value, ok bool) {
	if d.Domain == nil || len(d.Domain.Resolved) == 0 {
		return lo, hi, false
	}
	for i, v := range d.Domain.Resolved {
		if v.Kind != t.Kind() {
			return ir.Value{}, ir.Value{}, false
		}
		if i == 0 || v.Int < lo.Int {
			lo = v
		}
		if i == 0 || v.Int > hi.Int {
			hi = v
		}
	}
	return lo, hi, true
}

// clampBounds are the bounds a numeric column is clamped to where an
// expression computes with it (ir.Int for integers, ir.Float for reals):
// the declared bounds, else the smallest and largest value of a declared
// static domain. Both are public.
func clampBounds(d *policies.Column, t exprtype.Type) (lo, hi ir.Value, ok bool) {
	switch {
	case t.IsTime() && len(d.TimeBounds) == 2:
		return d.TimeBounds[0], d.TimeBounds[1], true
	case t.IsTime():
		return timeDomainExtent(d, t)
	case t != exprtype.Integer && t != exprtype.Real:
		return lo, hi, false
	case d.HasBounds() && t == exprtype.Integer:
		// Validated: whole numbers of magnitude at most 2^53.
		return ir.Int(int64(d.Lo())), ir.Int(int64(d.Hi())), true
	case d.HasBounds():
		return ir.Float(d.Lo()), ir.Float(d.Hi()), true
	case d.Domain == nil || len(d.Domain.Resolved) == 0:
		return lo, hi, false
	}
	for i, v := range d.Domain.Resolved {
		if (t == exprtype.Integer) != (v.Kind == ir.KindInt) || (t == exprtype.Real && v.Kind != ir.KindFloat) {
			return ir.Value{}, ir.Value{}, false
		}
		if i == 0 || ir.CompareValues(v, lo) < 0 {
			lo = v
		}
		if i == 0 || ir.CompareValues(v, hi) > 0 {
			hi = v
		}
	}
	return lo, hi, true
}

func (b *builder) groups(q *ir.Query) error {
	seen := map[ir.ColumnRef]bool{}
	for _, g := range q.GroupBy {
		r, err := b.resolveColumn(g)
		if err != nil {
			return err
		}
		if seen[r.col] {
			continue
		}
		seen[r.col] = true
		gp := GroupPlan{Name: r.name}
		bt := b.sc.tables[r.table]
		// Rows without a match in a LEFT-joined table read NULL in its
		// columns: NULL is a key whatever the table holds, released (with
		// noise) like any other so that its presence reveals nothing.
		gp.NullKey = r.table > 0 && q.Joins[r.table-1].Outer
		if r.decl != nil {
			gp.Type = r.decl.Type
			if d := r.decl.Domain; d != nil {
				if d.Query != "" {
					gp.DomainSQL = d.Query
				} else {
					gp.Domain = d.Resolved
				}
			}
		}
		if gp.Domain == nil && gp.DomainSQL == "" && bt.tbl.Public {
			// The distinct values of a public column are public.
			gp.DomainFrom = &ir.BackendQuery{
				From:    ir.TableRef{Schema: bt.tbl.Schema, Name: bt.tbl.Name, Alias: "t0"},
				GroupBy: []ir.ColumnRef{{Qualifier: "t0", Name: r.col.Name}},
				Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
			}
		}
		b.groupCols = append(b.groupCols, r)
		b.plan.Groups = append(b.plan.Groups, gp)
		b.plan.Backend.GroupBy = append(b.plan.Backend.GroupBy, r.col)
	}
	return nil
}

func (b *builder) allDomains() bool {
	for _, g := range b.plan.Groups {
		if g.Domain == nil && g.DomainSQL == "" && g.DomainFrom == nil {
			return false
		}
	}
	return true
}

func (b *builder) missingDomain() resolved {
	for i, g := range b.plan.Groups {
		if g.Domain == nil && g.DomainSQL == "" && g.DomainFrom == nil {
			return b.groupCols[i]
		}
	}
	return resolved{}
}

// staticKeyCount is the number of keys of the declared static domains
// (query domains are checked when evaluated).
func (b *builder) staticKeyCount() int {
	n := 1
	for _, g := range b.plan.Groups {
		if g.Domain != nil {
			n *= max(len(g.Domain)+btoi(g.NullKey), 1)
			if n > MaxKeys {
				return n
			}
		}
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// agg adds (or finds) a true aggregate and returns its index.
func (b *builder) agg(a ir.BackendAgg, label string) int {
	key := fmt.Sprintf("%d/%v", a.Kind, a.Column)
	switch {
	case a.Expr != nil:
		key = fmt.Sprintf("%d/expr:%s/%g/%g", a.Kind, ir.FormatExpr(a.Expr), a.Lo, a.Hi)
	case a.Column != nil:
		key = fmt.Sprintf("%d/%s.%s", a.Kind, a.Column.Qualifier, a.Column.Name)
	}
	if b.aggKeys == nil {
		b.aggKeys = map[string]int{}
	}
	if i, ok := b.aggKeys[key]; ok {
		return i
	}
	i := len(b.plan.Backend.Aggs)
	b.aggKeys[key] = i
	b.plan.Backend.Aggs = append(b.plan.Backend.Aggs, a)
	b.plan.Aggs = append(b.plan.Aggs, AggPlan{Label: label})
	return i
}

// aggregateOutput returns the output index computing fn(arg) (or
// fn(argExpr) for an expression argument), adding it (hidden unless
// visible) when absent.
func (b *builder) aggregateOutput(fn ir.AggFunc, arg *ir.ColumnRef, argExpr ir.Expr, distinct bool, alias string, hidden bool) (int, error) {
	if distinct {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s(DISTINCT ...) is not supported", strings.ToUpper(fn.String())).
			WithHint("drop DISTINCT: each unit's rows are already bounded by max_rows_per_unit")
	}
	if argExpr != nil {
		return b.exprAggregateOutput(fn, argExpr, alias, hidden)
	}
	out := Output{Name: alias, Hidden: hidden}
	var r resolved
	if arg != nil {
		var err error
		if r, err = b.resolveColumn(*arg); err != nil {
			return 0, err
		}
	}
	label := fn.String() + "(*)"
	if arg != nil {
		label = fn.String() + "(" + r.name + ")"
	}
	if out.Name == "" {
		out.Name = fn.String()
	}
	switch fn {
	case ir.AggCount:
		out.Kind, out.Type = OutCount, policies.TypeInteger
		if arg == nil {
			out.Agg = b.agg(ir.BackendAgg{Kind: ir.CountRows}, "count(*)")
		} else {
			c := r.col
			out.Agg = b.agg(ir.BackendAgg{Kind: ir.CountValues, Column: &c}, label)
		}
	case ir.AggSum, ir.AggAvg:
		if arg == nil {
			return 0, sqlerr.New(sqlerr.SyntaxError, "%s needs a column argument", strings.ToUpper(fn.String()))
		}
		sa, err := b.sumAgg(r)
		if err != nil {
			return 0, err
		}
		out.Agg = b.agg(sa, "sum("+r.name+")")
		out.Lo, out.Hi = sa.Lo, sa.Hi
		if fn == ir.AggSum {
			out.Kind = OutSum
			out.Type = r.decl.Type
		} else {
			c := r.col
			out.Kind, out.Type = OutAvg, policies.TypeReal
			out.CountAgg = b.agg(ir.BackendAgg{Kind: ir.CountValues, Column: &c}, "count("+r.name+")")
		}
	default:
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate %s is not supported", fn)
	}
	return b.addOutput(out, hidden), nil
}

// addOutput appends out, or for a hidden one reuses an identical output
// (same kind and aggregates), and returns its index.
func (b *builder) addOutput(out Output, hidden bool) int {
	if hidden {
		for i, o := range b.plan.Outputs {
			if o.Kind == out.Kind && o.Agg == out.Agg && (o.Kind != OutAvg || o.CountAgg == out.CountAgg) {
				return i
			}
		}
	}
	b.plan.Outputs = append(b.plan.Outputs, out)
	return len(b.plan.Outputs) - 1
}

// exprAggregateOutput is aggregateOutput for an expression argument. The
// expression is analysed like a WHERE operand (exprtype: total, every
// column clamped to its declared bounds), here at plan time and before any
// charge; its inferred range plays the part of a column's declared bounds:
// SUM/AVG clamp to it (a no-op the renderer keeps) and take their
// sensitivity from it through the same calls as for a column.
func (b *builder) exprAggregateOutput(fn ir.AggFunc, src ir.Expr, alias string, hidden bool) (int, error) {
	var perr error
	ir.Walk(src, func(n ir.Expr) bool {
		switch n := n.(type) {
		case ir.Param:
			perr = sqlerr.New(sqlerr.FeatureNotSupported, "parameter $%d inside an aggregate outside the select list is not supported", n.Index).
				WithHint("write the value as a literal")
		case ir.Aggregate:
			perr = sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot be nested")
		case ir.OutputRef, ir.Clamp:
			perr = sqlerr.New(sqlerr.Internal, "internal error: %T in an aggregate argument as written", n)
		}
		return perr == nil
	})
	if perr != nil {
		return 0, perr
	}
	x, info, err := exprtype.Scalar(src, b.exprColumn)
	if err != nil {
		return 0, err
	}
	text := ir.FormatExpr(src)
	label := fn.String() + "(" + text + ")"
	out := Output{Name: alias, Hidden: hidden}
	if out.Name == "" {
		out.Name = fn.String()
	}
	if fn == ir.AggCount {
		out.Kind, out.Type = OutCount, policies.TypeInteger
		out.Agg = b.agg(ir.BackendAgg{Kind: ir.CountValues, Expr: x}, label)
		return b.addOutput(out, hidden), nil
	}
	if fn != ir.AggSum && fn != ir.AggAvg {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate %s is not supported", fn)
	}
	var lo, hi float64
	var typ string
	switch {
	case info.Type == exprtype.Integer && info.Bounded:
		if !info.Int.Lo.IsInt64() || !info.Int.Hi.IsInt64() || math.Abs(float64(info.Int.Lo.Int64())) > 1<<53 || math.Abs(float64(info.Int.Hi.Int64())) > 1<<53 {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s: the argument's range [%s, %s] exceeds 2^53 in magnitude, too wide to sum with noise", strings.ToUpper(fn.String()), info.Int.Lo, info.Int.Hi).
				WithHint("scale the argument down (divide it) so that its range stays within ±2^53")
		}
		lo, hi, typ = float64(info.Int.Lo.Int64()), float64(info.Int.Hi.Int64()), policies.TypeInteger
	case info.Type == exprtype.Real && info.Bounded:
		lo, hi, typ = info.Real.Lo, info.Real.Hi, policies.TypeReal
	case info.Type == exprtype.Integer || info.Type == exprtype.Real:
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s(%s): the argument has no known range", strings.ToUpper(fn.String()), text).
			WithHint("compute only with columns that have declared bounds")
	default:
		return 0, sqlerr.New(sqlerr.DatatypeMismatch, "%s(%s): the argument is %s, not a number", strings.ToUpper(fn.String()), text, info.Type)
	}
	sa := ir.BackendAgg{Kind: ir.SumClamped, Expr: x, Lo: lo, Hi: hi}
	out.Agg = b.agg(sa, "sum("+text+")")
	if b.exprSumTypes == nil {
		b.exprSumTypes = map[int]string{}
	}
	b.exprSumTypes[out.Agg] = typ
	out.Lo, out.Hi = lo, hi
	b.notes = append(b.notes, fmt.Sprintf("sum(%s): the argument's range %s, inferred from the declared bounds of its columns and the literals, is its clamp and sets its sensitivity", text, info))
	if fn == ir.AggSum {
		out.Kind, out.Type = OutSum, typ
	} else {
		out.Kind, out.Type = OutAvg, policies.TypeReal
		out.CountAgg = b.agg(ir.BackendAgg{Kind: ir.CountValues, Expr: x}, "count("+text+")")
	}
	return b.addOutput(out, hidden), nil
}

// sumAgg builds the clamped sum of a column, checking the policy allows it.
func (b *builder) sumAgg(r resolved) (ir.BackendAgg, error) {
	path := "datasets." + b.sc.ds.Name + ".tables." + b.sc.tables[r.table].tbl.Name + ".columns." + r.name
	if r.decl == nil {
		return ir.BackendAgg{}, sqlerr.New(sqlerr.FeatureNotSupported, "SUM/AVG of %s needs declared bounds", r.name).
			WithHint("declare %s with a type and bounds", path)
	}
	if r.decl.Type != policies.TypeInteger && r.decl.Type != policies.TypeReal {
		return ir.BackendAgg{}, sqlerr.New(sqlerr.DatatypeMismatch, "SUM/AVG of %s: the column is %s, not a number", r.name, r.decl.Type)
	}
	if !r.decl.HasBounds() {
		return ir.BackendAgg{}, sqlerr.New(sqlerr.FeatureNotSupported, "SUM/AVG of %s needs declared bounds: %s.bounds", r.name, path).
			WithHint("the DBA adds bounds: [lo, hi] at %s", b.p.pol.Position(path))
	}
	c := r.col
	return ir.BackendAgg{Kind: ir.SumClamped, Column: &c, Lo: r.decl.Lo(), Hi: r.decl.Hi()}, nil
}

func (b *builder) selectList(q *ir.Query) error {
	if len(q.Select) == 0 {
		return sqlerr.New(sqlerr.SyntaxError, "empty select list")
	}
	// The visible outputs come first, in select-list order; the hidden
	// ones an expression needs are added after them (second loop).
	var exprItems []int
	for i, it := range q.Select {
		switch {
		case it.Expr != nil:
			exprItems = append(exprItems, i)
			b.plan.Outputs = append(b.plan.Outputs, Output{Name: exprName(it), Kind: OutExpr})
		case it.Agg == ir.AggNone:
			if it.Arg == nil {
				return sqlerr.New(sqlerr.SyntaxError, "select item without column")
			}
			n := len(b.plan.Outputs)
			oi, err := b.columnOutput(*it.Arg)
			if err != nil {
				return err
			}
			o := b.plan.Outputs[oi]
			o.Name, o.Hidden = it.Alias, false
			if o.Name == "" {
				o.Name = it.Arg.Name
			}
			b.plan.Outputs = append(b.plan.Outputs[:n], o) // replaces the hidden one just added, if any
		default:
			if _, err := b.aggregateOutput(it.Agg, it.Arg, it.ArgExpr, it.Distinct, it.Alias, false); err != nil {
				return err
			}
		}
	}
	b.plan.NumVisible = len(b.plan.Outputs)
	for _, i := range exprItems {
		e, err := b.postExpr(q.Select[i].Expr)
		if err != nil {
			return err
		}
		typ, err := b.exprType(e)
		if err != nil {
			return err
		}
		o := &b.plan.Outputs[i] // one visible output per item
		o.Expr, o.Type = e, typ
	}
	if len(exprItems) > 0 {
		b.notes = append(b.notes, "expressions of the select list are computed by the proxy on the noisy row (post-processing, no extra cost)")
	}
	return nil
}

// hiddenExpr adds a hidden post-processing output computing e (an ORDER BY
// expression) and returns its index.
func (b *builder) hiddenExpr(e ir.Expr) (int, error) {
	x, err := b.postExpr(e)
	if err != nil {
		return 0, err
	}
	typ, err := b.exprType(x)
	if err != nil {
		return 0, err
	}
	b.plan.Outputs = append(b.plan.Outputs, Output{Name: "?column?", Kind: OutExpr, Type: typ, Expr: x, Hidden: true})
	return len(b.plan.Outputs) - 1, nil
}

// exprName names an expression item without alias as PostgreSQL does:
// the function or aggregate name, the column name, else ?column?.
func exprName(it ir.SelectItem) string {
	if it.Alias != "" {
		return it.Alias
	}
	switch n := it.Expr.(type) {
	case ir.Func:
		return n.Name
	case ir.Aggregate:
		return n.Func.String()
	case ir.ColumnRef:
		return n.Name
	}
	return "?column?"
}

// postExpr binds a select-list expression to outputs: each aggregate
// becomes a (hidden if new) noisy output, exactly as in HAVING, each
// column a grouping key. Select-list aliases are not in scope, as in SQL.
func (b *builder) postExpr(e ir.Expr) (ir.Expr, error) {
	return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		switch n := n.(type) {
		case ir.Aggregate:
			i, err := b.aggregateOutput(n.Func, n.Arg, n.ArgExpr, false, "", true)
			if err != nil {
				return nil, err
			}
			return ir.OutputRef{Index: i}, nil
		case ir.ColumnRef:
			i, err := b.columnOutput(n)
			if err != nil {
				return nil, err
			}
			return ir.OutputRef{Index: i}, nil
		case ir.Param:
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parameters are not supported in the select list").
				WithHint("write the value as a literal")
		case ir.OutputRef, ir.Clamp:
			return nil, sqlerr.New(sqlerr.Internal, "internal error: %T in the select list as written", n)
		}
		return n, nil
	})
}

// columnOutput returns the (hidden when new) output of a grouping column.
// A column that is not grouped reads row values and is refused, except in
// a plan that reads no row: there it is only named and typed.
func (b *builder) columnOutput(c ir.ColumnRef) (int, error) {
	r, err := b.resolveColumn(c)
	if err != nil {
		return 0, err
	}
	gi := b.groupIndex(r)
	if gi < 0 {
		if !b.plan.NoRows {
			return 0, sqlerr.New(sqlerr.GroupingError, "column %q must appear in the GROUP BY clause or be used in an aggregate function", r.name)
		}
		typ := ""
		if r.decl != nil {
			typ = r.decl.Type
		}
		b.plan.Outputs = append(b.plan.Outputs, Output{Name: r.name, Kind: OutExpr, Type: typ, Hidden: true})
		return len(b.plan.Outputs) - 1, nil
	}
	for i, o := range b.plan.Outputs {
		if o.Kind == OutGroup && o.Group == gi {
			return i, nil
		}
	}
	b.plan.Outputs = append(b.plan.Outputs, Output{Name: r.name, Kind: OutGroup, Type: b.plan.Groups[gi].Type, Group: gi, Hidden: true})
	return len(b.plan.Outputs) - 1, nil
}

// exprType is the policies type of a bound post-processing expression,
// checked at plan time so that both wires describe the column and a type
// error never waits for the noisy row.
func (b *builder) exprType(e ir.Expr) (string, error) {
	mismatch := func(format string, args ...any) (string, error) {
		return "", sqlerr.New(sqlerr.DatatypeMismatch, format, args...)
	}
	numeric := func(t string) bool { return t == policies.TypeInteger || t == policies.TypeReal }
	switch n := e.(type) {
	case ir.OutputRef:
		return b.plan.Outputs[n.Index].Type, nil
	case ir.Literal:
		switch n.Value.Kind {
		case ir.KindInt:
			return policies.TypeInteger, nil
		case ir.KindFloat:
			return policies.TypeReal, nil
		case ir.KindBool:
			return policies.TypeBoolean, nil
		}
		return policies.TypeText, nil // strings, and NULL (PostgreSQL's unknown reads as text)
	case ir.Compare, ir.Between, ir.In, ir.Like, ir.IsNull, ir.And, ir.Or, ir.Not:
		// The operands are checked too (an unsupported operator inside a
		// comparison must be refused now, not on the noisy row).
		var err error
		root := true // e itself (ir.In holds a slice: interfaces holding it cannot be compared with ==)
		ir.Walk(e, func(c ir.Expr) bool {
			if err != nil || root {
				root = false
				return err == nil
			}
			_, err = b.exprType(c)
			return false // exprType recursed into c already
		})
		if err != nil {
			return "", err
		}
		if err := b.timeOperands(e); err != nil {
			return "", err
		}
		return policies.TypeBoolean, nil
	case ir.Neg:
		t, err := b.exprType(n.X)
		if err != nil || !numeric(t) {
			return t, orMismatch(err, "unary minus needs a number")
		}
		return t, nil
	case ir.Arith:
		l, err := b.exprType(n.L)
		if err != nil {
			return "", err
		}
		r, err := b.exprType(n.R)
		if err != nil {
			return "", err
		}
		if !numeric(l) && !isNullLit(n.L) || !numeric(r) && !isNullLit(n.R) {
			return mismatch("operator %s needs numbers in the select list", n.Op)
		}
		ints := (l == policies.TypeInteger || isNullLit(n.L)) && (r == policies.TypeInteger || isNullLit(n.R))
		switch n.Op {
		case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv:
			// PostgreSQL's / truncates two integers (SUM(x) / COUNT(*) of
			// integer columns is an integer there too).
			if ints {
				return policies.TypeInteger, nil
			}
			return policies.TypeReal, nil
		case ir.OpRealDiv:
			return policies.TypeReal, nil
		case ir.OpIntDiv, ir.OpMod:
			if !ints {
				return mismatch("operator %s needs integers", n.Op)
			}
			return policies.TypeInteger, nil
		}
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported in post-processing (select list, HAVING, ORDER BY)", n.Op)
	case ir.Func:
		args := make([]string, len(n.Args))
		for i, a := range n.Args {
			t, err := b.exprType(a)
			if err != nil {
				return "", err
			}
			args[i] = t
		}
		switch n.Name {
		case "lower", "upper", "trim", "ltrim", "rtrim":
			return policies.TypeText, nil
		case "length":
			return policies.TypeInteger, nil
		case "coalesce":
			for i, a := range n.Args {
				if !isNullLit(a) {
					return args[i], nil
				}
			}
			return policies.TypeText, nil
		case "abs", "floor", "ceil", "round":
			if !numeric(args[0]) && !isNullLit(n.Args[0]) {
				return mismatch("%s needs a number", n.Name)
			}
			if len(n.Args) == 2 {
				if l, ok := n.Args[1].(ir.Literal); !ok || l.Value.Kind != ir.KindInt || l.Value.Int < -308 || l.Value.Int > 308 {
					return mismatch("round(x, digits) needs an integer literal between -308 and 308 as digits")
				}
				return policies.TypeReal, nil
			}
			return args[0], nil
		}
		return "", sqlerr.New(sqlerr.UndefinedFunction, "function %s is not supported in the select list", n.Name)
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "this expression is not supported in the select list")
}

func isNullLit(e ir.Expr) bool {
	l, ok := e.(ir.Literal)
	return ok && l.Value.IsNull()
}

func orMismatch(err error, msg string) error {
	if err != nil {
		return err
	}
	return sqlerr.New(sqlerr.DatatypeMismatch, "%s", msg)
}

func (b *builder) groupIndex(r resolved) int {
	for i, g := range b.groupCols {
		if g.col == r.col {
			return i
		}
	}
	return -1
}

// outputFor resolves a HAVING/ORDER BY operand to an output index.
func (b *builder) outputFor(e ir.Expr) (int, bool, error) {
	switch n := e.(type) {
	case ir.OutputRef:
		if n.Index < 0 || n.Index >= b.plan.NumVisible {
			return 0, false, sqlerr.New(sqlerr.InvalidParameterValue, "position %d is not in select list", n.Index+1)
		}
		return n.Index, true, nil
	case ir.Aggregate:
		i, err := b.aggregateOutput(n.Func, n.Arg, n.ArgExpr, false, "", true)
		return i, true, err
	case ir.ColumnRef:
		if n.Qualifier == "" {
			for i := 0; i < b.plan.NumVisible; i++ {
				if strings.EqualFold(b.plan.Outputs[i].Name, n.Name) {
					return i, true, nil
				}
			}
		}
		i, err := b.columnOutput(n)
		return i, err == nil, err
	}
	return 0, false, nil
}

func (b *builder) postProcessing(q *ir.Query) error {
	if q.Having != nil {
		h, err := ir.Rewrite(q.Having, func(n ir.Expr) (ir.Expr, error) {
			i, ok, err := b.outputFor(n)
			if err != nil {
				return nil, err
			}
			if ok {
				return ir.OutputRef{Index: i}, nil
			}
			if p, isParam := n.(ir.Param); isParam {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "parameter $%d has no value", p.Index)
			}
			return n, nil
		})
		if err != nil {
			return err
		}
		// Checked at plan time like the select list: a type or operator
		// error found on the noisy row would come after the charge.
		if _, err := b.exprType(h); err != nil {
			return err
		}
		b.plan.Having = h
		b.notes = append(b.notes, "HAVING is applied to the noisy rows (post-processing, no extra cost)")
	}
	for _, o := range q.OrderBy {
		i, ok, err := b.outputFor(o.Expr)
		if err != nil {
			return err
		}
		if !ok {
			// An expression: a hidden post-processing output to sort on.
			if i, err = b.hiddenExpr(o.Expr); err != nil {
				return err
			}
		}
		b.plan.OrderBy = append(b.plan.OrderBy, OrderKey{Output: i, Desc: o.Desc, NullsHigh: b.nullsHigh})
	}
	for _, v := range []*int64{q.Limit, q.Offset} {
		if v != nil && *v < 0 {
			return sqlerr.New(sqlerr.InvalidParameterValue, "LIMIT and OFFSET must not be negative")
		}
	}
	return nil
}

// calibrate splits ε over the true aggregates and sets each one's
// sensitivity, lattice and scale.
func (b *builder) calibrate(eps float64, ds *policies.Dataset, main *policies.Table) error {
	m := len(b.plan.Aggs)
	grouped := len(b.plan.Groups) > 0
	k := main.MaxRowsPerUnit
	for i := range b.plan.Aggs {
		a := &b.plan.Aggs[i]
		ba := &b.plan.Backend.Aggs[i]
		a.Epsilon = eps / float64(m)
		var sens int64
		var err error
		switch ba.Kind {
		case ir.CountRows, ir.CountValues:
			a.Quantum = 1
			sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: countKind(grouped)})
		case ir.SumClamped:
			lo, hi := ba.Lo, ba.Hi
			colType, isExpr := b.exprSumTypes[i]
			if !isExpr {
				colType = b.sumColumnType(*ba.Column)
			}
			if colType == policies.TypeInteger {
				a.Quantum = 1
				sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: sumKind(grouped), Lo: int64(lo), Hi: int64(hi), Quantum: 1})
			} else {
				realSens := float64(k) * 2 * math.Max(math.Abs(lo), math.Abs(hi))
				gamma, lerr := lattice(realSens, a.Epsilon, math.Max(math.Abs(lo), math.Abs(hi)), k)
				if lerr != nil {
					return sqlerr.Wrap(sqlerr.InvalidParameterValue, lerr, "cannot calibrate noise for "+a.Label)
				}
				for _, bnd := range []float64{lo, hi} {
					// The backend divides each value by γ: a nonzero bound
					// that small would underflow there (PostgreSQL raises
					// an error), so it is refused now, before any charge.
					// Only an expression's range can hold one (a literal
					// such as 1e-307); declared bounds are validated.
					if bnd != 0 && math.Abs(bnd)/gamma < 0x1p-1000 {
						return sqlerr.New(sqlerr.NumericValueOutOfRange, "cannot sum %s: the bound %g of its range is nonzero but negligible next to the noise lattice γ = %g", a.Label, bnd, gamma).
							WithHint("write 0 instead of a value that small")
					}
				}
				ba.Quantum = gamma
				a.Quantum = gamma
				qlo, qhi := quantize(lo, gamma), quantize(hi, gamma)
				sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: sumKind(grouped), Lo: qlo, Hi: qhi, Quantum: gamma})
			}
		}
		if err != nil {
			if sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
				return err // the model refuses the query; its reason is the message
			}
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "cannot bound the sensitivity of "+a.Label)
		}
		a.Sensitivity = sens
		if a.Scale, err = b.scale(a, sens, eps, m); err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "cannot calibrate noise for "+a.Label)
		}
	}
	if m > 1 {
		b.notes = append(b.notes, fmt.Sprintf("ε = %g is split evenly over %d true aggregates (sequential composition)", eps, m))
	}
	if k > 1 {
		b.notes = append(b.notes, fmt.Sprintf("each %s contributes at most %d rows (max_rows_per_unit); extra rows are dropped in the backend", main.Unit, k))
	}
	return nil
}

func (b *builder) sumColumnType(c ir.ColumnRef) string {
	for i, bt := range b.sc.tables {
		if bt.alias == c.Qualifier {
			if d := b.sc.tables[i].tbl.Column(c.Name); d != nil {
				return d.Type
			}
		}
	}
	return ""
}

// quantize maps a bound to lattice units exactly as the backends do:
// FLOOR(x/γ + 0.5).
func quantize(x, gamma float64) int64 { return int64(math.Floor(x/gamma + 0.5)) }

// timeOperands refuses, at plan time, a post-processing comparison of a
// date or time key with a value of another type (HAVING day >
// '2010-01-01'): the evaluator compares values of one kind only, and the
// error would otherwise come after the charge. WHERE parses such
// literals; HAVING does not yet.
func (b *builder) timeOperands(e ir.Expr) error {
	var ops []ir.Expr
	switch n := e.(type) {
	case ir.Compare:
		ops = []ir.Expr{n.L, n.R}
	case ir.Between:
		ops = []ir.Expr{n.X, n.Lo, n.Hi}
	case ir.In:
		ops = append([]ir.Expr{n.X}, n.List...)
	default:
		return nil
	}
	timeType := ""
	for _, o := range ops {
		if t, err := b.exprType(o); err == nil {
			if _, isTime := policies.TimeKind(t); isTime {
				timeType = t
			}
		}
	}
	if timeType == "" {
		return nil
	}
	for _, o := range ops {
		if t, err := b.exprType(o); err == nil && t != timeType && !isNullLit(o) {
			return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s compared with %s in HAVING or ORDER BY: %s", timeType, orUnknown(t), ir.FormatExpr(e)).
				WithHint("filter dates in WHERE (e.g. WHERE day > '2010-01-01'), where literals are read as dates")
		}
	}
	return nil
}

func orUnknown(t string) string {
	if t == "" {
		return "unknown"
	}
	return t
}
