package dependence

import (
	"math"
	"math/rand/v2"
	"testing"
)

func line(vals ...float64) []Axis { return []Axis{{Column: "x", Values: vals}} }

// Two grid points {0, 1}: both methods by hand.
func TestRhoTwoPointsByHand(t *testing.T) {
	const b, c = 0.5, 2.0
	m := FriendDistance{A: 1, B: b, C: c, Axes: line(0, 1)}
	// P(same point) = b^−c / (b^−c + (1+b)^−c).
	p := math.Pow(b, -c) / (math.Pow(b, -c) + math.Pow(1+b, -c))
	for _, sigma := range []float64{0.1, 0.5, 1, 3, 20} {
		e := math.Exp(-1 / sigma)
		// Exact: the ratio is constant for t ≤ 0 (and t ≥ 1) and monotone
		// in between, so it is N(0,0)/N(1,0).
		wantExact := sigma * math.Log((p+(1-p)*e)/((1-p)+p*e))
		// Eq. 18: d_i = 0 and anchor d* = 1: p·e^(1/σ) + (1−p).
		wantEq18 := sigma * math.Log(p/e+(1-p))
		gotExact, err := RhoExact(m, sigma)
		if err != nil {
			t.Fatal(err)
		}
		gotEq18, err := RhoEq18(m, sigma)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(gotExact-wantExact) > 1e-12 || math.Abs(gotEq18-wantEq18) > 1e-12 {
			t.Errorf("σ=%v: exact %v want %v, eq18 %v want %v", sigma, gotExact, wantExact, gotEq18, wantEq18)
		}
	}
}

// Independence (c = 0): Eq. 14 gives 0, Eq. 18 does not (DESIGN.md: it is
// ≥ 0.5 on a uniform grid for large σ).
func TestRhoIndependence(t *testing.T) {
	m := FriendDistance{A: 0.3, B: 1, C: 0, Axes: []Axis{{"x", []float64{0, 1, 2, 5}}, {"y", []float64{-1, 3}}}}
	for _, sigma := range []float64{0.01, 0.3, 1, 10, 1000} {
		ex, err := RhoExact(m, sigma)
		if err != nil {
			t.Fatal(err)
		}
		if ex != 0 {
			t.Errorf("σ=%v: exact ρ of an independent model = %v, want 0", sigma, ex)
		}
	}
	r, err := RhoEq18(m, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if r < 0.5 {
		t.Errorf("eq18 of an independent model at large σ = %v, want ≥ 0.5 (the paper's looseness)", r)
	}
}

func randomModel(r *rand.Rand) FriendDistance {
	m := FriendDistance{A: 0.001 + r.Float64(), B: 0.05 + 2*r.Float64(), C: 4 * r.Float64()}
	if r.IntN(5) == 0 {
		m.C = 0
	}
	for range 1 + r.IntN(2) {
		n := 1 + r.IntN(5)
		vals := make([]float64, n)
		v := 10 * (r.Float64() - 0.5)
		for k := range vals {
			vals[k] = v
			v += 0.1 + 3*r.Float64()
		}
		m.Axes = append(m.Axes, Axis{Values: vals})
	}
	return m
}

// Property: 0 ≤ exact ≤ eq18 ≤ 1 for every model and σ; exact is 0 for
// independence.
func TestRhoExactBelowEq18(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 400 {
		m := randomModel(r)
		sigma := math.Exp(6 * (r.Float64() - 0.4))
		c, err := m.Prepare()
		if err != nil {
			t.Fatal(err)
		}
		ex, err := c.Exact(sigma)
		if err != nil {
			t.Fatal(err)
		}
		e18, err := c.Eq18(sigma)
		if err != nil {
			t.Fatal(err)
		}
		if ex < 0 || e18 > 1 || ex > e18+1e-12 {
			t.Fatalf("case %d %+v σ=%v: exact %v eq18 %v", n, m, sigma, ex, e18)
		}
		if m.C == 0 && ex != 0 {
			t.Fatalf("case %d: independent model has exact ρ %v", n, ex)
		}
	}
}

// Exact against Eq. 14 evaluated directly (no separable transform) at
// random outputs t, also far beyond the domain: no t exceeds the computed
// ρ, and the grid outputs reach it.
func TestRhoExactIsTheSupremum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 60 {
		m := randomModel(r)
		sigma := math.Exp(4 * (r.Float64() - 0.5))
		c, err := m.Prepare()
		if err != nil {
			t.Fatal(err)
		}
		rho, err := c.Exact(sigma)
		if err != nil {
			t.Fatal(err)
		}
		logRatio := func(tt []float64) float64 {
			hi, lo := 0.0, math.Inf(1)
			for i := range c.points {
				var s float64
				for x, dx := range c.points {
					s += c.cond[i][x] * math.Exp(-l1(tt, dx)/sigma)
				}
				hi, lo = max(hi, s), min(lo, s)
			}
			return math.Log(hi) - math.Log(lo)
		}
		bound := rho * c.deltaD / sigma
		for range 200 {
			tt := make([]float64, len(c.axes))
			for a, vals := range c.axes {
				span := vals[len(vals)-1] - vals[0] + 1
				tt[a] = vals[0] - 2*span + 5*span*r.Float64()
			}
			if got := logRatio(tt); got > bound*(1+1e-9)+1e-12 {
				t.Fatalf("case %d: output %v has log ratio %v > ρ·ΔD/σ = %v", n, tt, got, bound)
			}
		}
		best := 0.0
		for _, tt := range c.points {
			best = max(best, logRatio(tt))
		}
		if c.deltaD > 0 && math.Abs(best-bound) > 1e-9*(1+bound) {
			t.Fatalf("case %d: max over grid outputs %v, ρ·ΔD/σ %v", n, best, bound)
		}
	}
}

func TestRhoInvalid(t *testing.T) {
	for name, m := range map[string]FriendDistance{
		"no axes":  {A: 1, B: 1, C: 1},
		"b zero":   {A: 1, B: 0, C: 1, Axes: line(0, 1)},
		"unsorted": {A: 1, B: 1, C: 1, Axes: line(1, 0)},
		"a nan":    {A: math.NaN(), B: 1, C: 1, Axes: line(0, 1)},
		"too big":  {A: 1, B: 1, C: 1, Axes: []Axis{{"x", make([]float64, 40)}, {"y", make([]float64, 40)}}},
	} {
		if _, err := RhoExact(m, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := RhoEq18(FriendDistance{A: 1, B: 1, C: 1, Axes: line(0, 1)}, 0); err == nil {
		t.Error("σ = 0 accepted")
	}
}

// lossOfCount is the exact privacy loss of releasing COUNT(x ≤ cut) over a
// unit i and one dependent j with Laplace noise b: sup over outputs t and
// values d1, d2 of D_i of log P(t | d1)/P(t | d2), D_j ~ P(·|D_i), by a
// dense scan of t (the density is piecewise exponential between the four
// breakpoints, so the scan's resolution bounds the error).
func lossOfCount(c *Coefficients, cut, b float64) float64 {
	g := func(x float64) float64 {
		if x <= cut {
			return 1
		}
		return 0
	}
	worst := 0.0
	for ti := -4000; ti <= 4000; ti++ {
		t := float64(ti) / 200
		hi, lo := 0.0, math.Inf(1)
		for i, di := range c.points {
			var s float64
			for x, dx := range c.points {
				s += c.cond[i][x] * math.Exp(-math.Abs(t-g(di[0])-g(dx[0]))/b)
			}
			hi, lo = max(hi, s), min(lo, s)
		}
		worst = max(worst, math.Log(hi/lo))
	}
	return worst
}

// Eq. 14 (the attribute's own ρ) is not enough for a COUNT with a predicate
// on the attribute: with the paper's multiplier the loss exceeds ε. The
// any-query ρ keeps it within ε. Grid 0..9, b = 0.5, c = 2, one dependent,
// ε = 1, ΔQ = 1 (a value change moves one row in or out).
func TestEq14IsNotEnoughForCounts(t *testing.T) {
	vals := make([]float64, 10)
	for i := range vals {
		vals[i] = float64(i)
	}
	m := FriendDistance{A: 1, B: 0.5, C: 2, Axes: line(vals...)}
	c, err := m.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	const eps = 1.0
	solve := func(rho func(float64) (float64, error)) float64 {
		mm, err := SolveMultiplier(func(x float64) (float64, error) {
			r, err := rho(c.DeltaD() * x / eps)
			return 1 + r, err
		}, 2)
		if err != nil {
			t.Fatal(err)
		}
		return mm.M
	}
	mExact, mAny := solve(c.Exact), solve(c.AnyQuery)
	if loss := lossOfCount(c, 4, mExact/eps); loss <= eps*1.01 {
		t.Errorf("expected the paper's Eq. 14 multiplier %v to overspend on COUNT(x ≤ 4), loss %v", mExact, loss)
	}
	for cut := -1.0; cut <= 9; cut++ {
		if loss := lossOfCount(c, cut, mAny/eps); loss > eps*(1+1e-6) {
			t.Errorf("any-query multiplier %v: COUNT(x ≤ %v) loss %v > ε", mAny, cut, loss)
		}
	}
}

// Property: Exact ≤ AnyQuery ≤ 1, AnyQuery is 0 for independence, and the
// total-variation fallback is never below the exact maximisation.
func TestAnyQueryBoundsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 300 {
		m := randomModel(r)
		sigma := math.Exp(6 * (r.Float64() - 0.4))
		c, err := m.Prepare()
		if err != nil {
			t.Fatal(err)
		}
		ex, _ := c.Exact(sigma)
		an, err := c.AnyQuery(sigma)
		if err != nil {
			t.Fatal(err)
		}
		if an < ex-1e-12 || an > 1 || (m.C == 0 && an != 0) {
			t.Fatalf("case %d %+v σ=%v: exact %v any %v", n, m, sigma, ex, an)
		}
		// The TV bound on the same model.
		tv := &Coefficients{cond: c.cond, deltaD: c.deltaD, independent: c.independent}
		for i := range tv.cond {
			for j := range tv.cond {
				var s float64
				for x := range tv.cond[i] {
					s += max(tv.cond[i][x]-tv.cond[j][x], 0)
				}
				tv.tvMax = max(tv.tvMax, s)
			}
		}
		tv.anyOnce.Do(func() {})
		tb, _ := tv.AnyQuery(sigma)
		if tb < an-1e-12 {
			t.Fatalf("case %d: TV bound %v below exact any-query %v", n, tb, an)
		}
	}
}

// For two grid points every query is the identity up to scale, so the
// any-query ρ equals Eq. 14.
func TestAnyQueryTwoPoints(t *testing.T) {
	m := FriendDistance{A: 1, B: 0.5, C: 2, Axes: line(0, 1)}
	c, _ := m.Prepare()
	for _, s := range []float64{0.2, 1, 5} {
		ex, _ := c.Exact(s)
		an, _ := c.AnyQuery(s)
		if math.Abs(ex-an) > 1e-12 {
			t.Errorf("σ=%v: exact %v any %v", s, ex, an)
		}
	}
}

// countLoss is the exact privacy loss of COUNT(x ≤ cut) over unit i and
// deg dependents, conditionally independent given D_i, with Laplace noise
// b: the output density given D_i = d is Σ_s P(S = s | d)·e^(−|t−s|/b)/2b,
// where S is i's own indicator plus the dependents' (a binomial-like
// convolution). Between consecutive integers (and beyond the extremes)
// every ratio of two such densities is monotone (constant in the tails),
// so the supremum over t is attained at an integer t in [0, deg+1].
func countLoss(c *Coefficients, cut float64, deg int, b float64) float64 {
	g := len(c.points)
	dist := make([][]float64, g)
	for i, di := range c.points {
		var q float64 // P(X_j ≤ cut | D_i = di)
		for x, dx := range c.points {
			if dx[0] <= cut {
				q += c.cond[i][x]
			}
		}
		d := []float64{1}
		if di[0] <= cut {
			d = []float64{0, 1}
		}
		for range deg {
			nx := make([]float64, len(d)+1)
			for s, v := range d {
				nx[s] += v * (1 - q)
				nx[s+1] += v * q
			}
			d = nx
		}
		dist[i] = d
	}
	worst := 0.0
	for t := 0; t <= deg+1; t++ {
		hi, lo := 0.0, math.Inf(1)
		for i := range dist {
			var f float64
			for s, v := range dist[i] {
				f += v * math.Exp(-math.Abs(float64(t-s))/b)
			}
			hi, lo = max(hi, f), min(lo, f)
		}
		worst = max(worst, math.Log(hi/lo))
	}
	return worst
}

// With several dependents the proxy's multiplier (ModelSolver: AnyQuery,
// or max with Eq. 18) keeps every COUNT(x ≤ cut) within ε, computed
// exactly; ΔQ = 1, noise b = m/ε.
func TestModelSolverBoundsCountLoss(t *testing.T) {
	vals := make([]float64, 8)
	for i := range vals {
		vals[i] = float64(i)
	}
	for _, model := range []FriendDistance{
		{A: 1, B: 0.5, C: 2, Axes: line(vals...)},
		{A: 1, B: 0.2, C: 4, Axes: line(vals...)},
		{A: 1, B: 2, C: 1, Axes: line(vals...)},
	} {
		c, err := model.Prepare()
		if err != nil {
			t.Fatal(err)
		}
		for _, deg := range []int{1, 2, 4} {
			for _, method := range []string{MethodExact, MethodEq18} {
				s, err := NewModelSolver(c, method, deg)
				if err != nil {
					t.Fatal(err)
				}
				for _, eps := range []float64{0.3, 1, 3} {
					m, err := s.Multiplier(eps)
					if err != nil {
						t.Fatal(err)
					}
					for cut := -1.0; cut < 8; cut++ {
						if loss := countLoss(c, cut, deg, m.M/eps); loss > eps*(1+1e-9) {
							t.Errorf("%+v deg %d %s ε %v: m %v, COUNT(x ≤ %v) loss %v > ε", model, deg, method, eps, m.M, cut, loss)
						}
					}
				}
			}
		}
	}
}
