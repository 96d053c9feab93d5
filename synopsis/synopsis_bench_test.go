package synopsis

import (
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

func benchLayout(b *testing.B, n int64, theta int64) (*Layout, []int64) {
	l := mustLayout(b, Config{Mechanism: OrderedHierarchical, Lo: 0, Hi: n - 1, Theta: theta, Fanout: 16, RowsPerUnit: 1})
	r := rand.New(rand.NewPCG(1, 1))
	hist := l.Histogram()
	for range 5000 {
		hist[r.IntN(len(hist))]++
	}
	return l, hist
}

// BenchmarkNewLayout is the per-answer structure cost (runSynopsis builds
// the layout to report the raw estimator's variance).
func BenchmarkNewLayout(b *testing.B) {
	for _, n := range []int64{4357, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewLayout(Config{Mechanism: OrderedHierarchical, Lo: 0, Hi: n - 1, Theta: 1000, Fanout: 16, RowsPerUnit: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRelease is the one-time cost of releasing a synopsis (noise for
// every node, inference, encoding), crypto/rand as in production.
func BenchmarkRelease(b *testing.B) {
	for _, n := range []int64{4357, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			l, hist := benchLayout(b, n, 1000)
			src := noise.CryptoSource()
			b.ReportAllocs()
			for b.Loop() {
				s, err := l.Release(src, hist, 1)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.MarshalBinary(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAnswer is the per-answer cost after the release: decode the
// stored synopsis, count a range, compute the raw variance.
func BenchmarkAnswer(b *testing.B) {
	for _, n := range []int64{4357, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			l, hist := benchLayout(b, n, 1000)
			s, _ := l.Release(noise.CryptoSource(), hist, 1)
			data, _ := s.MarshalBinary()
			m := &Measurement{}
			m.ScaleS, m.ScaleH = mustScale(b, 2), mustScale(b, 5)
			b.ReportAllocs()
			for b.Loop() {
				var d Synopsis
				if err := d.UnmarshalBinary(data); err != nil {
					b.Fatal(err)
				}
				_ = d.Count(n/3, 2*n/3)
				lay, _ := d.Layout()
				_ = lay.RawVariance(int(n/3), int(2*n/3), m.ScaleS, m.ScaleH)
			}
		})
	}
}

// BenchmarkSplit is explain's cost (the ε split scans every prefix).
func BenchmarkSplit(b *testing.B) {
	l, _ := benchLayout(b, 100000, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := l.Split(0.5); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(n int64) string {
	if n >= 1000 && n%1000 == 0 {
		return string(rune('0'+n/100000%10)) + "e5"
	}
	b := []byte{}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
