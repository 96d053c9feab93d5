package demo_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// maxNoiseShare is the largest 95% noise half-width an example may show,
// as a share of the median true answer it reports: above it the noise,
// not the data, is what the newcomer sees.
const maxNoiseShare = 0.25

// TestExamplesInformative: every printed example, planned at the ε the
// demo user's session spends by default (what psql gets as typed), has for
// each noisy aggregate a 95% noise half-width below maxNoiseShare of the
// median of the true values it reports (read from the backend with the
// plan's own query: the values the noise is added to).
func TestExamplesInformative(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
	ctx := context.Background()
	be, err := connect.Open(ctx, pol.Backend, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := dependence.Load(ctx, pol, be, nil); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		be.Close()
	})
	eng := release.New(be, l, release.Options{Source: noise.SeededSource(11)})
	p := planner.New(pol)
	user := pol.User(demo.DemoUser)
	eps := demo.ExampleEpsilon
	if eps > user.MaxEpsilon {
		t.Fatalf("ExampleEpsilon %g above the demo user's max_epsilon %g", eps, user.MaxEpsilon)
	}
	db := openRO(t, f.Database)
	for _, ex := range demo.Examples() {
		if ex.Refused || ex.Free {
			continue
		}
		t.Run(ex.Title, func(t *testing.T) {
			stmts, err := parser.Parse(parser.Postgres, ex.SQL)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := p.Plan(planner.Request{User: user, Epsilon: eps, Dialect: "postgres", Statement: &stmts[0]})
			if err != nil {
				t.Fatal(err)
			}
			// true[j]: the true values of aggregate j, one per group.
			truth := make([][]float64, len(pl.Aggs))
			synHalf := 0.0
			if pl.Synopsis != nil {
				// A range count answered from the synopsis: its truth is
				// the count itself, its noise the synopsis's, as the
				// release reports it.
				res, err := eng.Run(ctx, user, pl)
				if err != nil {
					t.Fatal(err)
				}
				synHalf = res.Columns[0].CI95
				truth[0] = []float64{float64(scalar[int64](t, db, ex.SQL[:len(ex.SQL)-1]))}
			} else {
				err = be.Aggregate(ctx, pl.Backend, func(r ir.BackendRow) error {
					for j, a := range pl.Aggs {
						truth[j] = append(truth[j], math.Abs(float64(r.Aggs[j])*a.Quantum))
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			for j, a := range pl.Aggs {
				if len(truth[j]) == 0 {
					t.Fatalf("%s: no true value", a.Label)
				}
				slices.Sort(truth[j])
				median := truth[j][len(truth[j])/2]
				half := math.Log(20) * a.ScaleValue() // P(|Laplace(b)| > b·ln 20) = 5%
				if pl.Synopsis != nil {
					half = synHalf
				}
				t.Logf("ε %g: %s: 95%% noise ±%.0f, median true value %.0f over %d groups (%.1f%%)", eps, a.Label, half, median, len(truth[j]), 100*half/median)
				if !(half < maxNoiseShare*median) {
					t.Errorf("%s: the 95%% noise ±%.0f is not below %.0f%% of the median true value %.0f: the example shows noise", a.Label, half, 100*maxNoiseShare, median)
				}
			}
		})
	}
}
