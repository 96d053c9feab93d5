package ir

import (
	"math"
	"math/big"
	"strconv"
)

// A double's text is what a client sees of every real result (an
// average, a noisy sum of a real column, a GROUP BY key such as
// floor(extract(epoch from t) / 3600) * 3600), so it is spelled as the
// client's database spells it. Both databases write the shortest digits
// that read back as the same double, as Go's strconv does (PostgreSQL
// with one exception below; oracle tests compare all three); they differ
// in when they switch to exponent notation and how they write the
// exponent. Go's own shortest 'g', which the proxy wrote before, switches
// at 10⁶: a sum of 218,623,720.5 read 2.186237205e+08 in psql.

// AppendFloatPG appends f as PostgreSQL's float8 output writes it (the
// default extra_float_digits = 1 of PostgreSQL 12 and later): positional
// when 1e-4 ≤ |f| < 1e15, else "1.5e-05" / "1e+15" (a signed exponent of
// at least two digits); Infinity, -Infinity and NaN by name.
func AppendFloatPG(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	}
	// The shortest digits of a double below a power of ten never round up
	// to it (the power would lie in the double's rounding interval, so it
	// would be that double), so comparing f with the double nearest each
	// threshold decides the notation exactly.
	a := math.Abs(f)
	if a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	// Go's 'e' spells the exponent as PostgreSQL does (sign, ≥ 2 digits).
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	if a < 1<<53 || insideRounding(b[start:], f) {
		return b
	}
	// PostgreSQL's Ryu never writes a decimal that lies exactly halfway
	// to a neighbouring double (it reads back as f only under
	// round-half-even); Go's shortest does when f's mantissa is even
	// (6.886e+21, where PostgreSQL writes 6.886000000000001e+21). Only
	// doubles of 2^53 and above have such short halfway points: their
	// neighbours are whole numbers apart. The next length's correctly
	// rounded decimal that lies strictly inside is PostgreSQL's.
	for prec := mantissaLen(b[start:]); prec < 17; prec++ {
		b = strconv.AppendFloat(b[:start], f, 'e', prec, 64)
		if insideRounding(b[start:], f) {
			return b
		}
	}
	return strconv.AppendFloat(b[:start], f, 'e', 16, 64)
}

// mantissaLen is the number of digits of an 'e' spelling's mantissa.
func mantissaLen(s []byte) int {
	n := 0
	for _, c := range s {
		if c == 'e' {
			break
		}
		if c >= '0' && c <= '9' {
			n++
		}
	}
	return n
}

// insideRounding reports whether the decimal dec lies strictly between
// the midpoints from the finite double f to its neighbours (exact
// arithmetic).
func insideRounding(dec []byte, f float64) bool {
	d, ok := new(big.Rat).SetString(string(dec))
	if !ok {
		return false
	}
	a := math.Abs(f)
	d.Abs(d)
	x := new(big.Rat).SetFloat64(a)
	down := new(big.Rat).SetFloat64(math.Nextafter(a, 0))
	var up *big.Rat
	if next := math.Nextafter(a, math.Inf(1)); !math.IsInf(next, 1) {
		up = new(big.Rat).SetFloat64(next)
	} else {
		// Past the largest double: as far above as its predecessor is below.
		up = new(big.Rat).Sub(new(big.Rat).Add(x, x), down)
	}
	half := big.NewRat(1, 2)
	lo := new(big.Rat).Mul(new(big.Rat).Add(down, x), half)
	hi := new(big.Rat).Mul(new(big.Rat).Add(x, up), half)
	return d.Cmp(lo) > 0 && d.Cmp(hi) < 0
}

// AppendFloatMySQL appends f as MariaDB's text protocol writes a DOUBLE
// (String::set_real → my_gcvt with a 349-character field, so the
// shortest digits): positional when the number of digits before the
// point, decpt, is at least -14 (|f| ≥ 1e-15) and at most 15, or when
// the digits run past the point (1000000000000000.1); else "1.5e15" /
// "1e-16" (no plus sign, no leading zero in the exponent). MariaDB has no
// infinite or NaN doubles; they are written as PostgreSQL names them,
// which a client parses as a float all the same.
func AppendFloatMySQL(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return AppendFloatPG(b, f)
	case f == 0:
		// Negative zero too (PostgreSQL writes -0).
		return append(b, '0')
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	e := start
	for b[e] != 'e' {
		e++
	}
	n := mantissaLen(b[start:e])
	exp, _ := strconv.Atoi(string(b[e+1:]))
	if decpt := exp + 1; decpt >= -14 && (decpt <= 15 || n > decpt) {
		return strconv.AppendFloat(b[:start], f, 'f', -1, 64)
	}
	// Rewrite Go's "e+05" / "e-05" exponent as "e5" / "e-5".
	out := b[:e+1]
	if exp < 0 {
		out = append(out, '-')
		exp = -exp
	}
	return strconv.AppendInt(out, int64(exp), 10)
}
