package release

import (
	"math"
	"regexp"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// eval evaluates a post-processing expression (HAVING, a select-list
// expression) over one noisy output row. SQL three-valued logic: a NULL operand makes comparisons
// NULL, and a NULL condition filters the row out.
func eval(e ir.Expr, row []ir.Value) (ir.Value, error) {
	switch n := e.(type) {
	case ir.OutputRef:
		return row[n.Index], nil
	case ir.Literal:
		return n.Value, nil
	case ir.Compare:
		l, err := eval(n.L, row)
		if err != nil {
			return ir.Null(), err
		}
		r, err := eval(n.R, row)
		if err != nil || l.IsNull() || r.IsNull() {
			return ir.Null(), err
		}
		c, err := compare(l, r)
		if err != nil {
			return ir.Null(), err
		}
		switch n.Op {
		case ir.OpEq:
			return ir.Bool(c == 0), nil
		case ir.OpNe:
			return ir.Bool(c != 0), nil
		case ir.OpLt:
			return ir.Bool(c < 0), nil
		case ir.OpLe:
			return ir.Bool(c <= 0), nil
		case ir.OpGt:
			return ir.Bool(c > 0), nil
		default:
			return ir.Bool(c >= 0), nil
		}
	case ir.Between:
		ge := ir.Compare{Op: ir.OpGe, L: n.X, R: n.Lo}
		le := ir.Compare{Op: ir.OpLe, L: n.X, R: n.Hi}
		var x ir.Expr = ir.And{L: ge, R: le}
		if n.Not {
			x = ir.Not{X: x}
		}
		return eval(x, row)
	case ir.In:
		x, err := eval(n.X, row)
		if err != nil || x.IsNull() {
			return ir.Null(), err
		}
		sawNull := false
		for _, it := range n.List {
			v, err := eval(it, row)
			if err != nil {
				return ir.Null(), err
			}
			if v.IsNull() {
				sawNull = true
				continue
			}
			if c, err := compare(x, v); err == nil && c == 0 {
				return ir.Bool(!n.Not), nil
			}
		}
		if sawNull {
			return ir.Null(), nil
		}
		return ir.Bool(n.Not), nil
	case ir.IsNull:
		x, err := eval(n.X, row)
		if err != nil {
			return ir.Null(), err
		}
		return ir.Bool(x.IsNull() != n.Not), nil
	case ir.And:
		l, err := eval(n.L, row)
		if err != nil {
			return ir.Null(), err
		}
		r, err := eval(n.R, row)
		if err != nil {
			return ir.Null(), err
		}
		if isFalse(l) || isFalse(r) {
			return ir.Bool(false), nil
		}
		if l.IsNull() || r.IsNull() {
			return ir.Null(), nil
		}
		return ir.Bool(true), nil
	case ir.Or:
		l, err := eval(n.L, row)
		if err != nil {
			return ir.Null(), err
		}
		r, err := eval(n.R, row)
		if err != nil {
			return ir.Null(), err
		}
		if isTrue(l) || isTrue(r) {
			return ir.Bool(true), nil
		}
		if l.IsNull() || r.IsNull() {
			return ir.Null(), nil
		}
		return ir.Bool(false), nil
	case ir.Not:
		x, err := eval(n.X, row)
		if err != nil || x.IsNull() {
			return ir.Null(), err
		}
		if x.Kind != ir.KindBool {
			return ir.Null(), typeErr("NOT needs a boolean")
		}
		return ir.Bool(!x.Bool), nil
	case ir.Arith:
		l, err := eval(n.L, row)
		if err != nil {
			return ir.Null(), err
		}
		r, err := eval(n.R, row)
		if err != nil || l.IsNull() || r.IsNull() {
			return ir.Null(), err
		}
		return arith(n.Op, l, r)
	case ir.Neg:
		x, err := eval(n.X, row)
		if err != nil || x.IsNull() {
			return ir.Null(), err
		}
		switch x.Kind {
		case ir.KindInt:
			return ir.Int(-x.Int), nil
		case ir.KindFloat:
			return ir.Float(-x.Float), nil
		}
		return ir.Null(), typeErr("unary minus needs a number")
	case ir.Like:
		x, err := eval(n.X, row)
		if err != nil {
			return ir.Null(), err
		}
		p, err := eval(n.Pattern, row)
		if err != nil || x.IsNull() || p.IsNull() {
			return ir.Null(), err
		}
		m := likeMatch(x.Text(), p.Text(), n.CaseInsensitive)
		return ir.Bool(m != n.Not), nil
	case ir.Func:
		return evalFunc(n, row)
	}
	return ir.Null(), sqlerr.New(sqlerr.FeatureNotSupported, "expression not supported in post-processing (select list, HAVING)")
}

func isTrue(v ir.Value) bool  { return v.Kind == ir.KindBool && v.Bool }
func isFalse(v ir.Value) bool { return v.Kind == ir.KindBool && !v.Bool }

func typeErr(msg string) error {
	return sqlerr.New(sqlerr.DatatypeMismatch, "post-processing: %s", msg)
}

func compare(a, b ir.Value) (int, error) {
	if a.IsNumber() != b.IsNumber() || (!a.IsNumber() && a.Kind != b.Kind) {
		return 0, typeErr("cannot compare " + a.Kind.String() + " with " + b.Kind.String())
	}
	return ir.CompareValues(a, b), nil
}

func arith(op ir.ArithOp, l, r ir.Value) (ir.Value, error) {
	if !l.IsNumber() || !r.IsNumber() {
		return ir.Null(), typeErr("arithmetic needs numbers")
	}
	if l.Kind == ir.KindInt && r.Kind == ir.KindInt {
		// Integers saturate at the int64 limits instead of wrapping: a
		// noisy count times a large constant must not change sign. The
		// result is exact whenever it fits.
		switch op {
		case ir.OpAdd:
			return ir.Int(saturatingAdd(l.Int, r.Int)), nil
		case ir.OpSub:
			return ir.Int(saturate(l.Int-r.Int, float64(l.Int)-float64(r.Int))), nil
		case ir.OpMul:
			return ir.Int(saturate(l.Int*r.Int, float64(l.Int)*float64(r.Int))), nil
		case ir.OpDiv, ir.OpIntDiv:
			// Truncated toward zero, as PostgreSQL's / and MySQL's DIV. A
			// zero divisor gives NULL (a noisy count can be 0, and one
			// error would lose the whole answer); MinInt64 / -1 saturates.
			switch {
			case r.Int == 0:
				return ir.Null(), nil
			case r.Int == -1:
				return ir.Int(saturate(-l.Int, -float64(l.Int))), nil
			}
			return ir.Int(l.Int / r.Int), nil
		case ir.OpMod:
			switch r.Int {
			case 0:
				return ir.Null(), nil
			case -1:
				return ir.Int(0), nil
			}
			return ir.Int(l.Int % r.Int), nil
		case ir.OpRealDiv:
			if r.Int == 0 {
				return ir.Null(), nil
			}
			return ir.Float(float64(l.Int) / float64(r.Int)), nil
		}
		return ir.Null(), unsupportedOp(op)
	}
	a, _ := l.AsFloat()
	b, _ := r.AsFloat()
	switch op {
	case ir.OpAdd:
		return ir.Float(a + b), nil
	case ir.OpSub:
		return ir.Float(a - b), nil
	case ir.OpMul:
		return ir.Float(a * b), nil
	case ir.OpDiv, ir.OpRealDiv:
		if b == 0 {
			return ir.Null(), nil
		}
		return ir.Float(a / b), nil
	}
	return ir.Null(), unsupportedOp(op)
}

// unsupportedOp refuses an operator the evaluator does not know rather
// than computing another one; the planner refuses it before any charge.
func unsupportedOp(op ir.ArithOp) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "arithmetic operator #%d is not supported in post-processing", op)
}

// saturate returns the (possibly wrapped) int64 result w, or the int64
// limit when f, the float64 estimate of the true result, lies at or beyond
// it: a true result outside the int64 range rounds to such an f, and one
// inside it leaves w exact (a result within f's rounding error of the
// limit saturates, off by less than one part in 2^52).
func saturate(w int64, f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return w
}

func evalFunc(f ir.Func, row []ir.Value) (ir.Value, error) {
	args := make([]ir.Value, len(f.Args))
	for i, a := range f.Args {
		v, err := eval(a, row)
		if err != nil {
			return ir.Null(), err
		}
		args[i] = v
	}
	if f.Name == "coalesce" {
		for _, a := range args {
			if !a.IsNull() {
				return a, nil
			}
		}
		return ir.Null(), nil
	}
	if f.Name == "round" && len(args) == 2 {
		return roundDigits(args[0], args[1])
	}
	if len(args) != 1 {
		return ir.Null(), typeErr(f.Name + " takes one argument")
	}
	x := args[0]
	if x.IsNull() {
		return ir.Null(), nil
	}
	switch f.Name {
	case "lower":
		return ir.String(strings.ToLower(x.Text())), nil
	case "upper":
		return ir.String(strings.ToUpper(x.Text())), nil
	case "length":
		return ir.Int(int64(len([]rune(x.Text())))), nil
	case "trim":
		return ir.String(strings.TrimSpace(x.Text())), nil
	case "ltrim":
		return ir.String(strings.TrimLeft(x.Text(), " ")), nil
	case "rtrim":
		return ir.String(strings.TrimRight(x.Text(), " ")), nil
	}
	v, ok := x.AsFloat()
	if !ok {
		return ir.Null(), typeErr(f.Name + " needs a number")
	}
	switch f.Name {
	case "abs":
		if x.Kind == ir.KindInt {
			if x.Int < 0 {
				return ir.Int(-x.Int), nil
			}
			return x, nil
		}
		return ir.Float(math.Abs(v)), nil
	case "floor":
		return keepInt(x, math.Floor(v)), nil
	case "ceil":
		return keepInt(x, math.Ceil(v)), nil
	case "round":
		return keepInt(x, math.Round(v)), nil
	}
	return ir.Null(), sqlerr.New(sqlerr.UndefinedFunction, "function %s is not supported in HAVING", f.Name)
}

// roundDigits is ROUND(x, d): x rounded half away from zero to d decimal
// digits (d < 0 rounds to tens, hundreds...), a real (PostgreSQL's numeric
// round; the wires send it as double precision). NULL in, NULL out.
func roundDigits(x, d ir.Value) (ir.Value, error) {
	if x.IsNull() || d.IsNull() {
		return ir.Null(), nil
	}
	v, ok := x.AsFloat()
	if !ok || d.Kind != ir.KindInt {
		return ir.Null(), typeErr("round(x, digits) needs a number and an integer")
	}
	if d.Int > 308 || d.Int < -308 {
		return ir.Null(), typeErr("round(x, digits): digits must be between -308 and 308")
	}
	p := math.Pow(10, math.Abs(float64(d.Int)))
	if d.Int < 0 {
		return ir.Float(math.Round(v/p) * p), nil
	}
	scaled := v * p
	if math.IsInf(scaled, 0) || math.Abs(scaled) >= 1<<53 {
		return ir.Float(v), nil // no digit to drop at that precision
	}
	return ir.Float(math.Round(scaled) / p), nil
}

func keepInt(x ir.Value, v float64) ir.Value {
	if x.Kind == ir.KindInt {
		return x
	}
	return ir.Float(v)
}

// likeMatch implements SQL LIKE with % and _ and backslash escapes.
func likeMatch(s, pattern string, fold bool) bool {
	var re strings.Builder
	re.WriteString("(?s)^")
	if fold {
		re.WriteString("(?i)")
	}
	esc := false
	for _, r := range pattern {
		switch {
		case esc:
			re.WriteString(regexp.QuoteMeta(string(r)))
			esc = false
		case r == '\\':
			esc = true
		case r == '%':
			re.WriteString(".*")
		case r == '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	m, err := regexp.MatchString(re.String(), s)
	return err == nil && m
}

// saturatingAdd is v + n clamped to the int64 limits, exactly (saturate
// needs a float estimate only for products). The backend's sums saturate
// there (a sum never fails, whatever the data) and noise is added with it,
// so a large noisy sum never wraps to a negative one; clamping the exact
// noisy value is post-processing, so it costs no privacy.
func saturatingAdd(v, n int64) int64 {
	s := v + n
	switch {
	case n > 0 && s < v:
		return math.MaxInt64
	case n < 0 && s > v:
		return math.MinInt64
	}
	return s
}
