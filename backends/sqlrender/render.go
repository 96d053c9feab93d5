package sqlrender

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Statement is rendered SQL with its bound arguments in placeholder order.
type Statement struct {
	SQL  string
	Args []any
}

// Names the rendering introduces. They live only inside the derived table
// of the bounded form, so they cannot collide with user columns.
const (
	boundedAlias = "ddp_b"
	rowNumber    = "ddp_rn"
)

// maxExact is 2^53: every integer up to it is an exact double, so clamped
// and quantized values up to it sum exactly on every backend.
const maxExact = 1 << 53

// Render renders q. Without contribution bounding (MaxRowsPerUnit == 0):
//
//	SELECT g..., agg... FROM from [JOIN ...] [WHERE w] [GROUP BY g...]
//
// With bound k > 0 the rows are numbered per unit and at most k kept:
//
//	SELECT "ddp_g1", ..., agg("ddp_a1"), ... FROM (
//	  SELECT g AS "ddp_g1", ..., col AS "ddp_a1", ...,
//	    ROW_NUMBER() OVER (PARTITION BY unit ORDER BY g..., col...) AS "ddp_rn"
//	  FROM from [JOIN ...] [WHERE w]) AS "ddp_b"
//	WHERE "ddp_rn" <= k [GROUP BY "ddp_g1", ...]
//
// Which k rows of a unit are kept never matters for privacy: the choice
// depends on that unit's rows only. Ordering the window by every projected
// column (NULLs first) makes it reproducible too: the kept rows are the k
// smallest projected tuples, and rows that tie are identical in every
// column the outer query reads, so the result is a function of the data
// alone (text compares under the backend's collation, so backends with
// different collations may keep different, equally valid, rows).
//
// Aggregates: COUNT(*); COUNT(col); COUNT(DISTINCT col) (a text input in
// the exact collation: see input); for SumClamped
//
//	CAST(LEAST(GREATEST(COALESCE(SUM(CAST(LEAST(GREATEST(col, lo), hi) AS int)), 0), -2^63), 2^63-1) AS int)
//
// and with Quantum q > 0
//
//	CAST(LEAST(GREATEST(COALESCE(SUM(CAST(FLOOR(LEAST(GREATEST(flush(CAST(col AS double)), lo), hi) / q + 0.5) AS int)), 0), -2^63), 2^63-1) AS int)
//
// where flush(x) reads |x| < q/4 as 0 (such values round to 0 anyway, and
// x / q could otherwise underflow, an error in PostgreSQL). FLOOR(x + 0.5)
// instead of ROUND because ROUND's tie-breaking differs between backends.
// The exact total (PostgreSQL's SUM(bigint) and MySQL's SUM are numeric)
// is saturated at the int64 limits, so a large sum never fails; SQLite,
// whose SUM raises "integer overflow", uses Dialect.SaturatingSum instead.
// Every expression is total (DESIGN.md's totality rule): no value a row
// may hold makes the statement fail.
func (d *Dialect) Render(q *ir.BackendQuery) (Statement, error) {
	r, err := d.render(q)
	if err != nil {
		return Statement{}, err
	}
	return Statement{SQL: r.b.String(), Args: r.args}, nil
}

// render validates and renders q; Render reads the result.
func (d *Dialect) render(q *ir.BackendQuery) (*renderer, error) {
	r := &renderer{d: d}
	r.b.Grow(512) // a typical statement: one allocation instead of seven
	return r, r.run(q)
}

// run validates q and writes it (or, measuring, counts it).
func (r *renderer) run(q *ir.BackendQuery) error {
	if err := validate(q); err != nil {
		return err
	}
	if q.MaxRowsPerUnit > 0 {
		r.bounded(q)
	} else {
		r.plain(q)
	}
	return r.err
}

// Shape is what a backend's fixed limits look at in a rendered statement.
type Shape struct {
	// Params is the number of bind parameters.
	Params int
	// Depth is the deepest parenthesis nesting of the SQL text: every
	// operator, call and cast the renderer writes is parenthesised, so it
	// bounds the backend's expression-tree depth.
	Depth int
}

// Measure reports q's shape, or the error Render would return. The
// planner calls it (through planner.Limits) to refuse, before anything is
// charged, statements that exceed MaxParams or MaxDepth. It runs the
// renderer itself in measuring mode, which takes every step Render takes
// but keeps no text and binds no argument, only counting them: the shape,
// the byte count MaxSQLBytes reads and so every error are Render's
// (TestMeasureIsRender), at a fraction of the allocations.
func (d *Dialect) Measure(q *ir.BackendQuery) (Shape, error) {
	r := renderer{d: d, measure: true}
	if err := r.run(q); err != nil {
		return Shape{}, err
	}
	return Shape{Params: r.nargs, Depth: r.max}, nil
}

// RenderExpr renders one predicate or scalar expression on its own, with
// placeholders numbered from 1.
func (d *Dialect) RenderExpr(e ir.Expr) (Statement, error) {
	r := &renderer{d: d}
	r.expr(e)
	if r.err != nil {
		return Statement{}, r.err
	}
	return Statement{SQL: r.b.String(), Args: r.args}, nil
}

// renderer accumulates text and arguments; the first error sticks and
// stops further output from mattering. It tracks the parenthesis nesting
// of what it writes (identifiers, written by ident, never carry syntax).
//
// A measuring renderer (Measure) writes nothing and binds nothing: n
// counts the bytes the text would have, nargs the placeholders. Every
// write goes through write, writeBytes, writeByte, ident or alias, the
// only places (with bind and literal) that tell the two modes apart.
type renderer struct {
	d       *Dialect
	b       strings.Builder
	measure bool
	n       int // bytes written (or counted)
	args    []any
	nargs   int
	// keepVals: also collect the bound literals as ir values (RenderRows).
	keepVals bool
	vals     []ir.Value
	err      error
	depth    int
	max      int
}

func (r *renderer) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// w writes s, unless the text has grown past MaxSQLBytes.
func (r *renderer) w(s string) {
	if r.full() {
		return
	}
	r.write(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			r.depth++
			r.max = max(r.max, r.depth)
		case ')':
			r.depth--
		}
	}
}

// full reports (and records as the error) that the text is already
// longer than MaxSQLBytes.
func (r *renderer) full() bool {
	if r.n > r.d.MaxSQLBytes && r.d.MaxSQLBytes > 0 {
		// Fail fast: round renders its argument twice, so nesting grows
		// the text exponentially; every later expr returns at once.
		r.fail(sqlerr.New(sqlerr.ProgramLimitExceeded, "the backend statement would exceed %d bytes of SQL", r.d.MaxSQLBytes).
			WithHint("nest round() less deeply, or shorten the IN lists"))
		return true
	}
	return false
}

// write and writeByte append to the text, or only count when measuring.
func (r *renderer) write(s string) {
	r.n += len(s)
	if !r.measure {
		r.b.WriteString(s)
	}
}

func (r *renderer) writeBytes(p []byte) {
	r.n += len(p)
	if !r.measure {
		r.b.Write(p)
	}
}

func (r *renderer) writeByte(c byte) {
	r.n++
	if !r.measure {
		r.b.WriteByte(c)
	}
}

func (r *renderer) ident(name string) {
	if r.measure {
		r.n += r.d.identLen(name)
		return
	}
	l := r.b.Len()
	r.d.writeIdent(&r.b, name)
	r.n += r.b.Len() - l
}

// alias writes the identifier prefix followed by i+1.
func (r *renderer) alias(prefix string, i int) {
	if r.measure {
		r.n += r.d.identLen(prefix) + digits(i+1)
		return
	}
	r.ident(prefix + strconv.Itoa(i+1))
}

// digits is the length of strconv.Itoa(n) for n ≥ 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

func (r *renderer) col(c ir.ColumnRef) {
	if c.Qualifier != "" {
		r.ident(c.Qualifier)
		r.writeByte('.')
	}
	r.ident(c.Name)
}

// bind writes a placeholder for arg, cast to typ when typ is not empty.
// A measuring renderer only counts it (arg may then be nil).
func (r *renderer) bind(arg any, typ string) {
	if typ != "" {
		r.w("CAST(")
	}
	r.nargs++
	if !r.measure {
		r.args = append(r.args, arg)
	}
	// What w("$n") or w("?") would do (neither has a parenthesis),
	// without building the string.
	if !r.full() {
		if r.d.Placeholders == Dollar {
			var buf [24]byte
			r.writeBytes(strconv.AppendInt(append(buf[:0], '$'), int64(r.nargs), 10))
		} else {
			r.writeByte('?')
		}
	}
	if typ != "" {
		r.w(" AS " + typ + ")")
	}
}

func (r *renderer) table(t ir.TableRef) {
	if t.Schema != "" {
		r.ident(t.Schema)
		r.writeByte('.')
	}
	r.ident(t.Name)
	if t.Alias != "" {
		r.w(" AS ")
		r.ident(t.Alias)
	}
}

// fromWhere writes FROM, the joins and WHERE.
func (r *renderer) fromWhere(q *ir.BackendQuery) {
	r.w(" FROM ")
	r.table(q.From)
	for _, j := range q.Joins {
		if j.Outer {
			r.w(" LEFT")
		}
		r.w(" JOIN ")
		r.table(j.Table)
		r.w(" ON ")
		r.col(j.Left)
		if j.NullSafe {
			r.w(" " + r.d.NullSafeEq + " ")
		} else {
			r.w(" = ")
		}
		r.col(j.Right)
	}
	if q.Where != nil {
		r.w(" WHERE ")
		r.expr(q.Where)
	}
}

// key writes a group key: a text key (a CAST to text at its top) with
// the dialect's exact collation (Dialect.ExactTextCollate).
func (r *renderer) key(g ir.Expr) {
	c, ok := g.(ir.Cast)
	if !ok || c.To != ir.CastText || r.d.ExactTextCollate == "" {
		r.expr(g)
		return
	}
	r.w("(")
	r.expr(g)
	r.w(r.d.ExactTextCollate + ")")
}

func (r *renderer) plain(q *ir.BackendQuery) {
	r.w("SELECT ")
	for i, g := range q.GroupBy {
		if i > 0 {
			r.w(", ")
		}
		r.key(g)
	}
	for i, a := range q.Aggs {
		if i > 0 || len(q.GroupBy) > 0 {
			r.w(", ")
		}
		r.agg(a, func() { r.input(a) })
	}
	r.fromWhere(q)
	if len(q.GroupBy) > 0 {
		r.w(" GROUP BY ")
		for i, g := range q.GroupBy {
			if i > 0 {
				r.w(", ")
			}
			if c, ok := g.(ir.ColumnRef); ok {
				r.col(c)
				continue
			}
			// An expression key by its position in the select list:
			// written again, its literals would be other placeholders,
			// which PostgreSQL does not see as the same expression.
			r.w(strconv.Itoa(i + 1))
		}
	}
}

func (r *renderer) bounded(q *ir.BackendQuery) {
	r.w("SELECT ")
	for i := range q.GroupBy {
		if i > 0 {
			r.w(", ")
		}
		r.alias("ddp_g", i)
	}
	for i, a := range q.Aggs {
		if i > 0 || len(q.GroupBy) > 0 {
			r.w(", ")
		}
		r.agg(a, func() { r.alias("ddp_a", i) })
	}
	r.w(" FROM (SELECT ")
	// The window orders by the projected values only (group keys, then
	// aggregate inputs, columns or expressions of the row): which rows a
	// unit keeps may then depend on ties, but the multiset of projected
	// values it keeps does not.
	var orderBuf [8]ir.Expr
	var keysBuf [8]string
	order := orderBuf[:0] // on the stack while the window orders by few values
	keys := keysBuf[:0]   // ir.FormatExpr of each of order, formatted once
	for i, g := range q.GroupBy {
		r.key(g)
		r.w(" AS ")
		r.alias("ddp_g", i)
		r.w(", ")
		order, keys = appendUnique(order, keys, g)
	}
	for i, a := range q.Aggs {
		if a.Column == nil && a.Expr == nil {
			continue
		}
		r.input(a)
		r.w(" AS ")
		r.alias("ddp_a", i)
		r.w(", ")
		if a.Expr != nil {
			order, keys = appendUnique(order, keys, a.Expr)
		} else {
			order, keys = appendUnique(order, keys, *a.Column)
		}
	}
	if len(order) == 0 {
		order = append(order, q.Unit)
	}
	r.w("ROW_NUMBER() OVER (PARTITION BY ")
	r.col(q.Unit)
	r.w(" ORDER BY ")
	for i, c := range order {
		if i > 0 {
			r.w(", ")
		}
		r.key(c)
		r.w(r.d.NullsFirst)
	}
	r.w(") AS ")
	r.ident(rowNumber)
	r.fromWhere(q)
	r.w(") AS ")
	r.ident(boundedAlias)
	r.w(" WHERE ")
	r.ident(rowNumber)
	r.w(" <= " + strconv.Itoa(q.MaxRowsPerUnit))
	if len(q.GroupBy) > 0 {
		r.w(" GROUP BY ")
		for i := range q.GroupBy {
			if i > 0 {
				r.w(", ")
			}
			r.alias("ddp_g", i)
		}
	}
}

// appendUnique appends e to es unless an expression of the same text is
// there; keys are the texts of es.
func appendUnique(es []ir.Expr, keys []string, e ir.Expr) ([]ir.Expr, []string) {
	key := ir.FormatExpr(e)
	for _, k := range keys {
		if k == key {
			return es, keys
		}
	}
	return append(es, e), append(keys, key)
}

// input writes an aggregate's input: its column or its expression. A
// distinct count's text input (a CAST to text at its top) is written with
// the exact collation, like a text group key (key), so that the distinct
// values are the exact spellings on every backend; in the bounded form
// the derived column keeps that collation (PostgreSQL, SQLite and MySQL
// all carry an expression's collation through a derived table).
func (r *renderer) input(a ir.BackendAgg) {
	switch {
	case a.Kind == ir.CountDistinct && a.Expr != nil:
		r.key(a.Expr)
	case a.Expr != nil:
		r.expr(a.Expr)
	default:
		r.col(*a.Column)
	}
}

// agg writes one aggregate; input writes its input column.
func (r *renderer) agg(a ir.BackendAgg, input func()) {
	d := r.d
	switch a.Kind {
	case ir.CountRows:
		r.w("COUNT(*)")
		return
	case ir.CountValues:
		r.w("COUNT(")
		input()
		r.w(")")
		return
	case ir.CountDistinct:
		// Over the bounded rows when k > 0: each unit's at most k rows
		// are kept first, so one unit adds at most k distinct values.
		r.w("COUNT(DISTINCT ")
		input()
		r.w(")")
		return
	}
	// SumClamped (validate refused every other kind). The total is
	// saturated at the int64 limits instead of failing: a sum that
	// overflows only when enough rows sit near the bounds would otherwise
	// fail for some data and not for other (the totality rule). Clamping
	// the exact sum to [-2^63, 2^63-1] is 1-Lipschitz, so the sensitivity
	// of the saturated sum is that of the sum.
	sat := d.SaturatingSum == ""
	if !d.UncastSum {
		r.w("CAST(")
	}
	if sat {
		r.w(d.Least + "(" + d.Greatest + "(")
	}
	if sat {
		r.w("COALESCE(SUM(")
	} else {
		r.w("COALESCE(" + d.SaturatingSum + "(")
	}
	if d.LeastIgnoresNull {
		r.w("CASE WHEN ")
		input()
		r.w(" IS NOT NULL THEN ")
	}
	if a.Quantum == 0 {
		r.w("CAST(")
		r.clamp(input, int64(a.Lo), int64(a.Hi), d.ParamCast[ir.KindInt])
		r.w(" AS " + d.IntType + ")")
	} else {
		// Values below a quarter of the quantum round to 0 anyway; read
		// them as 0 first so that x / quantum cannot underflow.
		r.w("CAST(FLOOR(")
		r.clamp(func() {
			r.flushTiny(func() {
				r.w("CAST(")
				input()
				r.w(" AS " + d.FloatType + ")")
			}, a.Quantum/4)
		}, a.Lo, a.Hi, d.ParamCast[ir.KindFloat])
		r.w(" / ")
		r.bind(a.Quantum, d.ParamCast[ir.KindFloat])
		r.w(" + 0.5) AS " + d.IntType + ")")
	}
	if d.LeastIgnoresNull {
		r.w(" END")
	}
	r.w("), 0)")
	if sat {
		// The limits are constants of this package, not client text.
		r.w(", -9223372036854775808), 9223372036854775807)")
	}
	if !d.UncastSum {
		r.w(" AS " + d.IntType + ")")
	}
}

// clamp writes LEAST(GREATEST(x, lo), hi).
func (r *renderer) clamp(x func(), lo, hi any, cast string) {
	r.w(r.d.Least + "(" + r.d.Greatest + "(")
	x()
	r.w(", ")
	r.bind(lo, cast)
	r.w("), ")
	r.bind(hi, cast)
	r.w(")")
}

// validate checks the shape the planner promises; a violation is a
// planner bug, reported as Internal.
func validate(q *ir.BackendQuery) error {
	bug := func(msg string) error { return sqlerr.New(sqlerr.Internal, "invalid backend query: %s", msg) }
	switch {
	case q == nil:
		return bug("no query")
	case q.From.Name == "":
		return bug("no table")
	case q.MaxRowsPerUnit < 0:
		return bug("negative contribution bound")
	case q.MaxRowsPerUnit > 0 && q.Unit.Name == "":
		return bug("contribution bound without a privacy unit column")
	case len(q.Aggs) == 0:
		return bug("no aggregate")
	}
	for _, a := range q.Aggs {
		switch a.Kind {
		case ir.CountRows:
		case ir.CountValues, ir.CountDistinct:
			if (a.Column == nil) == (a.Expr == nil) {
				return bug("COUNT(column) needs exactly one of a column and an expression")
			}
		case ir.SumClamped:
			if err := validateSum(a); err != nil {
				return bug(err.Error())
			}
		default:
			return bug("unknown aggregate kind " + strconv.Itoa(int(a.Kind)))
		}
	}
	return nil
}

type validationError string

func (e validationError) Error() string { return string(e) }

func validateSum(a ir.BackendAgg) error {
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch {
	case (a.Column == nil) == (a.Expr == nil):
		return validationError("SUM needs exactly one of a column and an expression")
	case !finite(a.Lo) || !finite(a.Hi) || a.Lo > a.Hi:
		return validationError("SUM clamping bounds are not finite and ordered")
	case !finite(a.Quantum) || a.Quantum < 0:
		return validationError("SUM quantum is not a finite non-negative number")
	}
	mag := math.Max(math.Abs(a.Lo), math.Abs(a.Hi))
	if a.Quantum == 0 {
		if a.Lo != math.Trunc(a.Lo) || a.Hi != math.Trunc(a.Hi) || mag > maxExact {
			return validationError("integer SUM bounds must be integers of magnitude at most 2^53")
		}
		return nil
	}
	if mag/a.Quantum > maxExact {
		return validationError("SUM bounds divided by the quantum exceed 2^53")
	}
	for _, b := range []float64{a.Lo, a.Hi} {
		if b != 0 && math.Abs(b)/a.Quantum < 0x1p-1000 {
			// bound / quantum would underflow in PostgreSQL.
			return validationError("a SUM bound is nonzero but negligible next to the quantum")
		}
	}
	return nil
}

// ByName returns the dialect of a backend driver name (postgres, sqlite, mysql),
// or nil when there is none.
func ByName(driver string) *Dialect {
	switch driver {
	case "postgres":
		return Postgres()
	case "sqlite":
		return SQLite()
	case "mysql":
		return MySQL()
	}
	return nil
}

// Preview renders q for people (explain output): the SQL with its
// placeholders, followed by the bound values in a trailing comment.
func (d *Dialect) Preview(q *ir.BackendQuery) (string, error) {
	st, err := d.Render(q)
	if err != nil {
		return "", err
	}
	if len(st.Args) == 0 {
		return st.SQL, nil
	}
	args := make([]string, len(st.Args))
	for i, a := range st.Args {
		args[i] = fmt.Sprintf("%v", a)
	}
	return st.SQL + " -- args: " + strings.Join(args, ", "), nil
}
