package ledger

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// ExactDecimal returns f read as the shortest decimal that round-trips to it
// (strconv's 'g', -1 form), as an exact rational: 0.1 becomes 1/10, not the
// binary 0.1000000000000000055511151231257827…
//
// Why decimal and not big.Rat.SetFloat64: budgets are written by people in
// decimal. Read in binary, three queries of 0.1 (3 × 0.1000…0555) exceed a
// limit of 0.3 (0.2999…9889) even in exact arithmetic. Read in decimal they
// sum to exactly 3/10. The decimal differs from the float64 by less than
// half an ulp, so a mechanism that calibrates its noise to ExactDecimal(ε)
// releases exactly the ε the ledger charged.
//
// f must be finite and non-negative.
func ExactDecimal(f float64) (*big.Rat, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return nil, fmt.Errorf("ledger: %v is not a finite non-negative budget", f)
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		// Cannot happen: FormatFloat of a finite float is valid Rat syntax.
		return nil, fmt.Errorf("ledger: cannot read %v as a decimal", f)
	}
	return r, nil
}

// exact is an (ε, δ) pair held as exact rationals. The rationals may be
// shared between values (the memo, clampZero), so nothing changes one in
// place: every operation that computes allocates its result.
type exact struct {
	eps, delta *big.Rat
}

func zeroExact() exact { return exact{new(big.Rat), new(big.Rat)} }

func (a exact) add(b exact) exact {
	return exact{new(big.Rat).Add(a.eps, b.eps), new(big.Rat).Add(a.delta, b.delta)}
}

func (a exact) sub(b exact) exact {
	return exact{new(big.Rat).Sub(a.eps, b.eps), new(big.Rat).Sub(a.delta, b.delta)}
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
	e, _ := a.eps.Float64()
	d, _ := a.delta.Float64()
	return budget.Budget{Epsilon: e, Delta: d}
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
