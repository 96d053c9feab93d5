package noise

import (
	"math/big"
	"testing"
)

// TestUniformChiSquareSmall: 700,000 draws of Uniform(7), chi-square over
// the 7 values (df 6), critical value at z = 5 (false rejection ≈ 3e-7 by
// Wilson–Hilferty; the approximation is coarse at df 6, which only makes
// the bound a little looser or tighter, not flaky at this margin).
func TestUniformChiSquareSmall(t *testing.T) {
	const n, draws = 7, 700_000
	src := SeededSource(11)
	observed := make([]int, n)
	for range draws {
		v := Uniform(src, n)
		if v >= n {
			t.Fatalf("Uniform(%d) = %d", n, v)
		}
		observed[v]++
	}
	expected := make([]float64, n)
	for i := range expected {
		expected[i] = draws / n
	}
	if stat, crit := chiSquare(observed, expected), chiSquareCritical(n-1, 5); stat > crit {
		t.Errorf("chi-square %v > %v", stat, crit)
	}
}

// TestUniformUnbiasedLargeN uses n = 3·2^62, where Uint64() % n would put
// probability 1/2 (not 1/3) on [0, 2^62). 300,000 draws split into the
// thirds [i·2^62, (i+1)·2^62) must each hold 1/3 within 6σ (false rejection
// 6e-9); the modulo bias would miss by about 350σ.
func TestUniformUnbiasedLargeN(t *testing.T) {
	const n = 3 << 62
	const draws = 300_000
	src := SeededSource(12)
	var thirds [3]int
	for range draws {
		v := Uniform(src, n)
		if v >= n {
			t.Fatalf("Uniform(3·2^62) = %d", v)
		}
		thirds[v>>62]++
	}
	for i, c := range thirds {
		checkProportion(t, "third "+string(rune('0'+i)), c, draws, 1.0/3)
	}
}

// TestUniformBig: n = 3·2^100 (split into thirds as above) and n = 10^30
// (split into tenths); 300,000 draws each, 6σ per cell (false rejection
// about 2e-8 in total). Also n = 1 must always give 0.
func TestUniformBig(t *testing.T) {
	const draws = 300_000
	tests := []struct {
		name  string
		n     *big.Int
		cells int64
	}{
		{"3·2^100", new(big.Int).Lsh(big.NewInt(3), 100), 3},
		{"10^30", new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil), 10},
		{"2^64+1", new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1)), 2},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := SeededSource(uint64(300 + i))
			counts := make([]int, tt.cells)
			cell := new(big.Int)
			for range draws {
				v := UniformBig(src, tt.n)
				if v.Sign() < 0 || v.Cmp(tt.n) >= 0 {
					t.Fatalf("UniformBig = %v out of range", v)
				}
				// cell = ⌊v·cells/n⌋
				cell.Mul(v, big.NewInt(tt.cells))
				cell.Quo(cell, tt.n)
				counts[cell.Int64()]++
			}
			for _, c := range counts {
				checkProportion(t, "cell", c, draws, 1/float64(tt.cells))
			}
		})
	}
	src := SeededSource(9)
	for range 1000 {
		if v := UniformBig(src, big.NewInt(1)); v.Sign() != 0 {
			t.Fatalf("UniformBig(1) = %v", v)
		}
	}
}

// TestBernoulliAndBit: 1,000,000 trials each, 6σ (false rejection 2e-9 each).
func TestBernoulliAndBit(t *testing.T) {
	const trials = 1_000_000
	src := SeededSource(13)
	hits, ones := 0, 0
	for range trials {
		if Bernoulli(src, 2, 7) {
			hits++
		}
		if Bit(src) {
			ones++
		}
	}
	checkProportion(t, "Bernoulli(2/7)", hits, trials, 2.0/7)
	checkProportion(t, "Bit", ones, trials, 0.5)
	for range 1000 {
		if Bernoulli(src, 0, 5) || !Bernoulli(src, 5, 5) {
			t.Fatal("Bernoulli(0/5) or Bernoulli(5/5) wrong")
		}
	}
}

func TestUniformPanics(t *testing.T) {
	cases := map[string]func(){
		"Uniform(0)":        func() { Uniform(SeededSource(1), 0) },
		"UniformBig(0)":     func() { UniformBig(SeededSource(1), big.NewInt(0)) },
		"UniformBig(-1)":    func() { UniformBig(SeededSource(1), big.NewInt(-1)) },
		"Bernoulli(3/2)":    func() { Bernoulli(SeededSource(1), 3, 2) },
		"Bernoulli(b == 0)": func() { Bernoulli(SeededSource(1), 0, 0) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		})
	}
}
