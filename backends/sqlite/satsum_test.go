package sqlite

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestSatSumExact compares the 128-bit accumulator with math/big on
// random sequences of large values: the total is exact, then saturated.
func TestSatSumExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lim := [2]*big.Int{big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)}
	for trial := range 2000 {
		var s satSum
		want := new(big.Int)
		for range rng.IntN(50) {
			var v int64
			switch rng.IntN(4) {
			case 0:
				v = math.MaxInt64 - rng.Int64N(3)
			case 1:
				v = math.MinInt64 + rng.Int64N(3)
			default:
				v = rng.Int64() - rng.Int64()
			}
			s.add(v)
			want.Add(want, big.NewInt(v))
		}
		if want.Cmp(lim[0]) < 0 {
			want.Set(lim[0])
		} else if want.Cmp(lim[1]) > 0 {
			want.Set(lim[1])
		}
		if got := s.total(); got != want.Int64() {
			t.Fatalf("trial %d: total %d, want %s", trial, got, want)
		}
	}
}
