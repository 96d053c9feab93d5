package pgledger

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// decimal is an exact amount as a NUMERIC literal and as a rational.
type decimal struct {
	text string
	rat  *big.Rat
}

// decimalOf returns f as the shortest decimal that round-trips to it: the
// very string budget.ExactDecimal reads, so that PostgreSQL's NUMERIC and
// the bbolt ledger's big.Rat hold the same exact amount (0.1 is 1/10).
func decimalOf(f float64) (decimal, error) {
	r, err := budget.ExactDecimal(f)
	if err != nil {
		return decimal{}, err
	}
	return decimal{text: strconv.FormatFloat(f, 'g', -1, 64), rat: r}, nil
}

// pair is an (ε, δ) amount.
type pair struct{ eps, delta decimal }

func pairOf(b budget.Budget) (pair, error) {
	e, err := decimalOf(b.Epsilon)
	if err != nil {
		return pair{}, fmt.Errorf("epsilon: %w", err)
	}
	d, err := decimalOf(b.Delta)
	if err != nil {
		return pair{}, fmt.Errorf("delta: %w", err)
	}
	return pair{e, d}, nil
}

// parseNumeric reads NUMERIC text output ("0.30", "12") exactly.
func parseNumeric(s string) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("bad numeric %q from the ledger database", s)
	}
	return r, nil
}

// ratText renders r as an exact NUMERIC literal. Every amount a ledger
// holds is a sum of decimals, so its denominator is 2^a·5^b and a finite
// decimal exists; anything else is refused rather than rounded.
func ratText(r *big.Rat) (string, error) {
	if r.IsInt() {
		return r.Num().String(), nil
	}
	d := new(big.Int).Set(r.Denom())
	digits := 0
	two, five := big.NewInt(2), big.NewInt(5)
	var m big.Int
	for _, p := range []*big.Int{two, five} {
		n := 0
		for m.Mod(d, p).Sign() == 0 {
			d.Quo(d, p)
			n++
		}
		digits = max(digits, n)
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return "", fmt.Errorf("%s has no finite decimal form", r.RatString())
	}
	return r.FloatString(digits), nil
}

// budgetOf rounds an exact amount to float64, for display only.
func budgetOf(eps, delta *big.Rat) budget.Budget {
	e, _ := eps.Float64()
	d, _ := delta.Float64()
	return budget.Budget{Epsilon: e, Delta: d}
}

// leftOf is limit − spent, never negative (a policy edit may have lowered
// a limit below what was already spent).
func leftOf(lim pair, spentEps, spentDelta *big.Rat) budget.Budget {
	e := new(big.Rat).Sub(lim.eps.rat, spentEps)
	d := new(big.Rat).Sub(lim.delta.rat, spentDelta)
	if e.Sign() < 0 {
		e.SetInt64(0)
	}
	if d.Sign() < 0 {
		d.SetInt64(0)
	}
	return budgetOf(e, d)
}

func fmtRat(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func addRat(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }

// clampSub is a − b, or 0 when that is negative.
func clampSub(a, b *big.Rat) *big.Rat {
	d := new(big.Rat).Sub(a, b)
	if d.Sign() < 0 {
		d.SetInt64(0)
	}
	return d
}
