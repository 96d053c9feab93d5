package main

import (
	"compress/gzip"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTinySocial writes a small social check-in data set in the Gowalla
// CSV format: 240 users in 6 neighbourhoods, friends mostly within their
// neighbourhood, one hub befriending 60 users, check-ins near home.
func writeTinySocial(t *testing.T, dir string) {
	t.Helper()
	r := rand.New(rand.NewPCG(42, 43))
	centers := [][2]float64{{40.75, -73.99}, {40.70, -73.95}, {40.82, -73.94}, {40.65, -74.05}, {40.60, -73.80}, {40.88, -73.88}}
	const users = 240
	var ck strings.Builder
	ck.WriteString("user_id,checkin_time,latitude,longitude,location_id\n")
	hood := make([]int, users)
	for u := range users {
		hood[u] = u % len(centers)
		c := centers[hood[u]]
		for k := range 1 + r.IntN(5) {
			fmt.Fprintf(&ck, "%d,2010-01-%02dT00:00:00Z,%.6f,%.6f,%d\n", u+1, k+1, c[0]+0.01*r.NormFloat64(), c[1]+0.01*r.NormFloat64(), k)
		}
	}
	f, err := os.Create(filepath.Join(dir, "checkins.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(ck.String())); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var ed strings.Builder
	ed.WriteString("user_id,friend_id\n")
	edge := func(a, b int) { fmt.Fprintf(&ed, "%d,%d\n%d,%d\n", a+1, b+1, b+1, a+1) }
	for range 400 {
		a := r.IntN(users)
		b := r.IntN(users)
		if r.Float64() < 0.85 {
			b = (b/len(centers))*len(centers) + hood[a] // same neighbourhood
			b %= users
		}
		if a != b {
			edge(a, b)
		}
	}
	for b := 1; b <= 60; b++ {
		edge(0, b*3%users) // the hub: user 1
	}
	if err := os.WriteFile(filepath.Join(dir, "edges.csv"), []byte(ed.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPipelineOrdering(t *testing.T) {
	dir := t.TempDir()
	writeTinySocial(t, dir)
	cfg := defaultConfig()
	cfg.dataDir, cfg.outDir = dir, filepath.Join(dir, "out")
	cfg.eps = []float64{0.5, 2}
	cfg.reps, cfg.attackReps, cfg.targets = 100, 2, 60
	for _, fit := range []string{"pairs", "conditional"} {
		cfg.fit = fit
		res, err := run(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.source, "Gowalla") || res.users != 240 {
			t.Fatalf("%s: read %q with %d users; want the 240 test users", fit, res.source, res.users)
		}
		if res.maxDegree < 60 {
			t.Fatalf("max degree %d; the hub has at least 60 friends", res.maxDegree)
		}
		scales := map[string]float64{}
		for _, u := range res.utility {
			if u.Query != "histogram" {
				continue
			}
			k := fmt.Sprint(u.Eps, u.Mechanism)
			scales[k] = u.Scale
			// 100 draws × 100 cells: the mean of |Laplace| is within 5%
			// of its expectation except with probability < 10⁻⁶.
			if math.Abs(u.MeanError-u.Expected) > 0.05*u.Expected {
				t.Errorf("%s ε=%v %s: mean error %.1f, expected %.1f", fit, u.Eps, u.Mechanism, u.MeanError, u.Expected)
			}
		}
		for _, e := range cfg.eps {
			lpm, base := scales[fmt.Sprint(e, "dp (LPM)")], scales[fmt.Sprint(e, "baseline (L·ΔQ)")]
			eq18, exact := scales[fmt.Sprint(e, "ddp (DPM, eq18)")], scales[fmt.Sprint(e, "ddp (DPM, exact)")]
			// DPM adds more noise than plain DP and no more than the
			// baseline; rho_method exact never needs more than eq18. (The
			// measured errors track these scales: checked above.)
			if !(lpm < exact && exact <= eq18 && eq18 <= base) {
				t.Errorf("%s ε=%v: noise scales LPM %.1f, DPM exact %.1f, DPM eq18 %.1f, baseline %.1f; want that order", fit, e, lpm, exact, eq18, base)
			}
		}
		for _, r := range res.rho {
			if r.Multiplier < 1 || r.Multiplier > float64(r.L) || r.Multiplier < 1+float64(res.maxDegree)*r.Rho-1e-9 {
				t.Errorf("%s ε=%v %s %s: multiplier %v with ρ %v violates 1 ≤ m, m ≥ 1 + %d·ρ, m ≤ L", fit, r.Eps, r.Fit, r.Method, r.Multiplier, r.Rho, res.maxDegree)
			}
		}
		// The dependent adversary learns more from the LPM release than
		// from the DPM one.
		leak := map[string]float64{}
		for _, a := range res.attack {
			if a.Attack == "dependent" && a.Bucket == "all" {
				leak[fmt.Sprint(a.Eps, a.Mechanism)] = a.LeakBits
			}
		}
		for _, e := range cfg.eps {
			if l, d := leak[fmt.Sprint(e, "dp (LPM)")], leak[fmt.Sprint(e, "ddp (DPM, exact)")]; !(l > d) {
				t.Errorf("%s ε=%v: dependent attack leaks %.3f bits from LPM, %.3f from DPM; want LPM > DPM", fit, e, l, d)
			}
		}
		if err := res.write(cfg.outDir); err != nil {
			t.Fatal(err)
		}
		for _, f := range res.files(cfg.outDir) {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("%s: output %s missing or empty", fit, f)
			}
		}
	}
}

// The attack's per-cell likelihood against a direct sum.
func TestBinomLaplace(t *testing.T) {
	const tScale = 1.7
	logC := math.Log((1 - math.Exp(-1/tScale)) / (1 + math.Exp(-1/tScale)))
	logDL := func(k int64) float64 { return logC - math.Abs(float64(k))/tScale }
	for _, tc := range []struct {
		m int
		p float64
		k int64
	}{{0, 0.3, 2}, {1, 0.3, 0}, {12, 0.25, 3}, {12, 0.25, 40}, {50, 0.02, -6}, {300, 0.6, 150}} {
		want := 0.0
		for s := 0; s <= tc.m; s++ {
			lg, _ := math.Lgamma(float64(tc.m + 1))
			l1, _ := math.Lgamma(float64(s + 1))
			l2, _ := math.Lgamma(float64(tc.m - s + 1))
			want += math.Exp(lg - l1 - l2 + float64(s)*math.Log(tc.p) + float64(tc.m-s)*math.Log1p(-tc.p) + logDL(tc.k-int64(s)))
		}
		if got := binomLaplace(tc.m, tc.p, tc.k, logDL); math.Abs(got-math.Log(want)) > 1e-9 {
			t.Errorf("m=%d p=%v k=%d: got %v, want %v", tc.m, tc.p, tc.k, got, math.Log(want))
		}
	}
}

func TestMeanAbsLaplace(t *testing.T) {
	for _, sc := range []float64{0.3, 1, 7.5} {
		want := 0.0
		q := math.Exp(-1 / sc)
		for k := -2000; k <= 2000; k++ {
			want += math.Abs(float64(k)) * (1 - q) / (1 + q) * math.Pow(q, math.Abs(float64(k)))
		}
		if got := meanAbsLaplace(sc); math.Abs(got-want) > 1e-9*want {
			t.Errorf("t=%v: %v, want %v", sc, got, want)
		}
	}
}
