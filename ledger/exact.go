package ledger

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// exact is an (ε, δ) pair held as exact rationals. The rationals may be
// shared between values (the memo, clampZero), so nothing changes one in
// place: every operation that computes allocates its result.
type exact struct {
	eps, delta *big.Rat
}

func zeroExact() exact { return exact{new(big.Rat), new(big.Rat)} }

func (a exact) add(b exact) exact {
	return exact{addRat(a.eps, b.eps, false), addRat(a.delta, b.delta, false)}
}

func (a exact) sub(b exact) exact {
	return exact{addRat(a.eps, b.eps, true), addRat(a.delta, b.delta, true)}
}

// addRat returns x+y, or x-y with neg, exactly, through cheaper paths
// for what every charge computes (a charge's arithmetic was most of the
// ledger's allocations): a zero y gives x itself (shared, which is safe:
// nothing changes a rational in place; δ is usually 0), and when both
// fit in int64 halves the sum is computed and reduced in int64
// (smallRat). Results are normalised as big.Rat's own.
func addRat(x, y *big.Rat, neg bool) *big.Rat {
	switch {
	case y.Sign() == 0:
		return x
	case x.Sign() == 0 && !neg:
		return y
	}
	if r, ok := addSmall(x, y, neg); ok {
		return r
	}
	if neg {
		return new(big.Rat).Sub(x, y)
	}
	return new(big.Rat).Add(x, y)
}

// addSmall is x±y when every numerator and denominator and every
// intermediate product fits in an int64 (ok false otherwise).
func addSmall(x, y *big.Rat, neg bool) (*big.Rat, bool) {
	xn, xd, yn, yd := x.Num(), x.Denom(), y.Num(), y.Denom()
	if !xn.IsInt64() || !xd.IsInt64() || !yn.IsInt64() || !yd.IsInt64() {
		return nil, false
	}
	a, ok1 := mul64(xn.Int64(), yd.Int64())
	b, ok2 := mul64(yn.Int64(), xd.Int64())
	d, ok3 := mul64(xd.Int64(), yd.Int64())
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	if neg {
		b = -b // |b| ≤ MaxInt64: cannot overflow
	}
	n := a + b
	if (a > 0 && b > 0 && n < 0) || (a < 0 && b < 0 && n >= 0) || n == math.MinInt64 {
		// Overflowed, or MinInt64, whose absolute value gcd64 cannot
		// take: big.Rat's path.
		return nil, false
	}
	if g := gcd64(n, d); g > 1 {
		n, d = n/g, d/g
	}
	return smallRat(n, d), true
}

// smallRat returns n/d for d > 0 and n, d coprime: the normalised form,
// built without big.Rat's GCD (its norm allocates several times). After
// SetInt64 the denominator is initialised, so Denom is a reference to it
// (math/big documents that it may be set so).
func smallRat(n, d int64) *big.Rat {
	r := new(big.Rat).SetInt64(n)
	if d != 1 {
		r.Denom().SetInt64(d)
	}
	return r
}

// mul64 is a*b, ok false when it overflows (or is MinInt64, whose
// negation would).
func mul64(a, b int64) (int64, bool) {
	ua, ub := uint64(a), uint64(b)
	if a < 0 {
		ua = -ua
	}
	if b < 0 {
		ub = -ub
	}
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if (a < 0) != (b < 0) {
		return -int64(lo), true
	}
	return int64(lo), true
}

// gcd64 is the greatest common divisor of |a| and b > 0.
func gcd64(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	for a != 0 {
		a, b = b%a, a
	}
	return b
}

func (a exact) equal(b exact) bool { return a.eps.Cmp(b.eps) == 0 && a.delta.Cmp(b.delta) == 0 }

func (a exact) negative() bool { return a.eps.Sign() < 0 || a.delta.Sign() < 0 }

// clampZero returns a with negative components replaced by 0 (what is left
// of a limit a policy edit lowered below what was already spent).
// Components that are not negative are returned as they are (shared:
// nothing changes a rational in place).
func (a exact) clampZero() exact {
	out := a
	if out.eps.Sign() < 0 {
		out.eps = new(big.Rat)
	}
	if out.delta.Sign() < 0 {
		out.delta = new(big.Rat)
	}
	return out
}

// budget rounds to the nearest float64 pair, for display only: accounting
// never goes back through float64.
func (a exact) budget() budget.Budget {
	return budget.Budget{Epsilon: ratFloat(a.eps), Delta: ratFloat(a.delta)}
}

// ratFloat is r.Float64(): the nearest float64. When numerator and
// denominator are exact float64s (|n|, d ≤ 2⁵³), one IEEE division is
// that nearest value (division is correctly rounded), without big.Rat's
// allocations.
func ratFloat(r *big.Rat) float64 {
	const exactInt = 1 << 53
	if r.IsInt() {
		if n := r.Num(); n.IsInt64() && n.Int64() >= -exactInt && n.Int64() <= exactInt {
			return float64(n.Int64())
		}
	} else if n, d := r.Num(), r.Denom(); n.IsInt64() && d.IsInt64() {
		if ni, di := n.Int64(), d.Int64(); ni >= -exactInt && ni <= exactInt && di <= exactInt {
			return float64(ni) / float64(di)
		}
	}
	f, _ := r.Float64()
	return f
}

// fmtRat renders r for a client message: the nearest float64 in its
// shortest form.
func fmtRat(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// parseRat decodes a stored rational ("a/b" or "a").
func parseRat(s string) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("bad rational %q", s)
	}
	return r, nil
}
