package estimate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// Model is the friend-distance model of Liu et al. (Eq. 26, after Backstrom
// et al.): P(D_j = d_j | D_i = d_i) = A·(‖d_i − d_j‖₁ + B)^−C with A, B,
// C > 0 and distances in the attributes' units. Used as a conditional over
// a finite grid it is normalised per d_i, so only B and C shape it.
type Model struct {
	A, B, C float64
}

// Pair is N related pairs (i, j) with i's value in cell From and j's in
// cell To. An undirected relation contributes both orientations.
type Pair struct {
	From, To int
	N        float64
}

// Sample is the data of a fit, summarised on the grid.
type Sample struct {
	Grid Grid
	// Units[g] is the number of units whose value lies in cell g (FitPairs
	// needs it; FitConditional ignores it).
	Units []float64
	// Pairs are the related pairs, as ordered cell pairs.
	Pairs []Pair
}

// Fit is the result of a fit.
type Fit struct {
	Model Model
	// LogLik is the log-likelihood at Model; LogLikIndependent the best
	// log-likelihood of the same data with no distance effect (C = 0).
	// 2·(LogLik − LogLikIndependent) is the likelihood-ratio statistic for
	// dependence (asymptotically χ² with 2 degrees of freedom under
	// independence).
	LogLik, LogLikIndependent float64
	// Pairs is the number of ordered pairs the fit used.
	Pairs float64
}

// LikelihoodRatio is 2·(LogLik − LogLikIndependent).
func (f Fit) LikelihoodRatio() float64 { return 2 * (f.LogLik - f.LogLikIndependent) }

func (s Sample) check(needUnits bool) error {
	if err := s.Grid.Validate(); err != nil {
		return err
	}
	n := s.Grid.Size()
	if needUnits && len(s.Units) != n {
		return fmt.Errorf("fit: %d unit counts for a grid of %d cells", len(s.Units), n)
	}
	total := 0.0
	for _, p := range s.Pairs {
		if p.From < 0 || p.From >= n || p.To < 0 || p.To >= n {
			return fmt.Errorf("fit: pair (%d, %d) outside the grid of %d cells", p.From, p.To, n)
		}
		if !(p.N >= 0) || math.IsInf(p.N, 0) {
			return fmt.Errorf("fit: pair count %v", p.N)
		}
		total += p.N
	}
	if total == 0 {
		return errors.New("fit: no related pairs")
	}
	return nil
}

// FitConditional fits B and C by maximum likelihood of the related pairs'
// cells under the grid-normalised conditional
//
//	P(To = h | From = g) = (dist(g, h) + B)^−C / Σ_h' (dist(g, h') + B)^−C,
//
// which is exactly the form the ρ computation normalises Eq. 26 to (a
// uniform prior over the grid). A is not identified by this likelihood (the
// normalisation absorbs it) and is returned as the normaliser 1/Z of the
// cell holding the most pairs' first ends, so that A·(d + B)^−C is that
// cell's conditional.
//
// Because it conditions on nothing else, the fit also absorbs how unevenly
// units spread over the grid (friends are close partly because everyone
// lives downtown): it tends to overstate dependence, which errs on the safe
// side for DDP. FitPairs separates the two.
func FitConditional(s Sample) (Fit, error) {
	if err := s.check(false); err != nil {
		return Fit{}, err
	}
	g := s.Grid
	o := g.offsets()
	fd := make([]float64, len(o.dist)) // pairs per offset class
	fg := make([]float64, g.Size())    // pairs per first cell
	total := 0.0
	for _, p := range s.Pairs {
		fd[g.class(o, p.From, p.To)] += p.N
		fg[p.From] += p.N
		total += p.N
	}
	type cellW struct {
		weight float64
		counts []float64
	}
	var cells []cellW
	heaviest, heaviestW := 0, -1.0
	for c, w := range fg {
		if w > 0 {
			cells = append(cells, cellW{w, g.classCounts(o, c)})
			if w > heaviestW {
				heaviest, heaviestW = len(cells)-1, w
			}
		}
	}
	logd := make([]float64, len(o.dist))
	pw := make([]float64, len(o.dist))
	// ll evaluates the log-likelihood and the normaliser of the heaviest cell.
	ll := func(b, c float64) (float64, float64) {
		v := 0.0
		for u, d := range o.dist {
			logd[u] = math.Log(d + b)
			pw[u] = math.Exp(-c * logd[u])
			v -= c * fd[u] * logd[u]
		}
		zHeavy := 0.0
		for i, cw := range cells {
			z := 0.0
			for u, m := range cw.counts {
				z += m * pw[u]
			}
			v -= cw.weight * math.Log(z)
			if i == heaviest {
				zHeavy = z
			}
		}
		return v, zHeavy
	}
	best, err := maximize2(func(b, c float64) float64 { v, _ := ll(b, c); return v }, startsFor(g))
	if err != nil {
		return Fit{}, err
	}
	v, z := ll(best[0], best[1])
	indep, _ := ll(1, 0)
	return Fit{
		Model:             Model{A: 1 / z, B: best[0], C: best[1]},
		LogLik:            v,
		LogLikIndependent: indep,
		Pairs:             total,
	}, nil
}

// FitPairs fits A, B and C as Backstrom, Sun and Marlow (WWW 2010) do: the
// probability that two units whose values lie at distance d are related is
// p(d) = A(d + B)^−C. Every ordered pair of distinct units is a Bernoulli
// trial (related or not); the fit maximises the binomial likelihood, with A
// profiled out for each (B, C). Dividing by all pairs at each distance
// removes the effect of units crowding into a few cells, so this estimate
// measures the relation's own pull; the conditional it implies over a grid
// with units spread uniformly is Eq. 26 normalised, the model the ρ
// computation uses.
func FitPairs(s Sample) (Fit, error) {
	if err := s.check(true); err != nil {
		return Fit{}, err
	}
	g := s.Grid
	o := g.offsets()
	trials := make([]float64, len(o.dist)) // ordered unit pairs per class
	for a, na := range s.Units {
		if na <= 0 {
			continue
		}
		for b, nb := range s.Units {
			if nb <= 0 {
				continue
			}
			n := na * nb
			if a == b {
				n = na * (na - 1)
			}
			trials[g.class(o, a, b)] += n
		}
	}
	hits := make([]float64, len(o.dist))
	total, all := 0.0, 0.0
	for _, p := range s.Pairs {
		hits[g.class(o, p.From, p.To)] += p.N
		total += p.N
	}
	for u := range trials {
		if hits[u] > trials[u] {
			return Fit{}, fmt.Errorf("fit: %v related pairs at distance %v but only %v pairs of units there; are the unit counts right?", hits[u], o.dist[u], trials[u])
		}
		all += trials[u]
	}
	// For fixed (B, C) the Poisson approximation gives A in closed form:
	// A = Σ hits / Σ trials·(d + B)^−C, capped so that no p reaches 1.
	profile := func(b, c float64) (float64, float64) {
		den, maxPow := 0.0, 0.0
		for u, d := range o.dist {
			if trials[u] == 0 {
				continue
			}
			pw := math.Pow(d+b, -c)
			den += trials[u] * pw
			maxPow = max(maxPow, pw)
		}
		a := min(total/den, (1-1e-9)/maxPow)
		v := 0.0
		for u, d := range o.dist {
			if trials[u] == 0 {
				continue
			}
			p := a * math.Pow(d+b, -c)
			v += hits[u]*math.Log(p) + (trials[u]-hits[u])*math.Log1p(-p)
		}
		return v, a
	}
	best, err := maximize2(func(b, c float64) float64 { v, _ := profile(b, c); return v }, startsFor(g))
	if err != nil {
		return Fit{}, err
	}
	v, a := profile(best[0], best[1])
	p0 := total / all
	indep := total*math.Log(p0) + (all-total)*math.Log1p(-p0)
	return Fit{Model: Model{A: a, B: best[0], C: best[1]}, LogLik: v, LogLikIndependent: indep, Pairs: total}, nil
}

// Parameter box of the fits: B between 10⁻⁶ and 10⁶ cell widths, C in
// [10⁻⁶, 20]. Outside it the likelihood is flat or overflows.
const (
	minC, maxC = 1e-6, 20.0
)

func startsFor(g Grid) [][2]float64 {
	w := math.Inf(1)
	for k := range g.Cells {
		w = min(w, g.Width(k))
	}
	var s [][2]float64
	for _, b := range []float64{0.1 * w, w, 10 * w} {
		for _, c := range []float64{0.3, 1, 3} {
			s = append(s, [2]float64{b, c})
		}
	}
	return s
}

// maximize2 maximises f(b, c) over b > 0, c ∈ [minC, maxC] with
// Nelder–Mead on (log b, log c), from several starts, and returns the best
// point found.
func maximize2(f func(b, c float64) float64, starts [][2]float64) ([2]float64, error) {
	w := starts[0][0]
	minB, maxB := w*1e-6, w*1e6
	obj := func(x []float64) float64 {
		b, c := math.Exp(x[0]), math.Exp(x[1])
		if b < minB || b > maxB || c < minC || c > maxC {
			// Clamp and penalise: keeps the simplex inside the box.
			b = min(max(b, minB), maxB)
			c = min(max(c, minC), maxC)
			return -f(b, c) + 1e6
		}
		v := f(b, c)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(1)
		}
		return -v
	}
	bestX, bestV := [2]float64{}, math.Inf(1)
	for _, st := range starts {
		res, err := optimize.Minimize(optimize.Problem{Func: obj},
			[]float64{math.Log(st[0]), math.Log(st[1])}, &optimize.Settings{
				Converger:       &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-10, Iterations: 200},
				MajorIterations: 2000,
			}, &optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if res.F < bestV {
			bestV = res.F
			bestX = [2]float64{math.Exp(res.X[0]), math.Exp(res.X[1])}
		}
	}
	if math.IsInf(bestV, 1) {
		return bestX, errors.New("fit: the likelihood could not be evaluated at any start")
	}
	bestX[0] = min(max(bestX[0], minB), maxB)
	bestX[1] = min(max(bestX[1], minC), maxC)
	return bestX, nil
}
