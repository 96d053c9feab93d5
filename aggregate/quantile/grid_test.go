package quantile

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIntegerGridShape: sizes and widths worked out by hand.
func TestIntegerGridShape(t *testing.T) {
	tests := []struct {
		lo, hi   int64
		m        int
		width    int64
		lastLast int64 // last integer of the last bin
	}{
		{0, 120, 121, 1, 120},
		{17, 17, 1, 1, 17},
		{0, 1023, 1024, 1, 1023},
		{0, 1024, 513, 2, 1024},       // 1025 values in bins of 2, the last holds one
		{-5000, 4999, 1000, 10, 4999}, // 10000 values: ⌈10000/1024⌉ = 10
		{math.MinInt64, math.MaxInt64, 1024, 1 << 54, math.MaxInt64},
	}
	for _, tt := range tests {
		g, err := IntegerGrid(tt.lo, tt.hi)
		if err != nil {
			t.Fatal(err)
		}
		if g.Len() != tt.m || g.width != tt.width {
			t.Errorf("[%d, %d]: m %d width %d, want %d and %d", tt.lo, tt.hi, g.Len(), g.width, tt.m, tt.width)
			continue
		}
		if g.Len() > 1 && g.Cut(1).Int != tt.lo+tt.width {
			t.Errorf("[%d, %d]: first cut %d, want %d", tt.lo, tt.hi, g.Cut(1).Int, tt.lo+tt.width)
		}
		if _, last := g.intBounds(g.Len() - 1); last != tt.lastLast {
			t.Errorf("[%d, %d]: last bin ends at %d, want %d", tt.lo, tt.hi, last, tt.lastLast)
		}
		if g.BinOf(Value{IsInt: true, Int: tt.lo}) != 0 || g.BinOf(Value{IsInt: true, Int: tt.hi}) != g.Len()-1 {
			t.Errorf("[%d, %d]: the bounds are not in the first and last bins", tt.lo, tt.hi)
		}
	}
	if _, err := IntegerGrid(2, 1); err == nil {
		t.Error("lo > hi accepted")
	}
}

// TestIntegerGridBins: for random ranges, the bins partition [lo, hi] in
// order, BinOf agrees with the bins, and the reported values lie in their
// bin (integers for percentile_disc/MIN/MAX, the exact midpoint for
// percentile_cont).
func TestIntegerGridBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		lo := rng.Int64N(20000) - 10000
		hi := lo + rng.Int64N(5000)
		g, _ := IntegerGrid(lo, hi)
		next := lo
		for j := range g.Len() {
			first, last := g.intBounds(j)
			if first != next || last < first || last > hi {
				t.Fatalf("[%d, %d] bin %d = [%d, %d], expected to start at %d", lo, hi, j, first, last, next)
			}
			next = last + 1
			for _, x := range []int64{first, last, (first + last) / 2} {
				if b := g.BinOf(Value{IsInt: true, Int: x}); b != j {
					t.Fatalf("[%d, %d]: BinOf(%d) = %d, want %d", lo, hi, x, b, j)
				}
			}
			v := g.Value(j, false)
			if !v.IsInt || v.Int < first || v.Int > last {
				t.Fatalf("[%d, %d] bin %d [%d, %d]: value %+v", lo, hi, j, first, last, v)
			}
			c := g.Value(j, true)
			if mid := float64(first+last) / 2; (c.IsInt && c.Int != first) || (!c.IsInt && c.Real != mid) {
				t.Fatalf("[%d, %d] bin %d [%d, %d]: interpolated value %+v, want %v", lo, hi, j, first, last, c, mid)
			}
		}
		if next != hi+1 {
			t.Fatalf("[%d, %d]: bins end at %d", lo, hi, next-1)
		}
	}
}

// TestRealGrid: the bounds fall in the first and last bins and each
// reported midpoint falls in its own bin, exactly; lo = hi has one
// candidate.
func TestRealGrid(t *testing.T) {
	for _, b := range [][2]float64{{0, 1}, {-3.5, 1e6}, {17, 90}, {-1e300, 1e300}, {0.1, 0.3}} {
		g, err := RealGrid(b[0], b[1])
		if err != nil {
			t.Fatal(err)
		}
		if g.Len() != MaxCandidates || !g.IsReal() {
			t.Fatalf("%v: %d candidates", b, g.Len())
		}
		if g.BinOf(Value{Real: b[0]}) != 0 || g.BinOf(Value{Real: b[1]}) != g.Len()-1 {
			t.Errorf("%v: bounds not in the end bins", b)
		}
		for j := range g.Len() {
			v := g.Value(j, false)
			if v.IsInt || v.Real < b[0] || v.Real > b[1] || g.BinOf(v) != j {
				t.Fatalf("%v: candidate %d reports %v (bin %d)", b, j, v.Real, g.BinOf(v))
			}
		}
	}
	g, _ := RealGrid(2.5, 2.5)
	if g.Len() != 1 || g.Value(0, true).Real != 2.5 {
		t.Error("degenerate real grid")
	}
	for _, b := range [][2]float64{{1, 0}, {math.NaN(), 1}, {0, math.Inf(1)}} {
		if _, err := RealGrid(b[0], b[1]); err == nil {
			t.Errorf("%v accepted", b)
		}
	}
}

func TestDomainGrid(t *testing.T) {
	iv := func(v int64) Value { return Value{IsInt: true, Int: v} }
	g, err := DomainGrid([]Value{iv(10), iv(1), iv(5), iv(2)})
	if err != nil {
		t.Fatal(err)
	}
	for x, want := range map[int64]int{1: 0, 2: 1, 3: 1, 4: 1, 5: 2, 9: 2, 10: 3} {
		if b := g.BinOf(iv(x)); b != want {
			t.Errorf("BinOf(%d) = %d, want %d", x, b, want)
		}
	}
	if v := g.Value(2, true); !v.IsInt || v.Int != 5 {
		t.Errorf("candidate 2 = %+v, want 5", v)
	}
	for name, vs := range map[string][]Value{
		"empty":    nil,
		"repeated": {iv(1), iv(1)},
		"mixed":    {iv(1), {Real: 2.5}},
	} {
		if _, err := DomainGrid(vs); err == nil {
			t.Errorf("%s domain accepted", name)
		}
	}
}
