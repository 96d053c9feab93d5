package aggregate

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestFormatNoise: each want is written by hand from x rounded to four
// significant digits (ties do not occur here), placed without an
// exponent from 1e-4 up to 1e15 and as %.4g writes it outside.
func TestFormatNoise(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    float64
		want string
	}{
		// The DBA's report: a sum's scale and interval, a count's scale.
		{"scale 1e+06", 1e6, "1000000"},
		{"interval 2.996e+06", 1e6 * math.Log(20), "2996000"},
		{"scale 3.333e+05", 1e6 / 3, "333300"},
		{"ten", 10, "10"},
		{"half", 0.5, "0.5"},
		{"small", 0.0001234, "0.0001234"},
		{"one", 1, "1"},
		{"four digits kept", 42.08369619795086, "42.08"},
		{"trailing zeros dropped", 100.04, "100"},
		{"integer", 2696, "2696"},
		{"first figure %.4g wrote with an exponent", 12346, "12350"},
		{"nine digits", 123456789, "123500000"},
		{"carry into a new digit", 9999.6, "10000"},
		{"thousandth", 0.001, "0.001"},
		{"negative", -1e6 * math.Log(20), "-2996000"},
		{"negative fraction", -0.5, "-0.5"},
		// Boundaries: 1e-4 and everything that rounds to it is plain,
		// below is not; 1e15 and everything that rounds to it is not.
		{"lower bound", 1e-4, "0.0001"},
		{"rounds up to the lower bound", 0.000099996, "0.0001"},
		{"below the lower bound", 0.00009999, "9.999e-05"},
		{"largest plain", 999_900_000_000_000, "999900000000000"},
		{"rounds down to the largest plain", 999_949_999_999_999, "999900000000000"},
		{"rounds up to the upper bound", 999_999_999_999_999, "1e+15"},
		{"upper bound", 1e15, "1e+15"},
		{"huge", 1.23456e20, "1.235e+20"},
		{"smallest subnormal", math.SmallestNonzeroFloat64, "4.941e-324"},
		{"largest", math.MaxFloat64, "1.798e+308"},
		// Zero either way is 0; what no release makes must not panic.
		{"zero", 0, "0"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"NaN", math.NaN(), "NaN"},
		{"+Inf", math.Inf(1), "+Inf"},
		{"-Inf", math.Inf(-1), "-Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatNoise(tc.x); got != tc.want {
				t.Errorf("FormatNoise(%v) = %q, want %q", tc.x, got, tc.want)
			}
			// Appended after what a notice already holds.
			if got := string(AppendNoise([]byte("±"), tc.x)); got != "±"+tc.want {
				t.Errorf("AppendNoise(±, %v) = %q, want %q", tc.x, got, "±"+tc.want)
			}
		})
	}
}

// TestFormatNoiseAgreesWithG: over 100,000 values spread across every
// exponent, the figure is the value %.4g writes (the same rounding), and
// it has an exponent exactly when that value lies outside [1e-4, 1e15).
// Deterministic: a fixed seed.
func TestFormatNoiseAgreesWithG(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		x := math.Pow(10, r.Float64()*40-20) * (1 + r.Float64())
		if r.IntN(4) == 0 {
			x = -x
		}
		got := FormatNoise(x)
		ref := strconv.FormatFloat(x, 'g', 4, 64)
		gv, err := strconv.ParseFloat(got, 64)
		rv, _ := strconv.ParseFloat(ref, 64)
		if err != nil || gv != rv {
			t.Fatalf("FormatNoise(%v) = %q, %%.4g = %q: not the same value", x, got, ref)
		}
		a := math.Abs(rv)
		if plain := a >= 1e-4 && a < 1e15; plain == strings.ContainsRune(got, 'e') {
			t.Fatalf("FormatNoise(%v) = %q: an exponent where the rounded value is %v", x, got, rv)
		}
	}
}

// The cost notice is built for every answer: appending a figure to a
// buffer with room allocates nothing.
func TestAppendNoiseAllocations(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendNoise(buf[:0], 1e6*math.Log(20)) }); n != 0 {
		t.Errorf("%v allocations per figure, want 0", n)
	}
}
