package sqlite

import (
	"math"
	"math/bits"

	"github.com/ncruces/go-sqlite3"
)

// saturatingSum is the name sqlrender's SQLite dialect renders a clamped
// SUM with (sqlrender.Dialect.SaturatingSum). SQLite's own SUM raises
// "integer overflow" when the running total leaves int64, which happens
// only when enough rows sit near large bounds: a failure that depends on
// the data, which the totality rule forbids. This aggregate sums exactly
// in 128 bits and saturates the total at the int64 limits, which is
// 1-Lipschitz in the exact sum, so the sensitivity does not grow.
const saturatingSum = "ddp_saturating_sum"

// registerFunctions runs on every new connection of the pool.
func registerFunctions(c *sqlite3.Conn) error {
	return c.CreateWindowFunction(saturatingSum, 1, sqlite3.DETERMINISTIC|sqlite3.INNOCUOUS,
		func() sqlite3.AggregateFunction { return &satSum{} })
}

// satSum is a 128-bit two's-complement accumulator (hi:lo). It cannot
// overflow before 2^64 rows.
type satSum struct {
	hi   int64
	lo   uint64
	seen bool
}

func (s *satSum) Step(_ sqlite3.Context, arg ...sqlite3.Value) {
	if len(arg) != 1 || arg[0].Type() == sqlite3.NULL {
		return
	}
	s.add(arg[0].Int64())
}

func (s *satSum) add(v int64) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(v), 0)
	s.hi += v>>63 + int64(carry)
	s.seen = true
}

// total returns the exact sum saturated at the int64 limits.
func (s *satSum) total() int64 {
	switch {
	case s.hi == 0 && s.lo <= math.MaxInt64, s.hi == -1 && s.lo > math.MaxInt64:
		return int64(s.lo)
	case s.hi < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}

// Value returns NULL over no (non-NULL) rows, as SUM does.
func (s *satSum) Value(ctx sqlite3.Context) {
	if !s.seen {
		ctx.ResultNull()
		return
	}
	ctx.ResultInt64(s.total())
}
