package quantile

import (
	"errors"
	"math"
	"math/big"
	"sort"
)

// MaxCandidates bounds the candidates of one quantile: an integer range of
// at most this many values has every integer as a candidate; a wider range
// or a real one is cut into at most this many equal-width bins. 1024 keeps
// one value step below 0.1% of the range while the rank error grows only
// with ln m (ln 1024 ≈ 6.9 rows per unit of 2Δu/ε), and the exponential
// mechanism's expected work (≤ m rounds per group) small.
const MaxCandidates = 1024

// MaxDomainCandidates bounds a declared domain used as the candidate set:
// the backend places a row by one comparison per domain value.
const MaxDomainCandidates = 64

type gridKind uint8

const (
	integerGrid gridKind = iota // integers of [lo, hi] in bins of width ≥ 1
	realGrid                    // [rlo, rhi] in m equal-width bins
	domainGrid                  // the sorted values of a declared domain
)

// Value is a candidate's reported value: an integer (also days or
// microseconds of a date or time column) when IsInt, else a real.
type Value struct {
	IsInt bool
	Int   int64
	Real  float64
}

// Grid is the candidate set of a quantile over one column: the values the
// mechanism can return, each standing for a bin of clamped values. Bins are
// numbered 0…Len()−1 in increasing order; BinOf is the reference placement
// of a clamped value the backend's bin expression must compute.
type Grid struct {
	kind     gridKind
	lo, hi   int64 // integerGrid: the clamping bounds
	width    int64 // integerGrid: bin width (1: every integer is a candidate)
	rlo, rhi float64
	values   []Value // domainGrid: sorted, distinct
	m        int
}

// IntegerGrid is the grid of an integer (or date, or timestamp) column
// clamped to [lo, hi]: every integer when there are at most MaxCandidates,
// else bins of the integer width w = ⌈(hi−lo+1)/MaxCandidates⌉, bin j
// holding [lo + j·w, lo + (j+1)·w − 1] (the last one cut at hi).
func IntegerGrid(lo, hi int64) (Grid, error) {
	if lo > hi {
		return Grid{}, errors.New("quantile: integer grid with lo > hi")
	}
	// hi − lo ≤ 2^64 − 1 is exact in uint64 arithmetic.
	spanMinus1 := uint64(hi) - uint64(lo)
	w := spanMinus1/MaxCandidates + 1 // ⌈(span)/MaxCandidates⌉, < 2^55
	return Grid{kind: integerGrid, lo: lo, hi: hi, width: int64(w), m: int(spanMinus1/w) + 1}, nil
}

// RealGrid is the grid of a real column clamped to [lo, hi]: MaxCandidates
// bins of width (hi−lo)/MaxCandidates (one candidate when lo = hi).
func RealGrid(lo, hi float64) (Grid, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
		return Grid{}, errors.New("quantile: real grid needs finite lo <= hi")
	}
	m := MaxCandidates
	if lo == hi {
		m = 1
	}
	return Grid{kind: realGrid, rlo: lo, rhi: hi, m: m}, nil
}

// DomainGrid is the grid of a column with a declared numeric domain: the
// domain's values, sorted. A clamped value between two of them belongs to
// the bin of the lower one (the clamp keeps every value at or above the
// smallest).
func DomainGrid(values []Value) (Grid, error) {
	if len(values) == 0 || len(values) > MaxDomainCandidates {
		return Grid{}, errors.New("quantile: domain grid needs 1 to MaxDomainCandidates values")
	}
	vs := append([]Value(nil), values...)
	for _, v := range vs[1:] {
		if v.IsInt != vs[0].IsInt {
			return Grid{}, errors.New("quantile: domain grid mixes integers and reals")
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].less(vs[j]) })
	for i := 1; i < len(vs); i++ {
		if !vs[i-1].less(vs[i]) {
			return Grid{}, errors.New("quantile: domain grid with a repeated value")
		}
	}
	return Grid{kind: domainGrid, values: vs, m: len(vs)}, nil
}

func (v Value) less(o Value) bool {
	if v.IsInt {
		return v.Int < o.Int
	}
	return v.Real < o.Real
}

// Len is the number of candidates m.
func (g Grid) Len() int { return g.m }

// IsReal reports a grid of real values.
func (g Grid) IsReal() bool {
	return g.kind == realGrid || (g.kind == domainGrid && !g.values[0].IsInt)
}

// IntBin returns the bin width w of an integer grid (1 when every integer
// is a candidate) and the first integer lo: the bin of a clamped value x is
// (x − lo) / w in integer division.
func (g Grid) IntBin() (lo, width int64, ok bool) {
	return g.lo, g.width, g.kind == integerGrid
}

// RealBin returns the bounds of a real grid: bin j holds
// [lo + j·(hi−lo)/m, lo + (j+1)·(hi−lo)/m), the last bin closed at hi.
func (g Grid) RealBin() (lo, hi float64, ok bool) {
	return g.rlo, g.rhi, g.kind == realGrid
}

// Domain returns the sorted candidate values of a domain grid.
func (g Grid) Domain() ([]Value, bool) {
	return append([]Value(nil), g.values...), g.kind == domainGrid
}

// BinOf is the reference placement of a value already clamped to the
// grid's range (for a real grid computed in exact rational arithmetic; the
// backend's double arithmetic may place a value lying on a bin boundary in
// a neighbouring bin, which changes no privacy argument: every row still
// lands in exactly one bin).
func (g Grid) BinOf(x Value) int {
	switch g.kind {
	case integerGrid:
		return int((uint64(x.Int) - uint64(g.lo)) / uint64(g.width))
	case realGrid:
		if g.m == 1 {
			return 0
		}
		// ⌊(x − lo)·m / (hi − lo)⌋ exactly, capped at m − 1 (x = hi).
		num := new(big.Rat).Sub(new(big.Rat).SetFloat64(x.Real), new(big.Rat).SetFloat64(g.rlo))
		num.Mul(num, big.NewRat(int64(g.m), 1))
		num.Quo(num, new(big.Rat).Sub(new(big.Rat).SetFloat64(g.rhi), new(big.Rat).SetFloat64(g.rlo)))
		j := new(big.Int).Quo(num.Num(), num.Denom()).Int64()
		return int(min(max(j, 0), int64(g.m-1)))
	default:
		// The last value ≤ x.
		j := sort.Search(g.m, func(i int) bool { return x.less(g.values[i]) }) - 1
		return max(j, 0)
	}
}

// Value is the value reported for candidate j. interpolate asks for the
// midpoint of an integer bin as a real (percentile_cont over an integer
// column); otherwise an integer grid reports an integer of the bin (its
// lower middle), which a date or time column reads as a day or an instant,
// so percentile_disc, MIN and MAX return a value of the column's type. A
// real bin reports its midpoint, a domain grid the domain value.
func (g Grid) Value(j int, interpolate bool) Value {
	switch g.kind {
	case integerGrid:
		first, last := g.intBounds(j)
		if interpolate && first != last {
			// (first + last)/2 without overflow, rounded to nearest.
			mid, _ := new(big.Rat).SetFrac(new(big.Int).Add(big.NewInt(first), big.NewInt(last)), big.NewInt(2)).Float64()
			return Value{Real: mid}
		}
		return Value{IsInt: true, Int: first + int64((uint64(last)-uint64(first))/2)}
	case realGrid:
		if g.m == 1 {
			return Value{Real: g.rlo}
		}
		step := (g.rhi - g.rlo) / float64(g.m)
		mid := g.rlo + (float64(j)+0.5)*step
		return Value{Real: min(max(mid, g.rlo), g.rhi)}
	default:
		return g.values[j]
	}
}

// intBounds returns the first and last integer of bin j of an integer grid.
func (g Grid) intBounds(j int) (first, last int64) {
	off := uint64(j) * uint64(g.width) // ≤ hi − lo
	first = int64(uint64(g.lo) + off)
	if rest := uint64(g.hi) - uint64(first); rest >= uint64(g.width)-1 {
		last = int64(uint64(first) + uint64(g.width) - 1)
	} else {
		last = g.hi
	}
	return first, last
}
