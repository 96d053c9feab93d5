package planner

import (
	"math"
	"math/big"
	randv2 "math/rand/v2"
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

// scaleForBig is scaleFor without its uint64 fast path: the exact big.Rat
// computation the fast path must agree with.
func scaleForBig(sens int64, eps float64, m int) (Scale, error) {
	e, ok := new(big.Rat).SetString(strconv.FormatFloat(eps, 'g', -1, 64))
	if !ok || e.Sign() <= 0 {
		return Scale{}, strconv.ErrSyntax
	}
	t := new(big.Rat).SetInt64(sens)
	t.Mul(t, new(big.Rat).SetInt64(int64(m)))
	return noise.ScaleOf(t.Quo(t, e))
}

// TestScaleForFastPath compares scaleFor with the big.Rat computation on
// the ε values people type, random floats of every magnitude, and
// sensitivities and shares up to the int64 range.
func TestScaleForFastPath(t *testing.T) {
	rng := randv2.New(randv2.NewPCG(5, 6))
	epss := []float64{1, 0.1, 0.5, 2, 0.01, 0.001, 1e-5, 1.5e-7, 3, 10, 1e21, 1e-300, 0.3, 1.0 / 3,
		math.SmallestNonzeroFloat64, math.MaxFloat64, 0, -1, math.NaN(), math.Inf(1)}
	for range 3000 {
		epss = append(epss, math.Ldexp(rng.Float64(), rng.IntN(80)-60), float64(rng.IntN(1000))/100)
	}
	senss := []int64{0, 1, 2, 7, 100, 1 << 31, 1 << 40, math.MaxInt64, -1}
	ms := []int{1, 2, 3, 7, 1000, 1 << 40}
	for _, eps := range epss {
		for _, sens := range senss {
			for _, m := range ms {
				got, err := scaleFor(sens, eps, m)
				want, wantErr := scaleForBig(sens, eps, m)
				if (err != nil) != (wantErr != nil) || got != want {
					t.Fatalf("scaleFor(%d, %v, %d) = %v, %v; big.Rat: %v, %v", sens, eps, m, got, err, want, wantErr)
				}
			}
		}
	}
}

func TestDecimalFrac(t *testing.T) {
	for s, want := range map[string][2]uint64{
		"0.1": {1, 10}, "25": {25, 1}, "1.5e-07": {15, 100_000_000}, "1e+05": {100_000, 1}, "0.001": {1, 1000},
	} {
		n, d, ok := decimalFrac(s)
		if !ok || new(big.Rat).SetFrac64(int64(n), int64(d)).Cmp(new(big.Rat).SetFrac64(int64(want[0]), int64(want[1]))) != 0 {
			t.Errorf("decimalFrac(%q) = %d/%d %v; want %d/%d", s, n, d, ok, want[0], want[1])
		}
	}
	for _, s := range []string{"1e+21", "1e-20", "-1", "NaN", "+Inf", "12345678901234567890"} {
		if n, d, ok := decimalFrac(s); ok {
			t.Errorf("decimalFrac(%q) = %d/%d, want no fit", s, n, d)
		}
	}
}
