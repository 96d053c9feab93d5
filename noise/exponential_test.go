package noise

import (
	"math"
	"math/big"
	"testing"
)

// TestExponentialFrequencies draws 200,000 selections per utility vector
// (fixed seeds) and compares the counts with the exact probabilities
// exp(−a·d_j)/Σ exp(−a·d_i), computed here in float64 from the closed form
// (test side only), by a chi-square test at the Wilson–Hilferty z = 5
// quantile: a correct sampler fails each case with probability about
// 2.9e-7. The cases cover the 64-bit and
// the big.Int exponent paths, deficits beyond 64 bits, a vector with no
// zero deficit (still exact, only slower) and the zero (uniform) rate.
// ExponentialUint64 is checked the same way on the vectors that fit in 64
// bits (seven more tests at the same false-rejection probability; all fifteen
// together fail a correct sampler with probability below 4.4e-6).
func TestExponentialFrequencies(t *testing.T) {
	const draws = 200_000
	big2 := func(e uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), e) }
	ints := func(vs ...int64) []*big.Int {
		out := make([]*big.Int, len(vs))
		for i, v := range vs {
			out[i] = big.NewInt(v)
		}
		return out
	}
	tests := []struct {
		name     string
		rate     Rate
		deficits []*big.Int
		gammas   []float64 // a·d_j, for the reference probabilities
	}{
		{"a=1/2", Rate{1, 2}, ints(0, 1, 2), []float64{0, 0.5, 1}},
		{"ties", Rate{1, 1}, ints(0, 0, 5), []float64{0, 0, 5}},
		{"a=7/10", Rate{7, 10}, ints(3, 0, 1, 2), []float64{2.1, 0, 0.7, 1.4}},
		{"ten candidates", Rate{1, 3}, ints(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
			[]float64{0, 1.0 / 3, 2.0 / 3, 1, 4.0 / 3, 5.0 / 3, 2, 7.0 / 3, 8.0 / 3, 3}},
		{"no zero deficit", Rate{1, 1}, ints(3, 4, 5), []float64{3, 4, 5}},
		{"uniform", Rate{}, ints(0, 9, 100), []float64{0, 0, 0}},
		{
			// a = (2^33+1)/2^62: a·2^29 fits in 64 bits, a·2^31 does not
			// (big.Int path), 2^65 is not a uint64 at all.
			"wide", Rate{1<<33 + 1, 1 << 62},
			[]*big.Int{big.NewInt(0), big2(29), big2(31), big2(65)},
			[]float64{0, float64(1<<33+1) / (1 << 33), float64(1<<33+1) / (1 << 31), 8 * float64(1<<33+1)},
		},
		{
			// The same without 2^65: both variants, both exponent paths.
			"wide, 64-bit deficits", Rate{1<<33 + 1, 1 << 62},
			[]*big.Int{big.NewInt(0), big2(29), big2(31)},
			[]float64{0, float64(1<<33+1) / (1 << 33), float64(1<<33+1) / (1 << 31)},
		},
	}
	// The last γ of "wide" is (2^33+1)·2^65/2^62 = 8·(2^33+1): probability
	// zero to double precision; its expected count is below 1e-9, so it
	// is merged with its neighbour below to keep every cell ≥ 5.
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := SeededSource(uint64(900 + i))
			counts := make([]int, len(tt.deficits))
			for range draws {
				counts[Exponential(src, tt.rate, tt.deficits)]++
			}
			check(t, "Exponential", counts, tt.gammas)
			// The 64-bit variant, on the vectors that fit, with its own
			// seed: the same law.
			small := make([]uint64, len(tt.deficits))
			for j, d := range tt.deficits {
				if !d.IsUint64() {
					return
				}
				small[j] = d.Uint64()
			}
			src = SeededSource(uint64(1900 + i))
			counts = make([]int, len(tt.deficits))
			for range draws {
				counts[ExponentialUint64(src, tt.rate, small)]++
			}
			check(t, "ExponentialUint64", counts, tt.gammas)
		})
	}
}

// check is the chi-square comparison of TestExponentialFrequencies.
func check(t *testing.T, what string, counts []int, gammas []float64) {
	t.Helper()
	draws := 0
	for _, c := range counts {
		draws += c
	}
	var z float64
	for _, g := range gammas {
		z += math.Exp(-g)
	}
	var obs []int
	var exp []float64
	for j, g := range gammas {
		e := float64(draws) * math.Exp(-g) / z
		if e < 5 && len(exp) > 0 {
			// Pool a tiny cell into the previous one.
			obs[len(obs)-1] += counts[j]
			exp[len(exp)-1] += e
			continue
		}
		obs = append(obs, counts[j])
		exp = append(exp, e)
	}
	if len(exp) < 2 {
		t.Fatalf("degenerate case: %v", exp)
	}
	stat := chiSquare(obs, exp)
	if crit := chiSquareCritical(len(exp)-1, 5); stat > crit {
		t.Errorf("%s: chi-square %.2f > %.2f (df %d): counts %v, expected %v", what, stat, crit, len(exp)-1, obs, exp)
	}
}

// TestExponentialFarCandidateNeverChosen: a deficit of 2^65 at rate 1/2^62
// has probability exp(−8)/(1+exp(−8)) ≈ 3.4e-4 against a zero deficit, and
// one of 2^80 has exp(−2^18), which must never be chosen in 100,000 draws
// (a correct sampler fails with probability 0 to double precision); the
// exp(−8) candidate must be seen 34 ± 6σ times.
func TestExponentialFarCandidateNeverChosen(t *testing.T) {
	const draws = 100_000
	src := SeededSource(77)
	d := []*big.Int{big.NewInt(0), new(big.Int).Lsh(big.NewInt(1), 65), new(big.Int).Lsh(big.NewInt(1), 80)}
	counts := make([]int, 3)
	for range draws {
		counts[Exponential(src, Rate{1, 1 << 62}, d)]++
	}
	if counts[2] != 0 {
		t.Fatalf("candidate with deficit 2^80 chosen %d times", counts[2])
	}
	p := math.Exp(-8) / (1 + math.Exp(-8))
	checkProportion(t, "exp(-8) candidate", counts[1], draws, p)
}

func TestExponentialSingleCandidate(t *testing.T) {
	src := SeededSource(5)
	for range 1000 {
		if j := Exponential(src, Rate{3, 1}, []*big.Int{big.NewInt(7)}); j != 0 {
			t.Fatalf("one candidate: got %d", j)
		}
	}
}

func TestExponentialPanics(t *testing.T) {
	for name, d := range map[string][]*big.Int{
		"empty":    nil,
		"nil":      {big.NewInt(0), nil},
		"negative": {big.NewInt(0), big.NewInt(-1)},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Exponential did not panic", name)
				}
			}()
			Exponential(SeededSource(1), Rate{1, 1}, d)
		}()
	}
}

// TestRateForRoundsDown: the rate used never exceeds ε/(2Δu) (so the
// realised ε never exceeds the charge) and loses less than 2^-30 of it
// (relative) while the rate is at least 2^-32; small exact rates are kept
// exactly; absurd rates are capped at 2^62 (lower, so still safe).
func TestRateForRoundsDown(t *testing.T) {
	tests := []struct {
		eps   *big.Rat
		sens  *big.Rat
		exact bool // the rate is representable exactly
	}{
		{big.NewRat(1, 1), big.NewRat(1, 1), true},
		{big.NewRat(1, 2), big.NewRat(3, 1), true},
		{big.NewRat(1, 10), big.NewRat(1, 1), true},
		{new(big.Rat).SetFloat64(0.1), big.NewRat(7, 3), false},
		{big.NewRat(1, 1000), big.NewRat(1000, 1), true},
		{big.NewRat(5, 2), big.NewRat(1, 1000), true},
		{new(big.Rat).SetFloat64(1e-12), big.NewRat(1, 1), false},
		{new(big.Rat).SetFloat64(1e300), big.NewRat(1, 1), false},
	}
	for _, tt := range tests {
		r, err := RateFor(tt.sens, tt.eps)
		if err != nil {
			t.Fatalf("RateFor(%v, %v): %v", tt.sens, tt.eps, err)
		}
		want := new(big.Rat).Set(tt.eps)
		want.Quo(want, new(big.Rat).Mul(tt.sens, big.NewRat(2, 1)))
		got := r.Rat()
		if got.Cmp(want) > 0 {
			t.Errorf("eps %v sens %v: rate %v exceeds ε/(2Δ) = %v", tt.eps, tt.sens, got, want.FloatString(20))
		}
		if tt.exact && got.Cmp(want) != 0 {
			t.Errorf("eps %v sens %v: rate %v, want exactly %v", tt.eps, tt.sens, got, want)
		}
		capRat := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 62))
		if want.Cmp(capRat) > 0 {
			if got.Cmp(capRat) != 0 {
				t.Errorf("eps %v: rate %v, want the cap 2^62", tt.eps, got)
			}
			continue
		}
		if want.Cmp(new(big.Rat).SetFrac64(1, 1<<32)) >= 0 {
			// (want − got)/want < 2^-30
			loss := new(big.Rat).Sub(want, got)
			loss.Quo(loss, want)
			if loss.Cmp(new(big.Rat).SetFrac64(1, 1<<30)) >= 0 {
				t.Errorf("eps %v sens %v: relative loss %v ≥ 2^-30", tt.eps, tt.sens, loss.FloatString(15))
			}
		}
	}
	if _, err := RateFor(new(big.Rat), big.NewRat(1, 1)); err == nil {
		t.Error("zero sensitivity accepted")
	}
	for _, eps := range []*big.Rat{nil, new(big.Rat), big.NewRat(-1, 1)} {
		if _, err := RateFor(big.NewRat(1, 1), eps); err == nil {
			t.Errorf("epsilon %v accepted", eps)
		}
	}
}

// TestExponentialChiSquareHasPower guards the test above against being
// vacuous: 200,000 draws at rate 1/2 over deficits (0, 1, 2) are rejected
// when compared with the law at rate 0.6 (expected statistic about 700,
// critical value 16.6 for df 2).
func TestExponentialChiSquareHasPower(t *testing.T) {
	const draws = 200_000
	src := SeededSource(31)
	d := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2)}
	counts := make([]int, 3)
	for range draws {
		counts[Exponential(src, Rate{1, 2}, d)]++
	}
	z := 1 + math.Exp(-0.6) + math.Exp(-1.2)
	wrong := []float64{draws / z, draws * math.Exp(-0.6) / z, draws * math.Exp(-1.2) / z}
	if stat, crit := chiSquare(counts, wrong), chiSquareCritical(2, 5); stat <= crit {
		t.Errorf("rate 1/2 not told apart from rate 0.6: chi-square %.2f ≤ %.2f", stat, crit)
	}
}
