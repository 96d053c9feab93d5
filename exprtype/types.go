package exprtype

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Type is the type of an expression's value.
type Type uint8

const (
	// Unknown is the type of an undeclared column of a public table: it
	// may be compared (the backend knows its type), never computed with.
	Unknown Type = iota
	// Null is the type of the NULL literal: it fits any other type.
	Null
	// Integer is a 64-bit signed integer (BIGINT on every backend).
	Integer
	// Real is an IEEE double (DOUBLE PRECISION, DOUBLE, REAL).
	Real
	Text
	Boolean
	// Date, Timestamp and TimestampTZ are the date and time types (see
	// ir.KindDate): a bounded one has its range in Info.Int, in days or
	// microseconds since 1970-01-01.
	Date
	Timestamp
	TimestampTZ
)

// String names the type as PostgreSQL's messages do.
func (t Type) String() string {
	switch t {
	case Null:
		return "unknown"
	case Integer:
		return "bigint"
	case Real:
		return "double precision"
	case Text:
		return "text"
	case Boolean:
		return "boolean"
	case Date:
		return "date"
	case Timestamp:
		return "timestamp without time zone"
	case TimestampTZ:
		return "timestamp with time zone"
	}
	return "unknown"
}

func (t Type) numeric() bool { return t == Integer || t == Real }

// IsTime reports the date and time types.
func (t Type) IsTime() bool { return t == Date || t == Timestamp || t == TimestampTZ }

// Kind is the ir.Value kind of a date or time type's values.
func (t Type) Kind() ir.Kind {
	switch t {
	case Date:
		return ir.KindDate
	case Timestamp:
		return ir.KindTimestamp
	case TimestampTZ:
		return ir.KindTimestampTZ
	}
	return ir.KindNull
}

// TimeType is the type of a date or time ir.Value kind (Unknown for others).
func TimeType(k ir.Kind) Type {
	switch k {
	case ir.KindDate:
		return Date
	case ir.KindTimestamp:
		return Timestamp
	case ir.KindTimestampTZ:
		return TimestampTZ
	}
	return Unknown
}

// Limits of the values an expression may compute.
const (
	// MaxReal bounds the magnitude of every real value: far below the
	// largest double (1.8e308), so no backend's overflow check can fire
	// and no rounding of the range analysis can hide one.
	MaxReal = 1e300
	// MinGrain is the smallest grain exponent a real product may have:
	// every nonzero multiple of 2^-1074 is at least the smallest
	// subnormal double, so it cannot round to zero (PostgreSQL raises
	// "value out of range: underflow" when a product of nonzero doubles
	// rounds to zero).
	MinGrain = -1074
	// MaxTextLength bounds length(text): 1 GB in PostgreSQL, 4 GB for a
	// MySQL LONGTEXT, 1e9 bytes in SQLite.
	MaxTextLength = 1 << 32
	// ZeroGrain is the grain of a real that can only be zero.
	ZeroGrain = math.MaxInt32
)

// columnGrain is the grain of a clamped real column: the clamp turns
// values of magnitude below ir.TinyReal (≥ 2^-256) into 0, and every
// double of magnitude at least 2^-256 is a multiple of 2^(-256-52).
const columnGrain = -308

var (
	minInt64 = big.NewInt(math.MinInt64)
	maxInt64 = big.NewInt(math.MaxInt64)
)

// IntRange is an exact integer interval [Lo, Hi].
type IntRange struct{ Lo, Hi *big.Int }

// RealRange is a real interval [Lo, Hi] rounded outward, with a grain:
// every value is an integer multiple of 2^Grain, so a nonzero value has
// magnitude at least 2^Grain (ZeroGrain: the value is always zero).
type RealRange struct {
	Lo, Hi float64
	Grain  int
}

// Info is what the analysis knows of an expression's value.
type Info struct {
	Type Type
	// Bounded is set for an Integer or Real expression when its range
	// below holds every value it can take (NULL aside). A column read
	// bare (compared, not computed with) is not bounded.
	Bounded bool
	// Int is the range of a bounded Integer expression, and of a bounded
	// date or time one (days or microseconds since 1970-01-01).
	Int IntRange
	// Real is the range of a bounded Real expression.
	Real RealRange
	// Domain, set by GroupKey only, is the finite set of values the
	// expression can take (sorted, NULL last when it can be NULL), nil
	// when unknown or larger than MaxDomain: the image of its columns'
	// declared domains and of the integers of their clamping bounds
	// (domain.go), through literals, CASE arms and the Image rules of the
	// function table. The planner uses it as a grouping key set.
	Domain []ir.Value
	// Const is the value of a literal (KindNull otherwise): the rules of
	// functions with constant arguments (date_trunc's unit) read it.
	Const ir.Value
}

// String describes the range, for messages and explain.
func (in Info) String() string {
	switch {
	case in.Type == Integer && in.Bounded:
		return "bigint in [" + in.Int.Lo.String() + ", " + in.Int.Hi.String() + "]"
	case in.Type == Real && in.Bounded:
		return "double precision in [" + fmtReal(in.Real.Lo) + ", " + fmtReal(in.Real.Hi) + "]"
	case in.Type.IsTime() && in.Bounded:
		k := in.Type.Kind()
		return in.Type.String() + " in [" + ir.FormatTime(k, in.Int.Lo.Int64()) + ", " + ir.FormatTime(k, in.Int.Hi.Int64()) + "]"
	}
	return in.Type.String()
}

func fmtReal(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// intPoint is [v, v]. Both bounds are one value: a range's bounds are
// never modified (every operation builds new ones, minBig and maxBig
// return their arguments), so they may be shared.
func intPoint(v int64) IntRange {
	p := big.NewInt(v)
	return IntRange{p, p}
}

func intInfo(r IntRange) Info { return Info{Type: Integer, Bounded: true, Int: r} }

func realInfo(r RealRange) Info { return Info{Type: Real, Bounded: true, Real: r} }

func timeInfo(t Type, lo, hi int64) Info {
	if lo == hi {
		return Info{Type: t, Bounded: true, Int: intPoint(lo)}
	}
	return Info{Type: t, Bounded: true, Int: IntRange{big.NewInt(lo), big.NewInt(hi)}}
}

func (r IntRange) fits() bool { return r.Lo.Cmp(minInt64) >= 0 && r.Hi.Cmp(maxInt64) <= 0 }

func addInt(a, b IntRange) IntRange {
	return IntRange{new(big.Int).Add(a.Lo, b.Lo), new(big.Int).Add(a.Hi, b.Hi)}
}

func subInt(a, b IntRange) IntRange {
	return IntRange{new(big.Int).Sub(a.Lo, b.Hi), new(big.Int).Sub(a.Hi, b.Lo)}
}

func mulInt(a, b IntRange) IntRange {
	c := []*big.Int{
		new(big.Int).Mul(a.Lo, b.Lo), new(big.Int).Mul(a.Lo, b.Hi),
		new(big.Int).Mul(a.Hi, b.Lo), new(big.Int).Mul(a.Hi, b.Hi),
	}
	lo, hi := c[0], c[0]
	for _, x := range c[1:] {
		if x.Cmp(lo) < 0 {
			lo = x
		}
		if x.Cmp(hi) > 0 {
			hi = x
		}
	}
	return IntRange{lo, hi}
}

func negInt(a IntRange) IntRange {
	return IntRange{new(big.Int).Neg(a.Hi), new(big.Int).Neg(a.Lo)}
}

func absInt(a IntRange) IntRange {
	switch {
	case a.Lo.Sign() >= 0:
		return a
	case a.Hi.Sign() <= 0:
		return negInt(a)
	}
	hi := new(big.Int).Neg(a.Lo)
	if a.Hi.Cmp(hi) > 0 {
		hi = a.Hi
	}
	return IntRange{new(big.Int), hi}
}

func hullInt(a, b IntRange) IntRange {
	lo, hi := a.Lo, a.Hi
	if b.Lo.Cmp(lo) < 0 {
		lo = b.Lo
	}
	if b.Hi.Cmp(hi) > 0 {
		hi = b.Hi
	}
	return IntRange{lo, hi}
}

// Real interval arithmetic: each bound is computed exactly in big.Float
// and rounded outward to a double, so the range holds whatever the
// backend's correctly rounded double arithmetic produces.

const exactPrec = 4096 // enough for any exact sum or product of two doubles

func exact(f float64) *big.Float { return new(big.Float).SetPrec(exactPrec).SetFloat64(f) }

func down(x *big.Float) float64 {
	f, acc := x.Float64()
	if acc == big.Above {
		f = math.Nextafter(f, math.Inf(-1))
	}
	return f
}

func up(x *big.Float) float64 {
	f, acc := x.Float64()
	if acc == big.Below {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

func intToReal(a IntRange) RealRange {
	lo := down(new(big.Float).SetPrec(exactPrec).SetInt(a.Lo))
	hi := up(new(big.Float).SetPrec(exactPrec).SetInt(a.Hi))
	g := 0
	if a.Lo.Sign() == 0 && a.Hi.Sign() == 0 {
		g = ZeroGrain
	}
	return RealRange{Lo: lo, Hi: hi, Grain: g}
}

func minGrain(a, b int) int { return min(a, b) }

func mulGrain(a, b int) int {
	if a == ZeroGrain || b == ZeroGrain {
		return ZeroGrain
	}
	return a + b
}

func addReal(a, b RealRange) RealRange {
	lo := down(new(big.Float).SetPrec(exactPrec).Add(exact(a.Lo), exact(b.Lo)))
	hi := up(new(big.Float).SetPrec(exactPrec).Add(exact(a.Hi), exact(b.Hi)))
	return RealRange{Lo: lo, Hi: hi, Grain: minGrain(a.Grain, b.Grain)}
}

func subReal(a, b RealRange) RealRange { return addReal(a, negReal(b)) }

func negReal(a RealRange) RealRange { return RealRange{Lo: -a.Hi, Hi: -a.Lo, Grain: a.Grain} }

func mulReal(a, b RealRange) RealRange {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range []float64{a.Lo, a.Hi} {
		for _, y := range []float64{b.Lo, b.Hi} {
			p := new(big.Float).SetPrec(exactPrec).Mul(exact(x), exact(y))
			lo = math.Min(lo, down(p))
			hi = math.Max(hi, up(p))
		}
	}
	return RealRange{Lo: lo, Hi: hi, Grain: mulGrain(a.Grain, b.Grain)}
}

func absReal(a RealRange) RealRange {
	switch {
	case a.Lo >= 0:
		return a
	case a.Hi <= 0:
		return negReal(a)
	}
	return RealRange{Lo: 0, Hi: math.Max(-a.Lo, a.Hi), Grain: a.Grain}
}

func hullReal(a, b RealRange) RealRange {
	return RealRange{Lo: math.Min(a.Lo, b.Lo), Hi: math.Max(a.Hi, b.Hi), Grain: minGrain(a.Grain, b.Grain)}
}

// integral is the range of floor, ceil or round applied to a: monotone,
// with integer results (grain 0, or always zero).
func integral(a RealRange, f func(float64) float64) RealRange {
	r := RealRange{Lo: f(a.Lo), Hi: f(a.Hi), Grain: 0}
	if r.Lo == 0 && r.Hi == 0 {
		r.Grain = ZeroGrain
	}
	return r
}

// roundHalfAway is the rounding every dialect renders round(x) as:
// SIGN(x)·FLOOR(|x| + 0.5) in double arithmetic.
func roundHalfAway(x float64) float64 {
	s := 1.0
	if x < 0 {
		s = -1
	} else if x == 0 {
		return 0
	}
	return s * math.Floor(math.Abs(x)+0.5)
}

// grainOf returns the exponent of the lowest set bit of f (ZeroGrain for 0).
func grainOf(f float64) int {
	if f == 0 {
		return ZeroGrain
	}
	frac, exp := math.Frexp(math.Abs(f)) // f = frac·2^exp, frac in [0.5, 1)
	mant := uint64(math.Ldexp(frac, 53)) // exact: 53 significant bits
	return exp - 53 + bits.TrailingZeros64(mant)
}

// realPoint is the range of one double.
func realPoint(f float64) RealRange { return RealRange{Lo: f, Hi: f, Grain: grainOf(f)} }

// clampInfo is the range of a column clamped to [lo, hi]: for reals, the
// clamp first turns magnitudes below ir.TinyReal into 0 (see ir.Clamp).
func clampInfo(t Type, lo, hi ir.Value) Info {
	if t.IsTime() {
		return timeInfo(t, lo.Int, hi.Int)
	}
	if t == Integer {
		return intInfo(IntRange{big.NewInt(lo.Int), big.NewInt(hi.Int)})
	}
	r := RealRange{Lo: lo.Float, Hi: hi.Float, Grain: columnGrain}
	r.Grain = min(r.Grain, grainOf(lo.Float), grainOf(hi.Float))
	if lo.Float == 0 && hi.Float == 0 {
		r.Grain = ZeroGrain
	}
	return realInfo(r)
}

// nonzeroInt splits a divisor range into its negative and positive parts
// (a zero divisor gives NULL, not a value). ok is false for an empty part.
func nonzeroInt(b IntRange) (neg, pos IntRange, negOK, posOK bool) {
	one, minus := big.NewInt(1), big.NewInt(-1)
	if b.Lo.Sign() < 0 {
		neg, negOK = IntRange{b.Lo, minBig(b.Hi, minus)}, true
	}
	if b.Hi.Sign() > 0 {
		pos, posOK = IntRange{maxBig(b.Lo, one), b.Hi}, true
	}
	return
}

func minBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

func maxBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) > 0 {
		return a
	}
	return b
}

// quoInt is the range of a / b truncated toward zero over the nonzero b:
// on each sign part of b the truncated quotient is monotone in a and in
// b, so its extremes are at the corners. Both parts empty (b is always 0,
// the quotient always NULL): [0, 0].
func quoInt(a, b IntRange) IntRange {
	neg, pos, negOK, posOK := nonzeroInt(b)
	var lo, hi *big.Int
	for _, part := range []struct {
		r  IntRange
		ok bool
	}{{neg, negOK}, {pos, posOK}} {
		if !part.ok {
			continue
		}
		for _, x := range []*big.Int{a.Lo, a.Hi} {
			for _, y := range []*big.Int{part.r.Lo, part.r.Hi} {
				q := new(big.Int).Quo(x, y)
				if lo == nil || q.Cmp(lo) < 0 {
					lo = q
				}
				if hi == nil || q.Cmp(hi) > 0 {
					hi = q
				}
			}
		}
	}
	if lo == nil {
		return IntRange{new(big.Int), new(big.Int)}
	}
	return IntRange{lo, hi}
}

// modInt is the range of a % b (the sign of a, magnitude below |b| and at
// most |a|) over the nonzero b.
func modInt(a, b IntRange) IntRange {
	m := new(big.Int).Abs(b.Lo)
	if h := new(big.Int).Abs(b.Hi); h.Cmp(m) > 0 {
		m = h
	}
	if m.Sign() == 0 {
		return IntRange{new(big.Int), new(big.Int)}
	}
	m.Sub(m, big.NewInt(1))
	lo, hi := new(big.Int), new(big.Int)
	if a.Lo.Sign() < 0 {
		lo = maxBig(a.Lo, new(big.Int).Neg(m))
	}
	if a.Hi.Sign() > 0 {
		hi = minBig(a.Hi, m)
	}
	return IntRange{lo, hi}
}

// quoReal is the range of the double quotient a / b over the nonzero b.
// The smallest nonzero |b| is 2^b.Grain (every value is a multiple of
// it); on each sign part of b the exact quotient is monotone, so its
// extremes are at the corners, rounded outward. ok is false when a
// nonzero quotient could round to zero (PostgreSQL raises an underflow
// error): the smallest nonzero |a| over the largest |b| must be at least
// the smallest subnormal double.
func quoReal(a, b RealRange) (RealRange, bool) {
	if b.Grain == ZeroGrain || a.Grain == ZeroGrain {
		return RealRange{Grain: ZeroGrain}, true // always NULL or 0
	}
	tiny := math.Ldexp(1, b.Grain)
	var parts [][2]float64
	if b.Lo < 0 && b.Lo <= -tiny {
		parts = append(parts, [2]float64{b.Lo, math.Min(b.Hi, -tiny)})
	}
	if b.Hi > 0 && b.Hi >= tiny {
		parts = append(parts, [2]float64{math.Max(b.Lo, tiny), b.Hi})
	}
	if len(parts) == 0 {
		return RealRange{Grain: ZeroGrain}, true
	}
	_, exp := math.Frexp(math.Max(math.Abs(b.Lo), math.Abs(b.Hi))) // |b| < 2^exp
	minQ := a.Grain - exp                                          // every nonzero |a / b| exceeds 2^minQ
	if minQ < MinGrain {
		return RealRange{}, false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range parts {
		for _, x := range []float64{a.Lo, a.Hi} {
			for _, y := range []float64{p[0], p[1]} {
				d := new(big.Float).SetPrec(exactPrec).SetMode(big.ToNegativeInf).Quo(exact(x), exact(y))
				u := new(big.Float).SetPrec(exactPrec).SetMode(big.ToPositiveInf).Quo(exact(x), exact(y))
				lo, hi = math.Min(lo, down(d)), math.Max(hi, up(u))
			}
		}
	}
	// A nonzero quotient of magnitude above 2^minQ is a multiple of
	// 2^(minQ-52) (or of the smallest subnormal).
	return RealRange{Lo: lo, Hi: hi, Grain: max(minQ-52, MinGrain)}, true
}
