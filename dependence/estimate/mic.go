package estimate

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MICOptions are the two parameters of Reshef et al.'s approximation.
// The zero value means the published defaults.
type MICOptions struct {
	// Alpha sets the grid budget B(n) = n^Alpha: only grids with
	// columns·rows ≤ B(n) are searched. Default 0.6 (Reshef et al.).
	Alpha float64
	// Clumps bounds the x-axis search to Clumps·columns "superclumps".
	// Default 15 (Reshef et al.'s ĉ).
	Clumps int
}

func (o MICOptions) withDefaults() MICOptions {
	if o.Alpha == 0 {
		o.Alpha = 0.6
	}
	if o.Clumps == 0 {
		o.Clumps = 15
	}
	return o
}

// MIC is the maximal information coefficient of the sample (x[i], y[i]):
// the largest normalised mutual information I(P, Q)/log min(|P|, |Q|) over
// grids of |P| columns and |Q| rows with |P|·|Q| ≤ n^Alpha, computed with
// the ApproxMaxMI heuristic of Reshef et al. (Science 2011, SOM Algorithms
// 2–5): one axis is equipartitioned, the other optimised exactly by dynamic
// programming over (super)clumps, and both orientations are tried. The
// result lies in [0, 1]: close to 1 for a noiseless functional relation, and
// small (not exactly 0; the finite-sample bias shrinks with n) for
// independent variables. The cost grows like n^(3·Alpha); callers with many
// points should subsample (a few thousand points give a stable value).
func MIC(x, y []float64, opt MICOptions) (float64, error) {
	opt = opt.withDefaults()
	if len(x) != len(y) {
		return 0, fmt.Errorf("mic: %d x values but %d y values", len(x), len(y))
	}
	if opt.Alpha <= 0 || opt.Alpha > 1 || opt.Clumps < 1 {
		return 0, fmt.Errorf("mic: alpha must be in (0, 1] and clumps ≥ 1, got %v and %d", opt.Alpha, opt.Clumps)
	}
	n := len(x)
	if n < 4 {
		return 0, errors.New("mic: need at least 4 points")
	}
	for i := range x {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return 0, fmt.Errorf("mic: point %d is not finite", i)
		}
	}
	b := max(int(math.Floor(math.Pow(float64(n), opt.Alpha))), 4)
	best := 0.0
	for _, axes := range [2][2][]float64{{x, y}, {y, x}} {
		xs, ys := axes[0], axes[1]
		for rows := 2; rows <= b/2; rows++ {
			cols := b / rows
			if cols < 2 {
				break
			}
			q, nq := equipartition(ys, rows)
			if nq < 2 {
				continue // y constant: no information on this axis
			}
			mi := optimizeXAxis(xs, q, nq, cols, opt.Clumps)
			for l := 2; l <= cols; l++ {
				s := mi[l] / math.Log(float64(min(l, rows)))
				best = max(best, s)
			}
		}
	}
	return min(best, 1), nil
}

// equipartition assigns each point a row 0..k−1 so that rows hold about
// n/want points each and equal values share a row (Reshef et al.,
// EquipartitionYAxis). It returns the labels and the number of rows used.
func equipartition(v []float64, want int) ([]int, int) {
	n := len(v)
	order := sortedOrder(v)
	label := make([]int, n)
	row, inRow := 0, 0
	desired := float64(n) / float64(want)
	for i := 0; i < n; {
		j := i
		for j < n && v[order[j]] == v[order[i]] {
			j++
		}
		s := j - i
		if inRow != 0 && math.Abs(float64(inRow+s)-desired) >= math.Abs(float64(inRow)-desired) {
			row++
			inRow = 0
			if left := want - row; left > 0 {
				desired = float64(n-i) / float64(left)
			} else {
				desired = float64(n - i)
			}
		}
		for _, p := range order[i:j] {
			label[p] = row
		}
		inRow += s
		i = j
	}
	return label, row + 1
}

func sortedOrder(v []float64) []int {
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	return order
}

// optimizeXAxis returns, for l = 2..maxCols, the largest mutual information
// I(P; Q) over partitions P of the x-axis into at most l columns, for the
// fixed row labels q (nq rows). Columns are unions of consecutive clumps
// (maximal x-runs whose points share one row; points with equal x always
// share a clump); with more than clumps·maxCols clumps, neighbouring clumps
// are first merged into that many superclumps of about equal size.
func optimizeXAxis(x []float64, q []int, nq, maxCols, clumps int) []float64 {
	n := len(x)
	order := sortedOrder(x)
	// Groups of equal x; a group spanning several rows gets row −1 so it
	// never merges with a neighbour.
	type run struct{ end, row int } // end: exclusive index into order
	var runs []run
	for i := 0; i < n; {
		j, r := i, q[order[i]]
		for j < n && x[order[j]] == x[order[i]] {
			if q[order[j]] != r {
				r = -1
			}
			j++
		}
		if len(runs) > 0 && r >= 0 && runs[len(runs)-1].row == r {
			runs[len(runs)-1].end = j
		} else {
			runs = append(runs, run{j, r})
		}
		i = j
	}
	ends := make([]int, len(runs))
	for i, r := range runs {
		ends[i] = r.end
	}
	if limit := clumps * maxCols; len(ends) > limit {
		ends = superclumps(ends, n, limit)
	}
	k := len(ends)
	// cum[t][r]: points of row r among the first c_t points (c_0 = 0).
	bounds := append([]int{0}, ends...)
	cum := make([][]int, k+1)
	cum[0] = make([]int, nq)
	for t := 1; t <= k; t++ {
		cum[t] = slices.Clone(cum[t-1])
		for _, p := range order[bounds[t-1]:bounds[t]] {
			cum[t][q[p]]++
		}
	}
	// h(s, t): entropy of the rows of the points in (c_s, c_t].
	h := func(s, t int) float64 {
		total := float64(bounds[t] - bounds[s])
		e := 0.0
		for r := range nq {
			if c := float64(cum[t][r] - cum[s][r]); c > 0 {
				e -= c / total * math.Log(c/total)
			}
		}
		return e
	}
	hs := make([][]float64, k+1)
	for s := range k + 1 {
		hs[s] = make([]float64, k+1)
		for t := s + 1; t <= k; t++ {
			hs[s][t] = h(s, t)
		}
	}
	hq := hs[0][k]
	// f[l][t] = max over partitions P of the first c_t points into l
	// columns of −H(Q | P) = −Σ_col (n_col/c_t)·H(Q within col).
	cols := min(maxCols, k)
	f := make([][]float64, cols+1)
	f[1] = make([]float64, k+1)
	for t := 1; t <= k; t++ {
		f[1][t] = -hs[0][t]
	}
	for l := 2; l <= cols; l++ {
		f[l] = make([]float64, k+1)
		for t := l; t <= k; t++ {
			best := math.Inf(-1)
			ct := float64(bounds[t])
			for s := l - 1; s < t; s++ {
				cs := float64(bounds[s])
				v := cs/ct*f[l-1][s] - (ct-cs)/ct*hs[s][t]
				best = max(best, v)
			}
			f[l][t] = best
		}
	}
	mi := make([]float64, maxCols+1)
	for l := 2; l <= maxCols; l++ {
		if l <= cols {
			mi[l] = max(hq+f[l][k], mi[l-1])
		} else {
			mi[l] = mi[l-1] // more columns than clumps: nothing more to gain
		}
	}
	return mi
}

// superclumps merges consecutive clumps (given by their exclusive end
// indices, the last being n) into at most limit groups of about n/limit
// points, cutting only at clump ends.
func superclumps(ends []int, n, limit int) []int {
	out := make([]int, 0, limit)
	desired := float64(n) / float64(limit)
	start := 0
	for i, e := range ends {
		last := i == len(ends)-1
		size := float64(e - start)
		if last {
			out = append(out, e)
			break
		}
		next := float64(ends[i+1] - start)
		// Close the group here if adding the next clump would move it
		// further from the target size.
		if math.Abs(next-desired) >= math.Abs(size-desired) && len(out) < limit-1 {
			out = append(out, e)
			start = e
			if left := limit - len(out); left > 0 {
				desired = float64(n-start) / float64(left)
			}
		}
	}
	return out
}

// Median is the median of v (the mean of the two middle values for an
// even count); v is not modified. It summarises a unit's rows into one
// attribute value before MIC compares related units.
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
