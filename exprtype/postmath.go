package exprtype

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// postMath lists the functions available in post-processing only (the
// select list, HAVING and ORDER BY over the noisy row): the mathematics
// analysts apply to released aggregates (POWER(AVG(x), 2), SQRT of a
// variance, a share in percent of PI). They have no Rule, so they are
// never evaluated on private rows and never reach a backend; on rows they
// are refused. Each is computed in double precision, as both PostgreSQL and
// MySQL compute them, and is total where the databases are not: an
// argument outside the function's domain (SQRT of a negative noisy value,
// LN of 0) or a result beyond the doubles gives NULL instead of an error,
// because an error after the charge would turn one unlucky noise draw into
// a failed answer.
func postMath() []*Func {
	real1 := func(name string, f func(float64) float64) *Func {
		return &Func{
			Name: name, MinArgs: 1, MaxArgs: 1, Strict: true,
			Total: "post-processing only; NULL outside the function's domain or beyond the doubles",
			Post:  &Post{Type: postReal, Eval: func(a []ir.Value, _ PostDialect) ir.Value { return finite(f(realOf(a[0]))) }},
		}
	}
	return []*Func{
		real1("sqrt", math.Sqrt),
		real1("exp", math.Exp),
		real1("ln", math.Log),
		real1("log10", math.Log10),
		{
			Name: "power", MinArgs: 2, MaxArgs: 2, Strict: true,
			Total: "post-processing only; NULL when the result is not a finite double (0 to a negative power, a negative base to a fractional power, overflow)",
			Post: &Post{Type: postReal, Eval: func(a []ir.Value, _ PostDialect) ir.Value {
				return finite(math.Pow(realOf(a[0]), realOf(a[1])))
			}},
		},
		{
			Name: "pi", MinArgs: 0, MaxArgs: 0,
			Total: "post-processing only; a constant",
			Post:  &Post{Type: postReal, Eval: func([]ir.Value, PostDialect) ir.Value { return ir.Float(math.Pi) }},
		},
	}
}

// postReal: numeric arguments (or NULL), a double result.
func postReal(call string, ts []Type, _ []ir.Expr, _ PostDialect) (Type, error) {
	for _, t := range ts {
		if !t.numeric() && t != Null {
			return 0, postArgErr(call, ts)
		}
	}
	return Real, nil
}

func realOf(v ir.Value) float64 {
	if v.Kind == ir.KindInt {
		return float64(v.Int)
	}
	return v.Float
}

// finite is x, or NULL when x is NaN or infinite.
func finite(x float64) ir.Value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ir.Null()
	}
	return ir.Float(x)
}
