package planner

import (
	"math"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// decimal reads a budget as the ledger charges it: the shortest decimal
// that converts back to the float64 (see scaleFor).
func decimal(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return new(big.Rat) // not reached: f is finite and non-negative
	}
	return r
}

// share is each of n equal shares of a budget total: the largest float64
// e whose decimal times n is at most total's decimal, exactly, so that
// the sets' noise, each calibrated to e, never adds up to more than the
// total charged (total/n rounded to nearest can be a hair above it).
func share(total float64, n int) float64 {
	if n <= 1 || total <= 0 {
		return total
	}
	t := decimal(total)
	for e := total / float64(n); e > 0; e = math.Nextafter(e, 0) {
		if x := decimal(e); x.Mul(x, big.NewRat(int64(n), 1)).Cmp(t) <= 0 {
			return e
		}
	}
	return 0
}

// chargeOf is what the separate releases cost together: the whole ε when
// every set charges its share (their decimals add up to at most ε, by
// share), else the charging sets' shares added up and rounded up, never
// below their exact sum; δ likewise, charged whole when a set selects keys
// by threshold.
func chargeOf(release []*Plan, eps, delta float64) policies.Budget {
	var b policies.Budget
	charging, sum := 0, new(big.Rat)
	for _, r := range release {
		if r.Budget.Epsilon > 0 {
			charging++
			sum.Add(sum, decimal(r.Budget.Epsilon))
		}
		if r.Budget.Delta > 0 {
			b.Delta = delta
		}
	}
	switch {
	case charging == len(release):
		b.Epsilon = eps
	case charging > 0:
		f, _ := sum.Float64()
		for decimal(f).Cmp(sum) < 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
		b.Epsilon = f
	}
	return b
}
