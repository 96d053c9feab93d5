package quantile

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
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
// mechanism can return, each standing for a bin of values. Bins are
// numbered 0…Len()−1 in increasing order and cut at Cut(1) < … < Cut(m−1):
// bin j holds the values x with Cut(j) ≤ x < Cut(j+1), bin 0 everything
// below Cut(1) and bin m−1 everything from Cut(m−1) on. Since every cut
// lies inside the clamping bounds, placing the stored value or its clamp
// gives the same bin; the backend places rows by comparisons only
// (BinExpr), which cannot fail for any value.
type Grid struct {
	kind     gridKind
	lo, hi   int64 // integerGrid: the clamping bounds
	width    int64 // integerGrid: bin width (1: every integer is a candidate)
	rlo, rhi float64
	cuts     []float64 // realGrid: cuts[j−1] is the lower end of bin j
	values   []Value   // domainGrid: sorted, distinct
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
// bins cut at lo + j·(hi−lo)/MaxCandidates, computed once here in float64
// (the cuts are public constants; bins are defined by them, so the
// backend's comparisons and BinOf agree exactly). One candidate when
// lo = hi.
func RealGrid(lo, hi float64) (Grid, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
		return Grid{}, errors.New("quantile: real grid needs finite lo <= hi")
	}
	if lo == hi {
		return Grid{kind: realGrid, rlo: lo, rhi: hi, m: 1}, nil
	}
	m := MaxCandidates
	step := (hi - lo) / float64(m)
	cuts := make([]float64, m-1)
	for j := range cuts {
		// Monotone in j (rounding is monotone); a tie only leaves a bin
		// empty for every database.
		cuts[j] = min(lo+float64(j+1)*step, hi)
	}
	return Grid{kind: realGrid, rlo: lo, rhi: hi, cuts: cuts, m: m}, nil
}

// DomainGrid is the grid of a column with a declared numeric domain: the
// domain's values, sorted, each the lower end of its bin (a value between
// two of them belongs to the bin of the lower one, a value below the
// smallest to the first bin).
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

// String describes the grid exactly (it keys releases: two grids with
// the same string place every value alike).
func (g Grid) String() string {
	switch g.kind {
	case integerGrid:
		return fmt.Sprintf("int[%d,%d]/%d", g.lo, g.hi, g.width)
	case realGrid:
		return fmt.Sprintf("real[%x,%x]/%d", math.Float64bits(g.rlo), math.Float64bits(g.rhi), g.m)
	}
	var b strings.Builder
	b.WriteString("domain")
	for _, v := range g.values {
		if v.IsInt {
			fmt.Fprintf(&b, ",%d", v.Int)
		} else {
			fmt.Fprintf(&b, ",%x", math.Float64bits(v.Real))
		}
	}
	return b.String()
}

// Len is the number of candidates m.
func (g Grid) Len() int { return g.m }

// IsReal reports a grid of real values.
func (g Grid) IsReal() bool {
	return g.kind == realGrid || (g.kind == domainGrid && !g.values[0].IsInt)
}

// Cut returns the lower end of bin j, for 1 ≤ j < Len().
func (g Grid) Cut(j int) Value {
	switch g.kind {
	case integerGrid:
		return Value{IsInt: true, Int: int64(uint64(g.lo) + uint64(j)*uint64(g.width))}
	case realGrid:
		return Value{Real: g.cuts[j-1]}
	default:
		return g.values[j]
	}
}

// BinOf is the bin of a value: the number of cuts at or below it. It is
// the reference for the backend's bin expression.
func (g Grid) BinOf(x Value) int {
	return sort.Search(g.m-1, func(i int) bool { return x.less(g.Cut(i + 1)) })
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
		lower, upper := g.rlo, g.rhi
		if j > 0 {
			lower = g.cuts[j-1]
		}
		if j < g.m-1 {
			upper = g.cuts[j]
		}
		// Halves first: lower + upper could overflow near ±MaxFloat64.
		return Value{Real: lower/2 + upper/2}
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
