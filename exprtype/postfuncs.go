package exprtype

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Builders of the Post rules of the function table (funcs.go).

func postArgErr(call string, ts []Type) error {
	infos := make([]Info, len(ts))
	for i, t := range ts {
		infos[i] = Info{Type: t}
	}
	return noFunction(call, infos)
}

// postTypes: the arguments have the given types (or are NULL).
func postTypes(result Type, args ...Type) func(string, []Type, []ir.Expr, PostDialect) (Type, error) {
	return func(call string, ts []Type, _ []ir.Expr, _ PostDialect) (Type, error) {
		for i, t := range ts {
			if t != args[i] && t != Null {
				return 0, postArgErr(call, ts)
			}
		}
		return result, nil
	}
}

// postText is a text-to-text function.
func postText(f func(string) string) *Post {
	return &Post{
		Type: postTypes(Text, Text),
		Eval: func(a []ir.Value, _ PostDialect) ir.Value { return ir.String(f(a[0].Str)) },
	}
}

func postAllText(call string, ts []Type, _ []ir.Expr, _ PostDialect) (Type, error) {
	for _, t := range ts {
		if t != Text && t != Null {
			return 0, postArgErr(call, ts)
		}
	}
	return Text, nil
}

// postNumeric is a function of one number keeping its type: fi on
// integers (total: it saturates), ff on doubles.
func postNumeric(fi func(int64) int64, ff func(float64) float64) *Post {
	return &Post{
		Type: func(call string, ts []Type, _ []ir.Expr, _ PostDialect) (Type, error) {
			if !ts[0].numeric() && ts[0] != Null {
				return 0, postArgErr(call, ts)
			}
			return ts[0], nil
		},
		Eval: func(a []ir.Value, _ PostDialect) ir.Value {
			if a[0].Kind == ir.KindInt {
				return ir.Int(fi(a[0].Int))
			}
			return ir.Float(ff(a[0].Float))
		},
	}
}

// postRound is round(x) and round(x, digits) with a literal number of
// digits (a real), half away from zero on the decimal the client sees
// (roundDigits). PostgreSQL rounds a double half to even but its numeric
// (AVG's type) half away; MySQL rounds exact values half away: the proxy's
// noisy values stand for those exact ones.
var postRound = &Post{
	MinArgs: 1, MaxArgs: 2,
	Type: func(call string, ts []Type, args []ir.Expr, d PostDialect) (Type, error) {
		if !ts[0].numeric() && ts[0] != Null {
			return 0, postArgErr(call, ts)
		}
		if len(args) == 1 {
			return integralType(ts[0], d), nil
		}
		if d, ok := intConst(args[1]); !ok || d < -308 || d > 308 {
			return 0, mismatch("round(x, digits) needs an integer literal between -308 and 308 as digits: %s", call)
		}
		return Real, nil
	},
	Eval: func(a []ir.Value, d PostDialect) ir.Value {
		// A third argument (added by PostType): x is a double in the
		// client's database.
		double := len(a) > 0 && a[len(a)-1].Kind == ir.KindBool
		if double {
			a = a[:len(a)-1]
		}
		digits := int64(0)
		if len(a) == 2 {
			digits = a[1].Int
		} else if a[0].Kind == ir.KindInt {
			return integralValue(a[0], d)
		}
		f, _ := a[0].AsFloat()
		if double {
			return ir.Float(roundDoubleDigits(f, digits))
		}
		return ir.Float(roundDigits(f, digits))
	},
}

// postIntegral is floor or ceil: f on doubles, the identity on integers
// (a double in PostgreSQL, see integralType).
func postIntegral(f func(float64) float64) *Post {
	return &Post{
		Type: func(call string, ts []Type, _ []ir.Expr, d PostDialect) (Type, error) {
			if !ts[0].numeric() && ts[0] != Null {
				return 0, postArgErr(call, ts)
			}
			return integralType(ts[0], d), nil
		},
		Eval: func(a []ir.Value, d PostDialect) ir.Value {
			if a[0].Kind == ir.KindInt {
				return integralValue(a[0], d)
			}
			return ir.Float(f(a[0].Float))
		},
	}
}

// integralType is the type of floor, ceil or round of a t: PostgreSQL has
// no integer versions and computes them in double precision (7 / round(2)
// is 3.5 there), MySQL keeps an integer an integer.
func integralType(t Type, d PostDialect) Type {
	if t == Integer && !d.MySQL {
		return Real
	}
	return t
}

func integralValue(v ir.Value, d PostDialect) ir.Value {
	if d.MySQL {
		return v
	}
	return ir.Float(float64(v.Int))
}

// postPositions is substr, left or right: a text and integer literals that
// the WHERE rule accepts (the same bounds: backends disagree outside them,
// and a noisy count as a position would make the result depend on the
// noise in ways no client expects).
func postPositions(name string, rule func(string, []Info) (Info, error), f func([]rune, []int64) []rune) *Post {
	return &Post{
		Type: func(call string, ts []Type, args []ir.Expr, d PostDialect) (Type, error) {
			infos := []Info{{Type: Text}}
			if ts[0] != Text && ts[0] != Null {
				return 0, postArgErr(call, ts)
			}
			for _, a := range args[1:] {
				l, ok := a.(ir.Literal)
				if !ok || l.Value.Kind != ir.KindInt {
					return 0, sqlerr.New(sqlerr.FeatureNotSupported, "the positions of %s must be integer constants in post-processing: %s", name, call)
				}
				infos = append(infos, intInfo(intPoint(l.Value.Int)))
			}
			if _, err := rule(call, infos); err != nil {
				return 0, err
			}
			return Text, nil
		},
		Eval: func(a []ir.Value, _ PostDialect) ir.Value {
			n := make([]int64, len(a)-1)
			for i, v := range a[1:] {
				n[i] = v.Int
			}
			return ir.String(string(f([]rune(a[0].Str), n)))
		},
	}
}

// firstType is the type of the first argument that is not NULL (the
// arguments were unified), Null when all are.
func firstType(ts []Type) Type {
	for _, t := range ts {
		if t != Null {
			return t
		}
	}
	return Null
}

// postChoose is coalesce (dir 0: the first non-NULL argument), greatest
// (1) and least (-1), which skip NULLs as PostgreSQL's do.
func postChoose(dir int) *Post {
	return &Post{
		Type: func(_ string, ts []Type, _ []ir.Expr, _ PostDialect) (Type, error) { return firstType(ts), nil },
		Eval: func(a []ir.Value, _ PostDialect) ir.Value {
			out := ir.Null()
			for _, v := range a {
				switch {
				case v.IsNull():
				case out.IsNull():
					out = v
					if dir == 0 {
						return out
					}
				case dir*ir.CompareValues(v, out) > 0:
					out = v
				}
			}
			return out
		},
	}
}

// intConst reads an integer constant, possibly negated (MySQL's parser
// keeps -2 as the negation of 2).
func intConst(e ir.Expr) (int64, bool) {
	switch n := e.(type) {
	case ir.Literal:
		return n.Value.Int, n.Value.Kind == ir.KindInt
	case ir.Neg:
		v, ok := intConst(n.X)
		return -v, ok && v != math.MinInt64
	}
	return 0, false
}
