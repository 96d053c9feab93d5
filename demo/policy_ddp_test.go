package demo_test

import (
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/dependence/estimate"
)

// TestDDPModelMatchesData refits the social_ddp dataset's friend-distance
// model from the generated data, as estimate-dependence does (each user at
// the grid cell of most of their check-ins, each friendship both ways,
// conditional fit), and compares it with the parameters the policy declares:
// a change to the generator must come with new parameters.
func TestDDPModelMatchesData(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
	ds := pol.Datasets["social_ddp"]
	if ds == nil || ds.Dependence == nil || ds.Dependence.Edges == nil || ds.Dependence.Edges.Model == nil {
		t.Fatal("social_ddp declares no edge model")
	}
	m := ds.Dependence.Edges.Model
	if ds.Tables["checkins_ddp"] == nil || ds.Dependence.Edges.Table != "friendships" {
		t.Fatalf("social_ddp: tables %v, edges from %s; want checkins_ddp and friendships", ds.TableNames, ds.Dependence.Edges.Table)
	}

	latLo, latHi, lonLo, lonHi, n := demo.NYCBox()
	g := estimate.Grid{Lo: []float64{latLo, lonLo}, Hi: []float64{latHi, lonHi}, Cells: []int{n, n}}
	cks, edges := demo.SocialData()
	counts := map[int]map[int]int{}
	for _, c := range cks {
		cell, _ := g.Cell([]float64{c.Lat, c.Lon})
		if counts[c.User] == nil {
			counts[c.User] = map[int]int{}
		}
		counts[c.User][cell]++
	}
	home := map[int]int{}
	for u, cs := range counts {
		best, bestN := -1, 0
		for c, k := range cs {
			if k > bestN || (k == bestN && c < best) {
				best, bestN = c, k
			}
		}
		home[u] = best
	}
	pairs := map[[2]int]float64{}
	for _, e := range edges {
		a, b := home[e[0]], home[e[1]]
		pairs[[2]int{a, b}]++
		pairs[[2]int{b, a}]++
	}
	s := estimate.Sample{Grid: g}
	for k, v := range pairs {
		s.Pairs = append(s.Pairs, estimate.Pair{From: k[0], To: k[1], N: v})
	}
	fit, err := estimate.FitConditional(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name       string
		got, fresh float64
	}{{"a", *m.A, fit.Model.A}, {"b", *m.B, fit.Model.B}, {"c", *m.C, fit.Model.C}} {
		if math.Abs(p.got-p.fresh) > 0.01*p.fresh {
			t.Errorf("social_ddp model %s = %v, a fresh fit gives %v", p.name, p.got, p.fresh)
		}
	}
	// The grid is the cell centers of the demo's 10×10 grid.
	for k, col := range []string{"latitude", "longitude"} {
		ax := m.Grid[col]
		if ax == nil || len(ax.Resolved) != n {
			t.Fatalf("grid of %s: %+v; want %d cell centers", col, ax, n)
		}
		for i, v := range ax.Resolved {
			want := g.Lo[k] + (float64(i)+0.5)*g.Width(k)
			if math.Abs(v-want) > 1e-6 {
				t.Errorf("grid of %s[%d] = %v, want %v", col, i, v, want)
			}
		}
	}
}
