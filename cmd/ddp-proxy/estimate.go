package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/dependence/estimate"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

const estimateUsage = `usage: ddp-proxy estimate-dependence --policy FILE --table T --columns A,B --attributes X,Y [flags]

Fits the friend-distance model of liu2016 Eq. 26 to the units related by
table T (columns A, B hold unit values) and the attribute columns X, Y of
those units, prints ρ by Eq. 18 and Eq. 14 at the DPM fixed point, the MIC
between related units' attributes, and a policy snippet. Advisory only: it
reads private data; see the warning it prints.

flags:
`

// cmdEstimate is `ddp-proxy estimate-dependence`.
func cmdEstimate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("estimate-dependence", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, estimateUsage); fs.PrintDefaults() }
	policyPath := fs.String("policy", "", "policy file (its backend is read)")
	schema := fs.String("schema", "", "backend schema of both tables (default: the backend's)")
	table := fs.String("table", "", "relationship table (friendships)")
	columnsFlag := fs.String("columns", "", "the relationship table's two unit columns, a,b")
	directed := fs.Bool("directed", false, "each row a,b is one direction only (default: both)")
	attrsFlag := fs.String("attributes", "", "attribute columns of the units, e.g. latitude,longitude")
	attrTable := fs.String("attribute-table", "", "table holding the attributes (default: the policy's private table that declares them all)")
	unitFlag := fs.String("unit", "", "unit column of the attribute table (default: the table's unit in the policy)")
	gridFlag := fs.String("grid", "", "grid per attribute, col=lo:hi:cells,... (default: the policy's bounds of each column with --cells cells)")
	cells := fs.Int("cells", 10, "cells per attribute when the grid comes from the policy's bounds")
	epsFlag := fs.String("epsilon", "0.1,1", "ε values at which to report ρ and the DPM multiplier")
	micPairs := fs.Int("mic-pairs", 2000, "related pairs sampled for the MIC (its cost grows like n^1.8)")
	seed := fs.Uint64("seed", 1, "seed of the MIC's pair sample")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	cols, attrs := splitList(*columnsFlag), splitList(*attrsFlag)
	if *policyPath == "" || *table == "" || len(cols) != 2 || len(attrs) == 0 || fs.NArg() != 0 {
		fs.Usage()
		return exitError{2}
	}
	eps, err := parsePositive(*epsFlag)
	if err != nil {
		fmt.Fprintf(stderr, "--epsilon: %v\n", err)
		return exitError{2}
	}
	pol, err := policies.LoadWith(*policyPath, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	at, unit, err := attributeTable(pol, *attrTable, *unitFlag, attrs)
	if err != nil {
		fmt.Fprintf(stderr, "estimate-dependence: %v\n", err)
		return exitError{2}
	}
	grid, err := gridFor(pol, at, attrs, *gridFlag, *cells)
	if err != nil {
		fmt.Fprintf(stderr, "estimate-dependence: %v\n", err)
		return exitError{2}
	}
	be, err := connect.Open(ctx, pol.Backend, nil)
	if err != nil {
		return err // connect.OpenError says what was tried
	}
	defer be.Close()
	d := sqlrender.ByName(be.Dialect())
	if d == nil {
		return fmt.Errorf("backend dialect %q has no renderer", be.Dialect())
	}
	qname := func(t string) string {
		if *schema != "" {
			return d.QuoteIdent(*schema) + "." + d.QuoteIdent(t)
		}
		return d.QuoteIdent(t)
	}
	start := time.Now()
	prog := &progressLog{w: stderr, start: start, what: "rows"}

	// Attributes: every row of the unit; the unit's value is its most
	// frequent grid cell (liu2016 Eq. 4 with q = 1), and the coordinate-wise
	// median of its rows for the MIC.
	type unitData struct {
		cells  map[int]int
		values [][]float64
	}
	units := map[ir.Value]*unitData{}
	sel := []string{d.QuoteIdent(unit)}
	for _, a := range attrs {
		sel = append(sel, d.QuoteIdent(a))
	}
	attrSQL := "SELECT " + strings.Join(sel, ", ") + " FROM " + qname(at)
	fmt.Fprintf(stderr, "reading %s ...\n", attrSQL)
	skipped := 0
	err = be.Rows(ctx, attrSQL, nil, func(_ []string, row []ir.Value) error {
		prog.tick()
		v := make([]float64, len(attrs))
		for k := range attrs {
			f, ok := row[k+1].AsFloat()
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				skipped++
				return nil
			}
			v[k] = f
		}
		if row[0].IsNull() {
			skipped++
			return nil
		}
		key := unitKey(row[0])
		u := units[key]
		if u == nil {
			u = &unitData{cells: map[int]int{}}
			units[key] = u
		}
		c, _ := grid.Cell(v)
		u.cells[c]++
		for k := range v {
			if len(u.values) <= k {
				u.values = append(u.values, nil)
			}
			u.values[k] = append(u.values[k], v[k])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading %s: %w", at, err)
	}
	prog.done()
	home := make(map[ir.Value]int, len(units))
	median := make(map[ir.Value][]float64, len(units))
	for k, u := range units {
		best, bestN := -1, 0
		for c, n := range u.cells {
			if n > bestN || (n == bestN && c < best) {
				best, bestN = c, n
			}
		}
		home[k] = best
		m := make([]float64, len(u.values))
		for i, vs := range u.values {
			m[i] = estimate.Median(vs)
		}
		median[k] = m
	}

	relSQL := "SELECT " + d.QuoteIdent(cols[0]) + ", " + d.QuoteIdent(cols[1]) + " FROM " + qname(*table)
	fmt.Fprintf(stderr, "reading %s ...\n", relSQL)
	prog = &progressLog{w: stderr, start: time.Now(), what: "relationships"}
	type edge struct{ a, b ir.Value }
	var edges []edge
	seen := map[edge]bool{}
	outDeg := map[ir.Value]int{}
	noAttr := 0
	err = be.Rows(ctx, relSQL, nil, func(_ []string, row []ir.Value) error {
		prog.tick()
		if row[0].IsNull() || row[1].IsNull() {
			return nil
		}
		a, b := unitKey(row[0]), unitKey(row[1])
		if a == b {
			return nil
		}
		if _, ok := home[a]; !ok {
			noAttr++
			return nil
		}
		if _, ok := home[b]; !ok {
			noAttr++
			return nil
		}
		dirs := []edge{{a, b}}
		if !*directed {
			dirs = append(dirs, edge{b, a})
		}
		for _, e := range dirs {
			if !seen[e] {
				seen[e] = true
				edges = append(edges, e)
				outDeg[e.a]++
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading %s: %w", *table, err)
	}
	prog.done()
	if len(edges) == 0 {
		fmt.Fprintf(stderr, "estimate-dependence: no relationship joins two units with attributes (%d rows had an end without attributes)\n", noAttr)
		return exitError{1}
	}
	maxDeg := 0
	for _, n := range outDeg {
		maxDeg = max(maxDeg, n)
	}

	sample := estimate.Sample{Grid: grid, Units: make([]float64, grid.Size())}
	for _, c := range home {
		sample.Units[c]++
	}
	pairCounts := map[[2]int]float64{}
	for _, e := range edges {
		pairCounts[[2]int{home[e.a], home[e.b]}]++
	}
	for k, n := range pairCounts {
		sample.Pairs = append(sample.Pairs, estimate.Pair{From: k[0], To: k[1], N: n})
	}
	slices.SortFunc(sample.Pairs, func(x, y estimate.Pair) int { return (x.From-y.From)*grid.Size() + x.To - y.To })
	fmt.Fprintln(stderr, "fitting the friend-distance model ...")
	fitC, err := estimate.FitConditional(sample)
	if err != nil {
		return err
	}
	var fitP estimate.Fit
	if !*directed {
		// The pair fit counts unrelated pairs too: it needs a symmetric
		// relation over all units with attributes.
		if fitP, err = estimate.FitPairs(sample); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "computing the MIC on up to %d pairs ...\n", *micPairs)
	r := rand.New(rand.NewPCG(*seed, 0x5eed))
	idx := r.Perm(len(edges))[:min(*micPairs, len(edges))]
	mic := make([]float64, len(attrs))
	if len(idx) >= 4 {
		for k := range attrs {
			x, y := make([]float64, len(idx)), make([]float64, len(idx))
			for n, i := range idx {
				x[n], y[n] = median[edges[i].a][k], median[edges[i].b][k]
			}
			if mic[k], err = estimate.MIC(x, y, estimate.MICOptions{}); err != nil {
				return err
			}
		}
	}

	// Report.
	w := stdout
	fmt.Fprintf(w, "relationships: %s(%s, %s): %d %s links; %d units have dependents; largest out-degree %d (L = %d)\n",
		*table, cols[0], cols[1], len(edges), map[bool]string{true: "directed", false: "ordered (both directions)"}[*directed], len(outDeg), maxDeg, maxDeg+1)
	if noAttr > 0 {
		fmt.Fprintf(w, "  %d relationship rows skipped: an end has no attribute row\n", noAttr)
	}
	fmt.Fprintf(w, "attributes: %s of %s by %s: %d units", strings.Join(attrs, ", "), at, unit, len(units))
	if skipped > 0 {
		fmt.Fprintf(w, " (%d rows with NULL or non-numeric values skipped)", skipped)
	}
	fmt.Fprintf(w, "; grid %s\n\n", gridString(grid, attrs))
	fmt.Fprintf(w, "friend-distance model P(d_j|d_i) = a(‖d_i − d_j‖₁ + b)^−c (liu2016 Eq. 26; distances in the attributes' units):\n")
	fmt.Fprintf(w, "  conditional MLE, grid-normalised:  b = %.6g  c = %.6g   likelihood ratio vs independence %.1f\n", fitC.Model.B, fitC.Model.C, fitC.LikelihoodRatio())
	if !*directed {
		fmt.Fprintf(w, "  pair MLE (Backstrom et al. 2010):  a = %.6g  b = %.6g  c = %.6g   likelihood ratio %.1f\n", fitP.Model.A, fitP.Model.B, fitP.Model.C, fitP.LikelihoodRatio())
	}
	type candidate struct {
		name string
		fit  estimate.Fit
	}
	cands := []candidate{{"conditional", fitC}}
	if !*directed {
		cands = append(cands, candidate{"pairs", fitP})
	}
	fmt.Fprintf(w, "\nρ at the proxy's DPM fixed point m ≥ 1 + %d·ρ(σ), σ = ΔD·m/ε. \"ρ used\" is what the proxy\n", maxDeg)
	fmt.Fprintf(w, "calibrates with for rho_method exact (valid for every COUNT/SUM/histogram, ≥ Eq. 14); Eq. 14 and\n")
	fmt.Fprintf(w, "Eq. 18 are liu2016's coefficients at the same σ; rho_method eq18 uses max(ρ used, Eq. 18):\n")
	fmt.Fprintf(w, "  %-8s %-12s %9s %9s %9s %9s %9s\n", "ε", "model", "ρ Eq.14", "ρ Eq.18", "ρ used", "m exact", "m eq18")
	worst := map[string]float64{}
	for _, e := range eps {
		for _, c := range cands {
			coef, err := estimate.FriendDistance(grid, c.fit.Model, attrs).Prepare()
			if err != nil {
				return fmt.Errorf("%s model: %w", c.name, err)
			}
			var ms [2]dependence.Multiplier
			for i, method := range []string{dependence.MethodExact, dependence.MethodEq18} {
				s, err := dependence.NewModelSolver(coef, method, maxDeg)
				if err != nil {
					return err
				}
				if ms[i], err = s.Multiplier(e); err != nil {
					return err
				}
			}
			sigma := coef.DeltaD() * ms[0].M / e
			e14, err1 := coef.Exact(sigma)
			e18, err2 := coef.Eq18(sigma)
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			worst[c.name] = max(worst[c.name], *ms[0].Rho)
			fmt.Fprintf(w, "  %-8g %-12s %9.4f %9.4f %9.4f %9.2f %9.2f\n", e, c.name, e14, e18, *ms[0].Rho, ms[0].M, ms[1].M)
		}
	}
	fmt.Fprintf(w, "\nMIC between related units' attributes (Reshef et al. 2011, as ali2022; %d pairs):", len(idx))
	micMax := 0.0
	for k, a := range attrs {
		fmt.Fprintf(w, " %s %.3f", a, mic[k])
		micMax = max(micMax, mic[k])
	}
	fmt.Fprintf(w, "\n  as a declared coefficient (edges: rho: %.3f) it is a second opinion only: MIC measures\n", micMax)
	fmt.Fprintf(w, "  association, not the Eq. 14 ratio, and is not a bound on ρ.\n")

	// Which model to declare. Overestimating ρ costs accuracy,
	// underestimating it costs privacy. The best-fitting conditional is
	// the pair fit combined with where units are, which no policy can
	// declare; its ρ (in the large-multiplier limit, the largest total
	// variation between its rows) is the reference. Declare the declarable
	// fit with the smallest ρ that is not below the reference, or the
	// larger one when both are.
	var ref float64
	tv := map[string]float64{}
	if !*directed {
		best := estimate.Conditional(grid, fitP.Model, sample.Units)
		ref = estimate.MaxTotalVariation(best)
		for _, c := range cands {
			tv[c.name] = estimate.MaxTotalVariation(estimate.Conditional(grid, c.fit.Model, nil))
		}
		fmt.Fprintf(w, "\nreference: the best-fitting conditional, the pair fit × units per cell (not declarable; log-likelihood\n")
		fmt.Fprintf(w, "  %.1f vs %.1f for the conditional fit), has ρ → %.4f for large m (max total variation between\n",
			estimate.LogLikelihood(sample, best), estimate.LogLikelihood(sample, estimate.Conditional(grid, fitC.Model, nil)), ref)
		fmt.Fprintf(w, "  its rows); the same limit is %.4f for the conditional fit and %.4f for the pair fit.\n", tv["conditional"], tv["pairs"])
	}
	pick := cands[0]
	for _, c := range cands[1:] {
		covers, pickCovers := tv[c.name] >= ref, tv[pick.name] >= ref
		switch {
		case covers && (!pickCovers || worst[c.name] < worst[pick.name]):
			pick = c
		case !covers && !pickCovers && worst[c.name] > worst[pick.name]:
			pick = c
		}
	}
	why := "the larger ρ"
	if !*directed && tv[pick.name] >= ref {
		why = "the smallest ρ not below the reference"
	}
	fmt.Fprint(w, `
WARNING: these numbers were computed from the private data itself. Publishing
them, or a policy built from them, releases information about that data that
no privacy budget accounts for: prefer parameters from public sources or from a
separate, consented sample, and treat this output as confidential. A model that
UNDERESTIMATES the dependence weakens the guarantee — DDP then holds only for
an adversary who believes the weaker dependence (liu2016 §VI-D3) — so round ρ
up, not down, and prefer the larger estimate when in doubt.
`)
	fmt.Fprintf(w, "\npolicy snippet (the %s fit: %s; put it under the dataset, model: ddp):\n\n", pick.name, why)
	fmt.Fprint(w, policySnippet(*schema, *table, cols, *directed, attrs, grid, pick.fit.Model))
	return nil
}

// policySnippet is the dependence block of a ddp dataset for the model.
func policySnippet(schema, table string, cols []string, directed bool, attrs []string, g estimate.Grid, m estimate.Model) string {
	var b strings.Builder
	b.WriteString("    dependence:\n      edges:\n")
	if schema != "" {
		fmt.Fprintf(&b, "        schema: %s\n", schema)
	}
	fmt.Fprintf(&b, "        table: %s\n        columns: [%s, %s]\n", table, cols[0], cols[1])
	if directed {
		b.WriteString("        directed: true\n")
	}
	fd := estimate.FriendDistance(g, m, attrs)
	fmt.Fprintf(&b, "        model:\n          a: %s\n          b: %s\n          c: %s\n", yamlFloat(fd.A), yamlFloat(fd.B), yamlFloat(fd.C))
	fmt.Fprintf(&b, "          columns: [%s]\n          grid:\n", strings.Join(attrs, ", "))
	for _, ax := range fd.Axes {
		vals := make([]string, len(ax.Values))
		for i, v := range ax.Values {
			vals[i] = yamlFloat(v)
		}
		fmt.Fprintf(&b, "            %s: {values: [%s]}\n", ax.Column, strings.Join(vals, ", "))
	}
	b.WriteString("          rho_method: exact\n")
	return b.String()
}

// yamlFloat prints a float that round-trips and always reads as a number.
func yamlFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', 10, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// attributeTable picks the table holding the attributes and its unit.
func attributeTable(pol *policies.Policy, table, unit string, attrs []string) (string, string, error) {
	var found []*policies.Table
	for _, dn := range pol.DatasetNames {
		for _, t := range pol.Datasets[dn].Tables {
			if t == nil || t.Public || (table != "" && !strings.EqualFold(t.Name, table)) {
				continue
			}
			all := true
			for _, a := range attrs {
				if _, ok := t.Columns[strings.ToLower(a)]; !ok {
					all = false
				}
			}
			if all || table != "" {
				found = append(found, t)
			}
		}
	}
	switch {
	case len(found) == 1:
		if unit == "" {
			unit = found[0].Unit
		}
		return found[0].Name, unit, nil
	case table != "" && unit != "":
		return table, unit, nil // not declared in the policy: trust the flags
	case len(found) == 0:
		return "", "", fmt.Errorf("no private table of the policy declares %s; pass --attribute-table and --unit", strings.Join(attrs, ", "))
	}
	return "", "", fmt.Errorf("several private tables declare %s; pass --attribute-table", strings.Join(attrs, ", "))
}

// gridFor parses --grid or builds the grid from the policy's bounds.
func gridFor(pol *policies.Policy, table string, attrs []string, spec string, cells int) (estimate.Grid, error) {
	g := estimate.Grid{}
	given := map[string][3]float64{}
	for _, part := range splitList(spec) {
		name, rest, ok := strings.Cut(part, "=")
		f := strings.Split(rest, ":")
		if !ok || len(f) != 3 {
			return g, fmt.Errorf("--grid: %q is not col=lo:hi:cells", part)
		}
		var v [3]float64
		for i := range f {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return g, fmt.Errorf("--grid: %q: %v", part, err)
			}
			v[i] = x
		}
		given[strings.ToLower(name)] = v
	}
	var t *policies.Table
	for _, dn := range pol.DatasetNames {
		if tt, ok := pol.Datasets[dn].Tables[strings.ToLower(table)]; ok {
			t = tt
		}
	}
	for _, a := range attrs {
		v, ok := given[strings.ToLower(a)]
		if !ok {
			var c *policies.Column
			if t != nil {
				c = t.Columns[strings.ToLower(a)]
			}
			if c == nil || len(c.Bounds) != 2 {
				return g, fmt.Errorf("column %s has no bounds in the policy; give its grid with --grid %s=lo:hi:cells", a, a)
			}
			v = [3]float64{c.Bounds[0], c.Bounds[1], float64(cells)}
		}
		if v[2] != math.Trunc(v[2]) || v[2] < 1 {
			return g, fmt.Errorf("grid of %s: %v cells", a, v[2])
		}
		g.Lo, g.Hi, g.Cells = append(g.Lo, v[0]), append(g.Hi, v[1]), append(g.Cells, int(v[2]))
	}
	if err := g.Validate(); err != nil {
		return g, err
	}
	if g.Size() > dependence.MaxGridPoints {
		return g, fmt.Errorf("the grid has %d cells; the ρ computation takes at most %d: use fewer cells", g.Size(), dependence.MaxGridPoints)
	}
	return g, nil
}

func gridString(g estimate.Grid, attrs []string) string {
	parts := make([]string, len(attrs))
	for k, a := range attrs {
		parts[k] = fmt.Sprintf("%s [%g, %g] in %d cells", a, g.Lo[k], g.Hi[k], g.Cells[k])
	}
	return strings.Join(parts, " × ")
}

// unitKey normalises a unit value the way the dependence loader does: an
// integral float is the same unit as the integer.
func unitKey(v ir.Value) ir.Value {
	if v.Kind == ir.KindFloat && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53 {
		return ir.Int(int64(v.Float))
	}
	return v
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parsePositive(s string) ([]float64, error) {
	var out []float64
	for _, p := range splitList(s) {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no values")
	}
	return out, nil
}

// progressLog prints a line to stderr every few seconds on long reads.
type progressLog struct {
	w     io.Writer
	start time.Time
	last  time.Time
	n     int
	what  string
}

func (p *progressLog) tick() {
	p.n++
	if p.n%65536 != 0 {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 2*time.Second {
		p.last = now
		fmt.Fprintf(p.w, "  %d %s read (%.0fs)\n", p.n, p.what, now.Sub(p.start).Seconds())
	}
}

func (p *progressLog) done() {
	fmt.Fprintf(p.w, "  %d %s read in %.1fs\n", p.n, p.what, time.Since(p.start).Seconds())
}
