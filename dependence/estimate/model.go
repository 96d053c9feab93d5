package estimate

import "github.com/ddp-proxy/ddp-proxy/dependence"

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
