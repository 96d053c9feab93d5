package noise

import (
	"math"
	"math/big"
	randv2 "math/rand/v2"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func pow2Rat(e int) *big.Rat {
	one := big.NewInt(1)
	if e >= 0 {
		return new(big.Rat).SetInt(new(big.Int).Lsh(one, uint(e)))
	}
	return new(big.Rat).SetFrac(one, new(big.Int).Lsh(one, uint(-e)))
}

func TestScaleFor(t *testing.T) {
	tests := []struct {
		name        string
		sensitivity *big.Rat
		epsilon     float64
		want        string // exact scale; "" when only the rounding bound is checked
		wantCode    *sqlerr.Code
	}{
		// 0.1 as a float64 is 3602879701896397/2^55, so 1/ε is just below
		// 10; rounding up to the dyadic grid lands exactly on 10.
		{name: "count eps 0.1", sensitivity: big.NewRat(1, 1), epsilon: 0.1, want: "10"},
		{name: "eps 2", sensitivity: big.NewRat(1, 1), epsilon: 2, want: "1/2"},
		{name: "rational sensitivity", sensitivity: big.NewRat(37, 10), epsilon: 1, want: "37/10"},
		{name: "histogram k=3 eps 0.5", sensitivity: big.NewRat(3, 1), epsilon: 0.5, want: "6"},
		{name: "eps 0.3 rounds up", sensitivity: big.NewRat(1, 1), epsilon: 0.3},
		{name: "eps 1e-9 rounds up", sensitivity: big.NewRat(7, 1), epsilon: 1e-9},
		{name: "largest allowed scale", sensitivity: pow2Rat(MaxScaleLog2), epsilon: 1, want: "9007199254740992"},
		{name: "zero sensitivity", sensitivity: new(big.Rat), epsilon: 0.5, want: "0"},
		{name: "scale too large", sensitivity: new(big.Rat).Add(pow2Rat(MaxScaleLog2), big.NewRat(1, 1)), epsilon: 1, wantCode: &sqlerr.InvalidParameterValue},
		{name: "tiny eps", sensitivity: big.NewRat(1, 1), epsilon: 1e-300, wantCode: &sqlerr.InvalidParameterValue},
		{name: "eps 0", sensitivity: big.NewRat(1, 1), epsilon: 0, wantCode: &sqlerr.InvalidParameterValue},
		{name: "eps negative", sensitivity: big.NewRat(1, 1), epsilon: -1, wantCode: &sqlerr.InvalidParameterValue},
		{name: "eps NaN", sensitivity: big.NewRat(1, 1), epsilon: math.NaN(), wantCode: &sqlerr.InvalidParameterValue},
		{name: "eps Inf", sensitivity: big.NewRat(1, 1), epsilon: math.Inf(1), wantCode: &sqlerr.InvalidParameterValue},
		{name: "negative sensitivity", sensitivity: big.NewRat(-1, 1), epsilon: 1, wantCode: &sqlerr.Internal},
		{name: "nil sensitivity", sensitivity: nil, epsilon: 1, wantCode: &sqlerr.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ScaleFor(tt.sensitivity, tt.epsilon)
			if tt.wantCode != nil {
				if !sqlerr.HasCode(err, *tt.wantCode) {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode.Name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			exact := new(big.Rat).Quo(tt.sensitivity, new(big.Rat).SetFloat64(tt.epsilon))
			if tt.want != "" {
				if got := s.String(); got != tt.want {
					t.Errorf("scale = %s, want %s", got, tt.want)
				}
			}
			checkRoundedUp(t, exact, s)
		})
	}
}

// checkRoundedUp asserts the representation rule of Scale: never below the
// exact scale, relative excess below 2^-30 (absolute 2^-62 for t < 2^-32),
// and uint64-friendly numerator and denominator.
func checkRoundedUp(t *testing.T, exact *big.Rat, s Scale) {
	t.Helper()
	got := s.Rat()
	if got.Cmp(exact) < 0 {
		t.Fatalf("scale %v is below the exact %v", got, exact.FloatString(20))
	}
	if exact.Sign() == 0 {
		if !s.IsZero() {
			t.Fatalf("zero scale represented as %v", s)
		}
		return
	}
	excess := new(big.Rat).Sub(got, exact)
	bound := new(big.Rat).Mul(exact, pow2Rat(-30))
	if exact.Cmp(pow2Rat(-32)) < 0 {
		bound = pow2Rat(-62)
	}
	if excess.Cmp(bound) > 0 {
		t.Fatalf("scale %v exceeds exact %v by %v, more than %v", got, exact.FloatString(20), excess.FloatString(30), bound.FloatString(30))
	}
	if exact.Num().IsUint64() && exact.Denom().IsUint64() && exact.Num().Uint64() < 1<<32 && exact.Denom().Uint64() < 1<<32 && excess.Sign() != 0 {
		t.Fatalf("small rational %v was rounded to %v", exact, got)
	}
	if s.num >= 1<<32 && s.den != 1 {
		t.Fatalf("scale %d/%d: large numerator with a denominator", s.num, s.den)
	}
	if s.den > 1<<62 || s.num > 1<<MaxScaleLog2 {
		t.Fatalf("scale %d/%d out of the uint64 sampling range", s.num, s.den)
	}
}

// TestScaleOfRandomRationals checks the rounding rule on 20,000 random
// rationals with numerators and denominators of 1 to 120 bits, keeping
// those in (0, 2^53].
func TestScaleOfRandomRationals(t *testing.T) {
	rng := randv2.New(randv2.NewPCG(1, 2))
	randInt := func() *big.Int {
		bits := 1 + rng.IntN(120)
		words := (bits + 31) / 32
		z := new(big.Int)
		for range words {
			z.Lsh(z, 32).Or(z, big.NewInt(int64(rng.Uint32())))
		}
		z.Rsh(z, uint(words*32-bits)) // keep the top `bits` bits
		return z.Add(z, big.NewInt(1))
	}
	limit := pow2Rat(MaxScaleLog2)
	checked := 0
	for range 20_000 {
		r := new(big.Rat).SetFrac(randInt(), randInt())
		if r.Cmp(limit) > 0 {
			continue
		}
		s, err := ScaleOf(r)
		if err != nil {
			t.Fatalf("ScaleOf(%v): %v", r, err)
		}
		checkRoundedUp(t, r, s)
		checked++
	}
	if checked < 5000 {
		t.Fatalf("only %d rationals in range", checked)
	}
}

func TestFloorLog2(t *testing.T) {
	big100 := new(big.Int).Lsh(big.NewInt(1), 100)
	tests := []struct {
		name string
		r    *big.Rat
		want int
	}{
		{"1", big.NewRat(1, 1), 0},
		{"3/2", big.NewRat(3, 2), 0},
		{"2", big.NewRat(2, 1), 1},
		{"7", big.NewRat(7, 1), 2},
		{"1/2", big.NewRat(1, 2), -1},
		{"3/4", big.NewRat(3, 4), -1},
		{"1/3", big.NewRat(1, 3), -2},
		{"2^100+1", new(big.Rat).SetInt(new(big.Int).Add(big100, big.NewInt(1))), 100},
		{"2^100-1", new(big.Rat).SetInt(new(big.Int).Sub(big100, big.NewInt(1))), 99},
		{"1/(2^100+1)", new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Add(big100, big.NewInt(1))), -101},
		{"1/2^100", new(big.Rat).SetFrac(big.NewInt(1), big100), -100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := floorLog2(tt.r); got != tt.want {
				t.Errorf("floorLog2(%v) = %d, want %d", tt.r, got, tt.want)
			}
		})
	}
}

// TestScaleFastPaths checks Float64, String and ScaleOfFrac, which avoid
// big.Rat, against the big.Rat computations they replace, on exact and
// rounded (dyadic) scales of every size.
func TestScaleFastPaths(t *testing.T) {
	rng := randv2.New(randv2.NewPCG(3, 4))
	checked := 0
	for range 20_000 {
		n := rng.Uint64() >> rng.IntN(64)
		d := max(rng.Uint64()>>rng.IntN(64), 1)
		r := new(big.Rat).SetFrac(new(big.Int).SetUint64(n), new(big.Int).SetUint64(d))
		want, wantErr := ScaleOf(r)
		got, err := ScaleOfFrac(n, d)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Fatalf("ScaleOfFrac(%d, %d) = %v, %v; ScaleOf = %v, %v", n, d, got, err, want, wantErr)
		}
		if err != nil {
			continue
		}
		if f, _ := want.Rat().Float64(); want.Float64() != f {
			t.Fatalf("%d/%d: Float64 %v, big.Rat %v", want.num, want.den, want.Float64(), f)
		}
		if s := want.Rat().RatString(); want.String() != s {
			t.Fatalf("%d/%d: String %q, big.Rat %q", want.num, want.den, want.String(), s)
		}
		checked++
	}
	if checked < 5000 {
		t.Fatalf("only %d scales in range", checked)
	}
	if _, err := ScaleOfFrac(1, 0); err == nil {
		t.Fatal("ScaleOfFrac(1, 0): no error")
	}
	if s := (Scale{}); s.String() != "0" || s.Float64() != 0 {
		t.Fatalf("zero scale: %q %v", s.String(), s.Float64())
	}
}
