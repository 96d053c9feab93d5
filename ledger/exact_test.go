package ledger

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestExactArithmeticPaths: add, sub and budget's conversion agree with
// big.Rat's own Add, Sub and Float64 on every path (zero, integers, a
// common denominator, any other), including normalised form and sign.
func TestExactArithmeticPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() *big.Rat {
		switch rng.IntN(8) {
		case 6:
			return big.NewRat(-rng.Int64N(1<<62), rng.Int64N(1<<31)+1)
		case 7:
			return big.NewRat(math.MinInt64, 1<<uint(rng.IntN(63)))
		case 0:
			return new(big.Rat)
		case 1:
			return big.NewRat(rng.Int64N(1000)-500, 1)
		case 2:
			return big.NewRat(rng.Int64N(1000)-500, 10)
		case 3:
			return big.NewRat(rng.Int64N(1<<62), rng.Int64N(1<<40)+1)
		case 4:
			r, _ := new(big.Rat).SetString("123456789012345678901234567890/7")
			return r
		}
		return big.NewRat(rng.Int64N(1e9), rng.Int64N(1e6)+1)
	}
	// Sums of exactly MinInt64 (no overflow, but no int64 absolute value).
	edges := [][2]*big.Rat{
		{big.NewRat(1, 2), big.NewRat(1<<62+1, 2)},
		{big.NewRat(-(math.MaxInt64 / 7), 1), big.NewRat(1, 7)},
		{big.NewRat(-math.MaxInt64, 1), big.NewRat(1, 1)},
	}
	for i := 0; i < 20000+len(edges); i++ {
		x, y := pick(), pick()
		if i < len(edges) {
			x, y = edges[i][0], edges[i][1]
		}
		xs, ys := x.RatString(), y.RatString()
		for _, neg := range []bool{false, true} {
			want := new(big.Rat).Add(x, y)
			if neg {
				want = new(big.Rat).Sub(x, y)
			}
			got := addRat(x, y, neg)
			if got.Cmp(want) != 0 || got.RatString() != want.RatString() || got.Num().Cmp(want.Num()) != 0 || got.Denom().Cmp(want.Denom()) != 0 {
				t.Fatalf("%s %v %s: got %s, want %s", xs, map[bool]string{false: "+", true: "-"}[neg], ys, got.RatString(), want.RatString())
			}
			if x.RatString() != xs || y.RatString() != ys {
				t.Fatalf("an operand changed: %s, %s became %s, %s", xs, ys, x.RatString(), y.RatString())
			}
		}
		wf, _ := x.Float64()
		if gf := ratFloat(x); gf != wf || math.Signbit(gf) != math.Signbit(wf) {
			t.Fatalf("ratFloat(%s) = %v, want %v", xs, gf, wf)
		}
	}
}
