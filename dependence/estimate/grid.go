package estimate

import (
	"fmt"
	"math"
)

// MaxGridCells bounds the grids the fit accepts: the likelihood touches
// every pair of cells, so its cost grows with the square of the size.
const MaxGridCells = 4096

// Grid is the declared domain grid of the attribute columns: attribute k
// ranges over [Lo[k], Hi[k]] cut into Cells[k] equal cells, and a value is
// represented by the center of its cell. Distances are L1 between centers,
// in the attributes' own units (Eq. 26 of Liu et al. uses ‖d_i − d_j‖₁).
type Grid struct {
	Lo, Hi []float64
	Cells  []int
}

// Validate reports a grid the fit cannot use.
func (g Grid) Validate() error {
	if len(g.Lo) == 0 || len(g.Lo) != len(g.Hi) || len(g.Lo) != len(g.Cells) {
		return fmt.Errorf("grid: need one lo, hi and cell count per attribute")
	}
	size := 1
	for k := range g.Lo {
		if !(g.Lo[k] < g.Hi[k]) || math.IsInf(g.Lo[k], 0) || math.IsInf(g.Hi[k], 0) {
			return fmt.Errorf("grid: attribute %d: range [%v, %v] is not a finite interval", k, g.Lo[k], g.Hi[k])
		}
		if g.Cells[k] < 1 {
			return fmt.Errorf("grid: attribute %d: %d cells", k, g.Cells[k])
		}
		size *= g.Cells[k]
		if size > MaxGridCells {
			return fmt.Errorf("grid: more than %d cells", MaxGridCells)
		}
	}
	return nil
}

// Size is the number of cells.
func (g Grid) Size() int {
	s := 1
	for _, c := range g.Cells {
		s *= c
	}
	return s
}

// Width is the cell width along attribute k.
func (g Grid) Width(k int) float64 { return (g.Hi[k] - g.Lo[k]) / float64(g.Cells[k]) }

// Cell is the index of the cell holding v (row-major, attribute 0 most
// significant). Values outside the range are clamped to the border cells,
// as the declared domain says they cannot occur. NaN values have no cell
// (ok = false).
func (g Grid) Cell(v []float64) (cell int, ok bool) {
	for k := range g.Cells {
		if math.IsNaN(v[k]) {
			return 0, false
		}
		i := int(math.Floor((v[k] - g.Lo[k]) / g.Width(k)))
		i = min(max(i, 0), g.Cells[k]-1)
		cell = cell*g.Cells[k] + i
	}
	return cell, true
}

// Coords splits a cell index into per-attribute cell indices.
func (g Grid) Coords(cell int) []int {
	c := make([]int, len(g.Cells))
	for k := len(g.Cells) - 1; k >= 0; k-- {
		c[k] = cell % g.Cells[k]
		cell /= g.Cells[k]
	}
	return c
}

// Center is the center of a cell.
func (g Grid) Center(cell int) []float64 {
	c := g.Coords(cell)
	v := make([]float64, len(c))
	for k := range c {
		v[k] = g.Lo[k] + (float64(c[k])+0.5)*g.Width(k)
	}
	return v
}

// Dist is the L1 distance between the centers of two cells.
func (g Grid) Dist(a, b int) float64 {
	ca, cb := g.Coords(a), g.Coords(b)
	d := 0.0
	for k := range ca {
		d += math.Abs(float64(ca[k]-cb[k])) * g.Width(k)
	}
	return d
}

// offsets enumerates the classes of cell pairs by their per-attribute index
// distance δ (|Δi_0|, |Δi_1|, …): on a regular grid the distance of a pair
// depends only on its class, which keeps the likelihoods at O(cells ·
// classes) instead of O(cells²) evaluations of the power law.
type offsets struct {
	deltas [][]int   // class → δ per attribute
	dist   []float64 // class → L1 distance
	index  func([]int) int
}

func (g Grid) offsets() offsets {
	n := g.Size()
	o := offsets{}
	for cls := range n {
		d := g.Coords(cls) // the same mixed radix: δ_k < Cells[k]
		o.deltas = append(o.deltas, d)
		dist := 0.0
		for k := range d {
			dist += float64(d[k]) * g.Width(k)
		}
		o.dist = append(o.dist, dist)
	}
	o.index = func(d []int) int {
		c := 0
		for k := range d {
			c = c*g.Cells[k] + d[k]
		}
		return c
	}
	return o
}

// class is the offset class of the pair of cells (a, b).
func (g Grid) class(o offsets, a, b int) int {
	ca, cb := g.Coords(a), g.Coords(b)
	d := make([]int, len(ca))
	for k := range ca {
		d[k] = abs(ca[k] - cb[k])
	}
	return o.index(d)
}

// classCounts returns, for the cell a, how many cells lie in each offset
// class from it (a itself is the single cell of class 0).
func (g Grid) classCounts(o offsets, a int) []float64 {
	ca := g.Coords(a)
	out := make([]float64, len(o.deltas))
	for cls, d := range o.deltas {
		m := 1.0
		for k := range d {
			if d[k] == 0 {
				continue
			}
			c := 0
			if ca[k]-d[k] >= 0 {
				c++
			}
			if ca[k]+d[k] < g.Cells[k] {
				c++
			}
			m *= float64(c)
		}
		out[cls] = m
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
