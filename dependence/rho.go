package dependence

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Methods of computing a model-based dependence coefficient ρ.
const (
	// MethodEq18 is liu2016 Eq. 18: a closed-form upper bound of Eq. 14,
	// loose (it is ≥ 0.5 for independent tuples on a uniform grid when σ is
	// large) but conservative.
	MethodEq18 = "eq18"
	// MethodExact is Eq. 14 itself, computed exactly over the grid and
	// every noisy output (tails beyond the domain included).
	MethodExact = "exact"
)

// MaxGridPoints caps the number of points of a model's attribute grid. The
// exact method costs O(G²·Σ n_a) per σ and the fixed point evaluates it a
// few dozen times per ε, so larger grids would make the first query at a
// new ε slow; coarsen the grid instead (a coarser grid of the same extent
// is still a valid model of the attribute).
const MaxGridPoints = policies.MaxGridPoints

// maxScaledDiameter bounds ΔD/σ for the numeric evaluation: beyond it the
// kernel e^(−‖t−x‖/σ) underflows, and ρ is returned as its upper bound 1
// (never low). It is only reached for ε/m > 300.
const maxScaledDiameter = 300

// Axis is the grid of one attribute of the friend-distance model: the
// values the attribute can take (in the attribute's own units, the same
// units as b), sorted and distinct. The model's domain is the product of
// its axes.
type Axis struct {
	Column string
	Values []float64
}

// FriendDistance is the friend-distance model of liu2016 Eq. 26 (from
// Backstrom et al.): the probability that tuple j's attribute vector is d_j
// when a related tuple i's is d_i is a·(‖d_i − d_j‖₁ + b)^−c, normalised over
// the declared grid (so a cancels; it is kept so that fitted parameters can
// be written as published). c = 0 is independence.
type FriendDistance struct {
	A, B, C float64
	Axes    []Axis
}

// Validate reports a model the ρ methods cannot use.
func (m FriendDistance) Validate() error {
	var errs []error
	if !(m.A > 0) || math.IsInf(m.A, 0) {
		errs = append(errs, fmt.Errorf("a must be a finite number > 0, got %v", m.A))
	}
	if !(m.B > 0) || math.IsInf(m.B, 0) {
		errs = append(errs, fmt.Errorf("b must be a finite number > 0, got %v", m.B))
	}
	if !(m.C >= 0) || math.IsInf(m.C, 0) {
		errs = append(errs, fmt.Errorf("c must be a finite number ≥ 0 (0 = independence), got %v", m.C))
	}
	if len(m.Axes) == 0 {
		errs = append(errs, errors.New("the model needs at least one attribute axis"))
	}
	points := 1
	for _, a := range m.Axes {
		if len(a.Values) == 0 {
			errs = append(errs, fmt.Errorf("axis %s has no values", a.Column))
			continue
		}
		for k, v := range a.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				errs = append(errs, fmt.Errorf("axis %s: value %v is not finite", a.Column, v))
				break
			}
			if k > 0 && !(v > a.Values[k-1]) {
				errs = append(errs, fmt.Errorf("axis %s: values must be sorted and distinct (%v after %v)", a.Column, v, a.Values[k-1]))
				break
			}
		}
		if points <= MaxGridPoints {
			points *= len(a.Values)
		}
	}
	if points > MaxGridPoints {
		errs = append(errs, fmt.Errorf("the grid has more than %d points; coarsen it", MaxGridPoints))
	}
	return errors.Join(errs...)
}

// DeltaD is ΔD_j of Eq. 13–14: the largest L1 change of one tuple's
// attribute vector, the L1 diameter of the grid.
func (m FriendDistance) DeltaD() float64 {
	var d float64
	for _, a := range m.Axes {
		if len(a.Values) > 0 {
			d += a.Values[len(a.Values)-1] - a.Values[0]
		}
	}
	return d
}

// Coefficients is a model prepared for repeated ρ evaluations at different
// σ: the conditional distribution P(d_j | d_i) as a G×G matrix over the
// grid. It is read-only after Prepare and safe for concurrent use.
type Coefficients struct {
	axes   [][]float64 // per-axis values
	points [][]float64 // grid points in row-major order (last axis fastest)
	cond   [][]float64 // cond[i][x] = P(d_j = points[x] | d_i = points[i])
	deltaD float64
	// independent is set when every row of cond is the same: D_j's
	// distribution does not depend on D_i and Eq. 14 is 0 at every σ.
	independent bool

	anyOnce sync.Once
	pairs   []pairPrefix // per unordered pair d1 < d2 (small grids)
	tvMax   float64      // max total variation between rows (large grids)
}

// pairPrefix holds, for one pair of rows (P1, P2), the cumulative masses
// of both along the order of decreasing likelihood ratio P1/P2.
type pairPrefix struct {
	cum1, cum2 []float64
	tv         float64 // total variation between the two rows
}

// Prepare validates m and tabulates its conditional distribution.
func (m FriendDistance) Prepare() (*Coefficients, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	axes := make([][]float64, len(m.Axes))
	for k, a := range m.Axes {
		axes[k] = slices.Clone(a.Values)
	}
	pts := gridPoints(axes)
	c := &Coefficients{axes: axes, points: pts, deltaD: m.DeltaD()}
	c.cond = make([][]float64, len(pts))
	for i, di := range pts {
		row := make([]float64, len(pts))
		lrow := make([]float64, len(pts))
		// Normalise in the log domain: a·(dist+b)^−c can be tiny for large c.
		maxL := math.Inf(-1)
		for x, dx := range pts {
			lrow[x] = math.Log(m.A) - m.C*math.Log(l1(di, dx)+m.B)
			maxL = max(maxL, lrow[x])
		}
		var z float64
		for x := range lrow {
			z += math.Exp(lrow[x] - maxL)
		}
		lz := maxL + math.Log(z)
		for x := range lrow {
			lrow[x] -= lz
			row[x] = math.Exp(lrow[x])
		}
		c.cond[i] = row
	}
	c.independent = true
	for _, row := range c.cond[1:] {
		c.independent = c.independent && slices.Equal(row, c.cond[0])
	}
	return c, nil
}

// DeltaD is the model's ΔD (see FriendDistance.DeltaD).
func (c *Coefficients) DeltaD() float64 { return c.deltaD }

// Rho computes ρ(σ) by method (MethodEq18 or MethodExact).
func (c *Coefficients) Rho(method string, sigma float64) (float64, error) {
	switch method {
	case MethodEq18:
		return c.Eq18(sigma)
	case MethodExact:
		return c.Exact(sigma)
	}
	return 0, fmt.Errorf("unknown rho method %q; use %s or %s", method, MethodEq18, MethodExact)
}

func checkSigma(sigma float64) error {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return fmt.Errorf("noise scale σ must be a finite number > 0, got %v", sigma)
	}
	return nil
}

// Eq18 is liu2016 Eq. 18 read as a guaranteed upper bound of Eq. 14:
//
//	ρ = σ/ΔD · max_{d_i} max_{d*} log Σ_{d_j} P(d_j|d_i) e^(‖d_j − d*‖₁/σ)
//
// where d* ranges over the vertices of the grid's bounding box. Why this is
// ≥ Eq. 14: the denominator N(d_i2, t) of Eq. 14 is at least e^(−‖t−x*‖/σ)
// for the grid point x* farthest from t, so the ratio is at most
// Σ P(d_j|d_i1) e^((‖t−x*‖−‖t−d_j‖)/σ) ≤ Σ P(d_j|d_i1) e^(‖d_j−x*‖/σ) by the
// triangle inequality; that sum is convex in x*, so its maximum over the
// box (which contains x*) is at a vertex. The paper's d_j* ("argmax ‖d_j −
// d_j1‖") is this worst-case anchor. The result is in [0, 1].
func (c *Coefficients) Eq18(sigma float64) (float64, error) {
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	if c.deltaD == 0 {
		return 0, nil // one grid point: nothing can change
	}
	if c.deltaD/sigma > maxScaledDiameter {
		return 1, nil
	}
	// e^(‖x−v‖₁/σ) = Π_a e^(|x_a−v_a|/σ): per axis, the factor for each
	// value and each end of the axis (the box's corners take one end per
	// axis). ΔD/σ ≤ maxScaledDiameter keeps the products finite.
	type ends struct{ lo, hi []float64 }
	fac := make([]ends, len(c.axes))
	for a, vals := range c.axes {
		f := ends{lo: make([]float64, len(vals)), hi: make([]float64, len(vals))}
		for i, v := range vals {
			f.lo[i] = math.Exp((v - vals[0]) / sigma)
			f.hi[i] = math.Exp((vals[len(vals)-1] - v) / sigma)
		}
		fac[a] = f
	}
	g := len(c.points)
	idx := c.axisIndex()
	w := make([]float64, g)
	best := 0.0
	for corner := range 1 << len(c.axes) {
		for x := range w {
			p := 1.0
			for a := range c.axes {
				if corner>>a&1 == 0 {
					p *= fac[a].lo[idx[x][a]]
				} else {
					p *= fac[a].hi[idx[x][a]]
				}
			}
			w[x] = p
		}
		for i := range c.points {
			var sum float64
			for x, px := range c.cond[i] {
				sum += px * w[x]
			}
			best = max(best, sum)
		}
	}
	best = math.Log(best)
	return clampUnit(best * sigma / c.deltaD), nil
}

// Exact is liu2016 Eq. 14 itself:
//
//	ρ·ΔD/σ = log sup_{d_i1, d_i2, t} N(d_i1, t) / N(d_i2, t),
//	N(d, t) = Σ_{d_j} P(d_j|d) e^(−‖t − d_j‖₁/σ)
//
// over every noisy output t ∈ ℝ^k, which decouples as
// sup_t [max_d N(d,t) / min_d N(d,t)]. The sup over t is a max over the
// product of the axes' values: between two consecutive values of one axis
// (and beyond the extreme ones, the tails) N(d, t) is A_d·e^(−t_a/σ) +
// B_d·e^(t_a/σ) in that coordinate, so any ratio of two of them is monotone
// there (in the tails it is constant) and moving t_a to an end of its
// interval never lowers it. Outputs on the integer lattice (the discrete
// Laplace the proxy uses) are a subset of ℝ^k, so this ρ covers them too.
// The result is 0 for independence and in [0, 1].
func (c *Coefficients) Exact(sigma float64) (float64, error) {
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	if c.deltaD == 0 || c.independent {
		return 0, nil
	}
	if c.deltaD/sigma > maxScaledDiameter {
		return 1, nil
	}
	kernels := make([][][]float64, len(c.axes))
	for a, vals := range c.axes {
		kernels[a] = make([][]float64, len(vals))
		for t, vt := range vals {
			kernels[a][t] = make([]float64, len(vals))
			for x, vx := range vals {
				kernels[a][t][x] = math.Exp(-math.Abs(vt-vx) / sigma)
			}
		}
	}
	g := len(c.points)
	hi := make([]float64, g) // max_d N(d, t) per output t
	lo := make([]float64, g) // min_d N(d, t)
	for t := range lo {
		lo[t] = math.Inf(1)
	}
	buf, tmp := make([]float64, g), make([]float64, g)
	for i := range c.points {
		copy(buf, c.cond[i])
		for a := range c.axes {
			applyAxis(buf, tmp, c.axes, a, kernels[a])
		}
		for t, n := range buf {
			hi[t] = max(hi[t], n)
			lo[t] = min(lo[t], n)
		}
	}
	var best float64
	for t := range hi {
		best = max(best, math.Log(hi[t])-math.Log(lo[t]))
	}
	return clampUnit(best * sigma / c.deltaD), nil
}

// RhoEq18 is ρ of model m at noise scale σ by Eq. 18 (see Coefficients.Eq18).
// Prepare the model once when evaluating many σ.
func RhoEq18(m FriendDistance, sigma float64) (float64, error) {
	c, err := m.Prepare()
	if err != nil {
		return 0, err
	}
	return c.Eq18(sigma)
}

// RhoExact is ρ of model m at noise scale σ by Eq. 14 (see
// Coefficients.Exact). It is 0 for an independent model (c = 0) and never
// above RhoEq18.
func RhoExact(m FriendDistance, sigma float64) (float64, error) {
	c, err := m.Prepare()
	if err != nil {
		return 0, err
	}
	return c.Exact(sigma)
}

// applyAxis replaces buf (a row-major array over the product grid) by its
// product with kernel along axis a: buf'[..t..] = Σ_x kernel[t][x]·buf[..x..].
func applyAxis(buf, tmp []float64, axes [][]float64, a int, kernel [][]float64) {
	n := len(axes[a])
	stride := 1
	for b := a + 1; b < len(axes); b++ {
		stride *= len(axes[b])
	}
	block := n * stride
	copy(tmp, buf)
	for base := 0; base < len(buf); base += block {
		for off := 0; off < stride; off++ {
			for t := 0; t < n; t++ {
				var s float64
				kt := kernel[t]
				for x := 0; x < n; x++ {
					s += kt[x] * tmp[base+x*stride+off]
				}
				buf[base+t*stride+off] = s
			}
		}
	}
}

// gridPoints is the product of the axes in row-major order.
func gridPoints(axes [][]float64) [][]float64 {
	pts := [][]float64{{}}
	for _, vals := range axes {
		next := make([][]float64, 0, len(pts)*len(vals))
		for _, p := range pts {
			for _, v := range vals {
				next = append(next, append(slices.Clone(p), v))
			}
		}
		pts = next
	}
	return pts
}

func l1(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += math.Abs(a[k] - b[k])
	}
	return s
}

// clampUnit removes rounding excursions outside [0, 1] (ρ ∈ [0, 1] is
// proved in liu2016 Eq. 15–16; rounding up to 1 is the safe side).
func clampUnit(r float64) float64 {
	if math.IsNaN(r) || r > 1 {
		return 1
	}
	return max(r, 0)
}

// maxExactAnyPoints is the largest grid for which AnyQuery maximises over
// every output set exactly (it keeps O(G³) prefix sums); larger grids use
// the total-variation bound, which is never lower.
const maxExactAnyPoints = 128

// AnyQuery is the dependence coefficient that holds for every additive
// query (COUNT, SUM, histograms, any predicate), not only for releasing the
// attribute itself. Eq. 14 bounds the dependent term for the identity
// query, whose per-tuple output is the attribute vector with noise e^(−‖t −
// d_j‖₁/σ); a COUNT with a predicate on the attribute maps d_j to 0 or 1
// and can reveal more (a witness, TestEq14IsNotEnoughForCounts: grid
// 0..9, b = 0.5, c = 2, one friend, ε = 1: the paper's m = 1 + ρ_exact
// gives a COUNT(x ≤ 4) a privacy loss of 1.022 > ε). For any query whose
// per-unit output has L1 diameter ΔQ and noise scale b, the dependent
// ratio is E_P1[w]/E_P2[w] with weights w(d_j) in [w₀, w₀·e^(ΔQ/b)] (the
// noise density is log-Lipschitz), a linear-fractional function maximised
// at a vertex, i.e. a set S of attribute values:
//
//	ρ = (σ/ΔD)·max_{d_i1,d_i2} max_S log (1 + (E−1)·P1(S)) / (1 + (E−1)·P2(S)),
//
// E = e^(ΔD/σ) (ΔQ/b = ΔD/σ at the proxy's σ = ΔD·m/ε). The best S is a
// super-level set of P1/P2, so prefixes of that order suffice. The
// identity query is one such query, so AnyQuery ≥ Exact; it is 0 for
// independence and in [0, 1]. Dependents combine (telescoping one
// dependent at a time, conditionally independent given D_i as in the
// paper) because each step again averages a log-(1/b)-Lipschitz weight.
// Grids above maxExactAnyPoints use (1 + (E−1)·TV) with TV the largest
// total variation between two rows, an upper bound of the same ratio.
func (c *Coefficients) AnyQuery(sigma float64) (float64, error) {
	if err := checkSigma(sigma); err != nil {
		return 0, err
	}
	if c.deltaD == 0 || c.independent {
		return 0, nil
	}
	if c.deltaD/sigma > maxScaledDiameter {
		return 1, nil
	}
	c.anyOnce.Do(c.prepareAny)
	a := math.Expm1(c.deltaD / sigma)
	best := 1.0
	if c.pairs == nil {
		best = 1 + a*c.tvMax
	}
	for _, pp := range c.pairs {
		// Pairs are sorted by decreasing total variation, and no set gains
		// more than 1 + (E−1)·TV on a pair: stop once that cannot win.
		if 1+a*pp.tv*(1+1e-12) <= best {
			break
		}
		for k := range pp.cum1 {
			c1, c2 := pp.cum1[k], pp.cum2[k]
			best = max(best, (1+a*c1)/(1+a*c2), (1+a*(1-c2))/(1+a*(1-c1)))
		}
	}
	return clampUnit(math.Log(best) * sigma / c.deltaD), nil
}

func (c *Coefficients) prepareAny() {
	g := len(c.cond)
	if g > maxExactAnyPoints {
		for i := range g {
			for j := i + 1; j < g; j++ {
				var tv float64
				for x := range g {
					tv += max(c.cond[i][x]-c.cond[j][x], 0)
				}
				c.tvMax = max(c.tvMax, tv)
			}
		}
		c.tvMax = min(1, c.tvMax*(1+1e-12))
		return
	}
	order := make([]int, g)
	c.pairs = make([]pairPrefix, 0, g*(g-1)/2)
	for i := range g {
		for j := i + 1; j < g; j++ {
			p1, p2 := c.cond[i], c.cond[j]
			for x := range order {
				order[x] = x
			}
			// Decreasing P1/P2, compared as cross products (no division).
			sort.Slice(order, func(u, v int) bool {
				x, y := order[u], order[v]
				return p1[x]*p2[y] > p1[y]*p2[x]
			})
			pp := pairPrefix{cum1: make([]float64, g+1), cum2: make([]float64, g+1)}
			for k, x := range order {
				pp.cum1[k+1] = pp.cum1[k] + p1[x]
				pp.cum2[k+1] = pp.cum2[k] + p2[x]
				pp.tv += max(p1[x]-p2[x], 0)
			}
			c.pairs = append(c.pairs, pp)
		}
	}
	sort.Slice(c.pairs, func(i, j int) bool { return c.pairs[i].tv > c.pairs[j].tv })
}

// axisIndex is, per grid point, its index along every axis.
func (c *Coefficients) axisIndex() [][]int {
	idx := make([][]int, len(c.points))
	cur := make([]int, len(c.axes))
	for x := range c.points {
		idx[x] = slices.Clone(cur)
		for a := len(c.axes) - 1; a >= 0; a-- {
			cur[a]++
			if cur[a] < len(c.axes[a]) {
				break
			}
			cur[a] = 0
		}
	}
	return idx
}
