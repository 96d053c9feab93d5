package planner

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestShareNeverExceedsTheTotal: n shares of a budget, each read as the
// decimal the noise is calibrated to, add up to at most the total's
// decimal, exactly, and lose at most a few ulps. Random totals and n,
// plus the classic 0.1 / 3 and 1 / 3.
func TestShareNeverExceedsTheTotal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := [][2]float64{{0.1, 3}, {1, 3}, {0.3, 3}, {1.5, 3}, {2, 7}, {1e-6, 3}}
	for i := 0; i < 2000; i++ {
		cases = append(cases, [2]float64{r.Float64() * 10, float64(2 + r.IntN(20))})
	}
	for _, c := range cases {
		total, n := c[0], int(c[1])
		e := share(total, n)
		sum := new(big.Rat).Mul(decimal(e), big.NewRat(int64(n), 1))
		if sum.Cmp(decimal(total)) > 0 {
			t.Fatalf("share(%v, %d) = %v: %d shares exceed the total", total, n, e, n)
		}
		if want := total / float64(n); e < want*(1-1e-14) {
			t.Fatalf("share(%v, %d) = %v, far below %v", total, n, e, want)
		}
	}
}

// TestChargeOfCoversTheShares: the charge is the whole ε when every set
// charges, and never below the exact sum of the charging shares.
func TestChargeOfCoversTheShares(t *testing.T) {
	e := share(1, 3)
	all := []*Plan{{}, {}, {}}
	for _, p := range all {
		p.Budget.Epsilon = e
	}
	if b := chargeOf(all, 1, 0); b.Epsilon != 1 || b.Delta != 0 {
		t.Errorf("all charging: %+v, want ε = 1", b)
	}
	all[1].Budget.Epsilon = 0 // an exact set (blowfish sensitivity 0)
	all[2].Budget.Delta = 1e-6
	b := chargeOf(all, 1, 1e-6)
	exact := new(big.Rat).Mul(decimal(e), big.NewRat(2, 1))
	if decimal(b.Epsilon).Cmp(exact) < 0 || b.Epsilon > 2*e*(1+1e-15) || b.Delta != 1e-6 {
		t.Errorf("two charging: %+v, want ε ≥ 2·%v (exactly) and δ = 1e-6", b, e)
	}
	if math.IsNaN(b.Epsilon) {
		t.Fatal("NaN")
	}
}
