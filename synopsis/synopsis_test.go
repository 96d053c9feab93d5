package synopsis

import (
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

func TestCountClipsToDomain(t *testing.T) {
	s := &Synopsis{Mechanism: Ordered, Lo: 10, Theta: 1, RowsPerUnit: 1, cum: []int64{2, 2, 5, 9}} // values 10..13
	for _, c := range []struct{ a, b, want int64 }{
		{10, 13, 9}, {11, 12, 3}, {12, 12, 3}, {0, 10, 2}, {13, 100, 4}, {14, 20, 0}, {-5, 9, 0}, {12, 11, 0},
		{-1 << 63, 1<<63 - 1, 9},
	} {
		if got := s.Count(c.a, c.b); got != c.want {
			t.Errorf("Count(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	l := mustLayout(t, Config{Mechanism: OrderedHierarchical, Lo: -50, Hi: 4356, Theta: 100, Fanout: 16, RowsPerUnit: 1})
	hist := l.Histogram()
	for range 300 { // sparse, like Adult capital-loss
		hist[r.IntN(len(hist))] += int64(r.IntN(100))
	}
	syn, err := l.Release(noise.SeededSource(1), hist, 1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := syn.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d values encode in %d bytes", syn.Size(), len(data))
	if len(data) > 4*syn.Size() {
		t.Errorf("encoding is not compact: %d bytes for %d values", len(data), syn.Size())
	}
	var back Synopsis
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if back.Mechanism != syn.Mechanism || back.Lo != syn.Lo || back.Theta != syn.Theta || back.Fanout != syn.Fanout ||
		back.Epsilon != syn.Epsilon || back.EpsilonS != syn.EpsilonS || back.ScaleH != syn.ScaleH || back.Size() != syn.Size() {
		t.Fatalf("header changed: %+v vs %+v", back, syn)
	}
	for i := range syn.cum {
		if back.cum[i] != syn.cum[i] {
			t.Fatalf("cumulative count %d: %d, want %d", i, back.cum[i], syn.cum[i])
		}
	}
	// Every truncation and many single-byte corruptions must fail cleanly
	// or decode to a well-formed synopsis (never panic).
	for n := range len(data) {
		var s Synopsis
		if err := s.UnmarshalBinary(data[:n]); err == nil && n < len(data) && s.Size() == syn.Size() {
			// A truncation inside the run-length tail can only succeed if it
			// still has all N counts, which it cannot.
			t.Fatalf("truncation to %d bytes decoded", n)
		}
	}
	for i := range 2000 {
		c := append([]byte(nil), data...)
		c[r.IntN(len(c))] ^= byte(1 + i%255)
		var s Synopsis
		if err := s.UnmarshalBinary(c); err == nil {
			for j := 1; j < s.Size(); j++ {
				if s.cum[j] < s.cum[j-1] {
					t.Fatal("decoded a non-monotone synopsis")
				}
			}
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	l, _ := NewLayout(Config{Mechanism: Ordered, Lo: 0, Hi: 9, Theta: 1, RowsPerUnit: 1})
	syn, _ := l.Release(noise.SeededSource(1), l.Histogram(), 1)
	data, _ := syn.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Synopsis
		if s.UnmarshalBinary(b) == nil {
			if _, err := s.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
			_ = s.Count(s.Lo, s.Hi())
		}
	})
}
