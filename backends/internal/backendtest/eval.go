package backendtest

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// env is one joined input row: column values by "qualifier.name".
type env map[string]ir.Value

func key(c ir.ColumnRef) string { return c.Qualifier + "." + c.Name }

// Reference computes q over d by brute force, independently of any SQL.
func (d *Data) Reference(q *ir.BackendQuery) ([]ir.BackendRow, error) {
	var input []env
	for _, t := range d.Private {
		e := env{}
		for c, v := range t {
			e["t."+c] = v
		}
		if len(q.Joins) > 0 {
			j := q.Joins[0]
			var match Row
			for _, p := range d.Public {
				if (j.NullSafe || !t["cid"].IsNull()) && p["id"] == t["cid"] {
					match = p
				}
			}
			if match == nil && !j.Outer {
				continue // inner join drops the row
			}
			for _, c := range publicCols {
				e["p."+c] = ir.Null() // LEFT join: no match reads NULL
			}
			for c, v := range match {
				e["p."+c] = v
			}
		}
		if q.Where != nil {
			v, err := eval(q.Where, e)
			if err != nil {
				return nil, err
			}
			if v.Kind != ir.KindBool || !v.Bool {
				continue
			}
		}
		input = append(input, e)
	}
	if q.MaxRowsPerUnit > 0 {
		var err error
		if input, err = bound(q, input); err != nil {
			return nil, err
		}
	}
	groups := map[string]*ir.BackendRow{}
	// distinct[group][agg] is the set of values a CountDistinct has seen.
	distinct := map[string][]map[ir.Value]bool{}
	var order []string
	for _, e := range input {
		keys := make([]ir.Value, len(q.GroupBy))
		for i, g := range q.GroupBy {
			v, err := eval(g, e)
			if err != nil {
				return nil, err
			}
			keys[i] = v
		}
		k := fmt.Sprint(keys)
		row, ok := groups[k]
		if !ok {
			row = &ir.BackendRow{Keys: keys, Aggs: make([]int64, len(q.Aggs))}
			groups[k] = row
			order = append(order, k)
			distinct[k] = make([]map[ir.Value]bool, len(q.Aggs))
		}
		for i, a := range q.Aggs {
			if a.Kind == ir.CountDistinct {
				v, err := eval(aggInput(a), e)
				if err != nil {
					return nil, err
				}
				seen := distinct[k][i]
				if seen == nil {
					seen = map[ir.Value]bool{}
					distinct[k][i] = seen
				}
				if !v.IsNull() && !seen[v] {
					seen[v] = true
					row.Aggs[i]++
				}
				continue
			}
			c, err := contribution(a, e)
			if err != nil {
				return nil, err
			}
			row.Aggs[i] += c
		}
	}
	if len(q.GroupBy) == 0 && len(groups) == 0 {
		return []ir.BackendRow{{Aggs: make([]int64, len(q.Aggs))}}, nil
	}
	out := make([]ir.BackendRow, 0, len(order))
	for _, k := range order {
		out = append(out, *groups[k])
	}
	return out, nil
}

// bound keeps, per unit (NULL units together), the k rows with the
// smallest (group columns, aggregate inputs) tuples, NULLs first; an
// aggregate over an expression orders by the expression's value.
func bound(q *ir.BackendQuery, input []env) ([]env, error) {
	var keys []ir.Expr
	for _, g := range q.GroupBy {
		keys = append(keys, g)
	}
	for _, a := range q.Aggs {
		if x := aggInput(a); x != nil {
			keys = append(keys, x)
		}
	}
	byUnit := map[ir.Value][]env{}
	var units []ir.Value
	for _, e := range input {
		u := e[key(q.Unit)]
		if _, ok := byUnit[u]; !ok {
			units = append(units, u)
		}
		byUnit[u] = append(byUnit[u], e)
	}
	var out []env
	for _, u := range units {
		rows := byUnit[u]
		type keyed struct {
			e  env
			ks []ir.Value
		}
		kr := make([]keyed, len(rows))
		for i, e := range rows {
			kr[i].e = e
			for _, x := range keys {
				v, err := eval(x, e)
				if err != nil {
					return nil, err
				}
				kr[i].ks = append(kr[i].ks, v)
			}
		}
		slices.SortStableFunc(kr, func(a, b keyed) int {
			for i := range a.ks {
				if r := ir.CompareValues(a.ks[i], b.ks[i]); r != 0 {
					return r
				}
			}
			return 0
		})
		for _, k := range kr[:min(len(kr), q.MaxRowsPerUnit)] {
			out = append(out, k.e)
		}
	}
	return out, nil
}

// aggInput is an aggregate's input (its column or expression), nil for
// COUNT(*).
func aggInput(a ir.BackendAgg) ir.Expr {
	switch {
	case a.Expr != nil:
		return a.Expr
	case a.Column != nil:
		return *a.Column
	}
	return nil
}

func contribution(a ir.BackendAgg, e env) (int64, error) {
	if a.Kind == ir.CountRows {
		return 1, nil
	}
	v, err := eval(aggInput(a), e)
	if err != nil {
		return 0, err
	}
	if v.IsNull() {
		return 0, nil
	}
	if a.Kind == ir.CountValues {
		return 1, nil
	}
	if a.Quantum == 0 {
		return min(max(v.Int, int64(a.Lo)), int64(a.Hi)), nil
	}
	x, _ := v.AsFloat()
	return int64(math.Floor(math.Min(math.Max(x, a.Lo), a.Hi)/a.Quantum + 0.5)), nil
}

// eval is SQL evaluation with three-valued logic: NULL is ir.Null.
func eval(e ir.Expr, env env) (ir.Value, error) {
	switch n := e.(type) {
	case ir.ColumnRef:
		v, ok := env[key(n)]
		if !ok {
			return ir.Value{}, fmt.Errorf("unknown column %s", key(n))
		}
		return v, nil
	case ir.Literal:
		return n.Value, nil
	case ir.Compare:
		l, r, err := eval2(n.L, n.R, env)
		if err != nil || l.IsNull() || r.IsNull() {
			return ir.Null(), err
		}
		c := ir.CompareValues(l, r)
		return ir.Bool([...]bool{c == 0, c != 0, c < 0, c <= 0, c > 0, c >= 0}[n.Op]), nil
	case ir.Between:
		v, err := eval(ir.And{L: ir.Compare{Op: ir.OpGe, L: n.X, R: n.Lo}, R: ir.Compare{Op: ir.OpLe, L: n.X, R: n.Hi}}, env)
		if n.Not {
			return not(v), err
		}
		return v, err
	case ir.In:
		x, err := eval(n.X, env)
		if err != nil || x.IsNull() {
			return ir.Null(), err
		}
		res := ir.Bool(false)
		for _, it := range n.List {
			v, err := eval(it, env)
			if err != nil {
				return ir.Null(), err
			}
			if v.IsNull() {
				res = ir.Null()
			} else if ir.CompareValues(x, v) == 0 {
				res = ir.Bool(true)
				break
			}
		}
		if n.Not {
			return not(res), nil
		}
		return res, nil
	case ir.Like:
		x, p, err := eval2(n.X, n.Pattern, env)
		if err != nil || x.IsNull() || p.IsNull() {
			return ir.Null(), err
		}
		s, pat := x.Str, p.Str
		if n.CaseInsensitive {
			s, pat = asciiLower(s), asciiLower(pat)
		}
		return ir.Bool(like(s, pat) != n.Not), nil
	case ir.IsNull:
		x, err := eval(n.X, env)
		return ir.Bool(x.IsNull() != n.Not), err
	case ir.And:
		l, r, err := eval2(n.L, n.R, env)
		switch {
		case isFalse(l) || isFalse(r):
			return ir.Bool(false), err
		case l.IsNull() || r.IsNull():
			return ir.Null(), err
		}
		return ir.Bool(true), err
	case ir.Or:
		l, r, err := eval2(n.L, n.R, env)
		switch {
		case isTrue(l) || isTrue(r):
			return ir.Bool(true), err
		case l.IsNull() || r.IsNull():
			return ir.Null(), err
		}
		return ir.Bool(false), err
	case ir.Not:
		x, err := eval(n.X, env)
		return not(x), err
	case ir.Arith:
		l, r, err := eval2(n.L, n.R, env)
		if err != nil || l.IsNull() || r.IsNull() {
			return ir.Null(), err
		}
		switch n.Op {
		case ir.OpDiv, ir.OpMod:
			// Integer operands (lowered); a zero divisor gives NULL.
			if r.Int == 0 {
				return ir.Null(), nil
			}
			if n.Op == ir.OpMod {
				return ir.Int(l.Int % r.Int), nil
			}
			return ir.Int(l.Int / r.Int), nil
		case ir.OpRealDiv:
			a, _ := l.AsFloat()
			b, _ := r.AsFloat()
			if b == 0 {
				return ir.Null(), nil
			}
			return ir.Float(a / b), nil
		}
		if l.Kind == ir.KindInt && r.Kind == ir.KindInt {
			return ir.Int([...]int64{l.Int + r.Int, l.Int - r.Int, l.Int * r.Int}[n.Op]), nil
		}
		a, _ := l.AsFloat()
		b, _ := r.AsFloat()
		return ir.Float([...]float64{a + b, a - b, a * b}[n.Op]), nil
	case ir.Neg:
		x, err := eval(n.X, env)
		switch x.Kind {
		case ir.KindInt:
			return ir.Int(-x.Int), err
		case ir.KindFloat:
			return ir.Float(-x.Float), err
		}
		return ir.Null(), err
	case ir.Func:
		return evalFunc(n, env)
	case ir.Case:
		for _, w := range n.Whens {
			c, err := eval(w.Cond, env)
			if err != nil {
				return ir.Null(), err
			}
			if isTrue(c) {
				return eval(w.Then, env)
			}
		}
		if n.Else == nil {
			return ir.Null(), nil
		}
		return eval(n.Else, env)
	case ir.Cast:
		// Only the identity cast of text that exact text keys and
		// distinct counts wrap around a text input (values compare by
		// bytes, as under the exact collation).
		x, err := eval(n.X, env)
		if err != nil || n.To != ir.CastText || !(x.IsNull() || x.Kind == ir.KindString) {
			return ir.Value{}, fmt.Errorf("reference cannot evaluate %s", ir.FormatExpr(n))
		}
		return x, nil
	case ir.Clamp:
		x, err := eval(n.X, env)
		if err != nil || x.IsNull() {
			return ir.Null(), err
		}
		if n.Lo.Kind == ir.KindInt {
			return ir.Int(min(max(x.Int, n.Lo.Int), n.Hi.Int)), nil
		}
		f, _ := x.AsFloat()
		if f > -ir.TinyReal && f < ir.TinyReal {
			f = 0
		}
		return ir.Float(math.Min(math.Max(f, n.Lo.Float), n.Hi.Float)), nil
	}
	return ir.Value{}, fmt.Errorf("reference cannot evaluate %T", e)
}

func eval2(l, r ir.Expr, env env) (ir.Value, ir.Value, error) {
	a, err := eval(l, env)
	if err != nil {
		return a, a, err
	}
	b, err := eval(r, env)
	return a, b, err
}

func isTrue(v ir.Value) bool  { return v.Kind == ir.KindBool && v.Bool }
func isFalse(v ir.Value) bool { return v.Kind == ir.KindBool && !v.Bool }

func not(v ir.Value) ir.Value {
	if v.IsNull() {
		return v
	}
	return ir.Bool(!v.Bool)
}

func evalFunc(n ir.Func, env env) (ir.Value, error) {
	args := make([]ir.Value, len(n.Args))
	for i, a := range n.Args {
		v, err := eval(a, env)
		if err != nil {
			return v, err
		}
		args[i] = v
	}
	switch n.Name {
	case "nullif":
		if !args[0].IsNull() && !args[1].IsNull() && ir.CompareValues(args[0], args[1]) == 0 {
			return ir.Null(), nil
		}
		return args[0], nil
	case "greatest", "least":
		// NULL arguments are skipped on every backend (exprtype.Func.SkipsNull).
		out := ir.Null()
		for _, a := range args {
			if a.IsNull() {
				continue
			}
			if c := ir.CompareValues(a, out); out.IsNull() || c > 0 == (n.Name == "greatest") && c != 0 {
				out = a
			}
		}
		return out, nil
	}
	if n.Name == "coalesce" {
		for _, a := range args {
			if !a.IsNull() {
				return a, nil
			}
		}
		return ir.Null(), nil
	}
	x := args[0]
	if x.IsNull() {
		return x, nil
	}
	switch n.Name {
	case "lower":
		return ir.String(asciiLower(x.Str)), nil
	case "upper":
		return ir.String(strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' {
				return r - 'a' + 'A'
			}
			return r
		}, x.Str)), nil
	case "length":
		return ir.Int(int64(len([]rune(x.Str)))), nil
	case "trim":
		return ir.String(strings.Trim(x.Str, " ")), nil
	case "ltrim":
		return ir.String(strings.TrimLeft(x.Str, " ")), nil
	case "rtrim":
		return ir.String(strings.TrimRight(x.Str, " ")), nil
	case "width_bucket":
		// PostgreSQL's definition, in exact integer arithmetic.
		lo, hi, n := args[1].Int, args[2].Int, args[3].Int
		switch {
		case x.Int < lo:
			return ir.Int(0), nil
		case x.Int >= hi:
			return ir.Int(n + 1), nil
		}
		return ir.Int((x.Int-lo)*n/(hi-lo) + 1), nil
	case "abs":
		if x.Kind == ir.KindInt {
			return ir.Int(max(x.Int, -x.Int)), nil
		}
		return ir.Float(math.Abs(x.Float)), nil
	}
	f, _ := x.AsFloat()
	switch n.Name {
	case "floor":
		return ir.Float(math.Floor(f)), nil
	case "ceil":
		return ir.Float(math.Ceil(f)), nil
	case "round":
		// Half away from zero in double arithmetic (what every backend computes).
		return ir.Float(math.Copysign(math.Floor(math.Abs(f)+0.5), f)), nil
	}
	return ir.Value{}, fmt.Errorf("reference has no function %s", n.Name)
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// like matches s against a LIKE pattern with backslash escapes.
func like(s, p string) bool {
	if p == "" {
		return s == ""
	}
	switch c := p[0]; c {
	case '%':
		for i := 0; i <= len(s); i++ {
			if like(s[i:], p[1:]) {
				return true
			}
		}
		return false
	case '_':
		return s != "" && like(s[1:], p[1:])
	case '\\':
		return len(p) > 1 && s != "" && s[0] == p[1] && like(s[1:], p[2:])
	default:
		return s != "" && s[0] == c && like(s[1:], p[1:])
	}
}
