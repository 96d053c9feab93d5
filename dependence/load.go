package dependence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Querier is what Load needs from a backend (planner.Backend has it): plain
// SELECTs over the relationship or group table, streamed row by row.
type Querier interface {
	Dialect() string
	Rows(ctx context.Context, sql string, args []ir.Value, fn func(cols []string, row []ir.Value) error) error
}

// Load reads the dependence structure of every ddp dataset of pol and sets
// its Dependence.Structure. It replaces the structures of pol only when
// every dataset loaded, so a failed reload leaves a fresh policy unusable
// rather than half-prepared. q may be nil when no dataset needs the backend
// (size: L only).
func Load(ctx context.Context, pol *policies.Policy, q Querier, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	got := map[string]*policies.DependenceStructure{}
	var errs []error
	for _, dn := range pol.DatasetNames {
		ds := pol.Datasets[dn]
		if ds == nil || ds.Model != policies.ModelDDP || ds.Dependence == nil {
			continue
		}
		s, err := Read(ctx, ds, q)
		if err != nil {
			errs = append(errs, fmt.Errorf("dataset %s: %w", dn, err))
			continue
		}
		got[dn] = s
		log.Info("dependence structure loaded", "dataset", dn, "kind", s.Kind, "L", s.L,
			"units", s.Units, "links", s.Links, "max_weighted_degree", s.MaxWeightedDegree, "source", s.Source)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for dn, s := range got {
		pol.Datasets[dn].Dependence.Structure = s
	}
	return nil
}

// Read builds the structure of one ddp dataset. Only size: L is known
// without a backend; groups and edges are read with q.
func Read(ctx context.Context, ds *policies.Dataset, q Querier) (*policies.DependenceStructure, error) {
	dep := ds.Dependence
	switch dep.Kind() {
	case policies.DependenceSizeKind:
		L := dep.Size
		s := &policies.DependenceStructure{
			Kind: policies.DependenceSizeKind, L: L, MaxWeightedDegree: float64(L - 1),
			Source: fmt.Sprintf("declared size L = %d", L),
			Solver: ConstSolver{W: float64(L)},
		}
		return s, nil
	case policies.DependenceGroupsKind, policies.DependenceEdgesKind:
		if q == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"dataset %s declares its dependence as %s in the backend, and no backend is connected to read it", ds.Name, dep.Kind()).
				WithHint("connect to the backend (check --connect, explain with a reachable backend) or declare size: L")
		}
		if dep.Kind() == policies.DependenceGroupsKind {
			return readGroups(ctx, ds, q)
		}
		return readEdges(ctx, ds, q)
	}
	return nil, fmt.Errorf("dataset %s: no dependence declared", ds.Name)
}

// graph accumulates ρ_ij over units interned to dense ids.
type graph struct {
	ids   map[string]int32
	out   []map[int32]float64 // out[i][j] = ρ_ij, i ≠ j
	links int
}

func newGraph() *graph { return &graph{ids: map[string]int32{}} }

// id interns a unit by its text form, so that 1, 1.0 and '1' in columns
// of different types are one unit. Merging units can only raise degrees
// (the safe side); splitting one unit into two could lower them.
func (g *graph) id(v ir.Value) int32 {
	k := v.Text()
	id, ok := g.ids[k]
	if !ok {
		id = int32(len(g.out))
		g.ids[k] = id
		g.out = append(g.out, nil)
	}
	return id
}

// add records ρ_ij; a pair listed twice keeps its larger ρ.
func (g *graph) add(i, j int32, rho float64) {
	m := g.out[i]
	if m == nil {
		m = map[int32]float64{}
		g.out[i] = m
	}
	old, ok := m[j]
	if !ok {
		g.links++
	}
	if !ok || rho > old {
		m[j] = rho
	}
}

// summary fills the degree statistics. weighted is false for a model (ρ is
// not known until the noise scale is).
func (g *graph) summary(s *policies.DependenceStructure, weighted bool) (maxDeg int, maxW float64) {
	var degs, ws, rhos []float64
	for _, m := range g.out {
		if len(m) == 0 {
			continue
		}
		var sum float64
		if weighted {
			sum = exactSum(m)
			for _, r := range m {
				rhos = append(rhos, r)
			}
		}
		maxDeg = max(maxDeg, len(m))
		degs = append(degs, float64(len(m)))
		if weighted {
			ws = append(ws, sum)
			maxW = max(maxW, sum)
		}
	}
	s.Units, s.Links, s.L = len(degs), g.links, 1+maxDeg
	s.Degree, s.WeightedDegree, s.Rho = quantiles(degs), quantiles(ws), quantiles(rhos)
	if !weighted {
		maxW = float64(maxDeg)
	}
	s.MaxWeightedDegree = maxW
	return maxDeg, maxW
}

// exactSum is the smallest float64 ≥ the exact sum of the weights read as
// the shortest decimals of their floats (as declared: 0.1 is 1/10). Float
// addition in map order could land below the exact sum, and the multiplier
// must never come out below 1 + Σρ through rounding.
func exactSum[K comparable](m map[K]float64) float64 {
	sum := new(big.Rat)
	var r big.Rat
	for _, w := range m {
		if _, ok := r.SetString(strconv.FormatFloat(w, 'g', -1, 64)); !ok {
			r.SetFloat64(w)
		}
		sum.Add(sum, &r)
	}
	return roundUp(sum)
}

// roundUp is the smallest float64 ≥ the exact rational r.
func roundUp(r *big.Rat) float64 {
	f, _ := r.Float64()
	if new(big.Rat).SetFloat64(f).Cmp(r) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// exactWeight is 1 + max_i Σ_{j≠i} ρ_ij computed exactly (the float sums
// only pick the candidates) and rounded up, so the multiplier is never
// below the true maximum and equals it whenever it is representable
// (1 + 2·0.3 gives 1.6, not 1.6000000000000003).
func (g *graph) exactWeight(maxW float64) float64 {
	best := new(big.Rat).SetInt64(0)
	for _, m := range g.out {
		if len(m) == 0 {
			continue
		}
		var sum float64
		for _, r := range m {
			sum += r
		}
		if sum < maxW*(1-1e-9) {
			continue
		}
		ex := new(big.Rat)
		for _, r := range m {
			ex.Add(ex, new(big.Rat).SetFloat64(r))
		}
		if ex.Cmp(best) > 0 {
			best = ex
		}
	}
	return roundUp(best.Add(best, big.NewRat(1, 1)))
}

func tableName(d *sqlrender.Dialect, schema, table string) string {
	if schema != "" {
		return d.QuoteIdent(schema) + "." + d.QuoteIdent(table)
	}
	return d.QuoteIdent(table)
}

func dialect(q Querier) (*sqlrender.Dialect, error) {
	d := sqlrender.ByName(q.Dialect())
	if d == nil {
		return nil, fmt.Errorf("no SQL dialect for backend %q", q.Dialect())
	}
	return d, nil
}

func readEdges(ctx context.Context, ds *policies.Dataset, q Querier) (*policies.DependenceStructure, error) {
	e := ds.Dependence.Edges
	d, err := dialect(q)
	if err != nil {
		return nil, err
	}
	schema := e.Schema
	if t := ds.Tables[e.Table]; t != nil && schema == "" {
		schema = t.Schema
	}
	cols := []string{d.QuoteIdent(e.Columns[0]), d.QuoteIdent(e.Columns[1])}
	if e.RhoColumn != "" {
		cols = append(cols, d.QuoteIdent(e.RhoColumn))
	}
	sql := "SELECT " + strings.Join(cols, ", ") + " FROM " + tableName(d, schema, e.Table)
	rho := 1.0
	if e.Rho != nil {
		rho = *e.Rho
	}
	g := newGraph()
	var rows, skipped, badRho int
	var badExample string
	err = q.Rows(ctx, sql, nil, func(_ []string, row []ir.Value) error {
		rows++
		if len(row) != len(cols) {
			return fmt.Errorf("relationship query returned %d columns, want %d", len(row), len(cols))
		}
		if row[0].IsNull() || row[1].IsNull() {
			skipped++
			return nil
		}
		r := rho
		if e.RhoColumn != "" {
			v, ok := row[2].AsFloat()
			if !ok || !(v >= 0 && v <= 1) {
				badRho++
				if badExample == "" {
					badExample = row[2].SQL()
				}
				return nil
			}
			r = v
		}
		a, b := g.id(row[0]), g.id(row[1])
		if a == b {
			skipped++ // ρ_ii = 1 already
			return nil
		}
		g.add(a, b, r)
		if !e.Directed {
			g.add(b, a, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the relationship table %s: %w", e.Table, err)
	}
	if badRho > 0 {
		return nil, fmt.Errorf("relationship table %s: %d rows have %s outside [0, 1] or NULL (e.g. %s); fix them or declare rho", e.Table, badRho, e.RhoColumn, badExample)
	}
	s := &policies.DependenceStructure{Kind: policies.DependenceEdgesKind, Skipped: skipped}
	dir := "undirected"
	if e.Directed {
		dir = "directed"
	}
	s.Source = fmt.Sprintf("%s: %d rows, %s", e.Table, rows, dir)
	if e.Model == nil {
		_, maxW := g.summary(s, true)
		s.Solver = ConstSolver{W: g.exactWeight(maxW)}
		return s, nil
	}
	maxDeg, _ := g.summary(s, false)
	coef, err := ModelOf(e.Model).Prepare()
	if err != nil {
		return nil, fmt.Errorf("edges.model: %w", err)
	}
	s.RhoMethod = e.Model.RhoMethod
	// Build AnyQuery's pair tables now (once per load) rather than in the
	// first query.
	if _, err := coef.AnyQuery(math.Max(coef.DeltaD(), 1)); err != nil {
		return nil, err
	}
	if s.Solver, err = NewModelSolver(coef, e.Model.RhoMethod, maxDeg); err != nil {
		return nil, err
	}
	return s, nil
}

// ModelOf converts the policy's model declaration (validated) to a
// FriendDistance.
func ModelOf(m *policies.DependenceModel) FriendDistance {
	fd := FriendDistance{}
	if m.A != nil {
		fd.A = *m.A
	}
	if m.B != nil {
		fd.B = *m.B
	}
	if m.C != nil {
		fd.C = *m.C
	}
	for _, c := range m.Columns {
		ax := Axis{Column: c}
		if g := m.Grid[c]; g != nil {
			ax.Values = slices.Clone(g.Resolved)
		}
		fd.Axes = append(fd.Axes, ax)
	}
	return fd
}

// groupDegrees is what the group readers produce: per unit with
// dependents its number of dependents, and totals.
type groupDegrees struct {
	degs          []float64
	maxDeg, links int
	groups, units int
}

func (g *groupDegrees) add(n int) {
	if n > 0 {
		g.degs = append(g.degs, float64(n))
		g.links += n
	}
	g.maxDeg = max(g.maxDeg, n)
}

// readGroups summarises group dependence with GROUP BY queries: the
// number of units in more than one group, then (the usual case: none) the
// size of every group. Only if some unit belongs to several groups are the
// (group, unit) pairs read to take the union of its groups exactly.
func readGroups(ctx context.Context, ds *policies.Dataset, q Querier) (*policies.DependenceStructure, error) {
	gr := ds.Dependence.Groups
	t, why := ds.GroupsTable()
	if t == nil {
		return nil, errors.New(why)
	}
	d, err := dialect(q)
	if err != nil {
		return nil, err
	}
	gc, uc := d.QuoteIdent(gr.Column), d.QuoteIdent(t.Unit)
	from := " FROM " + tableName(d, t.Schema, t.Name) + " WHERE " + gc + " IS NOT NULL AND " + uc + " IS NOT NULL"
	var multi int64 = -1
	err = q.Rows(ctx, "SELECT COUNT(*) FROM (SELECT "+uc+from+" GROUP BY "+uc+" HAVING COUNT(DISTINCT "+gc+") > 1) AS ddp_multi", nil,
		func(_ []string, row []ir.Value) error {
			if len(row) != 1 {
				return fmt.Errorf("group query returned %d columns, want 1", len(row))
			}
			v, ok := row[0].AsFloat()
			if !ok {
				return fmt.Errorf("group query returned %s, want a count", row[0].Kind)
			}
			multi = int64(v)
			return nil
		})
	if err == nil && multi < 0 {
		err = errors.New("group query returned no row")
	}
	if err != nil {
		return nil, fmt.Errorf("reading groups %s.%s: %w", t.Name, gr.Column, err)
	}
	var gd groupDegrees
	if multi == 0 {
		err = readGroupSizes(ctx, q, "SELECT COUNT(DISTINCT "+uc+")"+from+" GROUP BY "+gc, &gd)
	} else {
		err = readGroupPairs(ctx, q, "SELECT DISTINCT "+gc+", "+uc+from, &gd)
	}
	if err != nil {
		return nil, fmt.Errorf("reading groups %s.%s: %w", t.Name, gr.Column, err)
	}
	rho := 1.0
	if gr.Rho != nil {
		rho = *gr.Rho
	}
	ws := make([]float64, len(gd.degs))
	for i, n := range gd.degs {
		ws[i] = n * rho
	}
	s := &policies.DependenceStructure{
		Kind: policies.DependenceGroupsKind, L: 1 + gd.maxDeg, Units: len(gd.degs), Links: gd.links,
		MaxWeightedDegree: float64(gd.maxDeg) * rho,
		Degree:            quantiles(gd.degs), WeightedDegree: quantiles(ws),
		Source: fmt.Sprintf("%s.%s: %d groups over %d units, %d units in several groups", t.Name, gr.Column, gd.groups, gd.units, multi),
		// 1 + n·ρ exactly, rounded up.
		Solver: ConstSolver{W: roundUp(new(big.Rat).Add(big.NewRat(1, 1),
			new(big.Rat).Mul(big.NewRat(int64(gd.maxDeg), 1), new(big.Rat).SetFloat64(rho))))},
	}
	if gd.links > 0 {
		s.Rho = policies.Quantiles{Min: rho, P50: rho, P90: rho, P99: rho, Max: rho, Mean: rho}
	}
	return s, nil
}

// readGroupSizes reads one size per group (every unit in one group).
func readGroupSizes(ctx context.Context, q Querier, sql string, gd *groupDegrees) error {
	return q.Rows(ctx, sql, nil, func(_ []string, row []ir.Value) error {
		if len(row) != 1 {
			return fmt.Errorf("group query returned %d columns, want 1", len(row))
		}
		v, ok := row[0].AsFloat()
		if !ok || v < 0 || v > math.MaxInt32 {
			return fmt.Errorf("group query returned %s, want a count", row[0].Kind)
		}
		n := int(v)
		gd.groups++
		gd.units += n
		for range n {
			gd.add(n - 1)
		}
		return nil
	})
}

// readGroupPairs reads (group, unit) pairs: dependents(u) = (⋃ of u's
// groups) \ {u}.
func readGroupPairs(ctx context.Context, q Querier, sql string, gd *groupDegrees) error {
	groups := map[ir.Value][]int32{}
	units := newGraph() // only for interning unit ids
	var unitGroups [][]ir.Value
	err := q.Rows(ctx, sql, nil, func(_ []string, row []ir.Value) error {
		if len(row) != 2 {
			return fmt.Errorf("group query returned %d columns, want 2", len(row))
		}
		u := units.id(row[1])
		if int(u) == len(unitGroups) {
			unitGroups = append(unitGroups, nil)
		}
		groups[row[0]] = append(groups[row[0]], u)
		unitGroups[u] = append(unitGroups[u], row[0])
		return nil
	})
	if err != nil {
		return err
	}
	gd.groups, gd.units = len(groups), len(unitGroups)
	seen := map[int32]struct{}{}
	for _, gs := range unitGroups {
		n := len(groups[gs[0]]) - 1
		if len(gs) > 1 {
			clear(seen)
			for _, gk := range gs {
				for _, v := range groups[gk] {
					seen[v] = struct{}{}
				}
			}
			n = len(seen) - 1
		}
		gd.add(n)
	}
	return nil
}

func quantiles(xs []float64) policies.Quantiles {
	if len(xs) == 0 {
		return policies.Quantiles{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) float64 { return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)] }
	var sum float64
	for _, x := range s {
		sum += x
	}
	return policies.Quantiles{Min: s[0], P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: s[len(s)-1], Mean: sum / float64(len(s))}
}
