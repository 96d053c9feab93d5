package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMIC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1000
	uniform := func() []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.Float64()
		}
		return v
	}
	x := uniform()
	apply := func(f func(float64) float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(x[i])
		}
		return v
	}
	tests := []struct {
		name   string
		y      []float64
		lo, hi float64
	}{
		// Noiseless functions: MIC is 1 (Reshef et al., Fig. 2).
		{"identity", apply(func(v float64) float64 { return v }), 0.99, 1},
		{"parabola", apply(func(v float64) float64 { return (v - 0.5) * (v - 0.5) }), 0.95, 1},
		{"sine", apply(func(v float64) float64 { return math.Sin(4 * math.Pi * v) }), 0.9, 1},
		// Independent: the finite-sample bias of MIC at n = 1000, α = 0.6
		// is about 0.1–0.15 (Reshef et al., SOM Fig. S1).
		{"independent", uniform(), 0, 0.2},
		// Half signal, half noise sits in between.
		{"noisy line", apply(func(v float64) float64 { return v + 0.3*r.NormFloat64() }), 0.2, 0.8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MIC(x, tc.y, MICOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if m < tc.lo || m > tc.hi {
				t.Errorf("MIC = %.3f, want in [%.2f, %.2f]", m, tc.lo, tc.hi)
			}
		})
	}
}

func TestMICSymmetricAndInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 500
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
		y[i] = x[i]*x[i] + 0.5*r.NormFloat64()
	}
	a, err := MIC(x, y, MICOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := MIC(y, x, MICOptions{})
	// MIC depends only on ranks: a monotone transform changes nothing.
	ex := make([]float64, n)
	for i := range x {
		ex[i] = math.Exp(x[i])
	}
	c, _ := MIC(ex, y, MICOptions{})
	if math.Abs(a-b) > 1e-12 || math.Abs(a-c) > 1e-12 {
		t.Errorf("MIC(x,y)=%v MIC(y,x)=%v MIC(exp x,y)=%v; want equal", a, b, c)
	}
}

func TestMICTiesAndErrors(t *testing.T) {
	// A constant variable carries no information.
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	y := []float64{3, 3, 3, 3, 3, 3, 3, 3}
	if m, err := MIC(x, y, MICOptions{}); err != nil || m != 0 {
		t.Errorf("constant y: MIC = %v, %v; want 0", m, err)
	}
	// Two tied clusters perfectly separated: MIC 1.
	x = []float64{0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1}
	y = []float64{5, 5, 5, 5, 9, 9, 9, 9, 5, 9, 5, 9}
	if m, err := MIC(x, y, MICOptions{}); err != nil || math.Abs(m-1) > 1e-12 {
		t.Errorf("separated clusters: MIC = %v, %v; want 1", m, err)
	}
	if _, err := MIC([]float64{1, 2}, []float64{1}, MICOptions{}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := MIC([]float64{1, 2, 3, math.NaN()}, []float64{1, 2, 3, 4}, MICOptions{}); err == nil {
		t.Error("NaN accepted")
	}
}

func TestMedian(t *testing.T) {
	in := []float64{5, 1, 3, 2}
	for _, c := range []struct {
		v    []float64
		want float64
	}{{[]float64{7}, 7}, {[]float64{3, 1, 2}, 2}, {in, 2.5}} {
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if in[0] != 5 || in[1] != 1 {
		t.Errorf("Median sorted its argument: %v", in)
	}
}
