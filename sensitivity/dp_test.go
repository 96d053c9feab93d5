package sensitivity_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sensitivity"
)

func TestValidation(t *testing.T) {
	const bad = sensitivity.Neighbors(7)
	tests := []struct {
		name    string
		call    func() (int64, error)
		wantErr error
	}{
		{name: "count k 0", call: func() (int64, error) { return sensitivity.Count(sensitivity.Unbounded, 0) }, wantErr: sensitivity.ErrInvalid},
		{name: "count negative k", call: func() (int64, error) { return sensitivity.Count(sensitivity.Bounded, -2) }, wantErr: sensitivity.ErrInvalid},
		{name: "count unknown relation", call: func() (int64, error) { return sensitivity.Count(bad, 1) }, wantErr: sensitivity.ErrInvalid},
		{name: "histogram k 0", call: func() (int64, error) { return sensitivity.Histogram(sensitivity.Bounded, 0) }, wantErr: sensitivity.ErrInvalid},
		{name: "histogram unknown relation", call: func() (int64, error) { return sensitivity.Histogram(bad, 1) }, wantErr: sensitivity.ErrInvalid},
		{name: "sum bounds reversed", call: func() (int64, error) { return sensitivity.Sum(sensitivity.Unbounded, 1, 5, 4) }, wantErr: sensitivity.ErrInvalid},
		{name: "sum k 0", call: func() (int64, error) { return sensitivity.Sum(sensitivity.Unbounded, 0, 0, 1) }, wantErr: sensitivity.ErrInvalid},
		{name: "grouped sum bounds reversed", call: func() (int64, error) { return sensitivity.GroupedSum(sensitivity.Bounded, 1, 0, -1) }, wantErr: sensitivity.ErrInvalid},
		{name: "grouped sum unknown relation", call: func() (int64, error) { return sensitivity.GroupedSum(bad, 1, 0, 1) }, wantErr: sensitivity.ErrInvalid},
		{name: "DP unknown kind", call: func() (int64, error) {
			return sensitivity.DP(sensitivity.Unbounded, 1, sensitivity.Aggregate{Kind: 0})
		}, wantErr: sensitivity.ErrInvalid},
		{name: "DP sum reversed", call: func() (int64, error) {
			return sensitivity.DP(sensitivity.Bounded, 1, sensitivity.Aggregate{Kind: sensitivity.KindSum, Lo: 1, Hi: 0})
		}, wantErr: sensitivity.ErrInvalid},
		// 2·MaxInt64 does not fit.
		{name: "histogram bounded huge k", call: func() (int64, error) { return sensitivity.Histogram(sensitivity.Bounded, math.MaxInt) }, wantErr: sensitivity.ErrOverflow},
		{name: "histogram unbounded huge k", call: func() (int64, error) { return sensitivity.Histogram(sensitivity.Unbounded, math.MaxInt) }},
		// |MinInt64| = 2^63 does not fit, even with k = 1.
		{name: "sum MinInt64", call: func() (int64, error) { return sensitivity.Sum(sensitivity.Unbounded, 1, math.MinInt64, 0) }, wantErr: sensitivity.ErrOverflow},
		{name: "sum MinInt64+1", call: func() (int64, error) { return sensitivity.Sum(sensitivity.Unbounded, 1, math.MinInt64+1, 0) }},
		// hi − lo wraps in int64 arithmetic; the width must not.
		{name: "bounded sum full range", call: func() (int64, error) {
			return sensitivity.Sum(sensitivity.Bounded, 1, math.MinInt64, math.MaxInt64)
		}, wantErr: sensitivity.ErrOverflow},
		{name: "bounded sum k overflow", call: func() (int64, error) { return sensitivity.Sum(sensitivity.Bounded, 3, 0, math.MaxInt64/2) }, wantErr: sensitivity.ErrOverflow},
		{name: "grouped sum 2^62 bounded", call: func() (int64, error) { return sensitivity.GroupedSum(sensitivity.Bounded, 1, 0, 1<<62) }, wantErr: sensitivity.ErrOverflow},
		{name: "grouped sum 2^62-1 bounded", call: func() (int64, error) { return sensitivity.GroupedSum(sensitivity.Bounded, 1, 0, 1<<62-1) }},
		{name: "grouped sum huge k", call: func() (int64, error) { return sensitivity.GroupedSum(sensitivity.Unbounded, math.MaxInt, 0, 2) }, wantErr: sensitivity.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call()
			if tt.wantErr == nil {
				if err != nil || got <= 0 {
					t.Fatalf("got %d, %v; want a positive sensitivity", got, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %d, %v; want %v", got, err, tt.wantErr)
			}
		})
	}
}

// TestSumFormulasExact compares the overflow-safe integer code with the
// formulas as DESIGN.md writes them, evaluated in math/big so that nothing
// can wrap: unbounded k·max(|lo|,|hi|), bounded k·max(hi−lo, |lo|, |hi|),
// grouped bounded 2k·max(|lo|,|hi|). Bounds near the int64 limits are
// included; a result above MaxInt64 must be ErrOverflow. 2000 random bound
// pairs (fixed seed) plus the edge cases.
func TestSumFormulasExact(t *testing.T) {
	edges := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 62, -3, -1, 0, 1, 7, 1 << 62, math.MaxInt64 - 1, math.MaxInt64}
	type bounds struct{ lo, hi int64 }
	var cases []bounds
	for _, a := range edges {
		for _, b := range edges {
			if a <= b {
				cases = append(cases, bounds{a, b})
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		a, b := int64(rng.Uint64()), int64(rng.Uint64())
		if rng.IntN(2) == 0 { // small bounds too, where nothing overflows
			a, b = a>>40, b>>40
		}
		cases = append(cases, bounds{min(a, b), max(a, b)})
	}
	bi := big.NewInt
	bigMax := func(xs ...*big.Int) *big.Int {
		m := xs[0]
		for _, x := range xs[1:] {
			if x.Cmp(m) > 0 {
				m = x
			}
		}
		return m
	}
	for _, c := range cases {
		for _, k := range []int{1, 2, 3, 1 << 20} {
			lo, hi := bi(c.lo), bi(c.hi)
			absLo, absHi := new(big.Int).Abs(lo), new(big.Int).Abs(hi)
			m := bigMax(absLo, absHi)
			w := bigMax(new(big.Int).Sub(hi, lo), absLo, absHi)
			bk := bi(int64(k))
			checks := []struct {
				name string
				got  func() (int64, error)
				want *big.Int
			}{
				{"sum unbounded", func() (int64, error) { return sensitivity.Sum(sensitivity.Unbounded, k, c.lo, c.hi) }, new(big.Int).Mul(bk, m)},
				{"sum bounded", func() (int64, error) { return sensitivity.Sum(sensitivity.Bounded, k, c.lo, c.hi) }, new(big.Int).Mul(bk, w)},
				{"grouped unbounded", func() (int64, error) { return sensitivity.GroupedSum(sensitivity.Unbounded, k, c.lo, c.hi) }, new(big.Int).Mul(bk, m)},
				{"grouped bounded", func() (int64, error) { return sensitivity.GroupedSum(sensitivity.Bounded, k, c.lo, c.hi) }, new(big.Int).Mul(bi(2*int64(k)), m)},
			}
			for _, ch := range checks {
				got, err := ch.got()
				if ch.want.IsInt64() {
					if err != nil || got != ch.want.Int64() {
						t.Fatalf("%s k=%d [%d, %d] = %d, %v; want %v", ch.name, k, c.lo, c.hi, got, err, ch.want)
					}
				} else if !errors.Is(err, sensitivity.ErrOverflow) {
					t.Fatalf("%s k=%d [%d, %d] = %d, %v; want ErrOverflow (exact %v)", ch.name, k, c.lo, c.hi, got, err, ch.want)
				}
			}
		}
	}
}

func TestParseNeighbors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    sensitivity.Neighbors
		wantErr bool
	}{
		{name: "unbounded", in: "unbounded", want: sensitivity.Unbounded},
		{name: "bounded", in: "bounded", want: sensitivity.Bounded},
		{name: "empty", in: "", wantErr: true},
		{name: "case", in: "Bounded", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sensitivity.ParseNeighbors(tt.in)
			if tt.wantErr {
				if !errors.Is(err, sensitivity.ErrInvalid) {
					t.Fatalf("got %v, %v; want ErrInvalid", got, err)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != tt.in {
				t.Fatalf("got %v (%q), %v; want %v", got, got.String(), err, tt.want)
			}
		})
	}
}
