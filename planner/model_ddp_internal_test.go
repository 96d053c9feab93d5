package planner

import (
	"math/big"
	"testing"
)

// The ddp scale is ΔQ·n·m/ε computed exactly (m an exact binary
// rational): never below the exact value, above it only by ScaleOf's
// documented dyadic rounding (< 2⁻³⁰ relative).
func TestScaleExact(t *testing.T) {
	bb := &builder{}
	for _, c := range []struct {
		m    float64
		sens int64
		eps  float64
		n    int
		want *big.Rat
	}{
		{1.75, 4, 0.5, 1, big.NewRat(14, 1)},
		{2, 3, 0.1, 2, big.NewRat(120, 1)},
		{1.6, 1, 1, 1, new(big.Rat).SetFloat64(1.6)},
		{1e6 + 0.5, 1, 2, 1, big.NewRat(2000001, 4)},
	} {
		got, err := bb.scale(&AggPlan{Multiplier: c.m}, c.sens, c.eps, c.n)
		if err != nil {
			t.Fatal(err)
		}
		// ScaleOf rounds up to a dyadic only when the exact value is not
		// representable; never below the exact value.
		if got.Rat().Cmp(c.want) < 0 || new(big.Rat).Quo(got.Rat(), c.want).Cmp(big.NewRat(1<<30+1, 1<<30)) > 0 {
			t.Errorf("m %v: scale %v, want %v", c.m, got.Rat().RatString(), c.want.RatString())
		}
	}
}
