package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestConditionalAndMaxTV(t *testing.T) {
	g := Grid{Lo: []float64{0, 0}, Hi: []float64{5, 4}, Cells: []int{5, 4}}
	r := rand.New(rand.NewPCG(1, 1))
	w := make([]float64, g.Size())
	for i := range w {
		w[i] = float64(r.IntN(20))
	}
	for _, m := range []Model{{A: 1, B: 0.5, C: 2}, {A: 1, B: 1, C: 0}} {
		for _, weights := range [][]float64{nil, w} {
			c := Conditional(g, m, weights)
			for a := range c {
				s := 0.0
				for b := range c[a] {
					s += c[a][b]
					want := math.Pow(g.Dist(a, b)+m.B, -m.C) / math.Pow(g.Dist(a, 0)+m.B, -m.C) * c[a][0]
					if weights != nil {
						want *= (weights[b] + 0.5) / (weights[0] + 0.5)
					}
					if math.Abs(c[a][b]-want) > 1e-12 {
						t.Fatalf("P(%d|%d) = %v, want %v", b, a, c[a][b], want)
					}
				}
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("row %d sums to %v", a, s)
				}
			}
			tv := MaxTotalVariation(c)
			// c = 0 and no weights: every row is uniform.
			if m.C == 0 && weights == nil && tv > 1e-12 {
				t.Errorf("independent model: max TV %v", tv)
			}
			if m.C > 0 && !(tv > 0.3 && tv <= 1) {
				t.Errorf("dependent model: max TV %v", tv)
			}
		}
	}
	// Two point masses are at total variation 1; identical rows at 0.
	if v := MaxTotalVariation([][]float64{{1, 0}, {0, 1}}); v != 1 {
		t.Errorf("TV of disjoint rows = %v", v)
	}
	if v := MaxTotalVariation([][]float64{{0.3, 0.7}, {0.3, 0.7}}); v != 0 {
		t.Errorf("TV of equal rows = %v", v)
	}
}

// MaxTotalVariation against the proxy's any-query ρ: its limit for large σ
// and an upper bound up to (e^x − 1)/x.
func TestMaxTVMatchesAnyQuery(t *testing.T) {
	g := Grid{Lo: []float64{0, 0}, Hi: []float64{5, 4}, Cells: []int{5, 4}}
	for _, m := range []Model{{A: 1, B: 0.5, C: 2}, {A: 1, B: 2, C: 0.7}, {A: 1, B: 0.1, C: 4}} {
		coef, err := FriendDistance(g, m, []string{"x", "y"}).Prepare()
		if err != nil {
			t.Fatal(err)
		}
		tv := MaxTotalVariation(Conditional(g, m, nil))
		for _, x := range []float64{1e-4, 0.1, 1, 3} {
			rho, err := coef.AnyQuery(coef.DeltaD() / x)
			if err != nil {
				t.Fatal(err)
			}
			if bound := tv * math.Expm1(x) / x; rho > bound*(1+1e-9) {
				t.Errorf("%+v x=%v: any-query ρ %v above TV·(e^x−1)/x = %v", m, x, rho, bound)
			}
			if x == 1e-4 && math.Abs(rho-tv) > 1e-3 {
				t.Errorf("%+v: any-query ρ %v at small x, max TV %v", m, rho, tv)
			}
		}
	}
}
