package exprtype

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Column is what the analysis needs to know of a column reference.
type Column struct {
	// Ref is the column as the backend query names it.
	Ref ir.ColumnRef
	// Type is the declared type (Unknown for an undeclared column of a
	// public table).
	Type Type
	// HasBounds is set when the column may be computed with: Lo and Hi
	// are its clamping bounds, ir.Int values for an Integer column and
	// ir.Float values for a Real one. A numeric column without bounds may
	// be compared, never computed with.
	HasBounds bool
	Lo, Hi    ir.Value
	// Declare names the policy entry that would give the column bounds
	// or a type (for the hint of a refusal).
	Declare string
	// Domain is the declared static domain (nil when none): the values
	// the column is taken to hold when a grouping expression's domain is
	// derived (Info.Domain).
	Domain []ir.Value
	// Nullable: the column reads NULL on some rows whatever the data
	// holds (a column of a LEFT-joined table), so NULL is in its domain.
	Nullable bool
}

// Columns resolves a column reference as the analyst wrote it. Its errors
// are returned unchanged.
type Columns func(ir.ColumnRef) (Column, error)

// Predicate checks the WHERE clause e and returns it lowered for the
// backend (see the package comment). Its errors are *sqlerr.Error values
// naming the expression at fault.
func Predicate(e ir.Expr, cols Columns) (ir.Expr, error) {
	c := &checker{cols: cols}
	n, err := c.expr(e, modeValue)
	if err != nil {
		return nil, err
	}
	if err := wantBoolean(n, "WHERE"); err != nil {
		return nil, err
	}
	return n.x, nil
}

// Scalar checks e as a computed value (every column it reads enters
// through its clamp) and returns it lowered, with its type and range.
func Scalar(e ir.Expr, cols Columns) (ir.Expr, Info, error) {
	c := &checker{cols: cols}
	n, err := c.expr(e, modeCompute)
	if err != nil {
		return nil, Info{}, err
	}
	return n.x, n.info, nil
}

// GroupKey is Scalar for a grouping key: its Info.Domain is also
// derived, the finite set of values the lowered expression can take (see
// Info.Domain), nil when unknown or larger than MaxDomain.
func GroupKey(e ir.Expr, cols Columns) (ir.Expr, Info, error) {
	c := &checker{cols: cols, seen: map[ir.ColumnRef]Column{}, rangeDoms: map[string][]ir.Value{}}
	n, err := c.expr(e, modeCompute)
	if err != nil {
		return nil, Info{}, err
	}
	info := n.info
	d := &domainer{cols: c.seen, rangeDoms: c.rangeDoms}
	info.Domain = typed(d.domain(n.x), info.Type)
	return n.x, info, nil
}

// mode says how a column reference is read.
type mode uint8

const (
	// modeValue: an operand of a comparison, IN, BETWEEN, LIKE or IS
	// NULL. A bare column is read as stored (a comparison cannot fail
	// once the types agree).
	modeValue mode = iota
	// modeCompute: an operand of arithmetic or of a function. A column
	// enters through its clamp, or is refused.
	modeCompute
)

// maxTwice is the deepest nesting of calls written with their argument
// twice (see node.twice): 3 writes the innermost argument 8 times, enough
// for Metabase's and Superset's weeks from Sunday,
// date_trunc('week', t + INTERVAL '1 day') - INTERVAL '1 day', and still
// a statement of bounded size.
const maxTwice = 3

type checker struct {
	cols Columns
	// seen records the columns read, by lowered reference, for the
	// domain pass (nil when no domain is derived).
	seen map[ir.ColumnRef]Column
	// rangeDoms holds the domains of calls derived from their
	// arguments' ranges (Func.RangeImage), by lowered text.
	rangeDoms map[string][]ir.Value
}

// node is one analysed expression.
type node struct {
	x    ir.Expr // lowered
	info Info
	src  ir.Expr // as written, for messages
	// strLit is set for a text literal not yet coerced: it may still
	// become a number or a boolean when compared with one.
	strLit bool
	// twice counts the calls nested in the lowered expression that some
	// dialect renders with their argument written twice (round,
	// date_trunc, date_add): the innermost argument is written 2^twice
	// times, at most 2^maxTwice.
	twice int
}

func (n *node) text() string { return ir.FormatExpr(n.src) }

// isNull reports whether the lowered node is the NULL literal.
func (n *node) isNull() bool {
	l, ok := n.x.(ir.Literal)
	return ok && l.Value.Kind == ir.KindNull
}

func nullNode(src ir.Expr) *node {
	return &node{x: ir.Literal{Value: ir.Null()}, info: Info{Type: Null}, src: src}
}

func (c *checker) expr(e ir.Expr, m mode) (*node, error) {
	switch n := e.(type) {
	case ir.ColumnRef:
		return c.column(n, m)
	case ir.Literal:
		return literal(n)
	case ir.Compare:
		l, r, err := c.pair(n.L, n.R)
		if err != nil {
			return nil, err
		}
		if err := unify(e, n.Op.String(), l, r); err != nil {
			return nil, err
		}
		return &node{x: ir.Compare{Op: n.Op, L: l.x, R: r.x}, info: Info{Type: Boolean}, src: e}, nil
	case ir.Between:
		ns, err := c.list(modeValue, n.X, n.Lo, n.Hi)
		if err != nil {
			return nil, err
		}
		if err := unify(e, ">=", ns...); err != nil {
			return nil, err
		}
		return &node{x: ir.Between{X: ns[0].x, Lo: ns[1].x, Hi: ns[2].x, Not: n.Not}, info: Info{Type: Boolean}, src: e}, nil
	case ir.In:
		ns, err := c.list(modeValue, append([]ir.Expr{n.X}, n.List...)...)
		if err != nil {
			return nil, err
		}
		if err := unify(e, "=", ns...); err != nil {
			return nil, err
		}
		list := make([]ir.Expr, len(n.List))
		for i := range list {
			list[i] = ns[i+1].x
		}
		return &node{x: ir.In{X: ns[0].x, List: list, Not: n.Not}, info: Info{Type: Boolean}, src: e}, nil
	case ir.Like:
		return c.like(n)
	case ir.IsNull:
		x, err := c.expr(n.X, modeValue)
		if err != nil {
			return nil, err
		}
		return &node{x: ir.IsNull{X: x.x, Not: n.Not}, info: Info{Type: Boolean}, src: e}, nil
	case ir.And:
		l, r, err := c.pair(n.L, n.R)
		if err != nil {
			return nil, err
		}
		if err := wantBoolean(l, "AND"); err != nil {
			return nil, err
		}
		if err := wantBoolean(r, "AND"); err != nil {
			return nil, err
		}
		return &node{x: ir.And{L: l.x, R: r.x}, info: Info{Type: Boolean}, src: e}, nil
	case ir.Or:
		l, r, err := c.pair(n.L, n.R)
		if err != nil {
			return nil, err
		}
		if err := wantBoolean(l, "OR"); err != nil {
			return nil, err
		}
		if err := wantBoolean(r, "OR"); err != nil {
			return nil, err
		}
		return &node{x: ir.Or{L: l.x, R: r.x}, info: Info{Type: Boolean}, src: e}, nil
	case ir.Not:
		x, err := c.expr(n.X, modeValue)
		if err != nil {
			return nil, err
		}
		if err := wantBoolean(x, "NOT"); err != nil {
			return nil, err
		}
		return &node{x: ir.Not{X: x.x}, info: Info{Type: Boolean}, src: e}, nil
	case ir.Arith:
		return c.arith(n)
	case ir.Neg:
		return c.neg(n)
	case ir.Func:
		return c.fn(n, m)
	case ir.Case:
		return c.caseExpr(n, m)
	case ir.Cast:
		return c.cast(n, m)
	case ir.Param:
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "parameter $%d has no value", n.Index)
	case ir.CurrentTime:
		return nil, errUnboundTime(n)
	case ir.Aggregate:
		return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in WHERE").WithHint("use HAVING")
	case ir.OutputRef:
		return nil, sqlerr.New(sqlerr.SyntaxError, "positional references are not allowed in WHERE")
	case nil:
		return nil, internalErr("missing expression")
	}
	return nil, internalErr("unexpected expression node")
}

func (c *checker) pair(l, r ir.Expr) (*node, *node, error) {
	ns, err := c.list(modeValue, l, r)
	if err != nil {
		return nil, nil, err
	}
	return ns[0], ns[1], nil
}

func (c *checker) list(m mode, es ...ir.Expr) ([]*node, error) {
	out := make([]*node, len(es))
	for i, e := range es {
		n, err := c.expr(e, m)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (c *checker) column(ref ir.ColumnRef, m mode) (*node, error) {
	col, err := c.cols(ref)
	if err != nil {
		return nil, err
	}
	if c.seen != nil {
		c.seen[col.Ref] = col
	}
	n := &node{x: col.Ref, info: Info{Type: col.Type}, src: ref}
	if m == modeValue {
		return n, nil
	}
	switch col.Type {
	case Integer, Real:
		if !col.HasBounds {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"column %s has no declared bounds, so it can be compared but not computed with: an arithmetic error on one row's value would reveal it", ir.FormatExpr(ref)).
				WithHint("compare the bare column (e.g. %s > 10), or declare bounds: [lo, hi] at %s", ir.FormatExpr(ref), col.Declare)
		}
		if col.Type == Real && col.Lo.Kind == ir.KindFloat && col.Hi.Kind == ir.KindFloat &&
			(math.Abs(col.Lo.Float) > MaxReal || math.Abs(col.Hi.Float) > MaxReal) {
			// The policy accepts any finite bounds (a plain SUM clamps
			// to them); an expression's arithmetic is analysed within
			// ±MaxReal only.
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange,
				"column %s has bounds [%g, %g] beyond ±%g, the largest magnitude an expression (or a variance, which computes with its argument) may compute with", ir.FormatExpr(ref), col.Lo.Float, col.Hi.Float, MaxReal).
				WithHint("narrow the bounds at %s to within ±%g", col.Declare, MaxReal)
		}
		if !boundsOK(col) {
			return nil, internalErr("column bounds of the wrong kind")
		}
		n.x = ir.Clamp{X: col.Ref, Lo: col.Lo, Hi: col.Hi}
		n.info = clampInfo(col.Type, col.Lo, col.Hi)
	case Date, Timestamp, TimestampTZ:
		if !col.HasBounds {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"column %s has no declared bounds, so it can be compared but not computed with: a date function could leave the backend's range only for some rows' values, and the error would reveal them", ir.FormatExpr(ref)).
				WithHint("compare the bare column (e.g. %s >= DATE '2010-01-01'), or declare bounds: ['lo', 'hi'] at %s", ir.FormatExpr(ref), col.Declare)
		}
		if !boundsOK(col) {
			return nil, internalErr("column bounds of the wrong kind")
		}
		n.x = ir.Clamp{X: col.Ref, Lo: col.Lo, Hi: col.Hi}
		n.info = clampInfo(col.Type, col.Lo, col.Hi)
	case Unknown:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"column %s has no declared type, so it can be compared but not computed with", ir.FormatExpr(ref)).
			WithHint("declare it with a type (and bounds for a number) at %s", col.Declare)
	}
	return n, nil
}

func boundsOK(col Column) bool {
	switch col.Type {
	case Integer:
		return col.Lo.Kind == ir.KindInt && col.Hi.Kind == ir.KindInt && col.Lo.Int <= col.Hi.Int
	case Real:
		return col.Lo.Kind == ir.KindFloat && col.Hi.Kind == ir.KindFloat && col.Lo.Float <= col.Hi.Float &&
			math.Abs(col.Lo.Float) <= MaxReal && math.Abs(col.Hi.Float) <= MaxReal
	case Date, Timestamp, TimestampTZ:
		k := col.Type.Kind()
		return col.Lo.Kind == k && col.Hi.Kind == k && col.Lo.Int <= col.Hi.Int && inTimeRange(col.Type, col.Lo.Int, col.Hi.Int)
	}
	return false
}

func literal(l ir.Literal) (*node, error) {
	v := l.Value
	n := &node{x: l, src: l}
	switch v.Kind {
	case ir.KindNull:
		n.info = Info{Type: Null}
	case ir.KindInt:
		n.info = intInfo(intPoint(v.Int))
	case ir.KindFloat:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "NaN and infinite numbers are not supported in predicates")
		}
		n.info = realInfo(realPoint(v.Float))
	case ir.KindString:
		if err := checkText(v.Str); err != nil {
			return nil, err
		}
		n.info, n.strLit = Info{Type: Text}, true
	case ir.KindBool:
		n.info = Info{Type: Boolean}
	case ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
		t := TimeType(v.Kind)
		if !inTimeRange(t, v.Int, v.Int) {
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "a %s value in the query is outside the years 1 to 9999", t)
		}
		n.info = timeInfo(t, v.Int, v.Int)
	default:
		return nil, internalErr("literal of unknown kind")
	}
	n.info.Const = v
	return n, nil
}

// checkText refuses text no backend accepts: a NUL byte (PostgreSQL
// text cannot hold one) and invalid UTF-8. The value is not repeated.
func checkText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return sqlerr.New(sqlerr.CharacterNotInRepertoire, "a text value in the query contains a NUL byte (0x00), which the backend cannot store or compare").
			WithHint("remove the NUL character from the literal or parameter")
	}
	if !utf8.ValidString(s) {
		return sqlerr.New(sqlerr.CharacterNotInRepertoire, "a text value in the query is not valid UTF-8").
			WithHint("send text parameters and literals in UTF-8")
	}
	return nil
}

// comparable reports whether values of types a and b can be compared
// without an error on every backend.
func comparable(a, b Type) bool {
	switch {
	case a == Unknown || b == Unknown || a == Null || b == Null:
		return true
	case a.numeric() && b.numeric():
		return true
	}
	return a == b
}

// unify brings the operands of a comparison, BETWEEN, IN list or
// COALESCE to one type: a text literal meeting a number or a boolean is
// converted (PostgreSQL's untyped literal), then every pair must be
// comparable. what names the operator for the message.
func unify(e ir.Expr, what string, ns ...*node) error {
	target := Unknown
	for _, n := range ns {
		if t := n.info.Type; !n.strLit && t != Null && t != Unknown {
			target = t
			break
		}
	}
	if target.IsTime() {
		if err := unifyTimes(ns); err != nil {
			return err
		}
		for _, n := range ns {
			if _, lit := n.x.(ir.Literal); !lit && !n.strLit && n.info.Type.IsTime() {
				target = n.info.Type
				break
			}
		}
	}
	if target == Unknown {
		for _, n := range ns {
			if n.strLit {
				target = Text
			}
		}
	}
	for _, n := range ns {
		if n.strLit && target != Text {
			if err := coerce(n, target, ns[0]); err != nil {
				return err
			}
		}
	}
	for _, n := range ns {
		if !comparable(n.info.Type, target) {
			code := sqlerr.UndefinedFunction
			msg := "operator does not exist: " + target.String() + " " + what + " " + n.info.Type.String()
			if what == "COALESCE" || what == "CASE" || what == "GREATEST" || what == "LEAST" {
				code = sqlerr.DatatypeMismatch
				msg = what + " types " + target.String() + " and " + n.info.Type.String() + " cannot be matched"
			}
			return sqlerr.New(code, "%s: %s", msg, ir.FormatExpr(e)).
				WithHint("compare text with quoted literals ('2'), numbers with numbers and booleans with TRUE or FALSE")
		}
	}
	return nil
}

// coerce converts the text literal n to type t, as PostgreSQL reads an
// untyped literal compared with a column of that type. other is the
// operand it meets, for the message (the literal itself is not repeated:
// it may be a bound parameter).
func coerce(n *node, t Type, other *node) error {
	s := strings.TrimSpace(n.x.(ir.Literal).Value.Str)
	bad := func() error {
		return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: a quoted value used with %s is not a %s", t, other.text(), t).
			WithHint("write the value without quotes, as a %s", t)
	}
	var v ir.Value
	switch t {
	case Integer:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return sqlerr.New(sqlerr.NumericValueOutOfRange, "a quoted value used with %s is out of range for type bigint", other.text())
			}
			return bad()
		}
		v = ir.Int(i)
	case Real:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad()
		}
		v = ir.Float(f)
	case Boolean:
		b, ok := parseBool(s)
		if !ok {
			return bad()
		}
		v = ir.Bool(b)
	case Date, Timestamp, TimestampTZ:
		var err error
		if v, err = parseTimeLiteral(t, s, other); err != nil {
			return err
		}
	default:
		return nil
	}
	c, err := literal(ir.Literal{Value: v})
	if err != nil {
		return err
	}
	n.x, n.info, n.strLit = c.x, c.info, false
	return nil
}

// parseBool reads PostgreSQL's boolean spellings (whole words only).
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}

func wantBoolean(n *node, where string) error {
	if n.strLit {
		if _, ok := parseBool(strings.TrimSpace(n.x.(ir.Literal).Value.Str)); ok {
			return coerce(n, Boolean, n)
		}
	} else {
		switch n.info.Type {
		case Boolean, Null, Unknown:
			return nil
		}
	}
	return sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s: %s", where, n.info.Type, n.text()).
		WithHint("compare the value, e.g. %s > 0", n.text())
}

func (c *checker) like(l ir.Like) (*node, error) {
	x, err := c.expr(l.X, modeValue)
	if err != nil {
		return nil, err
	}
	p, err := c.expr(l.Pattern, modeValue)
	if err != nil {
		return nil, err
	}
	op := "LIKE"
	if l.CaseInsensitive {
		op = "ILIKE"
	}
	if t := x.info.Type; t != Text && t != Unknown && t != Null {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s text: %s", t, op, ir.FormatExpr(l)).
			WithHint("%s matches text; compare numbers with =, <, BETWEEN", op)
	}
	lit, ok := p.x.(ir.Literal)
	if !ok || (lit.Value.Kind != ir.KindString && lit.Value.Kind != ir.KindNull) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"the pattern of %s must be a constant text: a pattern read from a row could be malformed for that row only, and the error would reveal it: %s", op, ir.FormatExpr(l)).
			WithHint("write the pattern as a quoted literal or a parameter")
	}
	if lit.Value.Kind == ir.KindString && danglingEscape(lit.Value.Str) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, `%s pattern must not end with the escape character \`, op).
			WithHint(`write \\ for a literal backslash`)
	}
	return &node{x: ir.Like{X: x.x, Pattern: p.x, Not: l.Not, CaseInsensitive: l.CaseInsensitive}, info: Info{Type: Boolean}, src: l}, nil
}

// danglingEscape reports a pattern ending in an unpaired backslash.
func danglingEscape(p string) bool {
	n := 0
	for i := len(p) - 1; i >= 0 && p[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// numericOperands coerces text literals among the operands of arithmetic
// to the type of the other operand and requires numbers (or NULL).
func numericOperands(e ir.Expr, op string, ns ...*node) error {
	for _, n := range ns {
		if !n.strLit {
			continue
		}
		for _, o := range ns {
			if o != n && o.info.Type.numeric() {
				if err := coerce(n, o.info.Type, o); err != nil {
					return err
				}
				break
			}
		}
	}
	for _, n := range ns {
		if t := n.info.Type; !t.numeric() && t != Null || n.strLit {
			return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s: %s", op, n.info.Type, ir.FormatExpr(e)).
				WithHint("arithmetic takes numbers; text compares with = and LIKE")
		}
	}
	return nil
}

func (c *checker) arith(a ir.Arith) (*node, error) {
	ns, err := c.list(modeCompute, a.L, a.R)
	if err != nil {
		return nil, err
	}
	l, r := ns[0], ns[1]
	if err := numericOperands(a, a.Op.String(), l, r); err != nil {
		return nil, err
	}
	if l.isNull() || r.isNull() {
		return nullNode(a), nil
	}
	if !l.info.Bounded || !r.info.Bounded {
		return nil, internalErr("unbounded operand of arithmetic")
	}
	out := &node{x: ir.Arith{Op: a.Op, L: l.x, R: r.x}, src: a, twice: max(l.twice, r.twice)}
	switch a.Op {
	case ir.OpDiv, ir.OpMod, ir.OpRealDiv, ir.OpIntDiv:
		if err := divide(a, out, l.info, r.info); err != nil {
			return nil, err
		}
		c.quotientDomain(out, r)
		return out, nil
	}
	if l.info.Type == Integer && r.info.Type == Integer {
		switch a.Op {
		case ir.OpAdd:
			out.info = intInfo(addInt(l.info.Int, r.info.Int))
		case ir.OpSub:
			out.info = intInfo(subInt(l.info.Int, r.info.Int))
		default:
			out.info = intInfo(mulInt(l.info.Int, r.info.Int))
		}
		return out, checkRange(out)
	}
	lr, rr := asReal(l.info), asReal(r.info)
	switch a.Op {
	case ir.OpAdd:
		out.info = realInfo(addReal(lr, rr))
	case ir.OpSub:
		out.info = realInfo(subReal(lr, rr))
	default:
		out.info = realInfo(mulReal(lr, rr))
		if out.info.Real.Grain != ZeroGrain && out.info.Real.Grain < MinGrain {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange,
				"the product %s can round a nonzero value to zero (floating-point underflow), which the backend reports as an error only for the rows where it happens", out.text()).
				WithHint("multiply by a constant of magnitude above 0.5, or by fewer real columns")
		}
	}
	return out, checkRange(out)
}

// quotientDomain keeps for the domain pass the key set of an integer
// quotient by a positive constant whose dividend's values are too many
// to list (MySQL's UNIX_TIMESTAMP(t) DIV 86400): every integer of its
// range, which the range analysis guarantees to hold every value (and
// which are all met when the dividend takes every integer of its range).
func (c *checker) quotientDomain(out *node, divisor *node) {
	l, isLit := divisor.x.(ir.Literal)
	ar, isArith := out.x.(ir.Arith)
	if c.seen == nil || !isLit || !isArith || ar.Op != ir.OpDiv || l.Value.Kind != ir.KindInt || l.Value.Int <= 0 || out.info.Type != Integer || !out.info.Bounded {
		return
	}
	lo, hi := out.info.Int.Lo, out.info.Int.Hi
	if !lo.IsInt64() || !hi.IsInt64() || new(big.Int).Sub(hi, lo).Cmp(big.NewInt(MaxDomain)) >= 0 {
		return
	}
	dom := make([]ir.Value, 0, hi.Int64()-lo.Int64()+1)
	for v := lo.Int64(); v <= hi.Int64(); v++ {
		dom = append(dom, ir.Int(v))
	}
	c.rangeDoms[ir.FormatExpr(out.x)] = dom
}

// divide types and ranges a quotient or remainder (out.x is the lowered
// Arith). A zero divisor gives NULL (the renderer writes NULLIF(b, 0)),
// so the range is taken over the nonzero divisors only.
func divide(a ir.Arith, out *node, l, r Info) error {
	ints := l.Type == Integer && r.Type == Integer
	switch {
	case a.Op == ir.OpMod && !ints:
		return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %% %s: %s", l.Type, r.Type, out.text()).
			WithHint("the remainder is defined for integers; floor or round the operands first")
	case a.Op == ir.OpMod:
		if minusOne := big.NewInt(-1); l.Int.Lo.Cmp(minInt64) <= 0 && r.Int.Lo.Cmp(minusOne) <= 0 && r.Int.Hi.Cmp(minusOne) >= 0 {
			// -2^63 % -1 overflows in C; backends special-case it, but
			// not all the same way, so it is kept out.
			return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s can compute -9223372036854775808 %% -1, which overflows: the query would fail only for the rows where it happens", out.text()).
				WithHint("narrow the bounds of the dividend")
		}
		out.info = intInfo(modInt(l.Int, r.Int))
		return checkRange(out)
	case a.Op == ir.OpIntDiv && !ints:
		return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s DIV %s: %s", l.Type, r.Type, out.text()).
			WithHint("DIV divides integers; write FLOOR(a / b) or ROUND(a / b) for reals")
	case ints && (a.Op == ir.OpDiv || a.Op == ir.OpIntDiv):
		ar := out.x.(ir.Arith)
		ar.Op = ir.OpDiv
		out.x = ar
		out.info = intInfo(quoInt(l.Int, r.Int))
		return checkRange(out)
	}
	// The real quotient (PostgreSQL's / with a real operand, MySQL's /).
	ar := out.x.(ir.Arith)
	ar.Op = ir.OpRealDiv
	out.x = ar
	q, ok := quoReal(asReal(l), asReal(r))
	if !ok {
		return sqlerr.New(sqlerr.NumericValueOutOfRange,
			"the quotient %s can round a nonzero value to zero (floating-point underflow), which the backend reports as an error only for the rows where it happens", out.text()).
			WithHint("divide by a smaller number, or scale the dividend up first")
	}
	out.info = realInfo(q)
	return checkRange(out)
}

// wholeNumbers reports whether every value of a bounded number is an integer:
// an integer, or a real whose grain is at least 2^0.
func wholeNumbers(in Info) bool {
	return in.Type == Integer || in.Type == Real && in.Bounded && in.Real.Grain >= 0
}

func asReal(in Info) RealRange {
	if in.Type == Integer {
		return intToReal(in.Int)
	}
	return in.Real
}

func (c *checker) neg(g ir.Neg) (*node, error) {
	x, err := c.expr(g.X, modeCompute)
	if err != nil {
		return nil, err
	}
	if err := numericOperands(g, "-", x); err != nil {
		return nil, err
	}
	if x.isNull() {
		return nullNode(g), nil
	}
	if !x.info.Bounded {
		return nil, internalErr("unbounded operand of minus")
	}
	out := &node{x: ir.Neg{X: x.x}, src: g, twice: x.twice}
	if x.info.Type == Integer {
		out.info = intInfo(negInt(x.info.Int))
	} else {
		out.info = realInfo(negReal(x.info.Real))
	}
	return out, checkRange(out)
}

func (c *checker) fn(f ir.Func, m mode) (*node, error) {
	def, ok := Lookup(f.Name)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s is not allowed in predicates; allowed: %s", f.Name, strings.Join(Names(), ", "))
	}
	if def.Rule == nil {
		return nil, errPostOnly(f.Name)
	}
	if !def.ArityOK(len(f.Args)) {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s takes %s argument(s), not %d", f.Name, def.ArityText(), len(f.Args))
	}
	am := modeCompute
	if def.Unify {
		am = m // COALESCE only chooses: its arguments are read as its caller reads it
	}
	args, err := c.list(am, f.Args...)
	if err != nil {
		return nil, err
	}
	if def.Unify {
		return c.unified(f, def, args)
	}
	for _, a := range args {
		if a.isNull() && def.Strict {
			return nullNode(f), nil
		}
	}
	if def.OneVariable {
		n := 0
		for _, a := range args {
			if _, ok := a.x.(ir.Literal); !ok {
				n++
			}
		}
		if n > 1 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"%s of more than one non-constant text is not supported: the result could pass the backend's largest text value only for the rows holding long texts, and the error would reveal them: %s", f.Name, ir.FormatExpr(f)).
				WithHint("concatenate one column with constants, or compare the columns separately")
		}
	}
	if def.NoGrowth {
		if err := noGrowth(f, args); err != nil {
			return nil, err
		}
	}
	if def.IntegerIdentity && len(args) == 1 && wholeNumbers(args[0].info) {
		return &node{x: args[0].x, info: args[0].info, src: f, twice: args[0].twice}, nil
	}
	twice := 0
	for _, a := range args {
		twice = max(twice, a.twice)
	}
	for _, i := range def.ConstArgs {
		if l, ok := args[i].x.(ir.Literal); !ok || l.Value.Kind != ir.KindString {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "argument %d of %s must be a constant text (a unit or field name such as 'month'): %s", i+1, f.Name, ir.FormatExpr(f)).
				WithHint("write the unit as a quoted literal")
		}
	}
	if def.WritesArgTwice {
		if twice >= maxTwice {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"%s around %d other calls that are written with their argument twice is not supported: the backend form writes its argument twice, so nesting doubles the statement at every level: %s", f.Name, twice, ir.FormatExpr(f)).
				WithHint("round or truncate once, at the outermost level")
		}
		twice++
	}
	infos := make([]Info, len(args))
	lowered := make([]ir.Expr, len(args))
	for i, a := range args {
		if a.info.Type.numeric() && !a.info.Bounded {
			return nil, internalErr("unbounded argument of " + f.Name)
		}
		infos[i], lowered[i] = a.info, a.x
	}
	info, err := def.Rule(ir.FormatExpr(f), infos)
	if err != nil {
		return nil, err
	}
	out := &node{x: ir.Func{Name: f.Name, Args: lowered}, info: info, src: f, twice: twice}
	var rangeDom []ir.Value
	if c.seen != nil && def.RangeImage != nil {
		// Kept for the domain pass, which sees the lowered tree only.
		if dom := def.RangeImage(lowered, infos); dom != nil && len(dom) <= MaxDomain {
			rangeDom = dom
			c.rangeDoms[ir.FormatExpr(out.x)] = dom
		}
	}
	if to, ok := timeCastTo(info.Type); ok {
		// A date or time result is cast to its type: the dialects'
		// forms compute text (MySQL, SQLite) or another time type
		// (PostgreSQL's date_trunc of a date is a timestamptz).
		out.x = ir.Cast{X: out.x, To: to}
		if rangeDom != nil {
			// The cast is to the values' own type: the same domain.
			c.rangeDoms[ir.FormatExpr(out.x)] = rangeDom
		}
	}
	return out, checkRange(out)
}

// noGrowth checks replace's pattern and replacement (Func.NoGrowth).
func noGrowth(f ir.Func, args []*node) error {
	lit := func(n *node) (string, bool) {
		l, ok := n.x.(ir.Literal)
		return l.Value.Str, ok && l.Value.Kind == ir.KindString
	}
	from, ok1 := lit(args[1])
	to, ok2 := lit(args[2])
	if !ok1 || !ok2 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "the pattern and the replacement of %s must be constant texts: %s", f.Name, ir.FormatExpr(f)).
			WithHint("write them as quoted literals or parameters")
	}
	if from != "" && (len(to) > len(from) || utf8.RuneCountInString(to) > utf8.RuneCountInString(from)) {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"%s with a replacement longer than its pattern is not supported: the text could grow past the backend's largest value only for the rows with many matches, and the error would reveal them: %s", f.Name, ir.FormatExpr(f)).
			WithHint("replace with a text no longer (in bytes and characters) than the pattern")
	}
	return nil
}

// unified analyses the calls that choose among their arguments
// (COALESCE, NULLIF, GREATEST, LEAST): one type for all arguments, NULLs
// dropped (NULLIF aside).
func (c *checker) unified(f ir.Func, def Func, args []*node) (*node, error) {
	what := strings.ToUpper(f.Name)
	if f.Name == "nullif" {
		what = "=" // NULLIF(a, b) compares a = b
	}
	if err := unify(f, what, args...); err != nil {
		return nil, err
	}
	if f.Name == "nullif" {
		return nullif(f, def, args[0], args[1])
	}
	var keep []*node
	real := false
	for _, a := range args {
		if !a.isNull() {
			keep = append(keep, a)
			real = real || a.info.Type == Real
		}
	}
	switch len(keep) {
	case 0:
		return nullNode(f), nil
	case 1:
		return &node{x: keep[0].x, info: keep[0].info, src: f, strLit: keep[0].strLit, twice: keep[0].twice}, nil
	}
	twice, literal := 0, false
	for _, a := range keep {
		twice = max(twice, a.twice)
		_, isLit := a.x.(ir.Literal)
		literal = literal || isLit
	}
	if def.SkipsNull && !literal {
		// MySQL and SQLite get every argument inside the COALESCE of
		// every other (see Func.SkipsNull).
		if twice > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"%s of arguments that may all be NULL, around another such call or round, is not supported: the backend form writes its arguments several times, so nesting multiplies the statement at every level: %s", f.Name, ir.FormatExpr(f)).
				WithHint("add a constant argument (e.g. %s(x, y, 0)), which keeps each argument written once", f.Name)
		}
		twice = maxTwice // writes each argument len(keep) times: nothing more around it
	}
	infos := make([]Info, len(keep))
	lowered := make([]ir.Expr, len(keep))
	for i, a := range keep {
		infos[i], lowered[i] = a.info, a.x
		if real && a.info.Type == Integer && a.info.Bounded {
			infos[i] = realInfo(intToReal(a.info.Int))
		} else if real && a.info.Type == Integer {
			infos[i] = Info{Type: Real}
		}
	}
	info, err := def.Rule(ir.FormatExpr(f), infos)
	if err != nil {
		return nil, err
	}
	if def.SkipsNull && info.Bounded {
		// A literal is never NULL, so it always takes part: the
		// greatest is at least each literal, the least at most each.
		for i, a := range keep {
			if _, ok := a.x.(ir.Literal); !ok {
				continue
			}
			in := infos[i]
			switch {
			case info.Type == Integer && f.Name == "greatest" && in.Int.Lo.Cmp(info.Int.Lo) > 0:
				info.Int.Lo = in.Int.Lo
			case info.Type == Integer && f.Name == "least" && in.Int.Hi.Cmp(info.Int.Hi) < 0:
				info.Int.Hi = in.Int.Hi
			case info.Type == Real && f.Name == "greatest":
				info.Real.Lo = math.Max(info.Real.Lo, in.Real.Lo)
			case info.Type == Real && f.Name == "least":
				info.Real.Hi = math.Min(info.Real.Hi, in.Real.Hi)
			}
		}
	}
	out := &node{x: ir.Func{Name: f.Name, Args: lowered}, info: info, src: f, twice: twice}
	return out, checkRange(out)
}

// nullif analyses NULLIF(a, b): a or NULL, in the type PostgreSQL gives
// it (real when either argument is real: the equality promotes a).
func nullif(f ir.Func, def Func, a, b *node) (*node, error) {
	switch {
	case a.isNull():
		return nullNode(f), nil
	case b.isNull():
		// a = NULL is never true.
		return &node{x: a.x, info: a.info, src: f, strLit: a.strLit, twice: a.twice}, nil
	}
	ai := a.info
	if a.info.Type == Integer && b.info.Type == Real {
		ai = Info{Type: Real}
		if a.info.Bounded {
			ai = realInfo(intToReal(a.info.Int))
		}
	}
	info, err := def.Rule(ir.FormatExpr(f), []Info{ai, b.info})
	if err != nil {
		return nil, err
	}
	out := &node{x: ir.Func{Name: f.Name, Args: []ir.Expr{a.x, b.x}}, info: info, src: f, twice: max(a.twice, b.twice)}
	return out, checkRange(out)
}

// int32Range is PostgreSQL's integer (int4).
var int32Range = IntRange{big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)}

// cast analyses CAST(x AS t). Only conversions that cannot fail for any
// value of x's type and range, and that every backend computes alike, are
// allowed: an integer to any target (to integer only within 32 bits), a
// whole-numbered real to an integer within range (round, floor or ceil
// first: backends round the halves of a bare double differently, and
// SQLite truncates), a real to double precision, text to text. Text to a
// number is refused — a stored value that is not a number would fail the
// query for that row only — and so is a real or a boolean to text, whose
// spelling differs between backends.
func (c *checker) cast(k ir.Cast, m mode) (*node, error) {
	// An integer target needs the range; a text one the clamp's BIGINT,
	// so that the spelling does not depend on the storage type (a
	// NUMERIC column would print its scale). To double precision, a
	// bare column converts as well as a clamped one.
	if t, ok := castTimeTarget(k.To); ok {
		return c.timeCast(k, t)
	}
	if k.To == ir.CastNumeric {
		// A row-level decimal is computed as a double: the same value
		// range, and division is not an integer one. Rounding to a scale
		// here would round each row, differently on each backend.
		if k.Precision > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CAST to %s inside an aggregate or a WHERE clause is not supported: it would round each row: %s", k.TypeName(), ir.FormatExpr(k)).
				WithHint("cast the aggregate instead, e.g. ROUND(AVG(x)::numeric, 2) or CAST(AVG(x) AS DECIMAL(10,2))")
		}
		return c.cast(ir.Cast{X: k.X, To: ir.CastDouble}, m)
	}
	xm := modeCompute
	if k.To == ir.CastDouble {
		xm = m
	}
	x, err := c.expr(k.X, xm)
	if err != nil {
		return nil, err
	}
	if x.strLit {
		switch k.To {
		case ir.CastBigint, ir.CastInteger:
			err = coerce(x, Integer, x)
		case ir.CastDouble:
			err = coerce(x, Real, x)
		}
		if err != nil {
			return nil, err
		}
		x.strLit = false
	}
	if x.isNull() {
		return nullNode(k), nil
	}
	refuse := func(why string) error {
		return sqlerr.New(sqlerr.FeatureNotSupported, "CAST of %s to %s is not supported: %s: %s", x.info.Type, k.To, why, ir.FormatExpr(k)).
			WithHint("compare with a literal of the column's type, or cast an integer")
	}
	same := &node{x: x.x, info: x.info, src: k, twice: x.twice}
	conv := &node{x: ir.Cast{X: x.x, To: k.To}, src: k, twice: x.twice}
	switch t := x.info.Type; {
	case t == Integer && k.To == ir.CastBigint:
		return same, nil
	case t == Integer && k.To == ir.CastInteger:
		if !x.info.Bounded {
			return nil, internalErr("unbounded operand of a cast")
		}
		if x.info.Int.Lo.Cmp(int32Range.Lo) < 0 || x.info.Int.Hi.Cmp(int32Range.Hi) > 0 {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange,
				"%s can reach beyond the 32-bit range of integer (%s): the cast would fail only for the rows where it happens", x.text(), x.info).
				WithHint("cast to bigint")
		}
		return same, nil // computed as a BIGINT: the value is the same
	case t == Integer && k.To == ir.CastDouble:
		conv.info = Info{Type: Real}
		if x.info.Bounded {
			conv.info = realInfo(intToReal(x.info.Int))
		}
		return conv, nil
	case t == Integer && k.To == ir.CastText:
		conv.info = Info{Type: Text}
		return conv, nil
	case t == Real && k.To == ir.CastDouble:
		return same, nil
	case t == Real && (k.To == ir.CastBigint || k.To == ir.CastInteger):
		if !wholeNumbers(x.info) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"CAST of a double precision that may have a fraction to %s is not supported: backends round it differently (PostgreSQL to even, MySQL away from zero, SQLite truncates): %s", k.To, ir.FormatExpr(k)).
				WithHint("round first: CAST(round(x) AS %s), or floor or ceil", k.To)
		}
		lo, _ := new(big.Float).SetFloat64(x.info.Real.Lo).Int(nil) // whole numbers: exact
		hi, _ := new(big.Float).SetFloat64(x.info.Real.Hi).Int(nil)
		conv.x = ir.Cast{X: x.x, To: ir.CastBigint}
		conv.info = intInfo(IntRange{lo, hi})
		if k.To == ir.CastInteger && (lo.Cmp(int32Range.Lo) < 0 || hi.Cmp(int32Range.Hi) > 0) {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange,
				"%s can reach beyond the 32-bit range of integer (%s): the cast would fail only for the rows where it happens", x.text(), x.info).
				WithHint("cast to bigint")
		}
		return conv, checkRange(conv)
	case t == Text && k.To == ir.CastText:
		return same, nil
	case t == Text:
		return nil, refuse("a stored text that is not a number would fail the query for that row only")
	case t == Real && k.To == ir.CastText:
		return nil, refuse("backends spell doubles differently (1e+20, 1.0e+20, 1e20)")
	case t == Boolean:
		return nil, refuse("backends spell and convert booleans differently")
	case t.IsTime():
		return nil, refuse("backends spell and convert dates and times differently; use extract or date_trunc")
	}
	return nil, refuse("the column's type is not declared")
}

// caseExpr analyses a searched CASE. Every arm is analysed over the whole
// range of its inputs, whatever condition guards it: totality must not
// rest on the backend evaluating only the chosen arm (PostgreSQL folds
// constant arms at plan time, and no backend promises an order). The
// arms are read as the caller reads the CASE (like COALESCE, it only
// chooses), brought to one type (integer and real arms give a real), and
// the range is the hull of the arms' ranges (NULL, without ELSE, is in
// every range).
func (c *checker) caseExpr(k ir.Case, m mode) (*node, error) {
	if len(k.Whens) == 0 {
		return nil, internalErr("CASE without WHEN")
	}
	whens := make([]ir.When, len(k.Whens))
	conds := make([]*node, len(k.Whens))
	vals := make([]*node, 0, len(k.Whens)+1)
	for i, w := range k.Whens {
		cond, err := c.expr(w.Cond, modeValue)
		if err != nil {
			return nil, err
		}
		if err := wantBoolean(cond, "CASE/WHEN"); err != nil {
			return nil, err
		}
		then, err := c.expr(w.Then, m)
		if err != nil {
			return nil, err
		}
		conds[i] = cond
		vals = append(vals, then)
	}
	if k.Else != nil {
		els, err := c.expr(k.Else, m)
		if err != nil {
			return nil, err
		}
		vals = append(vals, els)
	}
	if err := unify(k, "CASE", vals...); err != nil {
		return nil, err
	}
	out := &node{src: k}
	var info *Info
	real, unknown := false, false
	for _, v := range vals {
		out.twice = max(out.twice, v.twice)
		switch v.info.Type {
		case Null:
			continue
		case Unknown:
			unknown = true
		case Real:
			real = true
		}
		if info == nil {
			in := v.info
			info = &in
		}
	}
	for _, cd := range conds {
		out.twice = max(out.twice, cd.twice)
	}
	if info == nil {
		return nullNode(k), nil // every arm is NULL
	}
	switch {
	case unknown:
		// An undeclared column of a public table: comparable, never
		// computed with, so its range does not matter.
		out.info = Info{Type: Unknown}
	case info.Type == Integer || info.Type == Real:
		out.info = Info{Type: Integer, Bounded: true}
		if real {
			out.info.Type = Real
		}
		first := true
		for _, v := range vals {
			if v.info.Type == Null {
				continue
			}
			if !v.info.Bounded {
				out.info.Bounded = false
				break
			}
			switch {
			case out.info.Type == Integer && first:
				out.info.Int = v.info.Int
			case out.info.Type == Integer:
				out.info.Int = hullInt(out.info.Int, v.info.Int)
			case first:
				out.info.Real = asReal(v.info)
			default:
				out.info.Real = hullReal(out.info.Real, asReal(v.info))
			}
			first = false
		}
		if !out.info.Bounded {
			out.info = Info{Type: out.info.Type}
		}
	default:
		out.info = Info{Type: info.Type} // text or boolean
	}
	for i, cd := range conds {
		whens[i] = ir.When{Cond: cd.x, Then: vals[i].x}
	}
	lowered := ir.Case{Whens: whens}
	if k.Else != nil {
		lowered.Else = vals[len(vals)-1].x
	}
	out.x = lowered
	return out, checkRange(out)
}

// checkRange refuses a node whose value can leave the backend type.
func checkRange(n *node) error {
	if !n.info.Bounded {
		return nil
	}
	switch n.info.Type {
	case Integer:
		if n.info.Int.fits() {
			return nil
		}
		reach, limit := n.info.Int.Hi, maxInt64
		if n.info.Int.Lo.Cmp(minInt64) < 0 {
			reach, limit = n.info.Int.Lo, minInt64
		}
		return sqlerr.New(sqlerr.NumericValueOutOfRange,
			"%s can reach %s, beyond %s, the limit of the 64-bit integers the backend computes in: the query would fail only for the rows where it happens",
			n.text(), reach, limit).
			WithHint("use smaller constants, or narrow the bounds of the columns involved (%s)", n.info)
	case Real:
		if math.Abs(n.info.Real.Lo) <= MaxReal && math.Abs(n.info.Real.Hi) <= MaxReal {
			return nil
		}
		reach := n.info.Real.Hi
		if math.Abs(n.info.Real.Lo) > math.Abs(reach) {
			reach = n.info.Real.Lo
		}
		return sqlerr.New(sqlerr.NumericValueOutOfRange,
			"%s can reach %s, beyond ±%g, the largest magnitude a predicate may compute with: the query would fail only for the rows where it overflows",
			n.text(), fmtReal(reach), MaxReal).
			WithHint("use smaller constants, or narrow the bounds of the columns involved")
	case Date, Timestamp, TimestampTZ:
		if n.info.Int.fits() && inTimeRange(n.info.Type, n.info.Int.Lo.Int64(), n.info.Int.Hi.Int64()) {
			return nil
		}
		return sqlerr.New(sqlerr.DatetimeFieldOverflow,
			"%s can reach beyond the years 1 to 9999 (%s): the query would fail only for the rows where it happens", n.text(), n.info).
			WithHint("narrow the bounds of the columns involved, or use a smaller interval")
	}
	return nil
}

func internalErr(msg string) error {
	return sqlerr.New(sqlerr.Internal, "internal error: expression analysis: %s", msg)
}

// errPostOnly refuses, on rows, a function computed only over released
// aggregates (postMath).
func errPostOnly(name string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "function %s is computed only over aggregates and grouping keys (select list, HAVING, ORDER BY), never on the table's rows", name).
		WithHint("apply it to an aggregate, e.g. SQRT(AVG(x)), or compute it on the client")
}
