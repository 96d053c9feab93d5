package planner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
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

	groupCols []groupKey
	aggKeys   partKeys
	// nullsHigh: the client speaks PostgreSQL, where NULL sorts after
	// every value (MySQL sorts it before).
	nullsHigh bool
	// mysql: the client speaks MySQL (messages quote names with backticks).
	mysql bool
	// windowNote: the plan computes window functions.
	windowNote bool
	// parts are the units' declarations of the true aggregates, parallel
	// to plan.Aggs: the shape and value type calibrate reads.
	parts []aggregate.Part
	// whereRanges are the ranges WHERE allows bounded columns (narrow.go
	// whereColumnRanges), by resolved column.
	whereRanges map[ir.ColumnRef]valueRange
}

// quote writes a name as the client's dialect quotes identifiers, for
// messages: "age" for PostgreSQL, `age` for MySQL.
func (b *builder) quote(name string) string { return quoteName(b.sc.names.Dialect, name) }

// resolveColumn binds a column reference to a table of the scope.
func (b *builder) resolveColumn(c ir.ColumnRef) (resolved, error) {
	name := strings.ToLower(c.Name)
	if b.sc.names.ExactColumns() && name != c.Name {
		// PostgreSQL: a capital comes from a quoted name ("Age"), which
		// is not the column age.
		i := 0
		for j := range b.sc.tables {
			if c.Qualifier != "" && c.Schema == "" && b.sameRef(j, c.Qualifier) {
				i = j
			}
		}
		return resolved{}, b.unknownColumn(c, i)
	}
	if c.Schema != "" {
		return b.resolveSchemaColumn(c, name)
	}
	if c.Qualifier != "" {
		for i := range b.sc.tables {
			if b.sameRef(i, c.Qualifier) {
				return b.columnOf(i, name)
			}
		}
		err := sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %s", b.quote(c.Qualifier))
		var refs []string
		for i := range b.sc.tables {
			refs = append(refs, b.sc.tables[i].ref.RefName())
		}
		if s := policies.Suggest(c.Qualifier, refs); s != "" {
			return resolved{}, err.WithHint("did you mean %s?", b.quote(s))
		}
		return resolved{}, err
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
		return resolved{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %s is ambiguous", b.quote(c.Name)).
			WithHint("qualify it with a table name")
	case len(open) == 1 && !strings.EqualFold(name, main.Unit):
		return b.columnOf(open[0], name)
	case len(open) > 1:
		return resolved{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %s is ambiguous", b.quote(c.Name)).
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
	return resolved{}, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %s", b.quote(c.Schema+"."+c.Qualifier)).
		WithHint("a column may be qualified with schema.table only when FROM names that table without an alias")
}

// sameRef reports whether a qualifier names FROM item i: exactly in
// PostgreSQL (its parser folded unquoted names), ignoring case in MySQL.
func (b *builder) sameRef(i int, qualifier string) bool {
	if b.sc.names.Dialect == "postgres" {
		return b.sc.tables[i].ref.RefName() == qualifier
	}
	return b.sc.refName(i) == strings.ToLower(qualifier)
}

// unknownColumn refuses a column name that FROM item i does not expose,
// naming the closest declared one.
func (b *builder) unknownColumn(c ir.ColumnRef, i int) error {
	bt := b.sc.tables[i]
	err := sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s is not exposed by the privacy policy", bt.tbl.Name, b.quote(c.Name))
	if s := policies.Suggest(c.Name, bt.tbl.ColumnNames); s != "" {
		hint := "did you mean " + b.quote(s) + "?"
		if b.sc.names.Dialect == "postgres" && strings.EqualFold(s, c.Name) {
			hint += " PostgreSQL folds unquoted names to lower case and keeps quoted ones as written"
		}
		return err.WithHint("%s", hint)
	}
	path := "datasets." + b.sc.ds.Name + ".tables." + bt.tbl.Name + ".columns"
	return err.WithHint("the DBA declares queryable columns under %s", path)
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
	if !bt.tbl.Public && strings.EqualFold(name, bt.tbl.Unit) {
		return resolved{}, unitRefusal(bt.tbl, name)
	}
	return resolved{}, b.unknownColumn(ir.ColumnRef{Name: name}, i)
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
	if r.decl == nil {
		return exprtype.Column{Ref: r.col, Type: exprtype.Unknown, Declare: b.p.declare(declareKey{dataset: b.sc.ds.Name, table: bt.tbl.Name})}, nil
	}
	col := exprtype.Column{Ref: r.col, Declare: b.p.declare(declareKey{dataset: b.sc.ds.Name, table: bt.tbl.Name, column: r.name, declared: true})}
	col.Type = exprType(r.decl.Type)
	col.Lo, col.Hi, col.HasBounds = clampBounds(r.decl, col.Type)
	if d := r.decl.Domain; d != nil && d.Query == "" {
		col.Domain = d.Resolved
	}
	// A LEFT-joined table's columns read NULL where no row matches.
	col.Nullable = r.table > 0 && b.q.Joins[r.table-1].Outer
	return col, nil
}

// declareKey names a policy entry: a declared column, or (declared
// false, column "") a table's column list.
type declareKey struct {
	dataset, table, column string
	declared               bool
}

// declare is the policy entry k as exprtype.Column.Declare names it (its
// path and position), remembered for the planner's lifetime: it is only
// read in error hints, and building it took three allocations per column
// of every query. The text depends on nothing but the key and the policy,
// which is the planner's own for its lifetime (one policy generation), so
// the key is complete; it only names declared columns and tables, so the
// memo is bounded by the policy.
func (p *Planner) declare(k declareKey) string {
	if s, ok := p.declares.Load(k); ok {
		return s.(string)
	}
	path := "datasets." + k.dataset + ".tables." + k.table + ".columns"
	if k.declared {
		path += "." + k.column
	}
	s := path + " (" + p.pol.Position(path) + ")"
	p.declares.Store(k, s)
	return s
}

// timeDomainExtent is the smallest and largest value of a date or time
// column's declared static domain.
func timeDomainExtent(d *policies.Column, t exprtype.Type) (lo, hi ir.Value, ok bool) {
	if d.Domain == nil || d.Domain.Query != "" || len(d.Domain.Resolved) == 0 {
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
// expression computes with it (ir.Int for integers, ir.Float for reals),
// where a numeric aggregate reads the bare column (sumBounds) and where a
// quantile chooses among its values: the declared bounds, else the
// smallest and largest value of a declared static domain. Both are public.
// This is the one place the rule is written.
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
	case d.Domain == nil || d.Domain.Query != "" || len(d.Domain.Resolved) == 0:
		// A query domain's values are read from the backend when
		// grouping, not known (nor public) at plan time: never a clamp.
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

// groupKey is one grouping key of the plan: a column (r) or a lowered
// expression (expr set).
type groupKey struct {
	r resolved
	// expr is the lowered key expression (exprtype.Scalar: total, every
	// column it computes with clamped); nil for a column key.
	expr ir.Expr
	// text is ir.FormatExpr(expr): two keys, or a key and a select item,
	// are the same expression when their lowered texts are equal.
	text string
	// src is the expression as written, for messages; srcText its
	// ir.FormatExpr, which a select item written the same way matches
	// without being lowered again.
	src     ir.Expr
	srcText string
}

// name is the key as messages name it.
func (g groupKey) name() string {
	if g.expr == nil {
		return g.r.name
	}
	return ir.FormatExpr(g.src)
}

func (b *builder) groups(q *ir.Query) error {
	var seen map[string]bool // a single key cannot repeat: no texts, no map
	if len(q.GroupBy) > 1 {
		seen = map[string]bool{}
	}
	for _, g := range q.GroupBy {
		key, gp, err := b.groupKeyOf(q, g)
		if err != nil {
			return err
		}
		if seen != nil {
			id := key.text
			if key.expr == nil {
				id = ir.FormatExpr(key.r.col)
			}
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		b.groupCols = append(b.groupCols, key)
		b.plan.Groups = append(b.plan.Groups, gp)
		var bk ir.Expr = key.r.col
		if key.expr != nil {
			bk = key.expr
		}
		b.plan.Backend.GroupBy = append(b.plan.Backend.GroupBy, b.exactTextKey(bk, gp.Type))
	}
	return nil
}

// exactTextKey groups a text key by its exact spelling. A column keeps
// its own collation or type, which may compare case- or pad-
// insensitively: MySQL's usual utf8mb4_general_ci, PostgreSQL's citext
// and nondeterministic collations, SQLite's COLLATE NOCASE. Grouped so,
// 'F', 'f' and 'F ' form one group, which carries the spelling of
// whichever row the backend met first: one person's spelling would move
// the whole group's count to another released key (or, with threshold
// selection, release a spelling only that person has). The key is
// grouped as CAST(x AS text) in a binary collation instead (the
// renderer adds it: sqlrender.Dialect.ExactTextCollate; on MySQL the
// cast has the session's binary no-pad collation), so every distinct
// text is its own group on every backend.
func (b *builder) exactTextKey(k ir.Expr, typ string) ir.Expr {
	if typ != policies.TypeText {
		return k
	}
	return ir.Cast{X: k, To: ir.CastText}
}

// groupKeyOf binds one GROUP BY entry. A bare name is a column of the
// tables when the policy exposes one by that name, else the output alias
// of an expression item (PostgreSQL and MySQL both prefer the input
// column in GROUP BY).
func (b *builder) groupKeyOf(q *ir.Query, g ir.Expr) (groupKey, GroupPlan, error) {
	c, isCol := g.(ir.ColumnRef)
	if isCol {
		r, err := b.resolveColumn(c)
		if err == nil {
			return b.columnKey(q, r)
		}
		alias := b.aliasExpr(q, c)
		if alias == nil {
			return groupKey{}, GroupPlan{}, err
		}
		g = alias
	}
	key, gp, err := b.exprKey(g)
	if r, ok := b.textColumnOf(g); ok && err == nil && gp.Domain == nil {
		// The key is the column itself (a cast of a text to text is the
		// identity, and the backend groups a text column key as
		// CAST(col AS text) anyway): its keys are the column's, whether
		// its domain is a list (derived by exprKey already) or a query,
		// with NULL from a LEFT join as for the column.
		b.columnDomain(&gp, r)
		gp.NullKey = r.table > 0 && q.Joins[r.table-1].Outer
	}
	return key, gp, err
}

// aliasExpr returns the expression of the select item whose output alias
// the unqualified name c is, or nil.
func (b *builder) aliasExpr(q *ir.Query, c ir.ColumnRef) ir.Expr {
	if c.Qualifier != "" {
		return nil
	}
	for _, it := range q.Select {
		if it.Expr != nil && it.Alias != "" && strings.EqualFold(it.Alias, c.Name) {
			if _, isCol := it.Expr.(ir.ColumnRef); isCol {
				return nil // an alias of a column was resolved by the parser
			}
			return it.Expr
		}
	}
	return nil
}

func (b *builder) columnKey(q *ir.Query, r resolved) (groupKey, GroupPlan, error) {
	gp := GroupPlan{Name: r.name}
	// Rows without a match in a LEFT-joined table read NULL in its
	// columns: NULL is a key whatever the table holds, released (with
	// noise) like any other so that its presence reveals nothing.
	gp.NullKey = r.table > 0 && q.Joins[r.table-1].Outer
	if r.decl != nil {
		gp.Type = r.decl.Type
	}
	b.columnDomain(&gp, r)
	return groupKey{r: r}, gp, nil
}

// columnDomain sets gp's keys to the column r's: its declared domain
// (values, or a query over public tables), or for a public table's
// column without one, the distinct values it holds (public too), spelled
// as the private query's key groups them (exactTextKey).
func (b *builder) columnDomain(gp *GroupPlan, r resolved) {
	if r.decl != nil {
		if d := r.decl.Domain; d != nil {
			if d.Query != "" {
				gp.DomainSQL = d.Query
			} else {
				gp.Domain = d.Resolved
			}
		}
	}
	if bt := b.sc.tables[r.table]; gp.Domain == nil && gp.DomainSQL == "" && bt.tbl.Public {
		gp.DomainFrom = &ir.BackendQuery{
			From:    ir.TableRef{Schema: bt.tbl.Schema, Name: bt.tbl.Name, Alias: "t0"},
			GroupBy: []ir.Expr{b.exactTextKey(ir.ColumnRef{Qualifier: "t0", Name: r.col.Name}, gp.Type)},
			Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
		}
	}
}

// textColumnOf returns the text column that src is an identity cast of
// (CAST(col AS text), as Tableau writes every dimension), or false.
func (b *builder) textColumnOf(src ir.Expr) (resolved, bool) {
	x, casts := src, 0
	for {
		k, ok := x.(ir.Cast)
		if !ok || k.To != ir.CastText {
			break
		}
		x, casts = k.X, casts+1
	}
	c, isCol := x.(ir.ColumnRef)
	if casts == 0 || !isCol {
		return resolved{}, false // no cast, or a cast of something else
	}
	r, err := b.resolveColumn(c)
	if err != nil || r.decl == nil || r.decl.Type != policies.TypeText {
		return resolved{}, false
	}
	return r, true
}

// exprKey binds a grouping expression: analysed like an aggregate's
// argument (exprtype.Scalar: typed, total, every column it computes with
// clamped to its declared bounds), at plan time and before any charge.
// Its derived domain (the image of its columns' declared domains and
// bounds, exprtype.Info.Domain) is the key set, as a declared domain is
// for a column: every key released, zero counts noised. A key is a
// function of the row, so each unit's rows still land in at most k
// groups and the histogram sensitivities are those of a column key.
func (b *builder) exprKey(src ir.Expr) (groupKey, GroupPlan, error) {
	var perr error
	ir.Walk(src, func(n ir.Expr) bool {
		switch n := n.(type) {
		case ir.Param:
			perr = sqlerr.New(sqlerr.InvalidParameterValue, "parameter $%d has no value", n.Index)
		case ir.Aggregate:
			perr = sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in GROUP BY")
		case ir.OutputRef, ir.Clamp:
			perr = sqlerr.New(sqlerr.Internal, "internal error: %T in a GROUP BY expression as written", n)
		}
		return perr == nil
	})
	if perr != nil {
		return groupKey{}, GroupPlan{}, perr
	}
	x, info, err := exprtype.GroupKey(src, b.exprColumn)
	if err != nil {
		return groupKey{}, GroupPlan{}, err
	}
	narrowed := false
	if dom, ok := b.narrowedDomain(src); ok && (info.Domain == nil || len(dom) < len(info.Domain)) {
		info.Domain, narrowed = dom, true
	}
	key := groupKey{expr: x, text: ir.FormatExpr(x), src: src, srcText: ir.FormatExpr(src)}
	gp := GroupPlan{Name: exprName(ir.SelectItem{Expr: src}), Expr: true}
	gp.Type = policiesType(info.Type)
	if info.Domain != nil {
		gp.Domain = info.Domain
		how := ""
		if narrowed {
			how = ", narrowed by the ranges WHERE allows them"
		}
		b.notes = append(b.notes, fmt.Sprintf("GROUP BY %s: its %d keys are derived from the declared bounds and domains of its columns%s (every key is released, zero counts noised)", ir.FormatExpr(src), len(info.Domain), how))
	}
	return key, gp, nil
}

// noExprDomain refuses a grouping expression without a derived domain
// when threshold selection is not allowed, naming what to declare.
func (b *builder) noExprDomain(g groupKey, user string) error {
	var declare []string
	ir.Walk(g.src, func(n ir.Expr) bool {
		if c, ok := n.(ir.ColumnRef); ok {
			if col, err := b.exprColumn(c); err == nil && !slices.Contains(declare, col.Declare) {
				declare = append(declare, col.Declare)
			}
		}
		return true
	})
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"GROUP BY %s needs a finite set of possible keys: it has none of at most %d values derived from the declared bounds and domains of its columns", g.name(), exprtype.MaxDomain).
		WithHint("declare a domain or narrow integer bounds for %s, group by a coarser expression (e.g. floor(x / 10) * 10), or let the DBA allow threshold key selection with users.%s.delta_per_query > 0",
			strings.Join(declare, ", "), user)
}

func (b *builder) allDomains() bool {
	for _, g := range b.plan.Groups {
		if g.Domain == nil && g.DomainSQL == "" && g.DomainFrom == nil {
			return false
		}
	}
	return true
}

func (b *builder) missingDomain() groupKey {
	for i, g := range b.plan.Groups {
		if g.Domain == nil && g.DomainSQL == "" && g.DomainFrom == nil {
			return b.groupCols[i]
		}
	}
	return groupKey{}
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

// agg adds (or finds) a true aggregate and returns its index: identical
// parts (same primitive, argument and clamp) are computed and noised once,
// whichever aggregates share them (AVG(x) and SUM(x) share sum(x)).
func (b *builder) agg(p aggregate.Part) int {
	a := p.Agg
	// Built by concatenation, not fmt: this runs for every part of every
	// planned query.
	key := strconv.Itoa(int(a.Kind))
	switch {
	case a.Expr != nil:
		key += "/expr:" + ir.FormatExpr(a.Expr) + "/" + strconv.FormatFloat(a.Lo, 'g', -1, 64) + "/" + strconv.FormatFloat(a.Hi, 'g', -1, 64)
	case a.Column != nil:
		key += "/" + a.Column.Qualifier + "." + a.Column.Name
	default:
		key += "/<nil>"
	}
	if p.Quantile != nil {
		// A quantile's part is its selection, not the count its Agg
		// also names.
		key += "/quantile:" + p.Quantile.Key()
	}
	if i, ok := b.aggKeys.find(key); ok {
		return i
	}
	i := len(b.plan.Backend.Aggs)
	b.aggKeys.add(key)
	b.plan.Backend.Aggs = append(b.plan.Backend.Aggs, a)
	b.plan.Aggs = append(b.plan.Aggs, AggPlan{Label: p.Label})
	b.parts = append(b.parts, p)
	return i
}

// partKeys are the keys of a plan's parts (builder.agg), indexed from 0
// in the order added. Most plans have a handful: they are searched in a
// slice, and a map is built only past maxLinear.
type partKeys struct {
	keys []string
	m    map[string]int
}

const maxLinear = 16

// find returns the index of key, or false.
func (k *partKeys) find(key string) (int, bool) {
	if k.m != nil {
		i, ok := k.m[key]
		return i, ok
	}
	for i, x := range k.keys {
		if x == key {
			return i, true
		}
	}
	return 0, false
}

// add appends a key not there yet.
func (k *partKeys) add(key string) {
	k.keys = append(k.keys, key)
	switch {
	case k.m != nil:
		k.m[key] = len(k.keys) - 1
	case len(k.keys) > maxLinear:
		k.m = make(map[string]int, 2*len(k.keys))
		for i, x := range k.keys {
			k.m[x] = i
		}
	}
}

// countRows is the COUNT(*) part (threshold key selection counts with it).
func (b *builder) countRows() int { return b.agg(aggregate.CountPart(aggregate.Arg{Star: true})) }

// aggregateOutput returns the output index computing the aggregate a,
// adding it (hidden unless visible) when absent. The unit of a.Func
// declares the parts; the builder analyses the argument, checks what the
// unit accepts and adds the parts.
func (b *builder) aggregateOutput(a ir.Aggregate, alias string, hidden bool) (int, error) {
	u := aggregate.ByName(string(a.Func))
	if u == nil {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate %s is not supported", a.Func)
	}
	if a.Distinct && !u.Distinct {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s(DISTINCT ...) is not supported: only COUNT takes DISTINCT", strings.ToUpper(u.Name)).
			WithHint("drop DISTINCT (each unit's rows are already bounded by max_rows_per_unit), or count the distinct values with COUNT(DISTINCT x)")
	}
	if a.Distinct && a.Arg == nil && a.ArgExpr == nil {
		return 0, sqlerr.New(sqlerr.SyntaxError, "%s(DISTINCT *) is not valid: DISTINCT needs an argument", strings.ToUpper(u.Name))
	}
	if a.Fraction != nil && !u.Fraction {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s takes no fraction parameter", strings.ToUpper(u.Name))
	}
	var arg aggregate.Arg
	var err error
	switch {
	case a.ArgExpr != nil:
		arg, err = b.exprArg(u, a.ArgExpr)
	case a.Distinct && b.isUnitColumn(*a.Arg):
		arg = b.unitArg()
	default:
		arg, err = b.columnArg(u, a.Arg)
	}
	if err != nil {
		return 0, err
	}
	arg.Distinct, arg.Fraction = a.Distinct, a.Fraction
	arg.Source = a.ArgExpr
	if a.Arg != nil {
		arg.Source = *a.Arg
	}
	if u.Check != nil {
		if err := u.Check(arg); err != nil {
			return 0, err
		}
	}
	out := Output{Name: alias, Hidden: hidden, Kind: OutAggregate, Unit: u, Arg: arg, Type: u.Type(arg.Type)}
	if out.Name == "" {
		out.Name = aggName(a)
	}
	for _, p := range u.Parts(arg) {
		if p.Of != nil {
			if p, err = b.derivedPart(u, p); err != nil {
				return 0, err
			}
		}
		if p.Mechanism != aggregate.DiscreteLaplace && !(p.Mechanism == aggregate.Exponential && p.Shape == aggregate.ShapeBins && p.Quantile != nil) {
			return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s: this version cannot release its part %s", strings.ToUpper(u.Name), p.Label)
		}
		out.Parts = append(out.Parts, b.agg(p))
	}
	return b.addOutput(out, hidden), nil
}

// derivedPart fills a part that aggregates an expression of the argument
// (aggregate.Part.Of): analysed exactly as an expression argument is, so
// the backend SQL stays total and the clamp is the inferred range.
func (b *builder) derivedPart(u *aggregate.Unit, p aggregate.Part) (aggregate.Part, error) {
	x, err := b.exprArg(u, p.Of)
	if err != nil {
		return aggregate.Part{}, err
	}
	p.Agg.Column, p.Agg.Expr = nil, x.Expr
	if p.Agg.Kind == ir.SumClamped {
		p.Agg.Lo, p.Agg.Hi, p.SumType = x.Lo, x.Hi, x.Type
	}
	if p.Label == "" {
		name := "sum"
		if p.Shape == aggregate.ShapeCount {
			name = "count"
		}
		p.Label = name + "(" + x.Text + ")"
	}
	return p, nil
}

// isUnitColumn reports whether c names the privacy unit column of the
// private table: unqualified (when no joined table could claim the name),
// qualified by its name or alias, or by schema.table without an alias.
// Only COUNT(DISTINCT unit) reads it (unitArg): the number of units is a
// count, even where the policy exposes no query to the column itself.
func (b *builder) isUnitColumn(c ir.ColumnRef) bool {
	main := b.sc.tables[0]
	name := strings.ToLower(c.Name)
	if main.tbl.Public || !strings.EqualFold(name, main.tbl.Unit) || (b.sc.names.ExactColumns() && name != c.Name) {
		return false
	}
	switch {
	case c.Schema != "":
		_, named := b.p.pol.Resolve(b.sc.names, c.Schema, c.Qualifier)
		return named == main.tbl && main.ref.Alias == ""
	case c.Qualifier != "":
		return b.sameRef(0, c.Qualifier)
	}
	for _, t := range b.sc.tables[1:] {
		if t.tbl.Column(name) != nil || (t.tbl.Public && len(t.tbl.Columns) == 0) {
			return false // ambiguous: resolveColumn says so
		}
	}
	return true
}

// unitArg is the privacy unit column as a distinct count's argument: bare,
// so that it is compared under the equality of the PARTITION BY that
// bounds each unit's rows (aggregate.DistinctPart).
func (b *builder) unitArg() aggregate.Arg {
	main := b.sc.tables[0]
	c := ir.ColumnRef{Qualifier: main.alias, Name: main.tbl.Unit}
	arg := aggregate.Arg{Column: &c, Text: main.tbl.Unit, Unit: true}
	if d := main.tbl.Column(strings.ToLower(main.tbl.Unit)); d != nil {
		arg.Type = d.Type
	}
	return arg
}

// columnArg analyses a bare column argument (nil: `*`).
func (b *builder) columnArg(u *aggregate.Unit, arg *ir.ColumnRef) (aggregate.Arg, error) {
	if arg == nil {
		if !u.Star {
			return aggregate.Arg{}, sqlerr.New(sqlerr.SyntaxError, "%s needs a column argument", strings.ToUpper(u.Name))
		}
		return aggregate.Arg{Star: true}, nil
	}
	r, err := b.resolveColumn(*arg)
	if err != nil {
		return aggregate.Arg{}, err
	}
	c := r.col
	out := aggregate.Arg{Column: &c, Text: r.name}
	if r.decl != nil {
		out.Type = r.decl.Type
	}
	if u.Ordered {
		return b.orderedArg(u, r, out)
	}
	if !u.Numeric {
		return out, nil
	}
	path := "datasets." + b.sc.ds.Name + ".tables." + b.sc.tables[r.table].tbl.Name + ".columns." + r.name
	if r.decl == nil {
		return aggregate.Arg{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s of %s needs declared bounds", numericName(u), r.name).
			WithHint("declare %s with a type and bounds", path)
	}
	if r.decl.Type != policies.TypeInteger && r.decl.Type != policies.TypeReal {
		return aggregate.Arg{}, sqlerr.New(sqlerr.DatatypeMismatch, "%s of %s: the column is %s, not a number", numericName(u), r.name, r.decl.Type)
	}
	lo, hi, ok := sumBounds(r.decl, exprType(r.decl.Type))
	if !ok {
		return aggregate.Arg{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s of %s needs declared bounds: %s.bounds", numericName(u), r.name, path).
			WithHint("the DBA adds bounds: [lo, hi] at %s", b.p.pol.Position(path))
	}
	out.Lo, out.Hi = lo, hi
	return out, nil
}

// ColumnClamp is what the planner clamps column col to when a query
// computes with it (clampBounds), for tools that report it (ddp-proxy
// check); ok is false when it may only be compared.
func ColumnClamp(col *policies.Column) (lo, hi ir.Value, ok bool) {
	return clampBounds(col, exprType(col.Type))
}

// SumClamp is the clamp of SUM, AVG, VARIANCE and STDDEV of the bare
// numeric column col (sumBounds); ok is false when they are refused.
func SumClamp(col *policies.Column) (lo, hi float64, ok bool) {
	return sumBounds(col, exprType(col.Type))
}

// sumBounds is the clamp of a numeric aggregate's bare column argument:
// the column's clampBounds (its declared bounds, else the extent of its
// declared static domain), as for any computation with it, so that SUM(x)
// and SUM(x + 0) clamp alike. An extent is held to what validation asks of
// declared bounds (policies' checkBounds): finite and ordered, and for an
// integer column whole numbers within ±2^53, exact in the float64 the
// clamp travels in. ok is false otherwise, and without either.
func sumBounds(d *policies.Column, t exprtype.Type) (lo, hi float64, ok bool) {
	l, h, ok := clampBounds(d, t)
	switch {
	case !ok:
		return 0, 0, false
	case t == exprtype.Integer && l.Kind == ir.KindInt && h.Kind == ir.KindInt:
		if l.Int < -(1<<53) || l.Int > 1<<53 || h.Int < -(1<<53) || h.Int > 1<<53 {
			return 0, 0, false
		}
		lo, hi = float64(l.Int), float64(h.Int)
	case t == exprtype.Real && l.Kind == ir.KindFloat && h.Kind == ir.KindFloat:
		lo, hi = l.Float, h.Float
	default:
		return 0, 0, false
	}
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// numericName names a numeric aggregate in the messages about its
// column's declaration (SUM and AVG share theirs).
func numericName(u *aggregate.Unit) string {
	if u == aggregate.Sum || u == aggregate.Avg {
		return "SUM/AVG"
	}
	return strings.ToUpper(u.Name)
}

// addOutput appends out, or for a hidden one reuses an identical output
// (same unit and parts), and returns its index.
func (b *builder) addOutput(out Output, hidden bool) int {
	if hidden {
		for i, o := range b.plan.Outputs {
			if o.Kind == OutAggregate && o.Unit == out.Unit && slices.Equal(o.Parts, out.Parts) {
				return i
			}
		}
	}
	b.plan.Outputs = append(b.plan.Outputs, out)
	return len(b.plan.Outputs) - 1
}

// exprArg analyses an expression argument. The expression is analysed
// like a WHERE operand (exprtype: total, every column clamped to its
// declared bounds), here at plan time and before any charge; for a
// numeric unit its inferred range plays the part of a column's declared
// bounds: the sums clamp to it (a no-op the renderer keeps) and take their
// sensitivity from it through the same calls as for a column.
func (b *builder) exprArg(u *aggregate.Unit, src ir.Expr) (aggregate.Arg, error) {
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
		return aggregate.Arg{}, perr
	}
	if u.Ordered {
		return aggregate.Arg{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s(%s): a quantile takes a column, not an expression", strings.ToUpper(u.Name), ir.FormatExpr(src)).
			WithHint("write the column itself; its declared bounds (or domain) give the candidate values")
	}
	x, info, err := exprtype.Scalar(src, b.exprColumn)
	if err != nil {
		return aggregate.Arg{}, err
	}
	text := ir.FormatExpr(src)
	out := aggregate.Arg{Expr: x, Text: text, Type: policiesType(info.Type)}
	if !u.Numeric {
		return out, nil
	}
	name := strings.ToUpper(u.Name)
	switch {
	case info.Type == exprtype.Integer && info.Bounded:
		if !info.Int.Lo.IsInt64() || !info.Int.Hi.IsInt64() || math.Abs(float64(info.Int.Lo.Int64())) > 1<<53 || math.Abs(float64(info.Int.Hi.Int64())) > 1<<53 {
			return aggregate.Arg{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "%s: the argument's range [%s, %s] exceeds 2^53 in magnitude, too wide to sum with noise", name, info.Int.Lo, info.Int.Hi).
				WithHint("scale the argument down (divide it) so that its range stays within ±2^53")
		}
		out.Lo, out.Hi, out.Type = float64(info.Int.Lo.Int64()), float64(info.Int.Hi.Int64()), policies.TypeInteger
	case info.Type == exprtype.Real && info.Bounded:
		out.Lo, out.Hi, out.Type = info.Real.Lo, info.Real.Hi, policies.TypeReal
	case info.Type == exprtype.Integer || info.Type == exprtype.Real:
		return aggregate.Arg{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s(%s): the argument has no known range", name, text).
			WithHint("compute only with columns that have declared bounds")
	default:
		return aggregate.Arg{}, sqlerr.New(sqlerr.DatatypeMismatch, "%s(%s): the argument is %s, not a number", name, text, info.Type)
	}
	note := fmt.Sprintf("sum(%s): the argument's range %s, inferred from the declared bounds of its columns and the literals, is its clamp and sets its sensitivity", text, info)
	if !slices.Contains(b.notes, note) { // an aggregate met again in HAVING or ORDER BY
		b.notes = append(b.notes, note)
	}
	return out, nil
}

func (b *builder) selectList(q *ir.Query) error {
	if len(q.Select) == 0 {
		return sqlerr.New(sqlerr.SyntaxError, "empty select list")
	}
	// The visible outputs come first, in select-list order; the hidden
	// ones an expression needs are added after them (second loop).
	// An Output is large: room for the visible ones at once.
	b.plan.Outputs = slices.Grow(b.plan.Outputs, len(q.Select))
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
			a := ir.Aggregate{Func: it.Agg, Arg: it.Arg, ArgExpr: it.ArgExpr, Distinct: it.Distinct, Fraction: it.Fraction, Name: it.Name}
			name := it.Alias
			if name == "" {
				name = it.Label
			}
			if _, err := b.aggregateOutput(a, name, false); err != nil {
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
		e, typ, err := b.postType(e)
		if err != nil {
			return err
		}
		o := &b.plan.Outputs[i] // one visible output per item
		if ref, ok := e.(ir.OutputRef); ok && b.plan.Outputs[ref.Index].Kind == OutGroup {
			// The item is a grouping expression: its output is the key.
			name := o.Name
			*o = b.plan.Outputs[ref.Index]
			o.Name, o.Hidden = name, false
			continue
		}
		o.Expr, o.Type, o.AfterWindows = e, typ, b.readsWindow(e)
	}
	if slices.ContainsFunc(exprItems, func(i int) bool { return b.plan.Outputs[i].Kind == OutExpr }) {
		b.notes = append(b.notes, "expressions of the select list are computed by the proxy on the noisy row (post-processing, no extra cost)")
	}
	if b.windowNote {
		b.notes = append(b.notes, "window functions are computed by the proxy over the noisy output rows, after HAVING (post-processing, no extra cost)")
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
	x, typ, err := b.postType(x)
	if err != nil {
		return 0, err
	}
	b.plan.Outputs = append(b.plan.Outputs, Output{Name: "?column?", Kind: OutExpr, Type: typ, Expr: x, Hidden: true, AfterWindows: b.readsWindow(x)})
	return len(b.plan.Outputs) - 1, nil
}

// aggName is the name of an aggregate's column without alias: the
// function as the client wrote it (PostgreSQL names stddev(x) "stddev",
// not after the unit it reads as).
func aggName(a ir.Aggregate) string {
	if a.Name != "" {
		return a.Name
	}
	return string(a.Func)
}

// exprName names an expression item without alias as MySQL does when
// the parser set a Label, else as PostgreSQL does: the function or
// aggregate name, the column name, else ?column?.
func exprName(it ir.SelectItem) string {
	if it.Alias != "" {
		return it.Alias
	}
	if it.Label != "" {
		return it.Label
	}
	switch n := it.Expr.(type) {
	case ir.Func:
		return n.Name
	case ir.Aggregate:
		return aggName(n)
	case ir.Window:
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
	if err := b.checkWindows(e); err != nil {
		return nil, err
	}
	var bad ir.Expr
	ir.Walk(e, func(n ir.Expr) bool {
		switch n.(type) {
		case ir.OutputRef, ir.Clamp:
			bad = n
		}
		return bad == nil
	})
	if bad != nil {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: %T in the select list as written", bad)
	}
	e = b.replaceKeys(e)
	return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		switch n := n.(type) {
		case ir.Window:
			i, err := b.window(n)
			if err != nil {
				return nil, err
			}
			return ir.OutputRef{Index: i}, nil
		case ir.Aggregate:
			i, err := b.aggregateOutput(n, "", true)
			if err != nil {
				return nil, err
			}
			return ir.OutputRef{Index: i}, nil
		case ir.Grouping:
			i, err := b.groupingOutput(n)
			return ir.OutputRef{Index: i}, err
		case ir.ColumnRef:
			i, err := b.columnOutput(n)
			if err != nil {
				return nil, err
			}
			return ir.OutputRef{Index: i}, nil
		case ir.Param:
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parameters are not supported in the select list").
				WithHint("write the value as a literal")
		}
		return n, nil
	})
}

// replaceKeys replaces the grouping expressions in a post-processing
// expression by references to their key outputs: first, before their
// columns are met alone (and refused as ungrouped).
func (b *builder) replaceKeys(e ir.Expr) ir.Expr {
	keys := b.keyMatches(e)
	if keys == nil {
		return e
	}
	e, _ = ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		if gi, ok := keys[ir.FormatExpr(n)]; ok {
			return ir.OutputRef{Index: b.groupOutput(gi)}, nil
		}
		return n, nil
	})
	return e
}

// keyMatches finds, top down, the sub-expressions of a post-processing
// expression that are grouping expressions: lowered, they equal a key's
// lowered expression (so SELECT floor(p.age / 10) matches GROUP BY
// floor(age / 10)). The result maps their text as written to the key.
// Bare columns are left to columnOutput.
func (b *builder) keyMatches(e ir.Expr) map[string]int {
	var out map[string]int
	hasExprKey := false
	for _, g := range b.groupCols {
		hasExprKey = hasExprKey || g.expr != nil
	}
	if !hasExprKey {
		return nil
	}
	ir.Walk(e, func(n ir.Expr) bool {
		switch n.(type) {
		case ir.ColumnRef, ir.Literal, ir.Param, ir.OutputRef:
			return false
		case ir.Aggregate:
			return false
		}
		if hasAggregateNode(n) {
			return true
		}
		written := ir.FormatExpr(n)
		match := func(same func(groupKey) bool) bool {
			for gi, g := range b.groupCols {
				if g.expr != nil && same(g) {
					if out == nil {
						out = map[string]int{}
					}
					out[written] = gi
					return true
				}
			}
			return false
		}
		// Written as the key was (GROUP BY 1, or the expression
		// repeated): no need to lower it again.
		if match(func(g groupKey) bool { return g.srcText == written }) {
			return false
		}
		x, _, err := exprtype.Scalar(n, b.exprColumn)
		if err != nil {
			return true
		}
		text := ir.FormatExpr(x)
		return !match(func(g groupKey) bool { return g.text == text })
	})
	return out
}

func hasAggregateNode(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(n ir.Expr) bool {
		_, isAgg := n.(ir.Aggregate)
		found = found || isAgg
		return !found
	})
	return found
}

// groupOutput returns the (hidden when new) output of grouping key gi.
func (b *builder) groupOutput(gi int) int {
	for i, o := range b.plan.Outputs {
		if o.Kind == OutGroup && o.Group == gi {
			return i
		}
	}
	b.plan.Outputs = append(b.plan.Outputs, Output{Name: b.plan.Groups[gi].Name, Kind: OutGroup, Type: b.plan.Groups[gi].Type, Group: gi, Hidden: true})
	return len(b.plan.Outputs) - 1
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
			return 0, sqlerr.New(sqlerr.GroupingError, "column %s must appear in the GROUP BY clause or be used in an aggregate function", b.quote(r.name))
		}
		typ := ""
		if r.decl != nil {
			typ = r.decl.Type
		}
		b.plan.Outputs = append(b.plan.Outputs, Output{Name: r.name, Kind: OutExpr, Type: typ, Hidden: true})
		return len(b.plan.Outputs) - 1, nil
	}
	return b.groupOutput(gi), nil
}

// postType checks a bound post-processing expression with package
// exprtype's post-processing rules (the function table's Post entries, the
// same the evaluator runs), so that both wires describe the column and a
// type error never waits for the noisy row. It returns the expression
// lowered (quoted literals coerced) and its policies type.
func (b *builder) postType(e ir.Expr) (ir.Expr, string, error) {
	x, t, err := exprtype.PostType(e, b.outType, b.plan.Post)
	if err != nil {
		return nil, "", err
	}
	return x, policiesType(t), nil
}

// outType describes output i to the post-processing analysis: its type,
// and whether the client's database would compute it in double precision
// (sums and averages of reals, real keys) rather than exactly (averages of
// integers are numeric/DECIMAL there), which decides how round rounds it.
func (b *builder) outType(i int) exprtype.Out {
	o := b.plan.Outputs[i]
	out := exprtype.Out{Type: exprType(o.Type)}
	switch o.Kind {
	case OutGroup:
		out.Double = o.Type == policies.TypeReal
	case OutWindow:
		out = windowOut(out.Type, o.Window.Func)
	case OutAggregate:
		out.Double = o.Unit.Double(o.Arg.Type)
	}
	return out
}

// windowOut describes a window's output of type t: an average over a
// window of exact values is exact, any other real window is a double.
func windowOut(t exprtype.Type, f ir.WindowFunc) exprtype.Out {
	return exprtype.Out{Type: t, Double: t == exprtype.Real && f != ir.WinAvg}
}

func policiesType(t exprtype.Type) string {
	if t == exprtype.Null {
		return policies.TypeText // PostgreSQL's unknown reads as text
	}
	for _, p := range typePairs {
		if p.expr == t {
			return p.policy
		}
	}
	return ""
}

// ResultType is the column type a client is told for a post-processing
// expression of analysis type t (text for NULL, as PostgreSQL's unknown).
func ResultType(t exprtype.Type) ir.ColType { return policies.ResultType(policiesType(t)) }

// exprType is the analysis type of a policies type (Unknown for none).
func exprType(policyType string) exprtype.Type {
	for _, p := range typePairs {
		if p.policy == policyType {
			return p.expr
		}
	}
	return exprtype.Unknown
}

// typePairs maps the policy's column types to the analysis's types, one
// entry each, both ways.
var typePairs = []struct {
	policy string
	expr   exprtype.Type
}{
	{policies.TypeInteger, exprtype.Integer},
	{policies.TypeReal, exprtype.Real},
	{policies.TypeText, exprtype.Text},
	{policies.TypeBoolean, exprtype.Boolean},
	{policies.TypeDate, exprtype.Date},
	{policies.TypeTimestamp, exprtype.Timestamp},
	{policies.TypeTimestampTZ, exprtype.TimestampTZ},
}

// readsWindow reports whether a bound expression reads a window's output
// (directly or through an expression output that does).
func (b *builder) readsWindow(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(n ir.Expr) bool {
		if r, ok := n.(ir.OutputRef); ok && r.Index < len(b.plan.Outputs) {
			o := b.plan.Outputs[r.Index]
			found = found || o.Kind == OutWindow || o.AfterWindows
		}
		return !found
	})
	return found
}

// checkWindows refuses, with the reason, the windows of e that read input
// rows: a window runs over the noisy output rows, so its argument and keys
// may only read aggregates and grouping keys. Windows inside a window are
// refused too.
func (b *builder) checkWindows(e ir.Expr) error {
	var err error
	ir.Walk(e, func(n ir.Expr) bool {
		w, ok := n.(ir.Window)
		if !ok || err != nil {
			return err == nil
		}
		parts := append([]ir.Expr{w.Arg}, w.PartitionBy...)
		for _, o := range w.OrderBy {
			parts = append(parts, o.Expr)
		}
		for _, p := range parts {
			ir.Walk(p, func(m ir.Expr) bool {
				switch m := m.(type) {
				case ir.Aggregate:
					return false // over input rows, released with noise
				case ir.Window:
					err = sqlerr.New(sqlerr.WindowingError, "window functions cannot be nested: %s", ir.FormatExpr(w))
				case ir.ColumnRef:
					r, rerr := b.resolveColumn(m)
					if rerr != nil {
						err = rerr
					} else if b.groupIndex(r) < 0 && !b.plan.NoRows {
						err = sqlerr.New(sqlerr.GroupingError, "window function %s reads the column %s of the input rows: windows are computed by the proxy over the noisy output rows, so they may only read aggregates and grouping keys", ir.FormatExpr(w), b.quote(r.name)).
							WithHint("aggregate first, e.g. SUM(COUNT(*)) OVER () or SUM(SUM(x)) OVER (ORDER BY k), or group by the column")
					}
				}
				return err == nil
			})
		}
		return err == nil
	})
	return err
}

// window adds the hidden output of a bound window function.
func (b *builder) window(w ir.Window) (int, error) {
	lw, t, err := exprtype.PostWindow(w, b.outType, b.plan.Post)
	if err != nil {
		return 0, err
	}
	b.plan.Outputs = append(b.plan.Outputs, Output{Name: w.Func.String(), Kind: OutWindow, Type: policiesType(t), Window: lw, Hidden: true})
	b.windowNote = true
	return len(b.plan.Outputs) - 1, nil
}

func (b *builder) groupIndex(r resolved) int {
	for i, g := range b.groupCols {
		if g.expr == nil && g.r.col == r.col {
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
		i, err := b.aggregateOutput(n, "", true)
		return i, true, err
	case ir.Grouping:
		i, err := b.groupingOutput(n)
		return i, true, err
	case ir.ColumnRef:
		if n.Qualifier == "" {
			for i := 0; i < b.plan.NumVisible; i++ {
				// An alias: exactly in PostgreSQL, ignoring case in MySQL.
				if o := b.plan.Outputs[i].Name; o == n.Name || !b.sc.names.ExactColumns() && strings.EqualFold(o, n.Name) {
					return i, true, nil
				}
			}
		}
		i, err := b.columnOutput(n)
		return i, err == nil, err
	}
	return 0, false, nil
}

func errWindowInHaving() error {
	return sqlerr.New(sqlerr.WindowingError, "window functions are not allowed in HAVING (SQL computes them after HAVING)").
		WithHint("filter on the client, or use ORDER BY … LIMIT for a top-N")
}

func (b *builder) postProcessing(q *ir.Query) error {
	if q.Having != nil {
		var win error
		ir.Walk(q.Having, func(n ir.Expr) bool {
			if _, ok := n.(ir.Window); ok {
				win = errWindowInHaving()
			}
			return win == nil
		})
		if win != nil {
			return win
		}
		// A grouping expression is its key output (replaceKeys, which
		// may be hidden; the parser writes no position in HAVING).
		h, err := ir.Rewrite(b.replaceKeys(q.Having), func(n ir.Expr) (ir.Expr, error) {
			if r, ok := n.(ir.OutputRef); ok && r.Index < len(b.plan.Outputs) && b.plan.Outputs[r.Index].Kind == OutGroup {
				return n, nil
			}
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
		raw := h
		h, typ, err := b.postType(h)
		if err != nil {
			return err
		}
		if b.mysql && (typ == policies.TypeInteger || typ == policies.TypeReal) {
			// MySQL reads a number as a truth value: HAVING COUNT(*) keeps
			// the groups whose (noisy) count is not 0; NULL stays NULL.
			if h, typ, err = b.postType(ir.Compare{Op: ir.OpNe, L: raw, R: ir.Literal{Value: ir.Int(0)}}); err != nil {
				return err
			}
		}
		if l, null := h.(ir.Literal); typ != policies.TypeBoolean && !(null && l.Value.IsNull()) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "argument of HAVING must be boolean, not %s", typ)
		}
		if b.readsWindow(h) {
			return errWindowInHaving()
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
		b.plan.OrderBy = append(b.plan.OrderBy, OrderKey{Output: i, Desc: o.Desc, NullsHigh: o.Nulls.High(o.Desc, b.nullsHigh)})
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
		part := b.parts[i]
		kind := part.Shape.Kind(grouped)
		switch part.Shape {
		case aggregate.ShapeCount, aggregate.ShapeDistinct, aggregate.ShapeDistinctUnits:
			a.Quantum = 1
			sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: kind})
		case aggregate.ShapeBins:
			// The histogram GROUP BY (keys…, bin(x)): its sensitivity
			// bounds the rank utility's (planner/quantile.go).
			a.Quantum = 1
			sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: kind})
			if err == nil {
				b.ddpQuantileMultiplier(ds, a)
			}
		case aggregate.ShapeSum:
			lo, hi := ba.Lo, ba.Hi
			if part.SumType == policies.TypeInteger {
				a.Quantum = 1
				sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: kind, Lo: int64(lo), Hi: int64(hi), Quantum: 1})
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
					// An expression's range (a literal such as 1e-307)
					// can hold one, and so can a real column's bounds or
					// domain extent (validation only asks that they be finite).
					if bnd != 0 && math.Abs(bnd)/gamma < 0x1p-1000 {
						return sqlerr.New(sqlerr.NumericValueOutOfRange, "cannot sum %s: the bound %g of its range is nonzero but negligible next to the noise lattice γ = %g", a.Label, bnd, gamma).
							WithHint("write 0 instead of a value that small")
					}
				}
				ba.Quantum = gamma
				a.Quantum = gamma
				qlo, qhi := quantize(lo, gamma), quantize(hi, gamma)
				sens, err = b.sensitivity(ds, main, aggShape{Index: i, Kind: kind, Lo: qlo, Hi: qhi, Quantum: gamma})
			}
		default:
			return sqlerr.New(sqlerr.Internal, "internal error: %s has no known sensitivity shape", a.Label)
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

// quantize maps a bound to lattice units exactly as the backends do:
// FLOOR(x/γ + 0.5).
func quantize(x, gamma float64) int64 { return int64(math.Floor(x/gamma + 0.5)) }
