package main

import (
	"math"

	"github.com/ddp-proxy/ddp-proxy/noise"
)

// The two queries, over one tuple per user (the home cell):
//
//	Q1  SELECT cell, COUNT(*) FROM users GROUP BY cell   (the 100-cell histogram)
//	Q2  SELECT SUM(km_from_midtown) FROM users            (km clamped to [0, 30])
//
// Sensitivities are those of liu2016's neighbours (one tuple's value
// modified, Def. 3): moving a user changes two histogram cells by one, and
// changes the sum by at most the width of the clamp.
const (
	histSensitivity = 2
	sumClampKm      = 30
	sumSensitivity  = sumClampKm
)

// midtown is Times Square, the anchor of Q2.
var midtown = []float64{40.758, -73.9855}

func (d *socialData) histogram() []int64 {
	h := make([]int64, d.grid.Size())
	for _, c := range d.home {
		h[c]++
	}
	return h
}

// sumQuery is Q2: Σ over users of the whole-km distance of their home cell
// center from Times Square, each clamped to [0, 30].
func (d *socialData) sumQuery() int64 {
	var s int64
	for _, c := range d.home {
		s += kmTerm(d, c)
	}
	return s
}

func kmTerm(d *socialData, cell int) int64 {
	p := d.grid.Center(cell)
	const kmPerDegLat = 111.2
	kmPerDegLon := kmPerDegLat * math.Cos(midtown[0]*math.Pi/180)
	km := math.Hypot((p[0]-midtown[0])*kmPerDegLat, (p[1]-midtown[1])*kmPerDegLon)
	return min(int64(math.Round(km)), sumClampKm)
}

// utilityRow is one (ε, mechanism, query) cell of the accuracy table.
type utilityRow struct {
	Eps       float64
	Mechanism string
	Query     string
	// Sensitivity is the calibrated L1 sensitivity ΔQ·mult; Scale the
	// discrete Laplace scale actually used (Sensitivity/ε rounded up).
	Sensitivity, Scale float64
	Rho                float64
	// MeanError is the measured mean L1 error over the repetitions;
	// Expected the exact expectation for that scale.
	MeanError, Expected float64
}

func utility(d *socialData, eps float64, mechs []mechanism, reps int, src noise.Source) ([]utilityRow, error) {
	var rows []utilityRow
	cells := d.grid.Size()
	for _, m := range mechs {
		for _, q := range []struct {
			name  string
			delta float64
			dims  int
		}{{"histogram", histSensitivity, cells}, {"sum", sumSensitivity, 1}} {
			sens := q.delta * m.mult
			sc, err := scaleFor(sens, eps)
			if err != nil {
				return nil, err
			}
			var total float64
			for range reps {
				for range q.dims {
					total += math.Abs(float64(noise.DiscreteLaplace(src, sc)))
				}
			}
			t := sc.Float64()
			rows = append(rows, utilityRow{
				Eps: eps, Mechanism: m.name, Query: q.name,
				Sensitivity: sens, Scale: t, Rho: m.rho,
				MeanError: total / float64(reps),
				Expected:  float64(q.dims) * meanAbsLaplace(t),
			})
		}
	}
	return rows, nil
}
