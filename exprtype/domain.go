package exprtype

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// MaxDomain bounds a derived domain (Info.Domain) and the number of
// argument combinations evaluated to derive one: a larger image is
// reported as unknown (nil). It is far below the planner's MaxKeys.
const MaxDomain = 10_000

// Image is a function's domain rule (Func.Image): its value on one
// combination of argument values, computed in Go exactly as every
// backend computes the rendered call. ok is false when that cannot be
// promised for these values (a text case mapping outside ASCII, a
// comparison of texts whose collation differs between backends): the
// call's domain is then unknown. The arguments are values of the
// arguments' domains, never NULL for a Strict function (the analysis
// makes such a call NULL itself), with integers already converted to
// reals when the function unifies its arguments to real (Func.Unify).
// An Image must be sound: for every argument values the backend's
// result is the returned value.
type Image func(args []ir.Value) (v ir.Value, ok bool)

// domainer derives the domain of a lowered expression: the finite set of
// values it can take on rows whose columns hold values of their domains.
// A column's domain is its declared static domain, or for an integer
// column computed with, every integer of its clamping bounds when they
// are few. Columns are taken as holding no NULL, as a declared domain
// does for a GROUP BY column (a row outside the domain is not released),
// except the columns of a LEFT-joined table (Column.Nullable).
type domainer struct {
	cols map[ir.ColumnRef]Column // by lowered (backend) reference
	// rangeDoms are the domains the checker derived from argument
	// ranges (Func.RangeImage), by the lowered call's text.
	rangeDoms map[string][]ir.Value
}

var (
	boolDomain     = []ir.Value{ir.Bool(false), ir.Bool(true)}
	boolNullDomain = []ir.Value{ir.Bool(false), ir.Bool(true), ir.Null()}
)

// domain returns e's domain, nil when unknown or larger than MaxDomain.
func (d *domainer) domain(e ir.Expr) []ir.Value {
	switch n := e.(type) {
	case ir.Literal:
		return []ir.Value{n.Value}
	case ir.ColumnRef:
		col, ok := d.cols[n]
		if !ok || col.Domain == nil {
			return nil
		}
		out := slices.Clone(col.Domain)
		if col.Nullable {
			out = append(out, ir.Null())
		}
		return dedupe(out)
	case ir.Clamp:
		return d.clamp(n)
	case ir.Compare, ir.Between, ir.In, ir.Like, ir.And, ir.Or, ir.Not:
		// A truth value, NULL when an operand may be NULL (an operand
		// without a known domain is assumed to possibly be).
		mayNull := false
		root := true
		ir.Walk(e, func(c ir.Expr) bool {
			// Not c == e: comparing two ir.In (or Case, Func) values
			// panics, their lists are not comparable. Walk visits e first.
			if c == nil || root {
				root = false
				return true
			}
			if _, isNull := c.(ir.IsNull); isNull {
				return false // never NULL itself
			}
			switch c.(type) {
			case ir.Compare, ir.Between, ir.In, ir.Like, ir.And, ir.Or, ir.Not:
				return true
			}
			dom := d.domain(c)
			mayNull = mayNull || dom == nil || slices.ContainsFunc(dom, ir.Value.IsNull)
			return false
		})
		if mayNull {
			return boolNullDomain
		}
		return boolDomain
	case ir.IsNull:
		return boolDomain
	case ir.Neg:
		return d.mapN([]ir.Expr{n.X}, func(v []ir.Value) (ir.Value, bool) {
			switch v[0].Kind {
			case ir.KindNull:
				return v[0], true
			case ir.KindInt:
				if v[0].Int == math.MinInt64 {
					return ir.Value{}, false
				}
				return ir.Int(-v[0].Int), true
			case ir.KindFloat:
				return ir.Float(-v[0].Float), true
			}
			return ir.Value{}, false
		})
	case ir.Arith:
		if dom := d.mapN([]ir.Expr{n.L, n.R}, func(v []ir.Value) (ir.Value, bool) { return arithValue(n.Op, v[0], v[1]) }); dom != nil {
			return dom
		}
		return d.rangeDom(n)
	case ir.Func:
		return d.fn(n)
	case ir.Case:
		var out []ir.Value
		arms := make([]ir.Expr, 0, len(n.Whens)+1)
		for _, w := range n.Whens {
			arms = append(arms, w.Then)
		}
		if n.Else != nil {
			arms = append(arms, n.Else)
		} else {
			out = append(out, ir.Null())
		}
		for _, a := range arms {
			dom := d.domain(a)
			if dom == nil {
				return nil
			}
			out = append(out, dom...)
		}
		return unifyValues(dedupe(out))
	case ir.Cast:
		if dom := d.mapN([]ir.Expr{n.X}, func(v []ir.Value) (ir.Value, bool) { return castValue(n.To, v[0]) }); dom != nil {
			return dom
		}
		return d.rangeDom(n)
	}
	return nil
}

// rangeDom is the domain the checker derived for e from its arguments'
// ranges (nil: none), with NULL when e reads a column of a LEFT-joined
// table (a strict call of NULL is NULL; the ranges hold the values only).
func (d *domainer) rangeDom(e ir.Expr) []ir.Value {
	dom, ok := d.rangeDoms[ir.FormatExpr(e)]
	if !ok {
		return nil
	}
	out := slices.Clone(dom)
	nullable := false
	ir.Walk(e, func(c ir.Expr) bool {
		if ref, isCol := c.(ir.ColumnRef); isCol && d.cols[ref].Nullable {
			nullable = true
		}
		return !nullable
	})
	if nullable {
		out = append(out, ir.Null())
	}
	return out
}

// clamp is the domain of a column computed with: every integer (every
// day, for a date) of the bounds when they are few (the clamp guarantees
// them), else the declared domain clamped.
func (d *domainer) clamp(n ir.Clamp) []ir.Value {
	ref, ok := n.X.(ir.ColumnRef)
	if !ok {
		return nil
	}
	col := d.cols[ref]
	var out []ir.Value
	switch {
	case (n.Lo.Kind == ir.KindInt || n.Lo.Kind == ir.KindDate) && n.Hi.Kind == n.Lo.Kind && new(big.Int).Sub(big.NewInt(n.Hi.Int), big.NewInt(n.Lo.Int)).Cmp(big.NewInt(MaxDomain)) < 0:
		out = make([]ir.Value, 0, n.Hi.Int-n.Lo.Int+2)
		for v := n.Lo.Int; ; v++ {
			out = append(out, ir.Value{Kind: n.Lo.Kind, Int: v})
			if v == n.Hi.Int {
				break
			}
		}
	case col.Domain != nil:
		for _, v := range col.Domain {
			c, ok := clampValue(v, n.Lo, n.Hi)
			if !ok {
				return nil
			}
			out = append(out, c)
		}
	default:
		return nil
	}
	if col.Nullable {
		out = append(out, ir.Null())
	}
	return dedupe(out)
}

// clampValue computes ir.Clamp on one value, as the renderer's
// LEAST(GREATEST(x, lo), hi) does (reals below TinyReal read 0).
func clampValue(v, lo, hi ir.Value) (ir.Value, bool) {
	switch {
	case v.Kind == ir.KindNull:
		return v, true
	case lo.Kind == ir.KindInt && v.Kind == ir.KindInt:
		return ir.Int(min(max(v.Int, lo.Int), hi.Int)), true
	case lo.IsTime() && v.Kind == lo.Kind && hi.Kind == lo.Kind:
		// Dates and times compare in time order on every backend.
		return ir.Value{Kind: v.Kind, Int: min(max(v.Int, lo.Int), hi.Int)}, true
	case lo.Kind == ir.KindFloat && (v.Kind == ir.KindFloat || v.Kind == ir.KindInt):
		f := v.Float
		if v.Kind == ir.KindInt {
			if v.Int > 1<<53 || v.Int < -(1<<53) {
				return ir.Value{}, false
			}
			f = float64(v.Int)
		}
		if math.Abs(f) < ir.TinyReal {
			f = 0
		}
		return ir.Float(math.Min(math.Max(f, lo.Float), hi.Float)), true
	}
	return ir.Value{}, false
}

// mapN evaluates f over the product of the arguments' domains.
func (d *domainer) mapN(args []ir.Expr, f func([]ir.Value) (ir.Value, bool)) []ir.Value {
	doms := make([][]ir.Value, len(args))
	for i, a := range args {
		if doms[i] = d.domain(a); doms[i] == nil {
			return nil
		}
	}
	return product(doms, f)
}

func product(doms [][]ir.Value, f func([]ir.Value) (ir.Value, bool)) []ir.Value {
	n := 1
	for _, dom := range doms {
		n *= len(dom)
		if n > MaxDomain {
			return nil
		}
	}
	out := make([]ir.Value, 0, n)
	idx := make([]int, len(doms))
	args := make([]ir.Value, len(doms))
	for {
		for i, dom := range doms {
			args[i] = dom[idx[i]]
		}
		v, ok := f(args)
		if !ok {
			return nil
		}
		out = append(out, v)
		i := 0
		for ; i < len(doms); i++ {
			idx[i]++
			if idx[i] < len(doms[i]) {
				break
			}
			idx[i] = 0
		}
		if i == len(doms) {
			break
		}
	}
	out = dedupe(out)
	if len(out) > MaxDomain {
		return nil
	}
	return out
}

func (d *domainer) fn(n ir.Func) []ir.Value {
	if dom := d.imageFn(n); dom != nil {
		return dom
	}
	return d.rangeDom(n)
}

// imageFn derives a call's domain from its arguments' domains through
// its Image rule.
func (d *domainer) imageFn(n ir.Func) []ir.Value {
	def, ok := Lookup(n.Name)
	if !ok || def.Image == nil {
		return nil
	}
	doms := make([][]ir.Value, len(n.Args))
	real := false
	for i, a := range n.Args {
		if doms[i] = d.domain(a); doms[i] == nil {
			return nil
		}
		real = real || slices.ContainsFunc(doms[i], func(v ir.Value) bool { return v.Kind == ir.KindFloat })
	}
	if def.Unify && real {
		// The backend brings every argument to double precision.
		for i := range doms {
			if doms[i] = toReals(doms[i]); doms[i] == nil {
				return nil
			}
		}
	}
	return product(doms, func(args []ir.Value) (ir.Value, bool) {
		if def.Strict && slices.ContainsFunc(args, ir.Value.IsNull) {
			return ir.Null(), true
		}
		return def.Image(args)
	})
}

// arithValue computes one arithmetic operation of a lowered expression:
// OpDiv and OpMod have integer operands (zero divisor: NULL, as the
// rendered NULLIF(b, 0) gives), OpRealDiv divides doubles, integers and
// reals mix as doubles. ok is false on an overflow (the range analysis
// has excluded it; this keeps the rule sound on its own).
func arithValue(op ir.ArithOp, l, r ir.Value) (ir.Value, bool) {
	if l.IsNull() || r.IsNull() {
		return ir.Null(), true
	}
	if l.Kind == ir.KindInt && r.Kind == ir.KindInt && op != ir.OpRealDiv {
		a, b := l.Int, r.Int
		switch op {
		case ir.OpAdd:
			z := a + b
			return ir.Int(z), (z > a) == (b > 0) || b == 0
		case ir.OpSub:
			z := a - b
			return ir.Int(z), (z < a) == (b > 0) || b == 0
		case ir.OpMul:
			if a == 0 || b == 0 {
				return ir.Int(0), true
			}
			z := a * b
			return ir.Int(z), z/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
		case ir.OpDiv, ir.OpMod:
			if b == 0 {
				return ir.Null(), true
			}
			if a == math.MinInt64 && b == -1 {
				return ir.Value{}, false // overflows; the analysis refuses it
			}
			// Go truncates toward zero and gives the remainder the sign
			// of the dividend, as every backend does.
			if op == ir.OpMod {
				return ir.Int(a % b), true
			}
			return ir.Int(a / b), true
		}
		return ir.Value{}, false
	}
	lf, ok1 := asFloat(l)
	rf, ok2 := asFloat(r)
	if !ok1 || !ok2 {
		return ir.Value{}, false
	}
	var z float64
	switch op {
	case ir.OpAdd:
		z = lf + rf
	case ir.OpSub:
		z = lf - rf
	case ir.OpMul:
		z = lf * rf
	case ir.OpRealDiv:
		if rf == 0 {
			return ir.Null(), true
		}
		z = lf / rf
	default:
		return ir.Value{}, false
	}
	underflow := z == 0 && lf != 0 && (op == ir.OpRealDiv || op == ir.OpMul && rf != 0)
	if math.IsNaN(z) || math.IsInf(z, 0) || math.Abs(z) > MaxReal || underflow {
		return ir.Value{}, false
	}
	return ir.Float(z), true
}

// asFloat converts a number as the backends convert a BIGINT to a
// double (exactly, within ±2^53, where the analysis keeps them).
func asFloat(v ir.Value) (float64, bool) {
	switch v.Kind {
	case ir.KindFloat:
		return v.Float, true
	case ir.KindInt:
		if v.Int > 1<<53 || v.Int < -(1<<53) {
			return 0, false
		}
		return float64(v.Int), true
	}
	return 0, false
}

func castValue(to ir.CastType, v ir.Value) (ir.Value, bool) {
	if v.IsNull() {
		return v, true
	}
	switch {
	case v.Kind == ir.KindInt && (to == ir.CastBigint || to == ir.CastInteger):
		return v, true
	case v.Kind == ir.KindInt && to == ir.CastDouble:
		f, ok := asFloat(v)
		return ir.Float(f), ok
	case v.Kind == ir.KindInt && to == ir.CastText:
		return ir.String(strconv.FormatInt(v.Int, 10)), true
	case v.Kind == ir.KindFloat && to == ir.CastDouble:
		return v, true
	case v.Kind == ir.KindFloat && (to == ir.CastBigint || to == ir.CastInteger):
		if v.Float != math.Trunc(v.Float) || math.Abs(v.Float) > 1<<53 {
			return ir.Value{}, false
		}
		return ir.Int(int64(v.Float)), true
	case v.Kind == ir.KindString && to == ir.CastText:
		return v, true
	case v.IsTime() && to == ir.CastDate:
		// A time's date (a timestamptz's in UTC, the sessions' zone), as
		// the checker's timeCast computes it: exact, so a cast of a
		// truncation keeps the truncation's keys (CAST(date_trunc('month',
		// t) AS date): the months, not every day of the range).
		if v.Kind == ir.KindDate {
			return v, true
		}
		return ir.Date(floorDivInt(v.Int, ir.MicrosPerDay)), true
	case v.Kind == ir.KindDate && to == ir.CastTimestamp:
		return ir.Timestamp(v.Int * ir.MicrosPerDay), true
	case v.Kind == ir.KindTimestamp && to == ir.CastTimestamp, v.Kind == ir.KindTimestampTZ && to == ir.CastTimestampTZ:
		// The cast the analysis puts around a time function's result,
		// to the value's own type.
		return v, true
	}
	return ir.Value{}, false
}

// toReals converts the integers of a value set to reals (nil when one
// is beyond ±2^53, where the conversion rounds).
func toReals(vs []ir.Value) []ir.Value {
	out := make([]ir.Value, 0, len(vs))
	for _, v := range vs {
		if v.Kind == ir.KindInt {
			f, ok := asFloat(v)
			if !ok {
				return nil
			}
			v = ir.Float(f)
		}
		out = append(out, v)
	}
	return dedupe(out)
}

// unifyValues brings integers to reals when the set holds a real: the
// backend computes a CASE or COALESCE of integer and real arms in double
// precision.
func unifyValues(vs []ir.Value) []ir.Value {
	if !slices.ContainsFunc(vs, func(v ir.Value) bool { return v.Kind == ir.KindFloat }) {
		return vs
	}
	return toReals(vs)
}

// dedupe drops repeats of the same kind and value, in place (vs is the
// caller's own slice; the order it leaves is of no meaning, sorted gives
// the final one). -0 and 0 are one value, as in SQL.
func dedupe(vs []ir.Value) []ir.Value {
	if vs == nil {
		return nil
	}
	slices.SortFunc(vs, cmpValue)
	return slices.CompactFunc(vs, func(a, b ir.Value) bool { return cmpValue(a, b) == 0 })
}

// cmpValue is a cheap total order on values of the analysis (no NaN).
func cmpValue(a, b ir.Value) int {
	if a.Kind != b.Kind {
		return cmp.Compare(a.Kind, b.Kind)
	}
	switch a.Kind {
	case ir.KindInt, ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
		return cmp.Compare(a.Int, b.Int)
	case ir.KindFloat:
		return cmp.Compare(a.Float, b.Float)
	case ir.KindString:
		return strings.Compare(a.Str, b.Str)
	case ir.KindBool:
		return cmp.Compare(btoi(a.Bool), btoi(b.Bool))
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sorted orders a value set (ir.CompareValues order, NULL last) without
// repeats.
func sorted(vs []ir.Value) []ir.Value {
	if vs == nil {
		return nil
	}
	out := slices.Clone(vs)
	slices.SortFunc(out, func(a, b ir.Value) int {
		switch {
		case a.IsNull() && b.IsNull():
			return 0
		case a.IsNull():
			return 1
		case b.IsNull():
			return -1
		case a.Kind != b.Kind && !(a.IsNumber() && b.IsNumber()):
			return int(a.Kind) - int(b.Kind)
		}
		if c := ir.CompareValues(a, b); c != 0 {
			return c
		}
		return int(a.Kind) - int(b.Kind)
	})
	return slices.CompactFunc(out, func(a, b ir.Value) bool {
		return a.Kind == b.Kind && (a.IsNull() || ir.CompareValues(a, b) == 0)
	})
}

// typed converts a domain to the expression's type: the keys a backend
// returns are normalised to it (an integer CASE arm of a real CASE).
func typed(vs []ir.Value, t Type) []ir.Value {
	if vs == nil {
		return nil
	}
	out := make([]ir.Value, 0, len(vs))
	for _, v := range vs {
		switch {
		case v.IsNull():
		case t == Real && v.Kind == ir.KindInt:
			f, ok := asFloat(v)
			if !ok {
				return nil
			}
			v = ir.Float(f)
		case t == Integer && v.Kind != ir.KindInt,
			t == Real && v.Kind != ir.KindFloat,
			t == Text && v.Kind != ir.KindString,
			t == Boolean && v.Kind != ir.KindBool:
			return nil // a value of another type: not derived here
		}
		out = append(out, v)
	}
	return sorted(out)
}

// The Image rules of the function table (funcs.go).

// imageText maps one text argument; ok only where every backend agrees.
func imageText(f func(string) (string, bool)) Image {
	return func(args []ir.Value) (ir.Value, bool) {
		if args[0].Kind != ir.KindString {
			return ir.Value{}, false
		}
		s, ok := f(args[0].Str)
		return ir.String(s), ok
	}
}

// asciiOnly: case mapping outside ASCII depends on the backend's locale
// and collation.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// imageNumber maps one number: an integer through fi (nil: the
// identity), a real through ff.
func imageNumber(fi func(int64) (int64, bool), ff func(float64) float64) Image {
	return func(args []ir.Value) (ir.Value, bool) {
		switch x := args[0]; x.Kind {
		case ir.KindInt:
			if fi == nil {
				return x, true
			}
			v, ok := fi(x.Int)
			return ir.Int(v), ok
		case ir.KindFloat:
			return ir.Float(ff(x.Float)), true
		}
		return ir.Value{}, false
	}
}

// roundHalfAwayImage is the rendered round of a double,
// SIGN(x)·FLOOR(ABS(x) + 0.5) (SQLite's native ROUND computes the same
// for |x| below 2^63), exact below 2^52, where every double is checked.
func roundHalfAwayImage(f float64) float64 { return math.Copysign(math.Floor(math.Abs(f)+0.5), f) }

// runes returns the characters of s (the analysis only admits valid
// UTF-8, and every backend counts characters, not bytes, in substr,
// left, right and length as rendered).
func runes(v ir.Value) ([]rune, bool) {
	if v.Kind != ir.KindString {
		return nil, false
	}
	return []rune(v.Str), true
}

func substrImage(args []ir.Value) (ir.Value, bool) {
	rs, ok := runes(args[0])
	if !ok || args[1].Kind != ir.KindInt || args[1].Int < 1 {
		return ir.Value{}, false
	}
	from := min(args[1].Int-1, int64(len(rs)))
	to := int64(len(rs))
	if len(args) == 3 {
		if args[2].Kind != ir.KindInt || args[2].Int < 0 {
			return ir.Value{}, false
		}
		to = min(to, from+args[2].Int)
	}
	return ir.String(string(rs[from:to])), true
}

func leftImage(args []ir.Value) (ir.Value, bool) {
	rs, ok := runes(args[0])
	if !ok || args[1].Kind != ir.KindInt || args[1].Int < 0 {
		return ir.Value{}, false
	}
	return ir.String(string(rs[:min(args[1].Int, int64(len(rs)))])), true
}

func rightImage(args []ir.Value) (ir.Value, bool) {
	rs, ok := runes(args[0])
	if !ok || args[1].Kind != ir.KindInt || args[1].Int < 1 {
		return ir.Value{}, false
	}
	return ir.String(string(rs[int64(len(rs))-min(args[1].Int, int64(len(rs))):])), true
}

func concatImage(args []ir.Value) (ir.Value, bool) {
	s := ""
	for _, a := range args {
		switch a.Kind {
		case ir.KindNull:
		case ir.KindString:
			s += a.Str
		default:
			return ir.Value{}, false
		}
	}
	return ir.String(s), true
}

func replaceImage(args []ir.Value) (ir.Value, bool) {
	for _, a := range args {
		if a.Kind != ir.KindString {
			return ir.Value{}, false
		}
	}
	if args[1].Str == "" {
		return args[0], true // an empty pattern replaces nothing on every backend
	}
	return ir.String(strings.ReplaceAll(args[0].Str, args[1].Str, args[2].Str)), true
}

// sameValue compares two non-NULL values as every backend's = does; ok
// is false for texts that a case- or pad-insensitive collation (MySQL's
// default) could compare differently from PostgreSQL.
func sameValue(a, b ir.Value) (same, ok bool) {
	switch {
	case a.IsNumber() && b.IsNumber():
		return ir.CompareValues(a, b) == 0, true
	case a.Kind == ir.KindString && b.Kind == ir.KindString:
		if a.Str == b.Str {
			return true, true
		}
		return false, !strings.EqualFold(strings.TrimRight(a.Str, " "), strings.TrimRight(b.Str, " "))
	case a.Kind == ir.KindBool && b.Kind == ir.KindBool:
		return a.Bool == b.Bool, true
	}
	return false, false
}

func nullifImage(args []ir.Value) (ir.Value, bool) {
	a, b := args[0], args[1]
	if a.IsNull() || b.IsNull() {
		return a, true
	}
	same, ok := sameValue(a, b)
	if !ok {
		return ir.Value{}, false
	}
	if same {
		return ir.Null(), true
	}
	return a, true
}

// extremeImage is GREATEST (sign 1) or LEAST (-1) with NULLs skipped,
// over numbers only (text order depends on the collation).
func extremeImage(sign int) Image {
	return func(args []ir.Value) (ir.Value, bool) {
		out := ir.Null()
		for _, a := range args {
			switch {
			case a.IsNull():
			case !a.IsNumber():
				return ir.Value{}, false
			case out.IsNull() || ir.CompareValues(a, out)*sign > 0:
				out = a
			}
		}
		return out, true
	}
}

func coalesceImage(args []ir.Value) (ir.Value, bool) {
	for _, a := range args {
		if !a.IsNull() {
			return a, true
		}
	}
	return ir.Null(), true
}

// widthBucket is width_bucket(x, lo, hi, n) over integers with lo < hi
// and n ≥ 1, in exact arithmetic, as the renderer writes it
// (FormWidthBucket): 0 below lo, n + 1 from hi on, else
// ⌊(x − lo)·n / (hi − lo)⌋ + 1.
func widthBucket(x, lo, hi, n int64) (int64, bool) {
	switch {
	case lo >= hi || n < 1:
		return 0, false
	case x < lo:
		return 0, true
	case x >= hi:
		if n == math.MaxInt64 {
			return 0, false
		}
		return n + 1, true
	}
	q := new(big.Int).Mul(new(big.Int).Sub(big.NewInt(x), big.NewInt(lo)), big.NewInt(n))
	q.Quo(q, new(big.Int).Sub(big.NewInt(hi), big.NewInt(lo)))
	return q.Int64() + 1, true
}

func widthBucketImage(args []ir.Value) (ir.Value, bool) {
	for _, a := range args {
		if a.Kind != ir.KindInt {
			return ir.Value{}, false
		}
	}
	v, ok := widthBucket(args[0].Int, args[1].Int, args[2].Int, args[3].Int)
	return ir.Int(v), ok
}

// Fold computes a constant lowered expression (no column, no parameter),
// as every backend computes it. ok is false when e is not constant or
// when backends could disagree on it (text order and LIKE follow the
// collation; MySQL's default one compares case- and pad-insensitively):
// a caller that drops something on a folded value must keep it when
// unsure. Comparisons, BETWEEN, IN, IS NULL and the connectives follow
// SQL's three-valued logic.
func Fold(e ir.Expr) (ir.Value, bool) {
	switch n := e.(type) {
	case ir.Literal:
		return n.Value, true
	case ir.Clamp:
		x, ok := Fold(n.X)
		if !ok {
			return ir.Value{}, false
		}
		return clampValue(x, n.Lo, n.Hi)
	case ir.Compare:
		l, ok1 := Fold(n.L)
		r, ok2 := Fold(n.R)
		if !ok1 || !ok2 {
			return ir.Value{}, false
		}
		return compareFold(n.Op, l, r)
	case ir.Between:
		x, ok1 := Fold(n.X)
		lo, ok2 := Fold(n.Lo)
		hi, ok3 := Fold(n.Hi)
		if !ok1 || !ok2 || !ok3 {
			return ir.Value{}, false
		}
		a, okA := compareFold(ir.OpGe, x, lo)
		b, okB := compareFold(ir.OpLe, x, hi)
		v, ok := and3(a, okA, b, okB)
		if ok && n.Not {
			v = not3(v)
		}
		return v, ok
	case ir.In:
		x, ok := Fold(n.X)
		if !ok {
			return ir.Value{}, false
		}
		v, vok := ir.Bool(false), true
		for _, item := range n.List {
			y, ok := Fold(item)
			if !ok {
				return ir.Value{}, false
			}
			eq, eqOK := compareFold(ir.OpEq, x, y)
			v, vok = or3(v, vok, eq, eqOK)
		}
		if vok && n.Not {
			v = not3(v)
		}
		return v, vok
	case ir.IsNull:
		x, ok := Fold(n.X)
		if !ok {
			return ir.Value{}, false
		}
		return ir.Bool(x.IsNull() != n.Not), true
	case ir.And:
		l, ok1 := Fold(n.L)
		r, ok2 := Fold(n.R)
		return and3(l, ok1, r, ok2)
	case ir.Or:
		l, ok1 := Fold(n.L)
		r, ok2 := Fold(n.R)
		return or3(l, ok1, r, ok2)
	case ir.Not:
		x, ok := Fold(n.X)
		if !ok || !x.IsNull() && x.Kind != ir.KindBool {
			return ir.Value{}, false
		}
		return not3(x), true
	case ir.Arith, ir.Neg, ir.Func, ir.Cast:
		// A clamp of a constant is a constant.
		e, _ = ir.Rewrite(e, func(c ir.Expr) (ir.Expr, error) {
			if k, ok := c.(ir.Clamp); ok {
				if v, ok := Fold(k); ok {
					return ir.Literal{Value: v}, nil
				}
			}
			return c, nil
		})
		hasColumn := false
		ir.Walk(e, func(c ir.Expr) bool {
			switch c.(type) {
			case ir.ColumnRef, ir.Clamp, ir.Param, ir.Case:
				hasColumn = true
			}
			return !hasColumn
		})
		if hasColumn {
			return ir.Value{}, false
		}
		dom := (&domainer{}).domain(e)
		if len(dom) != 1 {
			return ir.Value{}, false
		}
		return dom[0], true
	}
	return ir.Value{}, false
}

// compareFold compares two constants; ok is false where backends could
// disagree (text order, a text equality MySQL's collation decides
// otherwise, integers beyond ±2^53 against reals).
func compareFold(op ir.CmpOp, l, r ir.Value) (ir.Value, bool) {
	if l.IsNull() || r.IsNull() {
		return ir.Null(), true
	}
	var c int
	switch {
	case l.Kind == ir.KindInt && r.Kind == ir.KindInt:
		c = ir.CompareValues(l, r)
	case l.IsNumber() && r.IsNumber():
		a, ok1 := asFloat(l)
		b, ok2 := asFloat(r)
		if !ok1 || !ok2 {
			return ir.Value{}, false
		}
		c = ir.CompareValues(ir.Float(a), ir.Float(b))
	case op == ir.OpEq || op == ir.OpNe:
		same, ok := sameValue(l, r)
		if !ok {
			return ir.Value{}, false
		}
		return ir.Bool(same == (op == ir.OpEq)), true
	default:
		return ir.Value{}, false
	}
	return ir.Bool([...]bool{c == 0, c != 0, c < 0, c <= 0, c > 0, c >= 0}[op]), true
}

func not3(v ir.Value) ir.Value {
	if v.IsNull() {
		return v
	}
	return ir.Bool(!v.Bool)
}

// and3 and or3 are SQL's AND and OR over possibly unknown (not ok)
// operands: one decisive operand settles it.
func and3(a ir.Value, aok bool, b ir.Value, bok bool) (ir.Value, bool) {
	isFalse := func(v ir.Value, ok bool) bool { return ok && v.Kind == ir.KindBool && !v.Bool }
	switch {
	case isFalse(a, aok) || isFalse(b, bok):
		return ir.Bool(false), true
	case !aok || !bok || !truth(a) || !truth(b):
		return ir.Value{}, false
	case a.IsNull() || b.IsNull():
		return ir.Null(), true
	}
	return ir.Bool(true), true
}

func or3(a ir.Value, aok bool, b ir.Value, bok bool) (ir.Value, bool) {
	isTrue := func(v ir.Value, ok bool) bool { return ok && v.Kind == ir.KindBool && v.Bool }
	switch {
	case isTrue(a, aok) || isTrue(b, bok):
		return ir.Bool(true), true
	case !aok || !bok || !truth(a) || !truth(b):
		return ir.Value{}, false
	case a.IsNull() || b.IsNull():
		return ir.Null(), true
	}
	return ir.Bool(false), true
}

// truth reports whether v is a truth value or NULL.
func truth(v ir.Value) bool { return v.IsNull() || v.Kind == ir.KindBool }
