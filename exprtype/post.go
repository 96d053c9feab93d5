package exprtype

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Post-processing: expressions over one noisy output row (the select
// list, HAVING, ORDER BY and window arguments), computed by the proxy after
// the noise, so they cost no privacy and read no private row. The same
// expression language as WHERE, with one difference: there is no range to
// prove, because nothing here runs in the backend. Instead the evaluator is
// total by construction — a zero divisor gives NULL, integer arithmetic
// saturates at the int64 limits, a cast that could fail is refused at plan
// time — so that one unlucky noisy value never turns the whole answer into
// an error. PostType checks an expression at plan time (the planner types
// the result column with it, and a type error is refused before the
// charge); Eval computes it. The per-function part of both lives in the
// function table (Func.Post).

// PostDialect is what of the client's dialect the evaluator needs: the
// semantics that differ between PostgreSQL and MySQL and are not already
// spelled in the IR (division is: OpDiv vs OpRealDiv).
type PostDialect struct {
	// MySQL: booleans convert to text as 1/0 (PostgreSQL: true/false);
	// floor, ceil and round of an integer are integers (PostgreSQL
	// computes them in double precision, so that 7 / round(2) is 3.5).
	MySQL bool
}

// Post is the post-processing rule of a function-table entry.
type Post struct {
	// MinArgs and MaxArgs override the entry's arity when nonzero
	// (round takes a digits argument in post-processing).
	MinArgs, MaxArgs int
	// Type is the result type given the argument types (Null for a NULL
	// literal) and the argument expressions (for rules that need a
	// literal); an error refuses the call before the charge.
	Type func(call string, types []Type, args []ir.Expr, d PostDialect) (Type, error)
	// Eval computes the call on values of the accepted types. It never
	// fails: the plan-time Type rule excluded every argument it could
	// fail on.
	Eval func(args []ir.Value, d PostDialect) ir.Value
}

// PostFunc returns the post-processing rule of a canonical function name
// (false when the function is not available there).
func PostFunc(name string) (Func, bool) {
	f, ok := table[name]
	if !ok || f.Post == nil {
		return Func{}, false
	}
	return *f, true
}

// PostArityOK reports whether n arguments fit the post-processing arity.
func (f Func) PostArityOK(n int) bool {
	if f.Post == nil || f.Post.MinArgs == 0 {
		return f.ArityOK(n)
	}
	return n >= f.Post.MinArgs && (f.Post.MaxArgs < 0 || n <= f.Post.MaxArgs)
}

// PostType checks a post-processing expression whose leaves are outputs
// (ir.OutputRef, typed by out) and literals, and
// returns it lowered (a quoted literal compared with a number becomes the
// number, as PostgreSQL reads an untyped literal) with its type. Windows
// were replaced by the outputs that hold them (see PostWindow).
func PostType(e ir.Expr, out func(int) Out, d PostDialect) (ir.Expr, Type, error) {
	p := postChecker{out: out, d: d}
	return p.check(e)
}

// Out describes an output a post-processing expression reads.
type Out struct {
	Type Type
	// Double: the client's database computes the value in double
	// precision (a sum or average of a real column, a real key), not as
	// an exact decimal (PostgreSQL's numeric, MySQL's DECIMAL: an average
	// of integers). round rounds the two differently.
	Double bool
}

type postChecker struct {
	out func(int) Out
	d   PostDialect
}

func mismatch(format string, args ...any) error {
	return sqlerr.New(sqlerr.DatatypeMismatch, format, args...)
}

func litType(v ir.Value) Type {
	switch v.Kind {
	case ir.KindInt:
		return Integer
	case ir.KindFloat:
		return Real
	case ir.KindBool:
		return Boolean
	case ir.KindString:
		return Text
	}
	return Null
}

// postComparable reports whether a and b compare (numbers with numbers).
func postComparable(a, b Type) bool {
	return a == Null || b == Null || a == Unknown || b == Unknown || a.numeric() && b.numeric() || a == b
}

// coerceLit converts a quoted literal met by a value of type t.
func coerceLit(e ir.Expr, t Type) (ir.Expr, Type, bool) {
	l, ok := e.(ir.Literal)
	if !ok || l.Value.Kind != ir.KindString || t == Text || t == Null || t == Unknown {
		return e, 0, false
	}
	n := &node{x: l, info: Info{Type: Text}, strLit: true, src: l}
	if coerce(n, t, n) != nil {
		return e, 0, false
	}
	return n.x, n.info.Type, true
}

// unifyPost brings operands to one comparable type, coercing quoted
// literals; it returns the common type (Null when all are NULL).
func (p postChecker) unifyPost(what string, es []ir.Expr) ([]ir.Expr, []Type, Type, error) {
	out := make([]ir.Expr, len(es))
	ts := make([]Type, len(es))
	for i, e := range es {
		x, t, err := p.check(e)
		if err != nil {
			return nil, nil, 0, err
		}
		out[i], ts[i] = x, t
	}
	target := Null
	for i, t := range ts {
		if _, lit := out[i].(ir.Literal); t != Null && !(lit && t == Text) {
			target = t
			break
		}
	}
	if target == Null {
		for _, t := range ts {
			if t == Text {
				target = Text
			}
		}
	}
	for i := range out {
		if ts[i] == Text && target != Text {
			if x, t, ok := coerceLit(out[i], target); ok {
				out[i], ts[i] = x, t
			}
		}
	}
	real := false
	for _, t := range ts {
		if !postComparable(t, target) {
			return nil, nil, 0, mismatch("%s: %s and %s cannot be matched in post-processing", what, target, t)
		}
		real = real || t == Real
	}
	if target == Integer && real {
		target = Real
	}
	return out, ts, target, nil
}

func (p postChecker) boolean(e ir.Expr, where string) (ir.Expr, error) {
	x, t, err := p.check(e)
	if err != nil {
		return nil, err
	}
	if t == Text {
		if y, yt, ok := coerceLit(x, Boolean); ok {
			x, t = y, yt
		}
	}
	if t != Boolean && t != Null {
		return nil, mismatch("argument of %s must be boolean, not %s", where, t)
	}
	return x, nil
}

func (p postChecker) check(e ir.Expr) (ir.Expr, Type, error) {
	switch n := e.(type) {
	case ir.OutputRef:
		return n, p.out(n.Index).Type, nil
	case ir.Literal:
		return n, litType(n.Value), nil
	case ir.Compare:
		xs, _, _, err := p.unifyPost("operator "+n.Op.String(), []ir.Expr{n.L, n.R})
		if err != nil {
			return nil, 0, err
		}
		return ir.Compare{Op: n.Op, L: xs[0], R: xs[1]}, Boolean, nil
	case ir.Between:
		xs, _, _, err := p.unifyPost("BETWEEN", []ir.Expr{n.X, n.Lo, n.Hi})
		if err != nil {
			return nil, 0, err
		}
		return ir.Between{X: xs[0], Lo: xs[1], Hi: xs[2], Not: n.Not}, Boolean, nil
	case ir.In:
		xs, _, _, err := p.unifyPost("IN", append([]ir.Expr{n.X}, n.List...))
		if err != nil {
			return nil, 0, err
		}
		return ir.In{X: xs[0], List: xs[1:], Not: n.Not}, Boolean, nil
	case ir.Like:
		xs, ts, _, err := p.unifyPost("LIKE", []ir.Expr{n.X, n.Pattern})
		if err != nil {
			return nil, 0, err
		}
		for _, t := range ts {
			if t != Text && t != Null {
				return nil, 0, mismatch("LIKE needs text, not %s", t)
			}
		}
		n.X, n.Pattern = xs[0], xs[1]
		return n, Boolean, nil
	case ir.IsNull:
		x, _, err := p.check(n.X)
		if err != nil {
			return nil, 0, err
		}
		return ir.IsNull{X: x, Not: n.Not}, Boolean, nil
	case ir.And:
		l, err := p.boolean(n.L, "AND")
		if err != nil {
			return nil, 0, err
		}
		r, err := p.boolean(n.R, "AND")
		return ir.And{L: l, R: r}, Boolean, err
	case ir.Or:
		l, err := p.boolean(n.L, "OR")
		if err != nil {
			return nil, 0, err
		}
		r, err := p.boolean(n.R, "OR")
		return ir.Or{L: l, R: r}, Boolean, err
	case ir.Not:
		x, err := p.boolean(n.X, "NOT")
		return ir.Not{X: x}, Boolean, err
	case ir.Neg:
		x, t, err := p.check(n.X)
		if err != nil {
			return nil, 0, err
		}
		if !t.numeric() && t != Null {
			return nil, 0, mismatch("unary minus needs a number, not %s", t)
		}
		return ir.Neg{X: x}, t, nil
	case ir.Arith:
		return p.arith(n)
	case ir.Func:
		return p.fn(n)
	case ir.Case:
		return p.caseExpr(n)
	case ir.Cast:
		return p.cast(n)
	case ir.CurrentTime:
		return nil, 0, errUnboundTime(n)
	}
	return nil, 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in post-processing (select list, HAVING, ORDER BY)", ir.FormatExpr(e))
}

func (p postChecker) arith(n ir.Arith) (ir.Expr, Type, error) {
	l, lt, err := p.check(n.L)
	if err != nil {
		return nil, 0, err
	}
	r, rt, err := p.check(n.R)
	if err != nil {
		return nil, 0, err
	}
	if !lt.numeric() && lt != Null || !rt.numeric() && rt != Null {
		return nil, 0, mismatch("operator %s needs numbers, not %s and %s", n.Op, lt, rt)
	}
	n.L, n.R = l, r
	ints := lt != Real && rt != Real
	switch n.Op {
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv:
		// PostgreSQL's / truncates two integers (SUM(x) / COUNT(*) of
		// integer columns is an integer there too).
		if ints {
			return n, Integer, nil
		}
		if n.Op == ir.OpDiv {
			n.Op = ir.OpRealDiv
		}
		return n, Real, nil
	case ir.OpRealDiv:
		return n, Real, nil
	case ir.OpIntDiv, ir.OpMod:
		if !ints {
			return nil, 0, mismatch("operator %s needs integers", n.Op)
		}
		if n.Op == ir.OpIntDiv {
			n.Op = ir.OpDiv
		}
		return n, Integer, nil
	}
	return nil, 0, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported in post-processing", n.Op)
}

func (p postChecker) fn(n ir.Func) (ir.Expr, Type, error) {
	f, ok := PostFunc(n.Name)
	if !ok {
		return nil, 0, sqlerr.New(sqlerr.UndefinedFunction, "function %s is not supported in post-processing (select list, HAVING, ORDER BY)", n.Name)
	}
	if !f.PostArityOK(len(n.Args)) {
		return nil, 0, sqlerr.New(sqlerr.UndefinedFunction, "function %s does not take %d arguments", n.Name, len(n.Args))
	}
	var args []ir.Expr
	var ts []Type
	if f.Unify {
		xs, xts, target, err := p.unifyPost(n.Name, n.Args)
		if err != nil {
			return nil, 0, err
		}
		args, ts = xs, xts
		for i := range ts {
			if ts[i] == Integer && target == Real {
				// One type for the result, whichever argument is chosen.
				args[i] = toReal(args[i])
			}
			if ts[i] != Null {
				ts[i] = target
			}
		}
	} else {
		args, ts = make([]ir.Expr, len(n.Args)), make([]Type, len(n.Args))
		for i, a := range n.Args {
			x, t, err := p.check(a)
			if err != nil {
				return nil, 0, err
			}
			args[i], ts[i] = x, t
		}
	}
	t, err := f.Post.Type(ir.FormatExpr(n), ts, args, p.d)
	if err != nil {
		return nil, 0, err
	}
	if n.Name == "round" && p.double(args[0], ts[0]) {
		// The lowered call carries a third argument: round the double's
		// exact binary value, ties to even, as PostgreSQL's round(double
		// precision) (whose integer round is one too) and MySQL's ROUND
		// of a double do; decimals round half away from zero.
		args = append(args[:len(args):len(args)], ir.Literal{Value: ir.Bool(true)})
	}
	return ir.Func{Name: n.Name, Args: args}, t, nil
}

// double reports whether the client's database computes the lowered
// numeric expression e (of type t) in double precision rather than as an
// exact decimal or integer: a double output, a cast to double, PostgreSQL's
// floor/ceil/round of an integer, and anything computed from a double.
// Literals with a decimal point are exact decimals in both dialects.
func (p postChecker) double(e ir.Expr, t Type) bool {
	if t != Real && !(t == Integer && !p.d.MySQL) {
		return false
	}
	found := false
	ir.Walk(e, func(n ir.Expr) bool {
		switch n := n.(type) {
		case ir.OutputRef:
			found = found || p.out(n.Index).Double
		case ir.Cast:
			// To double: written by the client (the checker's own
			// conversions add 0.0, see toReal). To anything else: an
			// integer, a decimal or a text, never a double.
			found = found || n.To == ir.CastDouble
			return false
		case ir.Func:
			if (n.Name == "round" || n.Name == "floor" || n.Name == "ceil") && !p.d.MySQL && len(n.Args) == 1 {
				// PostgreSQL has them for double precision and numeric
				// only, and an integer argument becomes a double.
				if _, at, err := p.check(n.Args[0]); err == nil && at == Integer {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

func (p postChecker) caseExpr(n ir.Case) (ir.Expr, Type, error) {
	vals := make([]ir.Expr, 0, len(n.Whens)+1)
	whens := make([]ir.When, len(n.Whens))
	for i, w := range n.Whens {
		c, err := p.boolean(w.Cond, "CASE/WHEN")
		if err != nil {
			return nil, 0, err
		}
		whens[i].Cond = c
		vals = append(vals, w.Then)
	}
	if n.Else != nil {
		vals = append(vals, n.Else)
	}
	xs, _, t, err := p.unifyPost("CASE", vals)
	if err != nil {
		return nil, 0, err
	}
	for i := range whens {
		whens[i].Then = xs[i]
	}
	out := ir.Case{Whens: whens}
	if n.Else != nil {
		out.Else = xs[len(xs)-1]
	}
	if t == Real {
		// Integer arms of a real CASE are reals (PostgreSQL resolves the
		// arms to one type; SQLite would keep the integer).
		for i := range out.Whens {
			out.Whens[i].Then = toReal(out.Whens[i].Then)
		}
		if out.Else != nil {
			out.Else = toReal(out.Else)
		}
	}
	return out, t, nil
}

// toReal converts an integer arm to a real by adding 0.0 (not a cast to
// double precision: the client's database reads the arm as an exact
// number, which rounds differently from a double, see postChecker.double).
func toReal(e ir.Expr) ir.Expr {
	if l, ok := e.(ir.Literal); ok && (l.Value.Kind == ir.KindNull || l.Value.Kind == ir.KindFloat) {
		return e
	}
	return ir.Arith{Op: ir.OpAdd, L: e, R: ir.Literal{Value: ir.Float(0)}}
}

// cast allows the conversions that cannot fail on any value: numbers to
// numbers (a double to an integer rounds as the client's database does and
// saturates at the target's limits instead of failing), integers and
// booleans to text, booleans to integers. Text to a number is refused: a
// key that is not a number would fail the answer after the charge.
func (p postChecker) cast(n ir.Cast) (ir.Expr, Type, error) {
	x, t, err := p.check(n.X)
	if err != nil {
		return nil, 0, err
	}
	if t == Text {
		if y, yt, ok := coerceLit(x, map[ir.CastType]Type{ir.CastBigint: Integer, ir.CastInteger: Integer, ir.CastDouble: Real, ir.CastNumeric: Real}[n.To]); ok {
			x, t = y, yt
		}
	}
	out := ir.Cast{X: x, To: n.To, Precision: n.Precision, Scale: n.Scale}
	refuse := func(why string) (ir.Expr, Type, error) {
		return nil, 0, sqlerr.New(sqlerr.FeatureNotSupported, "CAST of %s to %s is not supported in post-processing: %s", t, n.To, why)
	}
	switch n.To {
	case ir.CastBigint, ir.CastInteger:
		switch t {
		case Integer, Real, Boolean, Null:
			return out, Integer, nil
		}
		return refuse("a text that is not a number would fail the answer after the charge")
	case ir.CastDouble:
		switch t {
		case Integer, Real, Null:
			return out, Real, nil
		}
		return refuse("only numbers convert to double precision")
	case ir.CastNumeric:
		// A decimal, held in a double: exact for the digits a client
		// sees (up to 15), computed as an exact number by what follows
		// (postChecker.double), never an integer (5::numeric / 2 is 2.5).
		switch t {
		case Integer, Real, Null:
			return out, Real, nil
		}
		return refuse("only numbers convert to numeric")
	case ir.CastText:
		switch t {
		case Integer, Text, Boolean, Null:
			return out, Text, nil
		case Real:
			return refuse("PostgreSQL and MySQL spell doubles differently; round it and cast to bigint first")
		}
	}
	return refuse("unsupported conversion")
}

// Eval evaluates a post-processing expression checked by PostType over
// one noisy output row. SQL three-valued logic: a NULL operand makes
// comparisons NULL, and a NULL condition filters the row out (the caller
// keeps the rows whose HAVING is TRUE). Errors mean an expression PostType did not
// check (an internal error): values themselves never fail.
func Eval(e ir.Expr, row []ir.Value, d PostDialect) (ir.Value, error) {
	ev := evaluator{row: row, d: d}
	v := ev.eval(e)
	return v, ev.err
}

type evaluator struct {
	row []ir.Value
	d   PostDialect
	err error
}

func (ev *evaluator) fail(format string, args ...any) ir.Value {
	if ev.err == nil {
		ev.err = sqlerr.New(sqlerr.Internal, "internal error: post-processing: "+format, args...)
	}
	return ir.Null()
}

// IsTrue reports whether v is the boolean TRUE (HAVING keeps the row).
func IsTrue(v ir.Value) bool  { return v.Kind == ir.KindBool && v.Bool }
func isFalse(v ir.Value) bool { return v.Kind == ir.KindBool && !v.Bool }

func (ev *evaluator) eval(e ir.Expr) ir.Value {
	switch n := e.(type) {
	case ir.OutputRef:
		if n.Index < 0 || n.Index >= len(ev.row) {
			return ev.fail("output %d out of range", n.Index)
		}
		return ev.row[n.Index]
	case ir.Literal:
		return n.Value
	case ir.Compare:
		l, r := ev.eval(n.L), ev.eval(n.R)
		if l.IsNull() || r.IsNull() {
			return ir.Null()
		}
		c := ev.compare(l, r)
		switch n.Op {
		case ir.OpEq:
			return ir.Bool(c == 0)
		case ir.OpNe:
			return ir.Bool(c != 0)
		case ir.OpLt:
			return ir.Bool(c < 0)
		case ir.OpLe:
			return ir.Bool(c <= 0)
		case ir.OpGt:
			return ir.Bool(c > 0)
		}
		return ir.Bool(c >= 0)
	case ir.Between:
		var x ir.Expr = ir.And{L: ir.Compare{Op: ir.OpGe, L: n.X, R: n.Lo}, R: ir.Compare{Op: ir.OpLe, L: n.X, R: n.Hi}}
		if n.Not {
			x = ir.Not{X: x}
		}
		return ev.eval(x)
	case ir.In:
		x := ev.eval(n.X)
		if x.IsNull() {
			return ir.Null()
		}
		sawNull := false
		for _, it := range n.List {
			v := ev.eval(it)
			if v.IsNull() {
				sawNull = true
				continue
			}
			if ev.compare(x, v) == 0 {
				return ir.Bool(!n.Not)
			}
		}
		if sawNull {
			return ir.Null()
		}
		return ir.Bool(n.Not)
	case ir.IsNull:
		return ir.Bool(ev.eval(n.X).IsNull() != n.Not)
	case ir.And:
		l, r := ev.eval(n.L), ev.eval(n.R)
		switch {
		case isFalse(l) || isFalse(r):
			return ir.Bool(false)
		case l.IsNull() || r.IsNull():
			return ir.Null()
		}
		return ir.Bool(true)
	case ir.Or:
		l, r := ev.eval(n.L), ev.eval(n.R)
		switch {
		case IsTrue(l) || IsTrue(r):
			return ir.Bool(true)
		case l.IsNull() || r.IsNull():
			return ir.Null()
		}
		return ir.Bool(false)
	case ir.Not:
		x := ev.eval(n.X)
		if x.IsNull() {
			return x
		}
		if x.Kind != ir.KindBool {
			return ev.fail("NOT of %s", x.Kind)
		}
		return ir.Bool(!x.Bool)
	case ir.Arith:
		l, r := ev.eval(n.L), ev.eval(n.R)
		if l.IsNull() || r.IsNull() {
			return ir.Null()
		}
		return ev.arith(n.Op, l, r)
	case ir.Neg:
		x := ev.eval(n.X)
		switch x.Kind {
		case ir.KindNull:
			return x
		case ir.KindInt:
			return ir.Int(SaturatingSub(0, x.Int))
		case ir.KindFloat:
			return ir.Float(-x.Float)
		}
		return ev.fail("unary minus of %s", x.Kind)
	case ir.Like:
		x, p := ev.eval(n.X), ev.eval(n.Pattern)
		if x.IsNull() || p.IsNull() {
			return ir.Null()
		}
		return ir.Bool(likeMatch(x.Text(), p.Text(), n.CaseInsensitive) != n.Not)
	case ir.Func:
		f, ok := PostFunc(n.Name)
		if !ok {
			return ev.fail("function %s", n.Name)
		}
		args := make([]ir.Value, len(n.Args))
		for i, a := range n.Args {
			args[i] = ev.eval(a)
		}
		if f.Strict {
			for _, a := range args {
				if a.IsNull() {
					return ir.Null()
				}
			}
		}
		return f.Post.Eval(args, ev.d)
	case ir.Case:
		for _, w := range n.Whens {
			if IsTrue(ev.eval(w.Cond)) {
				return ev.eval(w.Then)
			}
		}
		if n.Else == nil {
			return ir.Null()
		}
		return ev.eval(n.Else)
	case ir.Cast:
		return ev.cast(ev.eval(n.X), n)
	}
	return ev.fail("expression %T", e)
}

func (ev *evaluator) compare(a, b ir.Value) int {
	if a.IsNumber() != b.IsNumber() || (!a.IsNumber() && a.Kind != b.Kind) {
		ev.fail("comparison of %s with %s", a.Kind, b.Kind)
		return 1
	}
	return ir.CompareValues(a, b)
}

func (ev *evaluator) arith(op ir.ArithOp, l, r ir.Value) ir.Value {
	if !l.IsNumber() || !r.IsNumber() {
		return ev.fail("arithmetic on %s and %s", l.Kind, r.Kind)
	}
	if l.Kind == ir.KindInt && r.Kind == ir.KindInt {
		// Integers saturate at the int64 limits instead of wrapping or
		// failing: a noisy count times a large constant must not change
		// sign, nor lose the answer. Exact whenever the result fits.
		a, b := l.Int, r.Int
		switch op {
		case ir.OpAdd:
			return ir.Int(SaturatingAdd(a, b))
		case ir.OpSub:
			return ir.Int(SaturatingSub(a, b))
		case ir.OpMul:
			return ir.Int(saturatingMul(a, b))
		case ir.OpDiv, ir.OpIntDiv:
			// Truncated toward zero (PostgreSQL's /, MySQL's DIV). A zero
			// divisor gives NULL: a noisy count can be 0, and one error
			// would lose the whole answer. MinInt64 / -1 saturates.
			switch b {
			case 0:
				return ir.Null()
			case -1:
				return ir.Int(SaturatingSub(0, a))
			}
			return ir.Int(a / b)
		case ir.OpMod:
			switch b {
			case 0:
				return ir.Null()
			case -1:
				return ir.Int(0)
			}
			return ir.Int(a % b)
		case ir.OpRealDiv:
			if b == 0 {
				return ir.Null()
			}
			return ir.Float(float64(a) / float64(b))
		}
		return ev.fail("operator %s", op)
	}
	a, _ := l.AsFloat()
	b, _ := r.AsFloat()
	switch op {
	case ir.OpAdd:
		return ir.Float(a + b)
	case ir.OpSub:
		return ir.Float(a - b)
	case ir.OpMul:
		return ir.Float(a * b)
	case ir.OpDiv, ir.OpRealDiv:
		if b == 0 {
			return ir.Null()
		}
		return ir.Float(a / b)
	}
	return ev.fail("operator %s on reals", op)
}

func (ev *evaluator) cast(x ir.Value, n ir.Cast) ir.Value {
	if x.IsNull() {
		return x
	}
	to := n.To
	switch to {
	case ir.CastNumeric:
		if f, ok := x.AsFloat(); ok {
			return ir.Float(ev.decimal(f, x.Kind == ir.KindInt, n.Precision, n.Scale))
		}
	case ir.CastBigint, ir.CastInteger:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if to == ir.CastInteger {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		switch x.Kind {
		case ir.KindInt:
			return ir.Int(min(max(x.Int, lo), hi))
		case ir.KindBool:
			if x.Bool {
				return ir.Int(1)
			}
			return ir.Int(0)
		case ir.KindFloat:
			// A double converts to the nearest integer, halves to even
			// (rint), on PostgreSQL and MariaDB alike (both checked by
			// TestPostEvaluatorOracle). PostgreSQL fails out of range,
			// MariaDB saturates: the proxy saturates.
			return ir.Int(saturateFloat(math.RoundToEven(x.Float), lo, hi))
		}
	case ir.CastDouble:
		if f, ok := x.AsFloat(); ok {
			return ir.Float(f)
		}
	case ir.CastText:
		switch x.Kind {
		case ir.KindInt, ir.KindString:
			return ir.String(x.Text())
		case ir.KindBool:
			switch {
			case ev.d.MySQL && x.Bool:
				return ir.String("1")
			case ev.d.MySQL:
				return ir.String("0")
			case x.Bool:
				return ir.String("true")
			}
			return ir.String("false")
		}
	}
	return ev.fail("cast of %s to %s", x.Kind, to)
}

// decimal is CAST(v AS NUMERIC(precision, scale)) (precision 0:
// unconstrained) as the client's database computes it, held in a double.
// A double converts to a decimal first: in PostgreSQL with 15
// significant digits (float8_numeric, DBL_DIG), in MySQL with the
// shortest digits that read back as the double. An integer converts
// exactly (as far as a double holds it). The decimal then rounds half
// away from zero to scale digits after the point. A value with more
// than precision − scale digits before the point makes PostgreSQL fail
// ("numeric field overflow") and MySQL saturate with a warning: the
// proxy saturates at ±(10^(precision−scale) − 10^−scale), as it does for
// integer casts, so that no noisy value fails the answer after the
// charge.
func (ev *evaluator) decimal(v float64, exact bool, precision, scale int) float64 {
	if math.IsInf(v, 0) || v != v {
		return v
	}
	if !exact && !ev.d.MySQL {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	}
	if precision == 0 {
		return v
	}
	v = roundDigits(v, int64(scale))
	// The largest value: precision nines, scale of them after the point
	// (+Inf beyond a double's range: no limit).
	nines := strings.Repeat("9", precision)
	limit, _ := strconv.ParseFloat("0"+nines[:precision-scale]+"."+nines[precision-scale:]+"0", 64)
	return max(min(v, limit), -limit)
}

// saturateFloat converts a whole double to an integer in [lo, hi]
// (NaN, which noise never produces, reads 0).
func saturateFloat(f float64, lo, hi int64) int64 {
	switch {
	case f != f:
		return 0
	case f >= float64(hi):
		// float64(MaxInt64) is 2^63, beyond it: compare before converting.
		if f >= math.Ldexp(1, 63) || int64(f) >= hi {
			return hi
		}
	case f <= float64(lo):
		return lo
	}
	return int64(f)
}

// SaturatingAdd is a + b clamped to the int64 limits, exactly. The
// backend's sums saturate there (a sum never fails, whatever the data) and
// noise is added with it, so a large noisy sum never wraps to a negative
// one; clamping the exact noisy value is post-processing, so it costs no
// privacy.
func SaturatingAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// SaturatingSub is a − b clamped to the int64 limits, exactly.
func SaturatingSub(a, b int64) int64 {
	s := a - b
	switch {
	case b < 0 && s < a:
		return math.MaxInt64
	case b > 0 && s > a:
		return math.MinInt64
	}
	return s
}

// saturatingMul is a · b clamped to the int64 limits, exactly.
func saturatingMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
		return p
	}
	if (a < 0) != (b < 0) {
		return math.MinInt64
	}
	return math.MaxInt64
}

// likeMatch is SQL LIKE with % and _ and backslash escapes, matched rune
// by rune in O(len(s)·len(pattern)) (no regular expression is built from
// the pattern, and no pattern backtracks exponentially).
func likeMatch(s, pattern string, fold bool) bool {
	if fold {
		s, pattern = strings.ToLower(s), strings.ToLower(pattern)
	}
	// The pattern as tokens: a rune to match (lit), any one rune (one),
	// or any run (many).
	type tok struct {
		r         rune
		one, many bool
	}
	var toks []tok
	p := []rune(pattern)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			toks = append(toks, tok{r: p[i]})
		case c == '%':
			toks = append(toks, tok{many: true})
		case c == '_':
			toks = append(toks, tok{one: true})
		default:
			toks = append(toks, tok{r: c})
		}
	}
	// match[j]: the tokens before j match the runes read so far.
	match := make([]bool, len(toks)+1)
	match[0] = true
	for j, t := range toks {
		match[j+1] = match[j] && t.many
	}
	for _, c := range s {
		next := make([]bool, len(toks)+1)
		for j, t := range toks {
			switch {
			case t.many:
				next[j+1] = match[j+1] || next[j]
			case t.one || t.r == c:
				next[j+1] = match[j]
			}
		}
		match = next
	}
	return match[len(toks)]
}

// roundDigits is ROUND(x, d): x rounded half away from zero to d decimal
// digits (d < 0 rounds to tens, hundreds...), as PostgreSQL's numeric
// round and MySQL's ROUND on exact values do. The rounding is done on the
// decimal the client sees (the shortest spelling of the double, e.g.
// 2.345, which as a double lies just below 2.345), exactly, so round(x, 2)
// of a value shown as 2.345 is 2.35 as it is in the database.
func roundDigits(v float64, d int64) float64 {
	if math.IsInf(v, 0) || v != v {
		return v
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		return v
	}
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(d)), nil))
	if d >= 0 {
		r.Mul(r, p)
	} else {
		r.Quo(r, p)
	}
	// Half away from zero: q = trunc(r), plus one away from zero when the
	// remainder is at least one half.
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if new(big.Int).Abs(new(big.Int).Lsh(m, 1)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(r.Num().Sign())))
	}
	out := new(big.Rat).SetInt(q)
	if d >= 0 {
		out.Quo(out, p)
	} else {
		out.Mul(out, p)
	}
	f, _ := out.Float64()
	return f
}

// roundDoubleDigits is ROUND(x, d) of a double as the databases round
// one: its exact binary value, ties to even (PostgreSQL's rint for d = 0,
// MariaDB's ROUND for every d: ROUND(2.5e0) = 2, ROUND(0.285e0, 2) =
// 0.28 because 0.285 is stored just below it).
func roundDoubleDigits(v float64, d int64) float64 {
	if math.IsInf(v, 0) || v != v {
		return v
	}
	if d == 0 {
		return math.RoundToEven(v)
	}
	r := new(big.Rat).SetFloat64(v)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(d)), nil))
	if d > 0 {
		r.Mul(r, p)
	} else {
		r.Quo(r, p)
	}
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	switch c := new(big.Int).Abs(new(big.Int).Lsh(m, 1)).Cmp(r.Denom()); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(int64(r.Num().Sign())))
	}
	out := new(big.Rat).SetInt(q)
	if d > 0 {
		out.Quo(out, p)
	} else {
		out.Mul(out, p)
	}
	f, _ := out.Float64()
	return f
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
