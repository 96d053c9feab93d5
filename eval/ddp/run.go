package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/dependence/estimate"
	"github.com/ddp-proxy/ddp-proxy/noise"
)

// rhoRow is ρ and the DPM multiplier of one fitted model at one ε.
type rhoRow struct {
	Eps           float64
	Fit           string
	Method        string
	Rho           float64
	Multiplier    float64
	L             int
	BaselineRatio float64 // L / multiplier: how much less noise DPM adds
	// Eq14 and Eq18 are liu2016's coefficients at the same σ = ΔD·m/ε;
	// Rho is what the proxy uses (Coefficients.AnyQuery, valid for every
	// additive query, ≥ Eq14; for method eq18 also ≥ Eq18).
	Eq14, Eq18 float64
}

// attackRow aggregates one adversary against one mechanism at one ε over
// the targets in a degree bucket and the attacked releases.
type attackRow struct {
	Eps       float64
	Mechanism string
	Attack    string
	Bucket    string
	Attacks   int
	LeakBits  float64 // mean H(prior) − H(posterior)
	HitRate   float64 // mean [mode of posterior = true cell]
	ErrKm     float64 // mean distance of the mode from the true cell
	BoundBits float64 // ε in bits: Theorem 2's bound for an ε-(D)DP release
}

type results struct {
	source                   string
	users, edges, checkins   int
	maxDegree, cells         int
	fitCond, fitPairs        estimate.Fit
	micLat, micLon, micPairs float64
	used                     string
	adversary                string
	adversaryLL              map[string]float64
	tvLimit                  map[string]float64
	rho                      []rhoRow
	utility                  []utilityRow
	attack                   []attackRow
	elapsed                  time.Duration
}

func run(cfg config, logw io.Writer) (*results, error) {
	start := time.Now()
	d, err := loadSocial(cfg.dataDir)
	if err != nil {
		return nil, err
	}
	return evaluate(d, cfg, start, logw)
}

func evaluate(d *socialData, cfg config, start time.Time, logw io.Writer) (*results, error) {
	var err error
	res := &results{source: d.source, users: len(d.home), edges: len(d.edges), checkins: d.checkins,
		maxDegree: d.maxDegree(), cells: d.grid.Size(), used: cfg.fit}
	progress(logw, "data: %s: %d users, %d friendships, %d check-ins, max degree %d", d.source, res.users, res.edges, res.checkins, res.maxDegree)

	s := d.sample()
	if res.fitCond, err = estimate.FitConditional(s); err != nil {
		return nil, fmt.Errorf("conditional fit: %w", err)
	}
	if res.fitPairs, err = estimate.FitPairs(s); err != nil {
		return nil, fmt.Errorf("pair fit: %w", err)
	}
	progress(logw, "fit: conditional b=%.4g c=%.4g (LR %.0f); pairs a=%.3g b=%.4g c=%.4g (LR %.0f)",
		res.fitCond.Model.B, res.fitCond.Model.C, res.fitCond.LikelihoodRatio(),
		res.fitPairs.Model.A, res.fitPairs.Model.B, res.fitPairs.Model.C, res.fitPairs.LikelihoodRatio())
	r := rand.New(rand.NewPCG(cfg.seed, 0xddb))
	if cfg.mic {
		res.micLat, res.micLon, res.micPairs, err = micOfPairs(d, r)
		if err != nil {
			return nil, err
		}
		progress(logw, "MIC of friends' median coordinates (%v pairs): latitude %.3f, longitude %.3f", res.micPairs, res.micLat, res.micLon)
	}

	cols := []string{"latitude", "longitude"}
	coefs := map[string]*dependence.Coefficients{}
	for name, f := range map[string]estimate.Fit{"conditional": res.fitCond, "pairs": res.fitPairs} {
		c, err := estimate.FriendDistance(d.grid, f.Model, cols).Prepare()
		if err != nil {
			return nil, fmt.Errorf("%s model: %w", name, err)
		}
		coefs[name] = c
	}
	used, ok := coefs[cfg.fit]
	if !ok {
		return nil, fmt.Errorf("--fit %q: want conditional or pairs", cfg.fit)
	}
	// The adversary gets the best-fitting conditional it can have, not the
	// one the mechanism was calibrated with: the grid-normalised MLE, or
	// Backstrom's model combined with where users actually live.
	candidates := map[string][][]float64{
		"conditional fit":         estimate.Conditional(d.grid, res.fitCond.Model, nil),
		"pair fit × user density": estimate.Conditional(d.grid, res.fitPairs.Model, s.Units),
	}
	res.adversaryLL = map[string]float64{}
	var condMatrix [][]float64
	for _, name := range []string{"conditional fit", "pair fit × user density"} {
		c := candidates[name]
		ll := estimate.LogLikelihood(s, c)
		res.adversaryLL[name] = ll
		if condMatrix == nil || ll > res.adversaryLL[res.adversary] {
			condMatrix, res.adversary = c, name
		}
	}
	// ρ's limit for large multipliers (max total variation) of every
	// conditional, the declarable ones and the best-fitting one.
	res.tvLimit = map[string]float64{
		"conditional fit":         estimate.MaxTotalVariation(candidates["conditional fit"]),
		"pair fit":                estimate.MaxTotalVariation(estimate.Conditional(d.grid, res.fitPairs.Model, nil)),
		"pair fit × user density": estimate.MaxTotalVariation(candidates["pair fit × user density"]),
	}
	progress(logw, "adversary's model: %s (log-likelihoods %v)", res.adversary, res.adversaryLL)

	hist := d.histogram()
	src := noise.SeededSource(cfg.seed)
	targets := pickTargets(d, cfg.targets, r)
	L := 1 + res.maxDegree
	for _, eps := range cfg.eps {
		for _, name := range []string{"conditional", "pairs"} {
			for _, method := range []string{dependence.MethodEq18, dependence.MethodExact} {
				m, rho, err := multiplier(coefs[name], method, eps, res.maxDegree)
				if err != nil {
					return nil, err
				}
				sigma := coefs[name].DeltaD() * m / eps
				e14, err1 := coefs[name].Exact(sigma)
				e18, err2 := coefs[name].Eq18(sigma)
				if err := errors.Join(err1, err2); err != nil {
					return nil, err
				}
				res.rho = append(res.rho, rhoRow{Eps: eps, Fit: name, Method: method, Rho: rho, Multiplier: m, L: L,
					BaselineRatio: float64(L) / m, Eq14: e14, Eq18: e18})
			}
		}
		mechs, err := mechanisms(used, eps, res.maxDegree)
		if err != nil {
			return nil, err
		}
		rows, err := utility(d, eps, mechs, cfg.reps, src)
		if err != nil {
			return nil, err
		}
		res.utility = append(res.utility, rows...)
		for _, m := range mechs {
			if m.name == "ddp (DPM, eq18)" {
				continue // between LPM-exact DPM and the baseline; attacked below only for exact
			}
			sc, err := scaleFor(histSensitivity*m.mult, eps)
			if err != nil {
				return nil, err
			}
			kinds := []attackKind{attackIndependent, attackDependent, attackFriendsKnown}
			if m.name == "baseline (L·ΔQ)" {
				kinds = kinds[1:2] // the baseline is only there to show the dependent attack fails too
			}
			for _, kind := range kinds {
				var leaks []userLeak
				for range cfg.attackReps {
					released := make([]int64, len(hist))
					for c := range hist {
						released[c] = hist[c] + noise.DiscreteLaplace(src, sc)
					}
					leaks = append(leaks, attackRelease(d, condMatrix, hist, released, sc.Float64(), targets, kind)...)
				}
				res.attack = append(res.attack, summarize(eps, m.name, kind, leaks)...)
			}
		}
		progress(logw, "ε = %v done (%.1fs)", eps, time.Since(start).Seconds())
	}
	res.elapsed = time.Since(start)
	return res, nil
}

// pickTargets is a random sample of users with friends plus the 20 users
// of highest degree, whose tuples the most others depend on.
func pickTargets(d *socialData, n int, r *rand.Rand) []int {
	var withFriends []int
	for u, f := range d.friends {
		if len(f) > 0 {
			withFriends = append(withFriends, u)
		}
	}
	byDeg := slices.Clone(withFriends)
	slices.SortStableFunc(byDeg, func(a, b int) int { return len(d.friends[b]) - len(d.friends[a]) })
	chosen := map[int]bool{}
	for _, u := range byDeg[:min(20, len(byDeg))] {
		chosen[u] = true
	}
	perm := r.Perm(len(withFriends))
	for _, k := range perm[:min(n, len(perm))] {
		chosen[withFriends[k]] = true
	}
	out := make([]int, 0, len(chosen))
	for u := range chosen {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

var buckets = []struct {
	name   string
	lo, hi int
}{{"all", 1, math.MaxInt}, {"degree 1", 1, 1}, {"degree 2-5", 2, 5}, {"degree 6-20", 6, 20}, {"degree 21+", 21, math.MaxInt}}

func summarize(eps float64, mech string, kind attackKind, leaks []userLeak) []attackRow {
	var rows []attackRow
	for _, b := range buckets {
		row := attackRow{Eps: eps, Mechanism: mech, Attack: kind.String(), Bucket: b.name, BoundBits: eps / math.Ln2}
		for _, l := range leaks {
			if l.degree < b.lo || l.degree > b.hi {
				continue
			}
			row.Attacks++
			row.LeakBits += l.bits
			row.ErrKm += l.errKm
			if l.hit {
				row.HitRate++
			}
		}
		if row.Attacks == 0 {
			continue
		}
		n := float64(row.Attacks)
		row.LeakBits /= n
		row.ErrKm /= n
		row.HitRate /= n
		rows = append(rows, row)
	}
	return rows
}

// micOfPairs is the MIC between friends' median latitudes and between
// their median longitudes, each friendship once in a random orientation,
// on at most 2,000 friendships (MIC's cost grows like n^1.8).
func micOfPairs(d *socialData, r *rand.Rand) (lat, lon, n float64, err error) {
	idx := r.Perm(len(d.edges))[:min(2000, len(d.edges))]
	var xs, ys [2][]float64
	for _, k := range idx {
		a, b := d.edges[k][0], d.edges[k][1]
		if r.IntN(2) == 1 {
			a, b = b, a
		}
		for dim := range 2 {
			xs[dim] = append(xs[dim], d.median[a][dim])
			ys[dim] = append(ys[dim], d.median[b][dim])
		}
	}
	if lat, err = estimate.MIC(xs[0], ys[0], estimate.MICOptions{}); err != nil {
		return 0, 0, 0, err
	}
	if lon, err = estimate.MIC(xs[1], ys[1], estimate.MICOptions{}); err != nil {
		return 0, 0, 0, err
	}
	return lat, lon, float64(len(idx)), nil
}

func (res *results) files(dir string) []string {
	return []string{filepath.Join(dir, "utility.csv"), filepath.Join(dir, "attack.csv"), filepath.Join(dir, "rho.csv"), filepath.Join(dir, "ddp-eval.svg"), filepath.Join(dir, "report.md")}
}

func (res *results) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := res.files(dir)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	var u [][]string
	u = append(u, []string{"epsilon", "mechanism", "query", "sensitivity", "scale", "rho", "mean_abs_error", "expected_abs_error"})
	for _, r := range res.utility {
		u = append(u, []string{g(r.Eps), r.Mechanism, r.Query, g(r.Sensitivity), g(r.Scale), g(r.Rho), g(r.MeanError), g(r.Expected)})
	}
	a := [][]string{{"epsilon", "mechanism", "attack", "bucket", "attacks", "leaked_bits", "hit_rate", "error_km", "epsilon_bits"}}
	for _, r := range res.attack {
		a = append(a, []string{g(r.Eps), r.Mechanism, r.Attack, r.Bucket, strconv.Itoa(r.Attacks), g(r.LeakBits), g(r.HitRate), g(r.ErrKm), g(r.BoundBits)})
	}
	rh := [][]string{{"epsilon", "fit", "method", "rho_used", "rho_eq14", "rho_eq18", "multiplier", "L", "baseline_over_dpm"}}
	for _, r := range res.rho {
		rh = append(rh, []string{g(r.Eps), r.Fit, r.Method, g(r.Rho), g(r.Eq14), g(r.Eq18), g(r.Multiplier), strconv.Itoa(r.L), g(r.BaselineRatio)})
	}
	for i, rows := range [][][]string{u, a, rh} {
		if err := writeCSV(f[i], rows); err != nil {
			return err
		}
	}
	if err := os.WriteFile(f[3], res.svg(), 0o644); err != nil {
		return err
	}
	var rep bytes.Buffer
	res.report(&rep)
	return os.WriteFile(f[4], rep.Bytes(), 0o644)
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// report prints the headline numbers as Markdown tables.
func (res *results) report(w io.Writer) {
	fmt.Fprintf(w, "# DDP evaluation\n\ndata: %s — %d users, %d friendships, %d check-ins; %d-cell grid; max degree %d (L = %d)\n",
		res.source, res.users, res.edges, res.checkins, res.cells, res.maxDegree, res.maxDegree+1)
	fc, fp := res.fitCond, res.fitPairs
	fmt.Fprintf(w, "\nfriend-distance model (Eq. 26, distances in degrees):\n")
	fmt.Fprintf(w, "- conditional MLE: b = %.4g, c = %.4g (likelihood ratio vs independence %.0f)\n", fc.Model.B, fc.Model.C, fc.LikelihoodRatio())
	fmt.Fprintf(w, "- pair MLE (Backstrom): a = %.3g, b = %.4g, c = %.4g (likelihood ratio %.0f)\n", fp.Model.A, fp.Model.B, fp.Model.C, fp.LikelihoodRatio())
	if res.micPairs > 0 {
		fmt.Fprintf(w, "- MIC of friends' median coordinates (%v pairs): latitude %.3f, longitude %.3f\n", res.micPairs, res.micLat, res.micLon)
	}
	fmt.Fprintf(w, "\nρ and the DPM multiplier m as the proxy solves them (DS = m·ΔQ; baseline L·ΔQ). ρ used = the any-query coefficient\n(≥ Eq. 14; for rho_method eq18 also ≥ Eq. 18); Eq. 14 and Eq. 18 at the same σ = ΔD·m/ε for comparison:\n\n| ε | fit | rho_method | ρ used | ρ Eq. 14 | ρ Eq. 18 | m | L/m |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.rho {
		fmt.Fprintf(w, "| %g | %s | %s | %.4f | %.4f | %.4f | %.2f | %.2f |\n", r.Eps, r.Fit, r.Method, r.Rho, r.Eq14, r.Eq18, r.Multiplier, r.BaselineRatio)
	}
	fmt.Fprintf(w, "\nmean absolute error (model for ρ: %s fit):\n\n| ε | query | dp (LPM) | baseline | DPM eq18 | DPM exact | baseline/DPM exact |\n|---|---|---|---|---|---|---|\n", res.used)
	type key struct {
		eps   float64
		query string
	}
	errs := map[key]map[string]float64{}
	var keys []key
	for _, r := range res.utility {
		k := key{r.Eps, r.Query}
		if errs[k] == nil {
			errs[k] = map[string]float64{}
			keys = append(keys, k)
		}
		errs[k][r.Mechanism] = r.MeanError
	}
	for _, k := range keys {
		e := errs[k]
		fmt.Fprintf(w, "| %g | %s | %.1f | %.1f | %.1f | %.1f | %.2f |\n", k.eps, k.query, e["dp (LPM)"], e["baseline (L·ΔQ)"], e["ddp (DPM, eq18)"], e["ddp (DPM, exact)"], e["baseline (L·ΔQ)"]/e["ddp (DPM, exact)"])
	}
	fmt.Fprintf(w, "\nρ's limit for large m (max total variation between rows of P(x_j | x_i)): conditional fit %.4f, pair fit %.4f,\npair fit × user density (the best-fitting conditional, not declarable in a policy) %.4f\n",
		res.tvLimit["conditional fit"], res.tvLimit["pair fit"], res.tvLimit["pair fit × user density"])
	fmt.Fprintf(w, "\nthe adversary's dependence model: %s (log-likelihood of the friend pairs: %v)\n", res.adversary, res.adversaryLL)
	fmt.Fprintf(w, "\ninference attack on the released histogram, mean leaked information per user in bits (hit rate of the posterior mode), all targets:\n\n| ε | ε in bits | LPM independent | LPM dependent | LPM friends-known | DPM dependent | DPM friends-known | baseline dependent |\n|---|---|---|---|---|---|---|---|\n")
	type ak struct {
		eps        float64
		mech, kind string
	}
	leak := map[ak]attackRow{}
	var epss []float64
	for _, r := range res.attack {
		if r.Bucket != "all" {
			continue
		}
		leak[ak{r.Eps, r.Mechanism, r.Attack}] = r
		if !slices.Contains(epss, r.Eps) {
			epss = append(epss, r.Eps)
		}
	}
	cell := func(e float64, mech, kind string) string {
		r := leak[ak{e, mech, kind}]
		return fmt.Sprintf("%.3f (%.0f%%)", r.LeakBits, 100*r.HitRate)
	}
	for _, e := range epss {
		fmt.Fprintf(w, "| %g | %.3f | %s | %s | %s | %s | %s | %s |\n", e, e/math.Ln2,
			cell(e, "dp (LPM)", "independent"), cell(e, "dp (LPM)", "dependent"), cell(e, "dp (LPM)", "friends-known"),
			cell(e, "ddp (DPM, exact)", "dependent"), cell(e, "ddp (DPM, exact)", "friends-known"), cell(e, "baseline (L·ΔQ)", "dependent"))
	}
	fmt.Fprintf(w, "\nleaked bits by degree, dependent attack (LPM → DPM exact):\n\n| ε |")
	for _, b := range buckets[1:] {
		fmt.Fprintf(w, " %s |", b.name)
	}
	fmt.Fprintf(w, "\n|---|---|---|---|---|\n")
	byBucket := map[ak]float64{}
	for _, r := range res.attack {
		if r.Attack == "dependent" {
			byBucket[ak{r.Eps, r.Mechanism, r.Bucket}] = r.LeakBits
		}
	}
	for _, e := range epss {
		fmt.Fprintf(w, "| %g |", e)
		for _, b := range buckets[1:] {
			fmt.Fprintf(w, " %.3f → %.3f |", byBucket[ak{e, "dp (LPM)", b.name}], byBucket[ak{e, "ddp (DPM, exact)", b.name}])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nruntime %.1fs\n", res.elapsed.Seconds())
}
