package main

import (
	"os"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/synopsis"
)

// adultCSV is the shared copy of UCI Adult (see its README); override with
// DDP_ADULT_CSV.
func adultCSV(t *testing.T) string {
	p := os.Getenv("DDP_ADULT_CSV")
	if p == "" {
		p = DefaultAdultCSV()
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("Adult data not found at %s (set DDP_ADULT_CSV): %v", p, err)
	}
	return p
}

// TestAdultCapitalLoss is the acceptance check of Blowfish Fig. 2(b) on the
// real column, smaller than the full run (go run ./eval/synopsis): range
// MSE grows with θ and the ordered mechanism (θ = 1) beats the DP
// hierarchical baseline by more than two orders of magnitude. 20 releases
// × 2000 queries per cell; the gaps asserted are several times the
// run-to-run spread seen with 200 releases.
func TestAdultCapitalLoss(t *testing.T) {
	vals, err := readColumn(adultCSV(t), "capital-loss")
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 48842 {
		t.Fatalf("%d rows, want 48842", len(vals))
	}
	src := noise.SeededSource(2014)
	queries := randomRanges(4357, 2000)
	run := func(mech string, theta int64, eps float64) float64 {
		l, err := synopsis.NewLayout(synopsis.Config{Mechanism: mech, Lo: 0, Hi: 4356, Theta: theta, Fanout: 16, RowsPerUnit: 1})
		if err != nil {
			t.Fatal(err)
		}
		hist := l.Histogram()
		for _, v := range vals {
			l.Add(hist, v, 1)
		}
		mse, err := meanSquaredError(l, src, hist, queries, eps, 20)
		if err != nil {
			t.Fatal(err)
		}
		return mse
	}
	for _, eps := range []float64{0.2, 1} {
		prev := 0.0
		var first float64
		for _, th := range []int64{1, 10, 100, 1000} {
			mech := synopsis.OrderedHierarchical
			if th == 1 {
				mech = synopsis.Ordered
			}
			m := run(mech, th, eps)
			t.Logf("ε=%g θ=%d: MSE %.4g", eps, th, m)
			if m <= prev {
				t.Errorf("ε=%g: MSE %.4g at θ=%d is not above %.4g at the smaller θ", eps, m, th, prev)
			}
			if th == 1 {
				first = m
			}
			prev = m
		}
		base := run(synopsis.Hierarchical, 0, eps)
		t.Logf("ε=%g DP hierarchical: MSE %.4g (%.0f× θ=1)", eps, base, base/first)
		if base <= prev || base < 100*first {
			t.Errorf("ε=%g: DP baseline MSE %.4g, θ=1000 %.4g, θ=1 %.4g", eps, base, prev, first)
		}
	}
}
