package policies

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Dependence is the declared dependence between the units of a ddp dataset
// (DESIGN.md model 4, liu2016 §V–§VI). Exactly one of Groups, Edges and
// Size is set. The dependence is public by the model's assumption: it is
// read from the backend once at load (dependence.Load fills Structure) and
// re-read on reload, never per query.
type Dependence struct {
	// Groups: every unit depends on the other units of its group
	// (households, families) with coefficient Rho.
	Groups *DependenceGroups `yaml:"groups" json:"groups,omitempty"`
	// Edges: a relationship table between units (friendships), with ρ per
	// edge (declared, from a column, or from a probabilistic model).
	Edges *DependenceEdges `yaml:"edges" json:"edges,omitempty"`
	// Size is the baseline of liu2016 Theorem 7 (Chen et al.): every unit is
	// fully dependent on at most Size−1 others, so S = Size·ΔQ.
	Size int `yaml:"size" json:"size,omitempty"`

	// Structure is what dependence.Load read from the backend (nil until
	// then). It is not part of the file, nor of the fingerprint: the
	// planner's noise scale, which depends on it, is part of every cache
	// key instead.
	Structure *DependenceStructure `yaml:"-" json:"-"`
	// Unavailable says why Structure could not be read (explain without a
	// reachable backend); queries on the dataset are refused with it.
	Unavailable string `yaml:"-" json:"-"`
}

// Kinds of dependence.
const (
	DependenceGroupsKind = "groups"
	DependenceEdgesKind  = "edges"
	DependenceSizeKind   = "size"
)

// Kind names the declared kind ("" when none is declared).
func (d *Dependence) Kind() string {
	switch {
	case d == nil:
		return ""
	case d.Groups != nil:
		return DependenceGroupsKind
	case d.Edges != nil:
		return DependenceEdgesKind
	case d.Size != 0:
		return DependenceSizeKind
	}
	return ""
}

// DependenceGroups declares group dependence.
type DependenceGroups struct {
	// Table is the private table holding Column ("" = the dataset's only
	// private table that lists Column).
	Table string `yaml:"table" json:"table,omitempty"`
	// Column identifies the group (household_id). Rows with NULL belong to
	// no group.
	Column string `yaml:"column" json:"column"`
	// Rho is ρ_ij between members of one group (default 1: group privacy).
	Rho *float64 `yaml:"rho" json:"rho,omitempty"`
}

// DependenceEdges declares pairwise dependence from a relationship table
// whose two columns hold unit values of the dataset's private tables.
type DependenceEdges struct {
	Schema string `yaml:"schema" json:"schema,omitempty"`
	Table  string `yaml:"table" json:"table"`
	// Columns are [a, b]: the units at both ends of an edge.
	Columns []string `yaml:"columns" json:"columns"`
	// At most one of Rho (one ρ for every edge), RhoColumn (ρ per edge,
	// values in [0, 1]) and Model (ρ from the friend-distance model, which
	// depends on the noise scale); none means ρ = 1.
	Rho       *float64         `yaml:"rho" json:"rho,omitempty"`
	RhoColumn string           `yaml:"rho_column" json:"rho_column,omitempty"`
	Model     *DependenceModel `yaml:"model" json:"model,omitempty"`
	// RhoMethod may also be written next to model (edges.rho_method)
	// instead of inside it; validation moves it into Model.
	RhoMethod string `yaml:"rho_method" json:"-"`
	// Directed edges a → b mean ρ_ab only (a's change reaches b); otherwise
	// every row gives ρ_ab and ρ_ba.
	Directed bool `yaml:"directed" json:"directed,omitempty"`
}

// DependenceModel is the friend-distance model of liu2016 Eq. 26:
// P(d_j | d_i) = a·(‖d_i − d_j‖₁ + b)^−c over the grid of the attribute
// columns, normalised over that grid.
type DependenceModel struct {
	A *float64 `yaml:"a" json:"a"`
	B *float64 `yaml:"b" json:"b"`
	C *float64 `yaml:"c" json:"c"`
	// Columns are the attribute columns (location cell x, y).
	Columns []string `yaml:"columns" json:"columns"`
	// Grid gives every column's values: values: [...] or range: [lo, hi]
	// with step (default 1).
	Grid map[string]*GridAxis `yaml:"grid" json:"grid"`
	// RhoMethod is exact (Eq. 14, the default) or eq18 (Eq. 18, looser).
	RhoMethod string `yaml:"rho_method" json:"rho_method"`
}

// GridAxis is the grid of one attribute column.
type GridAxis struct {
	Values []float64 `yaml:"values" json:"values,omitempty"`
	Range  []float64 `yaml:"range" json:"range,omitempty"`
	Step   float64   `yaml:"step" json:"step,omitempty"`

	// Resolved is Values sorted, or the expanded Range.
	Resolved []float64 `yaml:"-" json:"resolved"`
}

// Methods of computing ρ from a model.
const (
	RhoMethodEq18  = "eq18"
	RhoMethodExact = "exact"
)

// MaxGridPoints caps the product of a model's grid (the exact ρ costs
// O(points²·Σ axis sizes) per noise scale).
const MaxGridPoints = 1024

// DependenceStructure is the dependence read from the backend at load by
// dependence.Load. The planner reads only this summary and asks Solver for
// the noise multiplier of an ε; the per-unit graph is not kept.
type DependenceStructure struct {
	Kind string `json:"kind"`
	// L is the dependence size: the most units one unit's change can reach,
	// itself included (largest group; 1 + largest out-degree; Size).
	L int `json:"L"`
	// Units is the number of units with at least one dependent; Links the
	// number of ordered pairs (i, j), i ≠ j, with ρ_ij declared.
	Units int `json:"units"`
	Links int `json:"links"`
	// MaxWeightedDegree is max_i Σ_{j≠i} ρ_ij for declared ρ; for a model
	// it is the largest out-degree (ρ is evaluated per noise scale).
	MaxWeightedDegree float64 `json:"max_weighted_degree"`
	// Degree and WeightedDegree summarise the distribution over units with
	// dependents.
	Degree         Quantiles `json:"degree"`
	WeightedDegree Quantiles `json:"weighted_degree"`
	// Rho summarises the declared ρ_ij over links (zero for a model).
	Rho Quantiles `json:"rho"`
	// RhoMethod is the model's method ("" without a model).
	RhoMethod string `json:"rho_method,omitempty"`
	// Skipped counts relationship rows ignored: NULL ends and self loops.
	Skipped int `json:"skipped,omitempty"`
	// Source describes what was read ("friendships: 50000 rows").
	Source string `json:"source"`

	Solver DependenceSolver `json:"-"`
}

// Quantiles summarises a distribution.
type Quantiles struct {
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// DependenceSolver gives the noise multiplier m for one aggregate released
// with ε: the noise scale is ΔQ·m/ε and m ≥ f(m) = max_i(1 + Σ_j ρ_ij(σ(m)))
// with σ(m) = ΔD·m/ε.
type DependenceSolver interface {
	Multiplier(epsilon float64) (DependenceMultiplier, error)
}

// DependenceMultiplier is a solved (and checked) multiplier.
type DependenceMultiplier struct {
	// M is the multiplier used: DS = M·ΔQ.
	M float64 `json:"multiplier"`
	// F is f(M), checked M ≥ F; F·ΔQ is the dependent sensitivity at the
	// noise scale actually used.
	F float64 `json:"f"`
	// Rho is the model's ρ at σ(M) (absent for declared ρ).
	Rho *float64 `json:"rho,omitempty"`
	// Sigma is σ(M) = ΔD·M/ε in the model's attribute units (0 without a
	// model).
	Sigma float64 `json:"sigma,omitempty"`
	// Fallback is set when M = L was used because no smaller multiplier
	// passed the check.
	Fallback bool `json:"fallback,omitempty"`
}

// checkDDP validates a ddp dataset.
func (c *checker) checkDDP(dp string, d *Dataset) {
	if d.Secrets != nil {
		c.add(dp+".secrets", "secrets need model: blowfish")
	}
	if len(d.Constraints) > 0 {
		c.add(dp+".constraints", "published constraints need model: induced or model: blowfish")
	}
	if d.Compensation != "" {
		c.add(dp+".compensation", "compensation needs model: blowfish")
	}
	dep := d.Dependence
	pp := dp + ".dependence"
	if dep == nil {
		c.add(dp+".model", "model ddp needs dependence: one of groups: {column, rho}, edges: {table, columns: [a, b], ...} or size: L")
		return
	}
	n := 0
	for _, set := range []bool{dep.Groups != nil, dep.Edges != nil, dep.Size != 0 || c.p.has(pp+".size")} {
		if set {
			n++
		}
	}
	if n != 1 {
		c.add(pp, "give exactly one of groups, edges and size (found %d)", n)
	}
	if dep.Size != 0 || c.p.has(pp+".size") {
		if dep.Size < 1 {
			c.add(pp+".size", "size is the dependence size L ≥ 1 (each unit fully dependent on L−1 others), got %d", dep.Size)
		}
	}
	if g := dep.Groups; g != nil {
		c.checkGroups(pp+".groups", d, g)
	}
	if e := dep.Edges; e != nil {
		c.checkEdges(pp+".edges", e)
	}
}

func (c *checker) checkRho(path string, rho *float64) {
	if rho != nil && !(*rho >= 0 && *rho <= 1) {
		c.add(path, "ρ must be in [0, 1] (0: independent, 1: fully dependent), got %v", *rho)
	}
}

func (c *checker) checkGroups(gp string, d *Dataset, g *DependenceGroups) {
	c.checkRho(gp+".rho", g.Rho)
	g.Column = strings.ToLower(g.Column)
	g.Table = strings.ToLower(g.Table)
	if g.Column == "" {
		c.add(gp+".column", "groups needs column: the column that identifies a group (e.g. household_id)")
		return
	}
	if !c.checkIdent(gp+".column", "group column", g.Column) {
		return
	}
	if g.Table != "" {
		t := d.Tables[g.Table]
		switch {
		case t == nil:
			c.add(gp+".table", "table %q is not declared in this dataset", g.Table)
		case t.Public:
			c.add(gp+".table", "table %q is public; groups are read from a private table (its units are the group members)", g.Table)
		}
		return
	}
	if _, err := d.GroupsTable(); err != "" {
		c.add(gp+".column", "%s", err)
	}
}

// GroupsTable is the private table that holds the group column (the
// declared table, or the only private table with a unit that lists the
// column). The second result explains why there is none.
func (d *Dataset) GroupsTable() (*Table, string) {
	g := d.Dependence.Groups
	if g.Table != "" {
		if t := d.Tables[g.Table]; t != nil && !t.Public {
			return t, ""
		}
		return nil, "table " + strconv.Quote(g.Table) + " is not a private table of this dataset"
	}
	var found []*Table
	for _, tn := range d.TableNames {
		if t := d.Tables[tn]; t != nil && !t.Public && t.Column(g.Column) != nil {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		return found[0], ""
	case 0:
		return nil, "no private table of this dataset lists column " + strconv.Quote(g.Column) + "; list it under the table's columns or name the table with groups.table"
	}
	return nil, "several private tables list column " + strconv.Quote(g.Column) + "; name one with groups.table"
}

func (c *checker) checkEdges(ep string, e *DependenceEdges) {
	e.Table = strings.ToLower(e.Table)
	e.Schema = strings.ToLower(e.Schema)
	e.RhoColumn = strings.ToLower(e.RhoColumn)
	if e.Table == "" {
		c.add(ep+".table", "edges needs table: the relationship table (e.g. friendships)")
	} else {
		c.checkIdent(ep+".table", "table name", e.Table)
	}
	if e.Schema != "" {
		c.checkIdent(ep+".schema", "schema", e.Schema)
	}
	if len(e.Columns) != 2 {
		c.add(ep+".columns", "columns must be the two unit columns [a, b] of the relationship table, got %d", len(e.Columns))
	} else {
		for i := range e.Columns {
			e.Columns[i] = strings.ToLower(e.Columns[i])
			c.checkIdent(ep+".columns."+strconv.Itoa(i), "column", e.Columns[i])
		}
		if e.Columns[0] == e.Columns[1] {
			c.add(ep+".columns", "the two columns must differ")
		}
	}
	set := 0
	if e.Rho != nil {
		set++
		c.checkRho(ep+".rho", e.Rho)
	}
	if e.RhoColumn != "" {
		set++
		if c.checkIdent(ep+".rho_column", "column", e.RhoColumn) && slices.Contains(e.Columns, e.RhoColumn) {
			c.add(ep+".rho_column", "rho_column must not be one of the unit columns")
		}
	}
	if e.RhoMethod != "" {
		switch {
		case e.Model == nil:
			c.add(ep+".rho_method", "rho_method chooses how ρ is computed from model: give model: {a, b, c, columns, grid}")
		case e.Model.RhoMethod != "" && e.Model.RhoMethod != e.RhoMethod:
			c.add(ep+".rho_method", "rho_method is %s here and %s in model; give it once", e.RhoMethod, e.Model.RhoMethod)
		default:
			e.Model.RhoMethod = e.RhoMethod
		}
	}
	if e.Model != nil {
		set++
		c.checkModel(ep+".model", e.Model)
	}
	if set > 1 {
		c.add(ep, "give at most one of rho, rho_column and model")
	}
}

func (c *checker) checkModel(mp string, m *DependenceModel) {
	for _, p := range []struct {
		name string
		v    *float64
		zero bool // 0 allowed
	}{{"a", m.A, false}, {"b", m.B, false}, {"c", m.C, true}} {
		switch {
		case p.v == nil:
			c.add(mp+"."+p.name, "the friend-distance model a·(‖d_i − d_j‖₁ + b)^−c needs %s", p.name)
		case math.IsNaN(*p.v) || math.IsInf(*p.v, 0) || *p.v < 0 || (*p.v == 0 && !p.zero):
			if p.zero {
				c.add(mp+"."+p.name, "%s must be a finite number ≥ 0 (0: independence), got %v", p.name, *p.v)
			} else {
				c.add(mp+"."+p.name, "%s must be a finite number > 0, got %v", p.name, *p.v)
			}
		}
	}
	switch m.RhoMethod {
	case "":
		m.RhoMethod = RhoMethodExact
	case RhoMethodExact, RhoMethodEq18:
	default:
		c.add(mp+".rho_method", "rho_method must be exact (Eq. 14) or eq18 (Eq. 18, looser), not %q", m.RhoMethod)
	}
	if len(m.Columns) == 0 {
		c.add(mp+".columns", "the model needs the attribute columns it describes (e.g. [cell_x, cell_y])")
	}
	grid := map[string]*GridAxis{}
	for k, v := range m.Grid {
		grid[strings.ToLower(k)] = v
	}
	m.Grid = grid
	points := 1
	for i := range m.Columns {
		m.Columns[i] = strings.ToLower(m.Columns[i])
		col := m.Columns[i]
		if !c.checkIdent(mp+".columns."+strconv.Itoa(i), "column", col) {
			continue
		}
		if slices.Index(m.Columns, col) < i {
			c.add(mp+".columns."+strconv.Itoa(i), "column %q is listed twice", col)
			continue
		}
		ax := grid[col]
		if ax == nil {
			c.add(mp+".grid", "grid has no axis for column %q; give values: [...] or range: [lo, hi] with step", col)
			continue
		}
		c.resolveAxis(mp+".grid."+col, ax)
		if points <= MaxGridPoints {
			points *= max(len(ax.Resolved), 1)
		}
	}
	for k := range grid {
		if !slices.Contains(m.Columns, k) {
			c.add(mp+".grid."+k, "grid axis %q is not one of the model's columns", k)
		}
	}
	if points > MaxGridPoints {
		c.add(mp+".grid", "the grid has more than %d points; coarsen it (ρ is computed over every pair of points)", MaxGridPoints)
	}
}

// maxAxisPoints bounds one expanded range before the product check.
const maxAxisPoints = MaxGridPoints

func (c *checker) resolveAxis(ap string, ax *GridAxis) {
	ax.Resolved = nil
	switch {
	case len(ax.Values) > 0 && len(ax.Range) > 0:
		c.add(ap, "give values or range, not both")
	case len(ax.Values) > 0:
		if ax.Step != 0 {
			c.add(ap+".step", "step only applies to range")
		}
		vals := slices.Clone(ax.Values)
		slices.Sort(vals)
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				c.add(ap+".values", "values must be finite numbers")
				return
			}
			if i > 0 && v == vals[i-1] {
				c.add(ap+".values", "value %v is listed twice", v)
				return
			}
		}
		ax.Resolved = vals
	case len(ax.Range) > 0:
		step := ax.Step
		if step == 0 && !c.p.has(ap+".step") {
			step = 1
		}
		if len(ax.Range) != 2 {
			c.add(ap+".range", "range must be [lo, hi]")
			return
		}
		lo, hi := ax.Range[0], ax.Range[1]
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
			c.add(ap+".range", "range must be [lo, hi] with finite lo ≤ hi")
			return
		}
		if !(step > 0) || math.IsInf(step, 0) {
			c.add(ap+".step", "step must be a finite number > 0, got %v", step)
			return
		}
		n := math.Floor((hi-lo)/step+1e-9) + 1
		if n > maxAxisPoints {
			c.add(ap, "the range has %v points, more than %d; use a larger step", n, maxAxisPoints)
			return
		}
		for i := range int(n) {
			ax.Resolved = append(ax.Resolved, lo+float64(i)*step)
		}
	default:
		c.add(ap, "axis needs values: [...] or range: [lo, hi] with step")
	}
}
