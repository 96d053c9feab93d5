package budget

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// ExactDecimal returns f read as the shortest decimal that round-trips to it
// (strconv's 'g', -1 form), as an exact rational: 0.1 becomes 1/10, not the
// binary 0.1000000000000000055511151231257827…
//
// It is the one reading of a float64 amount as an exact one: both ledgers
// charge by it (package ledger, ledger/pgledger), and whatever sums
// charges for display (the admin budget page) reads them the same way.
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
		return nil, fmt.Errorf("budget: %v is not a finite non-negative amount", f)
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		// Cannot happen: FormatFloat of a finite float is valid Rat syntax.
		return nil, fmt.Errorf("budget: cannot read %v as a decimal", f)
	}
	return r, nil
}
