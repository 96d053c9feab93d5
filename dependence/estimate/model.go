package estimate

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/dependence"
)

// FriendDistance is the fitted model in the form the ρ computation and the
// policy take: the grid's cell centers as the axes of the named columns.
func FriendDistance(g Grid, m Model, columns []string) dependence.FriendDistance {
	fd := dependence.FriendDistance{A: m.A, B: m.B, C: m.C}
	for k := range g.Cells {
		ax := dependence.Axis{Values: make([]float64, g.Cells[k])}
		if k < len(columns) {
			ax.Column = columns[k]
		}
		for i := range ax.Values {
			ax.Values[i] = g.Lo[k] + (float64(i)+0.5)*g.Width(k)
		}
		fd.Axes = append(fd.Axes, ax)
	}
	return fd
}

// Conditional tabulates P(To = h | From = g) ∝ (dist(g, h) + B)^−C · w(h)
// over the grid. With weights nil, w = 1: the grid-normalised Eq. 26 the
// policy declares. With weights = units per cell, it is Backstrom et al.'s
// relation probability combined with where units are (Bayes' rule), the
// conditional a pair fit implies for the actual data; half a unit is
// added per cell so that no cell is impossible. It is not expressible in a
// policy, but it is the best reference for how large ρ really is.
func Conditional(g Grid, m Model, weights []float64) [][]float64 {
	n := g.Size()
	out := make([][]float64, n)
	for a := range n {
		out[a] = make([]float64, n)
		z := 0.0
		for b := range n {
			w := 1.0
			if weights != nil {
				w = weights[b] + 0.5
			}
			out[a][b] = w * math.Pow(g.Dist(a, b)+m.B, -m.C)
			z += out[a][b]
		}
		for b := range n {
			out[a][b] /= z
		}
	}
	return out
}

// MaxTotalVariation is the largest total-variation distance between two
// rows of a conditional: the limit, as ΔD/σ → 0 (large multipliers, the
// usual case), of the any-query dependence coefficient the proxy uses
// (dependence.Coefficients.AnyQuery), and an upper bound of it up to the
// factor (e^x − 1)/x at x = ΔD/σ: log((1 + aP1(S))/(1 + aP2(S))) ≤
// a·(P1(S) − P2(S)) ≤ a·TV with a = e^x − 1. It lets conditionals that no
// policy can declare be compared with the declarable ones.
func MaxTotalVariation(cond [][]float64) float64 {
	best := 0.0
	for i := range cond {
		for j := i + 1; j < len(cond); j++ {
			tv := 0.0
			for x := range cond[i] {
				tv += max(cond[i][x]-cond[j][x], 0)
			}
			best = max(best, tv)
		}
	}
	return min(best, 1)
}

// LogLikelihood is the log-likelihood of the sample's pairs under cond.
func LogLikelihood(s Sample, cond [][]float64) float64 {
	ll := 0.0
	for _, p := range s.Pairs {
		ll += p.N * math.Log(cond[p.From][p.To])
	}
	return ll
}
