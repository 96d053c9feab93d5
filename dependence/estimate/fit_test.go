package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func grid10() Grid { return Grid{Lo: []float64{0, 0}, Hi: []float64{10, 10}, Cells: []int{10, 10}} }

// conditionalSample draws n pairs: From uniform over the grid, To from the
// grid-normalised model (c = 0: independent of From).
func conditionalSample(r *rand.Rand, g Grid, b, c float64, n int) Sample {
	size := g.Size()
	cum := make([][]float64, size)
	for a := range size {
		cum[a] = make([]float64, size)
		s := 0.0
		for h := range size {
			s += math.Pow(g.Dist(a, h)+b, -c)
			cum[a][h] = s
		}
	}
	counts := map[[2]int]float64{}
	for range n {
		a := r.IntN(size)
		x := r.Float64() * cum[a][size-1]
		h := 0
		for cum[a][h] < x {
			h++
		}
		counts[[2]int{a, h}]++
	}
	s := Sample{Grid: g}
	for k, v := range counts {
		s.Pairs = append(s.Pairs, Pair{k[0], k[1], v})
	}
	return s
}

func TestFitConditionalRecoversParameters(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ b, c float64 }{{0.5, 2}, {2, 1.2}, {0.2, 3.5}} {
		s := conditionalSample(r, grid10(), tc.b, tc.c, 40000)
		f, err := FitConditional(s)
		if err != nil {
			t.Fatal(err)
		}
		// 40,000 pairs: the standard errors are a few percent; 15% is a
		// loose band that still fails for a wrong likelihood.
		if math.Abs(f.Model.B-tc.b)/tc.b > 0.15 || math.Abs(f.Model.C-tc.c)/tc.c > 0.1 {
			t.Errorf("true b=%v c=%v: fitted b=%.3f c=%.3f", tc.b, tc.c, f.Model.B, f.Model.C)
		}
		if f.LikelihoodRatio() < 100 {
			t.Errorf("true b=%v c=%v: likelihood ratio %.1f, want strong evidence of dependence", tc.b, tc.c, f.LikelihoodRatio())
		}
		// A is the normaliser of some cell: A·Σ_h (d+B)^−C = 1 for it, so
		// A lies between the smallest and largest per-cell normaliser.
		g := grid10()
		lo, hi := math.Inf(1), 0.0
		for a := range g.Size() {
			z := 0.0
			for h := range g.Size() {
				z += math.Pow(g.Dist(a, h)+f.Model.B, -f.Model.C)
			}
			lo, hi = min(lo, 1/z), max(hi, 1/z)
		}
		if f.Model.A < lo*(1-1e-9) || f.Model.A > hi*(1+1e-9) {
			t.Errorf("A = %v not a per-cell normaliser in [%v, %v]", f.Model.A, lo, hi)
		}
	}
}

func TestFitConditionalIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	s := conditionalSample(r, grid10(), 1, 0, 40000)
	f, err := FitConditional(s)
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.C > 0.05 {
		t.Errorf("independent pairs: fitted c = %.4f (b = %.3f), want ≈ 0", f.Model.C, f.Model.B)
	}
	// χ²(2) exceeds 13.8 with probability 0.001.
	if lr := f.LikelihoodRatio(); lr > 13.8 {
		t.Errorf("independent pairs: likelihood ratio %.2f", lr)
	}
}

// pairsSample places units in cells with the given weights and relates each
// unordered pair of units at distance d with probability p(d).
func pairsSample(r *rand.Rand, g Grid, nUnits int, weight func(cell int) float64, p func(d float64) float64) Sample {
	size := g.Size()
	cum := make([]float64, size)
	s := 0.0
	for c := range size {
		s += weight(c)
		cum[c] = s
	}
	cell := make([]int, nUnits)
	units := make([]float64, size)
	for i := range cell {
		x := r.Float64() * s
		c := 0
		for cum[c] < x {
			c++
		}
		cell[i] = c
		units[c]++
	}
	dist := make([][]float64, size)
	for a := range size {
		dist[a] = make([]float64, size)
		for b := range size {
			dist[a][b] = p(g.Dist(a, b))
		}
	}
	counts := map[[2]int]float64{}
	for i := range nUnits {
		for j := i + 1; j < nUnits; j++ {
			if r.Float64() < dist[cell[i]][cell[j]] {
				counts[[2]int{cell[i], cell[j]}]++
				counts[[2]int{cell[j], cell[i]}]++
			}
		}
	}
	out := Sample{Grid: g, Units: units}
	for k, v := range counts {
		out.Pairs = append(out.Pairs, Pair{k[0], k[1], v})
	}
	return out
}

func TestFitPairsRecoversParameters(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	g := Grid{Lo: []float64{0, 0}, Hi: []float64{8, 8}, Cells: []int{8, 8}}
	const a, b, c = 0.04, 1.0, 1.5
	s := pairsSample(r, g, 3000, func(int) float64 { return 1 }, func(d float64) float64 { return a * math.Pow(d+b, -c) })
	f, err := FitPairs(s)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Model.A-a)/a > 0.2 || math.Abs(f.Model.B-b)/b > 0.2 || math.Abs(f.Model.C-c)/c > 0.1 {
		t.Errorf("true a=%v b=%v c=%v: fitted %+v", a, b, c, f.Model)
	}
}

// Units crowd into one corner and relations ignore distance: the pair fit
// sees no dependence, the conditional fit sees the crowding as dependence
// (the documented, conservative bias).
func TestFitPairsSeparatesDensityFromDependence(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	g := Grid{Lo: []float64{0, 0}, Hi: []float64{8, 8}, Cells: []int{8, 8}}
	crowd := func(cell int) float64 {
		xy := g.Coords(cell)
		return math.Exp(-float64(xy[0]+xy[1]) / 1.5)
	}
	s := pairsSample(r, g, 2500, crowd, func(float64) float64 { return 0.004 })
	fp, err := FitPairs(s)
	if err != nil {
		t.Fatal(err)
	}
	if fp.Model.C > 0.1 || fp.LikelihoodRatio() > 13.8 {
		t.Errorf("pair fit under independence: c = %.3f, likelihood ratio %.2f; want ≈ 0", fp.Model.C, fp.LikelihoodRatio())
	}
	fc, err := FitConditional(s)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Model.C < 0.5 {
		t.Errorf("conditional fit on crowded units: c = %.3f, want the crowding to show as c > 0.5", fc.Model.C)
	}
}

func TestFitErrors(t *testing.T) {
	g := grid10()
	for name, s := range map[string]Sample{
		"no pairs":       {Grid: g},
		"outside":        {Grid: g, Pairs: []Pair{{0, 100, 1}}},
		"negative count": {Grid: g, Pairs: []Pair{{0, 1, -1}}},
		"bad grid":       {Grid: Grid{Lo: []float64{1}, Hi: []float64{0}, Cells: []int{3}}, Pairs: []Pair{{0, 1, 1}}},
		"huge grid":      {Grid: Grid{Lo: []float64{0, 0}, Hi: []float64{1, 1}, Cells: []int{100, 100}}, Pairs: []Pair{{0, 1, 1}}},
	} {
		if _, err := FitConditional(s); err == nil {
			t.Errorf("%s: FitConditional accepted it", name)
		}
	}
	if _, err := FitPairs(Sample{Grid: g, Pairs: []Pair{{0, 1, 1}}}); err == nil {
		t.Error("FitPairs without unit counts accepted")
	}
	units := make([]float64, 100)
	units[0], units[1] = 1, 1
	if _, err := FitPairs(Sample{Grid: g, Units: units, Pairs: []Pair{{0, 1, 5}}}); err == nil {
		t.Error("FitPairs with more related pairs than unit pairs accepted")
	}
}

func TestGrid(t *testing.T) {
	g := Grid{Lo: []float64{40, -74}, Hi: []float64{41, -73}, Cells: []int{4, 5}}
	c, ok := g.Cell([]float64{40.3, -73.1})
	if !ok || c != 1*5+4 {
		t.Errorf("Cell = %d, %v; want 9", c, ok)
	}
	if c, _ := g.Cell([]float64{50, -80}); c != 3*5+0 {
		t.Errorf("clamped Cell = %d; want 15", c)
	}
	if _, ok := g.Cell([]float64{math.NaN(), 0}); ok {
		t.Error("NaN has a cell")
	}
	if d := g.Dist(0, 19); math.Abs(d-(3*0.25+4*0.2)) > 1e-12 {
		t.Errorf("Dist = %v", d)
	}
	ctr := g.Center(9)
	if math.Abs(ctr[0]-40.375) > 1e-12 || math.Abs(ctr[1]-(-73.1)) > 1e-12 {
		t.Errorf("Center = %v", ctr)
	}
	// Class counts add up to the grid size from every cell.
	o := g.offsets()
	for a := range g.Size() {
		s := 0.0
		for _, m := range g.classCounts(o, a) {
			s += m
		}
		if s != float64(g.Size()) {
			t.Errorf("cell %d: class counts sum to %v", a, s)
		}
	}
}
