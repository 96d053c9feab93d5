package noise

import (
	"math/big"
	"testing"
)

// benchScales are the scales the benchmarks sample: a count at ε = 0.1
// (t = 10 after rounding), a dyadic-rounded rational from a non-round ε, and
// a lattice-unit scale of a real-valued SUM (an integer near 2^34).
func benchScales(b *testing.B) map[string]Scale {
	b.Helper()
	count, err := ScaleFor(big.NewRat(1, 1), 0.1)
	if err != nil {
		b.Fatal(err)
	}
	rational, err := ScaleFor(big.NewRat(1, 3), 0.0123456789)
	if err != nil {
		b.Fatal(err)
	}
	lat, err := LatticeFor(LatticeParams{Sensitivity: big.NewRat(1000, 1), ChangedRows: 1, Epsilon: 0.1, MaxAbs: 1000})
	if err != nil {
		b.Fatal(err)
	}
	return map[string]Scale{"t=10": count, "t=(1/3)/0.0123456789": rational, "lattice": lat.Scale}
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkDiscreteLaplace(b *testing.B) {
	for name, s := range benchScales(b) {
		b.Run("crypto/"+name, func(b *testing.B) {
			b.ReportAllocs()
			src := CryptoSource()
			for b.Loop() {
				DiscreteLaplace(src, s)
			}
			reportRate(b)
		})
		b.Run("seeded/"+name, func(b *testing.B) {
			b.ReportAllocs()
			src := SeededSource(1)
			for b.Loop() {
				DiscreteLaplace(src, s)
			}
			reportRate(b)
		})
	}
}

// BenchmarkDiscreteLaplaceParallel shares one CryptoSource between all
// goroutines, as a server would.
func BenchmarkDiscreteLaplaceParallel(b *testing.B) {
	s := benchScales(b)["t=10"]
	src := CryptoSource()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			DiscreteLaplace(src, s)
		}
	})
	reportRate(b)
}

func BenchmarkBernoulliExp(b *testing.B) {
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)
	gammas := map[string]*big.Rat{
		"7/3":           big.NewRat(7, 3),
		"0.3":           big.NewRat(3, 10),
		"(3e29+1)/1e30": new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Div(new(big.Int).Mul(huge, big.NewInt(3)), big.NewInt(10)), big.NewInt(1)), huge),
	}
	for name, g := range gammas {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			src := CryptoSource()
			for b.Loop() {
				BernoulliExp(src, g)
			}
			reportRate(b)
		})
	}
}
