package exprtype_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The brute-force oracle of the range analysis: random small expressions
// over columns with tiny bounds (some of them near the int64 limits, so
// overflow is possible), every assignment of stored values (in and out of
// the bounds, NULL, subnormal reals) evaluated the way PostgreSQL — the
// strictest backend — evaluates the lowered expression: int64 arithmetic
// that errors on overflow, doubles that error on overflow to infinity and
// on a product of nonzero values rounding to zero. The analysis must say
// "total" only when no assignment errs, and every value must lie in the
// inferred range (and be a multiple of its grain).

// oracleEnv is one trial: the bounds of x, y (integers) and r (real).
type oracleEnv struct {
	x, y [2]int64
	r    [2]float64
}

var intCenters = []int64{0, 5, -7, 1 << 31, 3037000499, 1 << 53, 1 << 62, -(1 << 62), math.MaxInt64 - 3, math.MinInt64 + 1}

func (env *oracleEnv) draw(rng *rand.Rand) {
	for _, b := range []*[2]int64{&env.x, &env.y} {
		c := intCenters[rng.IntN(len(intCenters))]
		w := int64(rng.IntN(3))
		b[0], b[1] = c, c
		if c <= math.MaxInt64-w {
			b[1] = c + w
		}
		if c > math.MinInt64+w && rng.IntN(2) == 0 {
			b[0] = c - w // around the center: [-2, 2] straddles zero
		}
		if rng.IntN(3) == 0 {
			b[0], b[1] = -b[1], -b[0] // safe: no center is MinInt64
		}
	}
	rs := [][2]float64{{-2, 2}, {0.5, 3}, {0, 1e-300}, {-1e150, 1e150}, {1e-77, 0.25}, {-3.5, -3.5}, {0, 0}}
	env.r = rs[rng.IntN(len(rs))]
}

func (env *oracleEnv) columns(c ir.ColumnRef) (exprtype.Column, error) {
	ref := ir.ColumnRef{Qualifier: "t", Name: c.Name}
	switch c.Name {
	case "x":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(env.x[0]), Hi: ir.Int(env.x[1])}, nil
	case "y":
		return exprtype.Column{Ref: ref, Type: exprtype.Integer, HasBounds: true, Lo: ir.Int(env.y[0]), Hi: ir.Int(env.y[1])}, nil
	case "r":
		return exprtype.Column{Ref: ref, Type: exprtype.Real, HasBounds: true, Lo: ir.Float(env.r[0]), Hi: ir.Float(env.r[1])}, nil
	}
	return exprtype.Column{}, fmt.Errorf("no column %s", c.Name)
}

// stored values of a column, in and out of its bounds.
func intValues(b [2]int64) []ir.Value {
	out := []ir.Value{ir.Null(), ir.Int(math.MinInt64), ir.Int(math.MaxInt64)}
	for v := b[0]; ; v++ {
		out = append(out, ir.Int(v))
		if v == b[1] {
			break
		}
	}
	return out
}

func realValues(b [2]float64) []ir.Value {
	out := []ir.Value{ir.Null()}
	for _, f := range []float64{b[0], b[1], (b[0] + b[1]) / 2, 0, 5e-324, -5e-324, 1e-77, 1.0000001e-77, -0.3, 7, math.Inf(1), math.Inf(-1), math.NaN(), b[0] - 1, b[1] * 2} {
		out = append(out, ir.Float(f))
	}
	return out
}

// source is what the generator draws from: a seeded PRNG or fuzz bytes.
type source interface{ IntN(int) int }

var (
	intLits  = []int64{0, 1, 2, -3, 90, 1 << 31, 3037000499, math.MaxInt64, math.MinInt64, 1 << 62}
	realLits = []float64{0.5, 0.75, -2.5, 1e-300, 1e200, 3, 0, 1e-160}
)

// genNumber draws a numeric expression of depth at most d.
func genNumber(s source, d int) ir.Expr {
	if d <= 0 || s.IntN(3) == 0 {
		switch s.IntN(7) {
		case 0, 1:
			return ir.ColumnRef{Name: "x"}
		case 2:
			return ir.ColumnRef{Name: "y"}
		case 3:
			return ir.ColumnRef{Name: "r"}
		case 4:
			return ir.Literal{Value: ir.Int(intLits[s.IntN(len(intLits))])}
		case 5:
			return ir.Literal{Value: ir.Float(realLits[s.IntN(len(realLits))])}
		}
		if s.IntN(2) == 0 {
			return ir.Literal{Value: ir.Null()}
		}
		return ir.Literal{Value: ir.String([]string{"2", "-5", "1.5", "x"}[s.IntN(4)])}
	}
	switch s.IntN(10) {
	case 8:
		// The integer arguments of substr, left and right: their ranges
		// must keep them where every backend agrees and none fails.
		txt := ir.Literal{Value: ir.String("abc")}
		switch s.IntN(3) {
		case 0:
			args := []ir.Expr{txt, genNumber(s, d-1)}
			if s.IntN(2) == 0 {
				args = append(args, genNumber(s, d-1))
			}
			return ir.Func{Name: "length", Args: []ir.Expr{ir.Func{Name: "substr", Args: args}}}
		case 1:
			return ir.Func{Name: "length", Args: []ir.Expr{ir.Func{Name: "left", Args: []ir.Expr{txt, genNumber(s, d-1)}}}}
		}
		return ir.Func{Name: "length", Args: []ir.Expr{ir.Func{Name: "right", Args: []ir.Expr{txt, genNumber(s, d-1)}}}}
	case 7:
		return ir.Cast{X: genNumber(s, d-1), To: []ir.CastType{ir.CastBigint, ir.CastInteger, ir.CastDouble}[s.IntN(3)]}
	case 6:
		switch s.IntN(3) {
		case 0:
			return ir.Func{Name: "nullif", Args: []ir.Expr{genNumber(s, d-1), genNumber(s, d-1)}}
		}
		args := []ir.Expr{genNumber(s, d-1)}
		for range 1 + s.IntN(3) {
			args = append(args, genNumber(s, d-1))
		}
		return ir.Func{Name: []string{"greatest", "least"}[s.IntN(2)], Args: args}
	case 5:
		// CASE: conditions compare numbers (their operands are computed
		// too, so they must be total as well); arms may be NULL.
		cond := func() ir.Expr {
			return ir.Compare{Op: ir.CmpOp(s.IntN(6)), L: genNumber(s, d-1), R: genNumber(s, 0)}
		}
		k := ir.Case{Whens: []ir.When{{Cond: cond(), Then: genNumber(s, d-1)}}}
		for range s.IntN(2) {
			k.Whens = append(k.Whens, ir.When{Cond: cond(), Then: genNumber(s, d-1)})
		}
		if s.IntN(3) > 0 {
			k.Else = genNumber(s, d-1)
		}
		return k
	case 0, 1:
		// + - * / % real-/ DIV
		return ir.Arith{Op: ir.ArithOp(s.IntN(7)), L: genNumber(s, d-1), R: genNumber(s, d-1)}
	case 2:
		return ir.Neg{X: genNumber(s, d-1)}
	case 3:
		return ir.Func{Name: []string{"abs", "floor", "ceil", "round"}[s.IntN(4)], Args: []ir.Expr{genNumber(s, d-1)}}
	case 4:
		args := []ir.Expr{genNumber(s, d-1)}
		for range s.IntN(3) {
			args = append(args, genNumber(s, d-1))
		}
		return ir.Func{Name: "coalesce", Args: args}
	case 9:
		bound := func() ir.Expr {
			return ir.Literal{Value: ir.Int([]int64{-10, -1, 0, 3, 10, 1 << 40, math.MinInt64 + 5}[s.IntN(7)])}
		}
		n := ir.Literal{Value: ir.Int([]int64{1, 2, 3, 7, 1 << 30}[s.IntN(5)])}
		return ir.Func{Name: "width_bucket", Args: []ir.Expr{genNumber(s, d-1), bound(), bound(), n}}
	}
	return genNumber(s, 0)
}

// errBackend marks an evaluation the backend would fail.
var errBackend = errors.New("the backend would raise an error")

type val struct {
	null bool
	real bool
	i    *big.Int
	f    float64
}

// staticReal reports whether a lowered numeric expression is computed in
// double precision (PostgreSQL's type resolution).
func staticReal(e ir.Expr) bool {
	switch n := e.(type) {
	case ir.Literal:
		return n.Value.Kind == ir.KindFloat
	case ir.Clamp:
		return n.Lo.Kind == ir.KindFloat
	case ir.Arith:
		return n.Op == ir.OpRealDiv || staticReal(n.L) || staticReal(n.R)
	case ir.Neg:
		return staticReal(n.X)
	case ir.Func:
		for _, a := range n.Args {
			if staticReal(a) {
				return true
			}
		}
	case ir.Cast:
		return n.To == ir.CastDouble
	case ir.Case:
		for _, w := range n.Whens {
			if staticReal(w.Then) {
				return true
			}
		}
		return n.Else != nil && staticReal(n.Else)
	}
	return false
}

var (
	bigMin = big.NewInt(math.MinInt64)
	bigMax = big.NewInt(math.MaxInt64)
)

func intVal(i *big.Int) (val, error) {
	if i.Cmp(bigMin) < 0 || i.Cmp(bigMax) > 0 {
		return val{}, errBackend
	}
	return val{i: i}, nil
}

func realVal(f float64) (val, error) {
	if math.IsInf(f, 0) {
		return val{}, errBackend
	}
	return val{real: true, f: f}, nil
}

func toFloat(v val) float64 {
	if v.real {
		return v.f
	}
	f, _ := new(big.Float).SetInt(v.i).Float64()
	return f
}

// eval evaluates a lowered expression on one row, as PostgreSQL would.
func eval(e ir.Expr, row map[string]ir.Value) (val, error) {
	switch n := e.(type) {
	case ir.ColumnRef: // a bare column, read as stored (only compared)
		v := row[n.Name]
		switch v.Kind {
		case ir.KindNull:
			return val{null: true}, nil
		case ir.KindInt:
			return val{i: big.NewInt(v.Int)}, nil
		}
		return val{real: true, f: v.Float}, nil
	case ir.Literal:
		switch n.Value.Kind {
		case ir.KindNull:
			return val{null: true}, nil
		case ir.KindInt:
			return val{i: big.NewInt(n.Value.Int)}, nil
		case ir.KindFloat:
			return val{real: true, f: n.Value.Float}, nil
		}
		return val{}, fmt.Errorf("literal %v in a numeric expression", n.Value)
	case ir.Clamp:
		v := row[n.X.(ir.ColumnRef).Name]
		if v.IsNull() {
			return val{null: true}, nil
		}
		if n.Lo.Kind == ir.KindInt {
			x := v.Int
			x = max(x, n.Lo.Int)
			x = min(x, n.Hi.Int)
			return val{i: big.NewInt(x)}, nil
		}
		f := v.Float
		if f > -ir.TinyReal && f < ir.TinyReal {
			f = 0
		}
		// PostgreSQL orders NaN above every number.
		if math.IsNaN(f) || f > n.Hi.Float {
			f = n.Hi.Float
		}
		return val{real: true, f: math.Max(f, n.Lo.Float)}, nil
	case ir.Arith:
		l, err := eval(n.L, row)
		if err != nil {
			return val{}, err
		}
		r, err := eval(n.R, row)
		if err != nil || l.null || r.null {
			return val{null: true}, err
		}
		switch n.Op {
		case ir.OpDiv, ir.OpMod:
			// Lowered: integer operands, rendered over NULLIF(b, 0).
			if l.real || r.real {
				return val{}, fmt.Errorf("%s of a real survived the lowering", n.Op)
			}
			if r.i.Sign() == 0 {
				return val{null: true}, nil
			}
			if n.Op == ir.OpMod {
				if l.i.Cmp(bigMin) == 0 && r.i.Cmp(big.NewInt(-1)) == 0 {
					return val{}, errBackend // not every backend special-cases it
				}
				return intVal(new(big.Int).Rem(l.i, r.i))
			}
			return intVal(new(big.Int).Quo(l.i, r.i))
		case ir.OpRealDiv:
			a, b := toFloat(l), toFloat(r)
			if b == 0 {
				return val{null: true}, nil
			}
			q := a / b
			if q == 0 && a != 0 {
				return val{}, errBackend // "value out of range: underflow"
			}
			return realVal(q)
		case ir.OpIntDiv:
			return val{}, fmt.Errorf("DIV survived the lowering")
		}
		if !staticReal(n) {
			z := new(big.Int)
			switch n.Op {
			case ir.OpAdd:
				z.Add(l.i, r.i)
			case ir.OpSub:
				z.Sub(l.i, r.i)
			default:
				z.Mul(l.i, r.i)
			}
			return intVal(z)
		}
		a, b := toFloat(l), toFloat(r)
		switch n.Op {
		case ir.OpAdd:
			return realVal(a + b)
		case ir.OpSub:
			return realVal(a - b)
		}
		p := a * b
		if p == 0 && a != 0 && b != 0 {
			return val{}, errBackend // "value out of range: underflow"
		}
		return realVal(p)
	case ir.Neg:
		x, err := eval(n.X, row)
		if err != nil || x.null {
			return x, err
		}
		if x.real {
			return realVal(-x.f)
		}
		return intVal(new(big.Int).Neg(x.i))
	case ir.Compare:
		// Only as a CASE condition: both operands are evaluated (an error
		// in either is the backend's), then compared. Text literals
		// (compared with each other or NULL) cannot fail; which arm they
		// select does not matter, as every arm is checked.
		for _, x := range []ir.Expr{n.L, n.R} {
			if lit, ok := x.(ir.Literal); ok && lit.Value.Kind == ir.KindString {
				return val{null: true}, nil
			}
		}
		l, err := eval(n.L, row)
		if err != nil {
			return val{}, err
		}
		r, err := eval(n.R, row)
		if err != nil || l.null || r.null {
			return val{null: true}, err
		}
		var c int
		if l.real || r.real {
			a, b := toFloat(l), toFloat(r)
			c = map[bool]int{true: -1, false: 0}[a < b] + map[bool]int{true: 1, false: 0}[a > b]
		} else {
			c = l.i.Cmp(r.i)
		}
		t := [...]bool{c == 0, c != 0, c < 0, c <= 0, c > 0, c >= 0}[n.Op]
		return val{i: big.NewInt(map[bool]int64{true: 1, false: 0}[t])}, nil
	case ir.Cast:
		x, err := eval(n.X, row)
		if err != nil || x.null {
			return x, err
		}
		switch n.To {
		case ir.CastDouble:
			return val{real: true, f: toFloat(x)}, nil
		case ir.CastBigint:
			if !x.real {
				return val{}, fmt.Errorf("a cast of an integer to bigint survived the lowering")
			}
			if x.f != math.Trunc(x.f) {
				return val{}, fmt.Errorf("a cast of %v to bigint: backends round it differently", x.f)
			}
			i, _ := new(big.Float).SetFloat64(x.f).Int(nil)
			return intVal(i) // out of range: the backend's error
		}
		return val{}, fmt.Errorf("a cast to %s survived the lowering", n.To)
	case ir.Case:
		// Every condition and every arm is evaluated, whichever is
		// chosen: the analysis promises totality for all of them, since
		// no backend promises to evaluate only the chosen arm.
		var out *val
		for _, w := range n.Whens {
			c, err := eval(w.Cond, row)
			if err != nil {
				return val{}, err
			}
			v, err := eval(w.Then, row)
			if err != nil {
				return val{}, err
			}
			if out == nil && !c.null && c.i.Sign() != 0 {
				out = &v
			}
		}
		v := val{null: true}
		if n.Else != nil {
			var err error
			if v, err = eval(n.Else, row); err != nil {
				return val{}, err
			}
		}
		if out == nil {
			out = &v
		}
		if staticReal(n) && !out.null && !out.real {
			return val{real: true, f: toFloat(*out)}, nil // bigint arm of a double CASE
		}
		return *out, nil
	case ir.Func:
		switch n.Name {
		case "length":
			// Of substr, left or right of a text literal: each integer
			// argument is evaluated and must lie where backends agree.
			inner, ok := n.Args[0].(ir.Func)
			if !ok {
				return val{}, fmt.Errorf("length of %s", ir.FormatExpr(n.Args[0]))
			}
			mins := map[string][]int64{"substr": {1, 0}, "left": {0}, "right": {1}}[inner.Name]
			null := false
			var ns []int64
			for i, a := range inner.Args[1:] {
				v, err := eval(a, row)
				if err != nil {
					return val{}, err
				}
				if v.null {
					null = true
					continue
				}
				if v.real || v.i.Cmp(big.NewInt(mins[i])) < 0 || v.i.Cmp(big.NewInt(math.MaxInt32)) > 0 {
					return val{}, errBackend // PostgreSQL fails, or backends disagree
				}
				ns = append(ns, v.i.Int64())
			}
			if null {
				return val{null: true}, nil
			}
			// The length of the part of the literal (of length n) kept.
			n := int64(len(inner.Args[0].(ir.Literal).Value.Str))
			var kept int64
			switch inner.Name {
			case "substr":
				kept = max(n-(ns[0]-1), 0)
				if len(ns) == 2 {
					kept = min(kept, ns[1])
				}
			default: // left, right
				kept = min(ns[0], n)
			}
			return val{i: big.NewInt(kept)}, nil
		case "nullif":
			a, err := eval(n.Args[0], row)
			if err != nil {
				return val{}, err
			}
			b, err := eval(n.Args[1], row)
			if err != nil || a.null {
				return val{null: true}, err
			}
			if !b.null && (a.real || b.real) && toFloat(a) == toFloat(b) || !b.null && !a.real && !b.real && a.i.Cmp(b.i) == 0 {
				return val{null: true}, nil
			}
			if staticReal(n) && !a.real {
				return val{real: true, f: toFloat(a)}, nil // PostgreSQL promotes a
			}
			return a, nil
		case "greatest", "least":
			// PostgreSQL: NULL arguments are skipped; the result has
			// the common type.
			var out *val
			for _, a := range n.Args {
				v, err := eval(a, row)
				if err != nil {
					return val{}, err
				}
				if v.null {
					continue
				}
				if staticReal(n) && !v.real {
					v = val{real: true, f: toFloat(v)}
				}
				if out == nil {
					out = &v
					continue
				}
				var less bool
				if v.real != out.real {
					// Bare columns (a condition's operands) of both
					// kinds: PostgreSQL compares in double precision.
					v = val{real: true, f: toFloat(v)}
					out = &val{real: true, f: toFloat(*out)}
				}
				if v.real {
					less = v.f < out.f
				} else {
					less = v.i.Cmp(out.i) < 0
				}
				if less == (n.Name == "least") && !(v.real && v.f == out.f) {
					out = &v
				}
			}
			if out == nil {
				return val{null: true}, nil
			}
			return *out, nil
		}
		if n.Name == "coalesce" {
			for _, a := range n.Args {
				v, err := eval(a, row)
				if err != nil {
					return val{}, err
				}
				if !v.null {
					if staticReal(n) && !v.real {
						// bigint to double: rounds, never fails
						return val{real: true, f: toFloat(v)}, nil
					}
					return v, nil
				}
			}
			return val{null: true}, nil
		}
		if n.Name == "width_bucket" {
			// PostgreSQL's definition in exact arithmetic, with every
			// arm of the rendered CASE computed: (x - lo) * n must fit.
			var a [4]val
			for i, e := range n.Args {
				v, err := eval(e, row)
				if err != nil {
					return val{}, err
				}
				if !v.null && v.real {
					return val{}, fmt.Errorf("width_bucket of a real survived the analysis")
				}
				a[i] = v
			}
			for _, v := range a {
				if v.null {
					return val{null: true}, nil
				}
			}
			x, lo, hi, cnt := a[0].i, a[1].i, a[2].i, a[3].i
			prod := new(big.Int).Mul(new(big.Int).Sub(x, lo), cnt)
			if _, err := intVal(prod); err != nil {
				return val{}, err
			}
			switch {
			case x.Cmp(lo) < 0:
				return val{i: big.NewInt(0)}, nil
			case x.Cmp(hi) >= 0:
				return intVal(new(big.Int).Add(cnt, big.NewInt(1)))
			}
			q := prod.Quo(prod, new(big.Int).Sub(hi, lo))
			return intVal(q.Add(q, big.NewInt(1)))
		}
		x, err := eval(n.Args[0], row)
		if err != nil || x.null {
			return x, err
		}
		if !x.real {
			if n.Name != "abs" {
				return val{}, fmt.Errorf("%s of an integer survived the lowering", n.Name)
			}
			return intVal(new(big.Int).Abs(x.i))
		}
		switch n.Name {
		case "abs":
			return realVal(math.Abs(x.f))
		case "floor":
			return realVal(math.Floor(x.f))
		case "ceil":
			return realVal(math.Ceil(x.f))
		case "round": // SIGN(x) * FLOOR(ABS(x) + 0.5)
			s := 0.0
			if x.f > 0 {
				s = 1
			} else if x.f < 0 {
				s = -1
			}
			fl := math.Floor(math.Abs(x.f) + 0.5)
			if math.IsInf(fl, 0) {
				return val{}, errBackend
			}
			return realVal(s * fl)
		}
	}
	return val{}, fmt.Errorf("unexpected node %T", e)
}

// inRange checks a value against the inferred info.
func inRange(v val, in exprtype.Info) bool {
	if v.null {
		return true
	}
	if !in.Bounded {
		return false
	}
	if !v.real {
		return in.Type == exprtype.Integer && v.i.Cmp(in.Int.Lo) >= 0 && v.i.Cmp(in.Int.Hi) <= 0
	}
	r := in.Real
	if in.Type != exprtype.Real || v.f < r.Lo || v.f > r.Hi {
		return false
	}
	if v.f == 0 {
		return true
	}
	if r.Grain == exprtype.ZeroGrain {
		return false
	}
	_, exp := math.Frexp(v.f)
	mant := new(big.Float).SetFloat64(v.f)
	// v is a multiple of 2^Grain iff v·2^-Grain is an integer.
	mant.SetMantExp(mant, -r.Grain)
	return mant.IsInt() && exp > r.Grain
}

func TestRangeOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	total, refused, checked := 0, 0, 0
	for trial := range 4000 {
		var env oracleEnv
		env.draw(rng)
		e := genNumber(rng, 3)
		lowered, info, err := exprtype.Scalar(e, env.columns)
		total++
		if err != nil {
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code == sqlerr.Internal {
				t.Fatalf("trial %d: %s: unexpected error %v", trial, ir.FormatExpr(e), err)
			}
			refused++
			continue
		}
		if info.Type != exprtype.Integer && info.Type != exprtype.Real {
			continue // NULL, or a lone quoted literal (text)
		}
		for _, x := range intValues(env.x) {
			for _, y := range intValues(env.y) {
				for _, r := range realValues(env.r) {
					row := map[string]ir.Value{"x": x, "y": y, "r": r}
					v, err := eval(lowered, row)
					if err != nil {
						t.Fatalf("trial %d: %s (lowered %s, env %+v) judged total, but x=%v y=%v r=%v: %v",
							trial, ir.FormatExpr(e), ir.FormatExpr(lowered), env, x, y, r, err)
					}
					if !inRange(v, info) {
						t.Fatalf("trial %d: %s (lowered %s, env %+v): x=%v y=%v r=%v gives %v, outside %s (grain %d)",
							trial, ir.FormatExpr(e), ir.FormatExpr(lowered), env, x, y, r, v, info, info.Real.Grain)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d expressions, %d refused, %d evaluations checked", total, refused, checked)
	if refused == 0 || refused == total {
		t.Fatalf("refused %d of %d: the generator must exercise both outcomes", refused, total)
	}
}

// byteSource draws from fuzz input (0 once exhausted).
type byteSource struct{ b []byte }

func (s *byteSource) IntN(n int) int {
	if len(s.b) == 0 || n <= 0 {
		return 0
	}
	v := int(s.b[0]) % n
	s.b = s.b[1:]
	return v
}

// FuzzPredicate: any expression the generator can build from the input is
// either refused with a client error or total, renders on every dialect,
// and never fails on the sample rows.
func FuzzPredicate(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3}, []byte{1, 2, 3, 4})
	f.Add([]byte{4, 4, 4, 4, 4, 4}, []byte{9, 9, 9})
	f.Add([]byte{1, 0, 2, 1, 3, 0, 5}, []byte{0, 7, 3, 1})
	f.Fuzz(func(t *testing.T, exprBytes, envBytes []byte) {
		var env oracleEnv
		env.draw(rand.New(rand.NewPCG(uint64(len(envBytes)), uint64(sum(envBytes)))))
		e := ir.Compare{Op: ir.OpGt, L: genNumber(&byteSource{exprBytes}, 4), R: ir.Literal{Value: ir.Int(0)}}
		lowered, err := exprtype.Predicate(e, env.columns)
		if err != nil {
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code == sqlerr.Internal {
				t.Fatalf("%s: %v", ir.FormatExpr(e), err)
			}
			return
		}
		for _, d := range []*sqlrender.Dialect{sqlrender.Postgres(), sqlrender.SQLite(), sqlrender.MySQL()} {
			if _, err := d.RenderExpr(lowered); err != nil {
				t.Fatalf("%s: %s cannot render %s: %v", ir.FormatExpr(e), d.Name, ir.FormatExpr(lowered), err)
			}
		}
		cmp := lowered.(ir.Compare)
		if lit, ok := cmp.L.(ir.Literal); ok && lit.Value.IsNull() {
			return
		}
		for _, x := range intValues(env.x)[:4] {
			for _, r := range realValues(env.r) {
				if _, err := eval(cmp.L, map[string]ir.Value{"x": x, "y": x, "r": r}); err != nil {
					t.Fatalf("%s judged total, but x=%v r=%v: %v", ir.FormatExpr(e), x, r, err)
				}
			}
		}
	})
}

func sum(b []byte) int {
	s := 0
	for _, x := range b {
		s += int(x)
	}
	return s
}
