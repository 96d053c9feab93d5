package budget

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestExactDecimal(t *testing.T) {
	tests := []struct {
		name    string
		in      float64
		want    string // exact rational, written by hand
		wantErr bool
	}{
		{name: "tenth", in: 0.1, want: "1/10"},
		{name: "three tenths", in: 0.3, want: "3/10"},
		{name: "hundredth", in: 0.01, want: "1/100"},
		{name: "small delta", in: 1e-5, want: "1/100000"},
		{name: "integer", in: 2, want: "2"},
		{name: "zero", in: 0, want: "0"},
		{name: "negative zero", in: math.Copysign(0, -1), want: "0"},
		{name: "huge", in: 1e300, want: "1" + string(make300Zeros())},
		{name: "smallest subnormal", in: 5e-324, want: "5/1" + string(make324Zeros())},
		{name: "NaN", in: math.NaN(), wantErr: true},
		{name: "+Inf", in: math.Inf(1), wantErr: true},
		{name: "negative", in: -0.1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExactDecimal(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ExactDecimal(%v) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if want := rat(t, tt.want); got.Cmp(want) != 0 {
				t.Errorf("ExactDecimal(%v) = %v, want %v", tt.in, got, want)
			}
		})
	}
}

func make300Zeros() []byte { return zeros(300) }
func make324Zeros() []byte { return zeros(324) }
func zeros(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return b
}

// TestExactDecimalRoundTrips checks, on 20,000 random floats (fixed seed),
// that the decimal read of f rounds back to f and lies within half an ulp of
// f's exact binary value: the ledger charges what the float means.
func TestExactDecimalRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	half := big.NewRat(1, 2)
	for range 20000 {
		f := math.Float64frombits(rng.Uint64() &^ (1 << 63))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		d, err := ExactDecimal(f)
		if err != nil {
			t.Fatalf("ExactDecimal(%v): %v", f, err)
		}
		if back, _ := d.Float64(); back != f {
			t.Fatalf("ExactDecimal(%v) = %v rounds to %v", f, d, back)
		}
		bin := new(big.Rat).SetFloat64(f)
		ulp := new(big.Rat).SetFloat64(math.Nextafter(f, math.Inf(1)) - f)
		diff := new(big.Rat).Abs(new(big.Rat).Sub(d, bin))
		if diff.Cmp(new(big.Rat).Mul(ulp, half)) > 0 {
			t.Fatalf("ExactDecimal(%v) is %v away from the binary value, more than half an ulp", f, diff)
		}
	}
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad rational %q", s)
	}
	return r
}
