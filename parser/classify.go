package parser

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// This file holds the classification logic both dialect walkers share:
// refusal errors, the relation/function collector, CTE scoping, the
// predicate function whitelist and the assembly rules of the aggregate
// subset (GROUP BY resolution, grouping checks, positions, LIMIT).

// unsupported is the reason a SELECT falls outside the aggregate subset. Its
// text becomes Statement.NotAggregate, so it is written for the analyst and
// says what to change.
type unsupported struct{ msg string }

func (u *unsupported) Error() string { return u.msg }

func notAgg(format string, args ...any) error {
	return &unsupported{msg: fmt.Sprintf(format, args...)}
}

// ungroupedError is checkGrouped's refusal of a query that is otherwise
// inside the subset, with that query (Statement.Ungrouped). Whether the
// column it names is the privacy unit only the planner knows, from the
// policy; told to add the unit to GROUP BY, the analyst would only meet
// the unit's own refusal there.
type ungroupedError struct {
	unsupported
	query *ir.Query
}

// withUngrouped is deferred by a query builder whose query checkGrouped
// refused (grouped), once the rest of the query has been built into q
// (or failed with err): the result is always the grouping refusal,
// which comes first as it always did, carrying q when it was built.
func withUngrouped(grouped error, q *ir.Query, err error) error {
	u, ok := grouped.(*unsupported)
	if err != nil || q == nil || !ok {
		return grouped
	}
	return &ungroupedError{unsupported: *u, query: q}
}

// ungroupedQuery is the query an ungroupedError carries, else nil. A
// refusal of a CTE or subquery body carries that body.
func ungroupedQuery(err error) *ir.Query {
	var u *ungroupedError
	if errors.As(err, &u) {
		return u.query
	}
	return nil
}

// readOnly refuses a statement that would change data or schema.
func readOnly(verb string) *sqlerr.Error {
	return sqlerr.New(sqlerr.ReadOnly, "the proxy is read-only: %s is not allowed", verb)
}

// notSupported refuses a statement the proxy does not run for another reason.
func notSupported(verb string) *sqlerr.Error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"%s is not supported by the proxy; it answers aggregate SELECT queries (COUNT, SUM, AVG)", verb)
}

// copyRefused is COPY's own refusal: COPY TO streams rows out, COPY FROM
// writes them, and either way it bypasses the aggregate path.
func copyRefused() *sqlerr.Error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"COPY is not supported by the proxy: it reads or writes individual rows; use an aggregate SELECT (COUNT, SUM, AVG) instead")
}

// lockRefused refuses SELECT ... FOR UPDATE/SHARE anywhere in a statement:
// row locks are a write-side effect and a read-only proxy takes none.
func lockRefused() *sqlerr.Error {
	return sqlerr.New(sqlerr.ReadOnly,
		"the proxy is read-only: SELECT ... FOR UPDATE/SHARE (row locking) is not allowed; remove the locking clause")
}

// refs accumulates what a statement reads: relations and functions in
// first-seen order without duplicates, the parameter count, and the first
// reason found to refuse the statement as a whole.
type refs struct {
	rels    []ir.TableRef
	funcs   []string
	seenRel map[ir.TableRef]bool // nil until rels outgrows smallRefs
	seenFn  map[string]bool      // nil until funcs outgrows smallRefs
	params  int
	refused *sqlerr.Error
}

// smallRefs is how many relations or functions are deduplicated by
// scanning the list before a set is built: a statement names a few, and
// the two sets were a fifth of the allocations of a fresh statement's
// conversion. The set keeps a long list (generated SQL) linear.
const smallRefs = 16

func newRefs() *refs { return &refs{} }

// addRel records a relation. Aliases are dropped: Relations names tables,
// and one table read twice under two aliases is listed once.
func (r *refs) addRel(schema, name string) {
	r.rels, r.seenRel = addUnique(r.rels, r.seenRel, ir.TableRef{Schema: schema, Name: name})
}

func (r *refs) addFunc(name string) {
	r.funcs, r.seenFn = addUnique(r.funcs, r.seenFn, name)
}

// addUnique appends x to list unless it is there, keeping first-seen
// order; seen is the set of list once it has more than smallRefs items.
func addUnique[T comparable](list []T, seen map[T]bool, x T) ([]T, map[T]bool) {
	if seen == nil {
		if slices.Contains(list, x) {
			return list, nil
		}
		list = append(list, x)
		if len(list) > smallRefs {
			seen = make(map[T]bool, 2*len(list))
			for _, y := range list {
				seen[y] = true
			}
		}
		return list, seen
	}
	if !seen[x] {
		seen[x] = true
		list = append(list, x)
	}
	return list, seen
}

func (r *refs) refuse(e *sqlerr.Error) {
	if r.refused == nil {
		r.refused = e
	}
}

// cteScope tracks which WITH names are visible while a walker descends, so
// that a reference to a CTE is not listed as a relation while a same-named
// table outside the CTE's scope still is. A non-recursive CTE is visible to
// the CTEs after it and to the statement body; a recursive one also to
// itself. Erring the other way (listing a CTE name as a table) only makes
// the planner refuse, which is the safe direction.
type cteScope struct{ frames [][]string }

func (s *cteScope) push() { s.frames = append(s.frames, nil) }
func (s *cteScope) pop()  { s.frames = s.frames[:len(s.frames)-1] }
func (s *cteScope) add(name string) {
	s.frames[len(s.frames)-1] = append(s.frames[len(s.frames)-1], name)
}

func (s *cteScope) visible(name string) bool {
	for _, f := range s.frames {
		if slices.Contains(f, name) {
			return true
		}
	}
	return false
}

// allowedFuncs lists the predicate whitelist for error messages.
func allowedFuncs() string { return strings.Join(exprtype.Names(), ", ") }

// safeFunc builds a whitelisted function call. canon is the canonical
// name of exprtype's function table (the dialect walker maps its
// spellings), written is the name as the analyst wrote it, for the message.
func safeFunc(canon, written string, args []ir.Expr) (ir.Expr, error) {
	f, ok := exprtype.Lookup(canon)
	if !ok {
		return nil, notAgg("function %s is not allowed in predicates; allowed: %s", written, allowedFuncs())
	}
	if f.Rule == nil {
		return nil, notAgg("function %s is computed only over aggregates and grouping keys (select list, HAVING, ORDER BY), never on the table's rows", written)
	}
	if !f.ArityOK(len(args)) {
		return nil, notAgg("function %s takes %s argument(s) in predicates, not %d", written, f.ArityText(), len(args))
	}
	return ir.Func{Name: canon, Args: args}, nil
}

// postFunc checks a function call of a post-processing expression (select
// list, HAVING, ORDER BY): it runs in the proxy on noisy values, with the
// post-processing rules of exprtype's function table (ROUND(x, digits) is
// allowed there besides the predicate arities); the functions without one
// are refused at parse time, before anything is charged.
func postFunc(canon, written string, args []ir.Expr) (ir.Expr, error) {
	f, ok := exprtype.PostFunc(canon)
	if !ok {
		if _, inWhere := exprtype.Lookup(canon); inWhere {
			return nil, notAgg(msgNotInHaving, "function "+written)
		}
		return nil, notAgg("function %s is not supported; allowed: %s", written, allowedFuncs())
	}
	if !f.PostArityOK(len(args)) {
		return nil, notAgg("function %s does not take %d argument(s)", written, len(args))
	}
	return ir.Func{Name: canon, Args: args}, nil
}

// windowFuncs maps the window functions the proxy computes over the output
// rows (both dialects spell them alike).
var windowFuncs = map[string]ir.WindowFunc{
	"count": ir.WinCount, "sum": ir.WinSum, "avg": ir.WinAvg, "min": ir.WinMin, "max": ir.WinMax,
	"row_number": ir.WinRowNumber, "rank": ir.WinRank, "dense_rank": ir.WinDenseRank,
}

const windowFuncNames = "count, sum, avg, min, max, row_number, rank, dense_rank"

// callFunc builds a call of a function of the table: through postFunc in
// a post-processing expression (aggs), through safeFunc in a predicate.
func callFunc(canon, written string, args []ir.Expr, aggs bool) (ir.Expr, error) {
	if aggs {
		return postFunc(canon, written, args)
	}
	return safeFunc(canon, written, args)
}

// weekday is the day of the week of x as a client's function numbers it:
// extract(dow FROM x) (Sunday 0 … Saturday 6, which every backend
// computes alike), counted from Monday when monday ((dow + 6) % 7:
// Monday 0 … Sunday 6), plus first. PostgreSQL's isodow is (1, Monday),
// MySQL's DAYOFWEEK (1, Sunday) and WEEKDAY (0, Monday). Arithmetic maps
// 0…6 onto exactly seven values, so a GROUP BY of it derives seven keys.
func weekday(x ir.Expr, first int64, monday bool) ir.Expr {
	var d ir.Expr = ir.Func{Name: "extract", Args: []ir.Expr{ir.Literal{Value: ir.String("dow")}, x}}
	if monday {
		d = ir.Arith{Op: ir.OpMod, L: ir.Arith{Op: ir.OpAdd, L: d, R: ir.Literal{Value: ir.Int(6)}}, R: ir.Literal{Value: ir.Int(7)}}
	}
	if first == 0 {
		return d
	}
	return ir.Arith{Op: ir.OpAdd, L: d, R: ir.Literal{Value: ir.Int(first)}}
}

// countConst converts COUNT(constant): COUNT(1), COUNT('x') count every row
// as COUNT(*) does. COUNT(NULL) is 0 whatever the data; it is refused rather
// than answered, so that a typo does not pass silently as a count.
func countConst(isNull bool) (ir.Aggregate, error) {
	if isNull {
		return ir.Aggregate{}, notAgg("COUNT(NULL) is always 0; write COUNT(*) to count rows")
	}
	return ir.Aggregate{Func: ir.AggCount}, nil
}

// filterAggregate lowers agg(...) FILTER (WHERE cond) to an aggregate
// of CASE WHEN cond THEN arg END (COUNT(*) counts CASE WHEN cond THEN 1
// END): the rows the condition rejects give NULL, which COUNT, SUM and
// AVG (its sum and its count) skip, so the result is the filtered
// aggregate and the argument's range, hence the sensitivity, is the
// unfiltered one's.
func filterAggregate(a ir.Aggregate, cond ir.Expr) ir.Aggregate {
	var v ir.Expr = ir.Literal{Value: ir.Int(1)}
	switch {
	case a.Arg != nil:
		v = *a.Arg
	case a.ArgExpr != nil:
		v = a.ArgExpr
	}
	return ir.Aggregate{Func: a.Func, ArgExpr: ir.Case{Whens: []ir.When{{Cond: cond, Then: v}}}, Distinct: a.Distinct, Fraction: a.Fraction}
}

// Messages shared by both dialects, so the analyst sees the same advice
// whichever front end they use.
const (
	msgNotInHaving  = "%s is not supported in HAVING, ORDER BY or the select list yet; use it in WHERE"
	msgCast         = "only casts to bigint, integer, double precision, numeric/decimal (numeric(p,s) with 0 <= s <= p <= 1000), text, date, timestamp and timestamptz are supported (CAST(x AS SIGNED|DOUBLE|DECIMAL(M,D)|CHAR|DATE|DATETIME) in MySQL); compare with a literal of the column's type instead"
	msgSubquery     = "subqueries are not supported in aggregate queries; run the subquery separately and use its result as a literal"
	msgWindow       = "window functions are not supported here; they are computed over the output rows in the select list and ORDER BY (e.g. SUM(COUNT(*)) OVER ())"
	msgWindowInput  = "a window function reads column %s of the input rows: windows are computed by the proxy over the noisy output rows, so they may only read aggregates and grouping keys (e.g. SUM(COUNT(*)) OVER (), SUM(SUM(x)) OVER (ORDER BY k))"
	msgWindowWhere  = "window functions are not allowed in WHERE or GROUP BY; use them in the select list or ORDER BY"
	msgNamedWindow  = "named windows (WINDOW w AS ...) are not supported; write the window after OVER"
	msgWindowFrame  = "window frame clauses (ROWS/RANGE/GROUPS BETWEEN ...) are not supported; the default frame is used without one"
	msgSetOp        = "set operations (UNION, INTERSECT, EXCEPT) are not supported in aggregate queries; run each part as its own query"
	msgDistinct     = "SELECT DISTINCT lists individual values; use GROUP BY with COUNT(*) instead"
	msgNoFrom       = "a SELECT without FROM is not an aggregate over a table"
	msgStar         = "SELECT * reads individual rows; select grouping columns and aggregates (COUNT, SUM, AVG) instead"
	msgCommaJoin    = "several FROM items are not supported; only inner and LEFT equi-joins on one column are supported: write FROM a [LEFT] JOIN b ON a.x = b.y"
	msgJoinKind     = "only inner and LEFT equi-joins on one column are supported: write [LEFT] JOIN t ON a.x = b.y (or IS NOT DISTINCT FROM) or [LEFT] JOIN t USING (x)"
	msgJoinOuter    = "RIGHT and FULL joins are not supported: they would add rows that are not private rows; put the private table first and write LEFT JOIN or JOIN"
	msgNoAggregate  = "function %s is not supported in the select list; use %s of a column"
	msgAggArg       = "aggregate arguments must be a single column or expression (e.g. SUM(amount), SUM(hours * 52))"
	msgAggInWhere   = "aggregates are not allowed in WHERE; use HAVING"
	msgNestedAgg    = "aggregates are only allowed in the select list, HAVING and ORDER BY"
	msgLimit        = "LIMIT and OFFSET must be non-negative integer constants"
	msgGroupConst   = "GROUP BY a constant other than a select-list position is not supported; group by a column, an expression or a position"
	msgGroupingSet  = "ROLLUP, CUBE and GROUPING SETS are not supported; run one GROUP BY query per grouping"
	msgFromSubq     = "subqueries in FROM are not supported; query the table directly"
	msgNestedAggr   = "aggregating the result of an aggregate query is not supported: the subquery in FROM has %s; write one aggregate query over the table"
	msgInnerLimit   = "LIMIT and OFFSET inside a subquery in FROM are not supported: they pick individual rows; remove them"
	msgInnerDist    = "DISTINCT inside a subquery in FROM is not supported: it collapses rows before the aggregate; aggregate the table directly"
	msgInnerSetOp   = "set operations (UNION, INTERSECT, EXCEPT) inside a subquery in FROM are not supported; run each part as its own query"
	msgInnerWindow  = "window functions inside a subquery in FROM are not supported"
	msgInnerNoFrom  = "a subquery in FROM must read a table"
	msgRecursive    = "WITH RECURSIVE is not supported; write the CTEs without RECURSIVE"
	msgCTEModify    = "data-modifying statements in WITH are not allowed"
	msgCTETwice     = "CTE %s is referenced more than once, which would join a table with itself; reference each CTE once"
	msgSubqNotFirst = "a subquery or CTE in FROM must be its first item, with public tables joined after it"
	msgInnerClause  = "%s inside a subquery in FROM is not supported"
	msgFromFunc     = "functions in FROM are not supported; query a table"
	msgTableSample  = "TABLESAMPLE is not supported; sampling does not reduce the privacy cost"
	msgLateral      = "LATERAL is not supported in aggregate queries"
	msgThreePart    = "column names with more than a schema and a table qualifier are not supported; write schema.table.column, table.column or column"
	msgEscape       = "LIKE ... ESCAPE is not supported; use the default backslash escape"
	msgRegex        = "regular expression operators are not allowed in predicates; use LIKE"
	msgVariable     = "variables are not allowed in predicates; use a literal or a parameter"
	msgIsTruth      = "IS TRUE / IS FALSE / IS UNKNOWN are not supported; compare with = TRUE or use IS NULL"
	msgRow          = "row constructors are not supported in predicates; compare one column at a time"
	msgCollate      = "COLLATE is not supported in predicates"
	msgDistinctOp   = "IS DISTINCT FROM is not supported; use = / <> with IS NULL"
	msgArray        = "array expressions are not supported in predicates, except x = ANY(ARRAY[...]) and x <> ALL(ARRAY[...]) over a written list; use IN (...)"
	msgTypedLit     = "typed literals such as DATE '2020-01-01' are not supported in predicates yet; compare with a plain string literal"
	msgParamLimit   = "LIMIT and OFFSET must be integer constants, not parameters"
)

// queryBuilder holds the dialect rules the shared assembly needs.
type queryBuilder struct {
	// fold makes identifier comparisons case-insensitive (MySQL columns and
	// aliases); PostgreSQL identifiers arrive already folded by its parser.
	fold bool
}

func (b queryBuilder) sameName(x, y string) bool {
	if b.fold {
		return strings.EqualFold(x, y)
	}
	return x == y
}

// sameColumn reports whether two references can name the same column: the
// names match and the qualifiers (and schemas) match or one of them is
// absent (GROUP BY p.city groups SELECT city). The planner resolves the qualifiers for real.
func (b queryBuilder) sameColumn(x, y ir.ColumnRef) bool {
	return b.sameName(x.Name, y.Name) &&
		(x.Qualifier == "" || y.Qualifier == "" || b.sameName(x.Qualifier, y.Qualifier)) &&
		(x.Schema == "" || y.Schema == "" || b.sameName(x.Schema, y.Schema))
}

// groupKey is one GROUP BY entry as written: a column, an expression or
// a 1-based position.
type groupKey struct {
	col   ir.ColumnRef
	expr  ir.Expr // a key that is neither a column nor a position
	pos   int64
	isPos bool
}

// resolveGroupBy maps positions and select-list aliases onto the grouping
// keys they name. A position names its item's column or expression (an
// aggregate is refused). A bare name that is the column of a plain select
// item stays that column; otherwise a name equal to a plain item's alias
// resolves to that item's column (GROUP BY region for SELECT city AS
// region). Any other name is left as written: the planner resolves it
// against the table's columns first and then against the aliases of
// expression items, as PostgreSQL and MySQL both prefer an input column
// to an output alias in GROUP BY.
func (b queryBuilder) resolveGroupBy(items []ir.SelectItem, keys []groupKey) ([]ir.Expr, error) {
	var out []ir.Expr
	for _, k := range keys {
		switch {
		case k.isPos:
			if k.pos < 1 || k.pos > int64(len(items)) {
				return nil, notAgg("GROUP BY position %d is not in the select list", k.pos)
			}
			it := items[k.pos-1]
			if it.Agg != ir.AggNone || it.Expr != nil && hasAggregate(it.Expr) {
				return nil, notAgg("GROUP BY %d refers to an aggregate; group by columns or expressions of the row", k.pos)
			}
			if it.IsColumn() {
				out = append(out, *it.Arg)
			} else {
				out = append(out, it.Expr)
			}
		case k.expr != nil:
			out = append(out, k.expr)
		default:
			out = append(out, b.resolveAlias(items, k.col))
		}
	}
	return out, nil
}

// hasAggregate reports whether e contains an aggregate call.
func hasAggregate(e ir.Expr) bool { return contains[ir.Aggregate](e) }

// contains reports whether e contains a node of type T.
func contains[T ir.Expr](e ir.Expr) bool {
	found := false
	ir.Walk(e, func(n ir.Expr) bool {
		_, is := n.(T)
		found = found || is // Walk goes on to siblings after a false
		return !found
	})
	return found
}

func (b queryBuilder) isPlainColumn(items []ir.SelectItem, name string) bool {
	for _, it := range items {
		if it.IsColumn() && b.sameName(it.Arg.Name, name) {
			return true
		}
	}
	return false
}

func (b queryBuilder) resolveAlias(items []ir.SelectItem, c ir.ColumnRef) ir.ColumnRef {
	if c.Qualifier != "" || b.isPlainColumn(items, c.Name) {
		return c
	}
	for _, it := range items {
		if it.IsColumn() && it.Alias != "" && b.sameName(it.Alias, c.Name) {
			return *it.Arg
		}
	}
	return c
}

// grouped reports whether c is a grouping column.
func (b queryBuilder) grouped(keys []ir.Expr, c ir.ColumnRef) bool {
	return slices.ContainsFunc(keys, func(g ir.Expr) bool {
		gc, ok := g.(ir.ColumnRef)
		return ok && b.sameColumn(c, gc)
	})
}

// aliasKey reports whether an expression item may be grouped by its
// output alias (GROUP BY bin for SELECT floor(age / 10) AS bin): the
// planner decides, knowing the table's columns.
func (b queryBuilder) aliasKey(keys []ir.Expr, it ir.SelectItem) bool {
	return it.Expr != nil && it.Alias != "" && slices.ContainsFunc(keys, func(g ir.Expr) bool {
		gc, ok := g.(ir.ColumnRef)
		return ok && gc.Qualifier == "" && b.sameName(gc.Name, it.Alias)
	})
}

// coveredByKey reports whether the column c of the item expression e
// lies inside a sub-expression that is written as a grouping expression
// (SELECT floor(age / 10) * 10 ... GROUP BY floor(age / 10) * 10). The
// comparison is of the text as written; the planner compares the
// resolved expressions and refuses what is not a key.
func (b queryBuilder) coveredByKey(keys []ir.Expr, e ir.Expr, c ir.ColumnRef) bool {
	var texts []string
	for _, g := range keys {
		if _, isCol := g.(ir.ColumnRef); !isCol {
			texts = append(texts, b.keyText(g))
		}
	}
	if len(texts) == 0 || e == nil {
		return false
	}
	covered := false
	ir.Walk(e, func(n ir.Expr) bool {
		if covered {
			return false
		}
		if slices.Contains(texts, b.keyText(n)) {
			ir.Walk(n, func(m ir.Expr) bool {
				if mc, ok := m.(ir.ColumnRef); ok && mc == c {
					covered = true
				}
				return !covered
			})
			return false
		}
		return true
	})
	return covered
}

func (b queryBuilder) keyText(e ir.Expr) string {
	// Qualifiers are dropped: p.age and age may be the same column.
	e, _ = ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		if c, ok := n.(ir.ColumnRef); ok {
			return ir.ColumnRef{Name: c.Name}, nil
		}
		return n, nil
	})
	t := ir.FormatExpr(e)
	if b.fold {
		t = strings.ToLower(t)
	}
	return t
}

// checkGrouped requires every plain column of the select list to be a
// grouping column: selecting an ungrouped column would read row values.
//
// A query that provably reads no row (LIMIT 0, WHERE 1 <> 1: the
// table-permission probe of BI tools) may select anything: it is answered
// with its typed, empty result.
func (b queryBuilder) checkGrouped(q *ir.Query) error {
	if q.ReadsNoRow() {
		return nil
	}
	hasAgg, hasWindow := false, false
	for _, it := range q.Select {
		if it.Agg != ir.AggNone {
			hasAgg = true
			continue
		}
		cols := []ir.ColumnRef{}
		var inWindow []bool
		if it.Expr != nil {
			// Columns outside the expression's aggregates (Aggregate nodes
			// are leaves: their argument is not an Expr).
			var walk func(e ir.Expr, win bool)
			walk = func(e ir.Expr, win bool) {
				ir.Walk(e, func(n ir.Expr) bool {
					switch n := n.(type) {
					case ir.Aggregate:
						hasAgg = true
					case ir.ColumnRef:
						cols = append(cols, n)
						inWindow = append(inWindow, win)
					case ir.Window:
						hasWindow = true
						walk(n.Arg, true)
						for _, p := range n.PartitionBy {
							walk(p, true)
						}
						for _, o := range n.OrderBy {
							walk(o.Expr, true)
						}
						return false
					}
					return true
				})
			}
			walk(it.Expr, false)
		} else {
			cols = append(cols, *it.Arg)
			inWindow = append(inWindow, false)
		}
		for i, c := range cols {
			grouped := b.grouped(q.GroupBy, c) || b.aliasKey(q.GroupBy, it) || b.coveredByKey(q.GroupBy, it.Expr, c)
			switch {
			case !grouped && inWindow[i]:
				return notAgg(msgWindowInput, colText(c))
			case !grouped:
				return notAgg("column %s is selected but not in GROUP BY, which would read individual rows; add it to GROUP BY or aggregate it", colText(c))
			}
		}
	}
	if !hasAgg && len(q.GroupBy) == 0 {
		if hasWindow {
			return notAgg("a window function over the table's rows would read individual rows; the proxy computes windows over the output rows of an aggregate query (e.g. SELECT k, COUNT(*), SUM(COUNT(*)) OVER () ... GROUP BY k)")
		}
		return notAgg("the select list has no aggregate; use COUNT, SUM or AVG")
	}
	return nil
}

func colText(c ir.ColumnRef) string {
	if c.Schema != "" {
		return c.Schema + "." + c.Qualifier + "." + c.Name
	}
	if c.Qualifier != "" {
		return c.Qualifier + "." + c.Name
	}
	return c.Name
}

// outputRef turns ORDER BY n into a reference to the n-th select item.
func outputRef(pos int64, items []ir.SelectItem) (ir.Expr, error) {
	if pos < 1 || pos > int64(len(items)) {
		return nil, notAgg("ORDER BY position %d is not in the select list", pos)
	}
	return ir.OutputRef{Index: int(pos - 1)}, nil
}

// nonNegative validates a LIMIT or OFFSET constant.
func nonNegative(n int64) (*int64, error) {
	if n < 0 {
		return nil, notAgg(msgLimit)
	}
	return &n, nil
}
