package noise

import (
	"math"
	"math/big"
	"testing"
)

// TestBernoulliExpFrequencies draws 1,000,000 trials per γ and compares the
// frequency of true with exp(−γ) within 6σ (false rejection 2e-9 per γ).
// γ = 0 must always be true. The last two cases have numerators and
// denominators beyond 64 bits and exercise the big.Int path.
func TestBernoulliExpFrequencies(t *testing.T) {
	const trials = 1_000_000
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)
	tests := []struct {
		name  string
		gamma *big.Rat
		want  float64
	}{
		{"0", big.NewRat(0, 1), 1},
		{"0.3", big.NewRat(3, 10), math.Exp(-0.3)},
		{"1", big.NewRat(1, 1), math.Exp(-1)},
		{"2.5", big.NewRat(5, 2), math.Exp(-2.5)},
		{"7/3", big.NewRat(7, 3), math.Exp(-7.0 / 3)},
		{"(3e29+1)/1e30", new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Div(new(big.Int).Mul(huge, big.NewInt(3)), big.NewInt(10)), big.NewInt(1)), huge), math.Exp(-0.3)},
		{"(25e29+1)/1e30", new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Div(new(big.Int).Mul(huge, big.NewInt(25)), big.NewInt(10)), big.NewInt(1)), huge), math.Exp(-2.5)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := SeededSource(uint64(200 + i))
			hits := 0
			for range trials {
				if BernoulliExp(src, tt.gamma) {
					hits++
				}
			}
			if tt.want == 1 {
				if hits != trials {
					t.Fatalf("exp(-0): %d of %d true, want all", hits, trials)
				}
				return
			}
			checkProportion(t, "exp(-"+tt.name+")", hits, trials, tt.want)
		})
	}
}

// TestBernoulliOverKOverflow checks the overflow branch of bernoulliOverK
// (d·k ≥ 2^64), which real sampling reaches with negligible probability:
// with n/d = 1/2 and k = 2^40 + 1 the probability is 1/(2k) ≈ 4.5e-13, so
// 100,000 trials must all be false unless the branch is wrong (a correct
// branch fails with probability < 1e-7). With k = 2 and d = 2^63 it must
// be n/(2d): n = 2^63 gives 1/2 (6σ binomial check, 200,000 trials).
func TestBernoulliOverKOverflow(t *testing.T) {
	src := SeededSource(3)
	const d = 1 << 63
	for range 100_000 {
		if bernoulliOverK(src, d/2, d, 1<<40+1) {
			t.Fatal("Bernoulli(1/(2k)) with k = 2^40+1 returned true")
		}
	}
	hits := 0
	const trials = 200_000
	for range trials {
		if bernoulliOverK(src, d, d, 2) {
			hits++
		}
	}
	checkProportion(t, "n/(d·2) with d=2^63", hits, trials, 0.5)
}

func TestBernoulliExpPanics(t *testing.T) {
	for _, gamma := range []*big.Rat{nil, big.NewRat(-1, 3)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("BernoulliExp(%v) did not panic", gamma)
				}
			}()
			BernoulliExp(SeededSource(1), gamma)
		}()
	}
}
