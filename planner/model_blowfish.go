package planner

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ExplainBlowfish is what explain adds for the blowfish and induced models.
type ExplainBlowfish struct {
	// Secrets describes the secret graph G (blowfish).
	Secrets string `json:"secrets,omitempty"`
	// Constraints are the published constraints in the policy's words.
	Constraints []string `json:"constraints,omitempty"`
	// Reading names the neighbour relation in force.
	Reading string `json:"reading,omitempty"`
	// MaxTupleChanges is maxT: the most tuples that differ between
	// neighbours (blowfish).
	MaxTupleChanges int64 `json:"max_tuple_changes,omitempty"`
	// PolicyGraph holds α and ξ of He et al. Def. 8.3 (blowfish with
	// compensation: secrets-only and constraints).
	PolicyGraph *ExplainPolicyGraph `json:"policy_graph,omitempty"`
	// GraverMaxL1 is the largest L1 norm over the Graver basis (induced).
	GraverMaxL1 *int64 `json:"graver_max_l1,omitempty"`
	// PerChange is c(q) per true aggregate (blowfish): the largest change
	// of the aggregate when one tuple changes.
	PerChange []ExplainPerChange `json:"per_change_contribution,omitempty"`
	// Rule names the theorem or rule behind the bound.
	Rule string `json:"rule,omitempty"`
}

// ExplainPolicyGraph is α (longest simple cycle) and ξ (longest simple
// v⁺→v⁻ path) of the policy graph.
type ExplainPolicyGraph struct {
	Alpha int64 `json:"alpha"`
	Xi    int64 `json:"xi"`
}

// ExplainPerChange is c(q) of one true aggregate, in output units.
type ExplainPerChange struct {
	Aggregate    string  `json:"aggregate"`
	Contribution float64 `json:"contribution"`
}

// explainBlowfish fills the plan's model fields once.
func (b *builder) explainBlowfish(ds *policies.Dataset) *ExplainBlowfish {
	if b.plan.Blowfish != nil {
		return b.plan.Blowfish
	}
	an := ds.Analysis
	x := &ExplainBlowfish{Constraints: an.Constraints}
	switch {
	case an.Induced != nil:
		x.Reading = "induced neighbours (Kifer–Machanavajjhala Def. 4.4): a neighbour is a minimal change of the table that keeps every published count"
		l1 := an.Induced.MaxL1
		x.GraverMaxL1 = &l1
		x.Rule = an.Induced.Method
	case an.Blowfish != nil:
		x.Secrets = describeSecrets(ds.Secrets)
		x.MaxTupleChanges = an.Blowfish.MaxT
		x.Rule = an.Blowfish.Method
		switch {
		case len(ds.Constraints) > 0 && an.Blowfish.EdgesKeepCounts:
			x.Reading = "blowfish (He et al. Def. 4.1) with published counts that no secret pair can change: neighbours are single secret changes along an edge of G, as without constraints"
		case len(ds.Constraints) == 0 || an.Blowfish.Alpha < 0 && an.Blowfish.SecretsOnly:
			x.Reading = "blowfish without constraints (He et al. §5): a neighbour changes one tuple along an edge of G"
		case ds.Compensation == policies.CompensationSecretsOnly:
			x.Reading = "blowfish, compensation: secrets-only — WEAKER guarantee: neighbours may only change tuples along secret pairs, so compensating changes of other values are not hidden (DESIGN.md: Thms 8.5/8.6 need this)"
			x.PolicyGraph = &ExplainPolicyGraph{Alpha: an.Blowfish.Alpha, Xi: an.Blowfish.Xi}
		default:
			x.Reading = "blowfish (He et al. Def. 4.1 as written): compensating changes may take any value"
		}
	}
	b.plan.Blowfish = x
	return x
}

func describeSecrets(s *policies.Secrets) string {
	switch s.Kind {
	case policies.SecretsPartition:
		if len(s.Columns) > 0 {
			return "partition by " + strings.Join(s.Columns, ", ")
		}
		return fmt.Sprintf("partition of %s into %d buckets", s.Column, len(s.Buckets))
	case policies.SecretsDistance:
		return fmt.Sprintf("distance on %s, θ = %g", s.Column, s.Theta)
	}
	return s.Kind
}

// aggReads are the private-table columns one aggregate reads, by role. A
// joined public table's columns are functions of the private join column,
// so they count as that column; an inner join also filters (a LEFT join
// does not, but counting its column as a filter only adds secrets to
// consider: conservative).
type aggReads struct {
	// where: the WHERE clause, the private join columns and a bare
	// COUNT(col) argument (col acts as a filter: COUNT skips NULLs).
	where []string
	// arg: the columns a COUNT(expr) argument reads. Its NULL-ness filters
	// rows like WHERE, but it is kept apart from where so that the
	// bucket-alignment rule, which proves that the WHERE clause is a union
	// of partition cells, is never applied to it.
	arg []string
	// group: the grouping columns, and every column a grouping expression
	// reads (a key that is a function of columns no change touches never
	// moves a row between groups).
	group []string
	// value is the summed column of SUM(col) ("" otherwise); values are
	// the columns a SUM(expr) argument reads (expr set).
	value  string
	values []string
	expr   bool
	// counted are the columns a COUNT(DISTINCT x) argument reads (the
	// unit column for COUNT(DISTINCT unit)): a change of one of them
	// alone can move a distinct count (sensitivity.DistinctPerChange
	// reads them as the value), and its NULL-ness filters too.
	counted []string
}

// queryColumns returns the columns the query and aggregate s read.
func (b *builder) queryColumns(s aggShape) aggReads {
	add := func(list []string, c string) []string {
		if !slices.Contains(list, c) {
			list = append(list, c)
		}
		return list
	}
	alias := b.sc.tables[0].alias
	joinCols := b.joinColumns()
	// reads adds every column e reads, a joined column as the join
	// columns.
	reads := func(list []string, e ir.Expr) []string {
		ir.Walk(e, func(n ir.Expr) bool {
			if c, ok := n.(ir.ColumnRef); ok {
				if c.Qualifier == alias {
					list = add(list, strings.ToLower(c.Name))
				} else {
					for _, j := range joinCols {
						list = add(list, j)
					}
				}
			}
			return true
		})
		return list
	}
	var r aggReads
	for _, c := range joinCols {
		r.where = add(r.where, c)
	}
	ir.Walk(b.plan.Backend.Where, func(e ir.Expr) bool {
		if c, ok := e.(ir.ColumnRef); ok {
			if c.Qualifier == alias {
				r.where = add(r.where, strings.ToLower(c.Name))
			}
		}
		return true
	})
	switch ba := b.plan.Backend.Aggs[s.Index]; {
	case ba.Kind == ir.CountValues && ba.Expr != nil:
		r.arg = reads(r.arg, ba.Expr)
	case ba.Kind == ir.CountValues && ba.Column != nil:
		// COUNT(col) skips NULLs: col acts as a filter.
		if ba.Column.Qualifier == alias {
			r.where = add(r.where, strings.ToLower(ba.Column.Name))
		}
	case ba.Kind == ir.SumClamped && ba.Expr != nil:
		r.expr = true
		r.values = reads(r.values, ba.Expr)
	case ba.Kind == ir.SumClamped && ba.Column != nil && ba.Column.Qualifier == alias:
		r.value = strings.ToLower(ba.Column.Name)
	case ba.Kind == ir.CountDistinct && ba.Expr != nil:
		r.counted = reads(r.counted, ba.Expr)
	case ba.Kind == ir.CountDistinct && ba.Column != nil:
		r.counted = reads(r.counted, *ba.Column)
	}
	r.group = b.groupReads(nil)
	if c := b.plan.Backend.Aggs[s.Index].Column; c != nil && b.quantilePart(s.Index) {
		// A quantile's histogram groups by the column's bin too (a
		// joined column as the private join columns).
		r.group = reads(r.group, *c)
	}
	return r
}

// joinColumns returns the private table's join columns.
func (b *builder) joinColumns() []string {
	var out []string
	alias := b.sc.tables[0].alias
	for _, j := range b.plan.Backend.Joins {
		for _, c := range []ir.ColumnRef{j.Left, j.Right} {
			if n := strings.ToLower(c.Name); c.Qualifier == alias && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// groupReads returns the columns the grouping keys read (a joined
// column as the private join columns), leaving out the keys skip accepts.
func (b *builder) groupReads(skip func(groupKey) bool) []string {
	var out []string
	add := func(c string) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	alias := b.sc.tables[0].alias
	joinCols := func() {
		for _, c := range b.joinColumns() {
			add(c)
		}
	}
	for _, g := range b.groupCols {
		switch {
		case skip != nil && skip(g):
		case g.expr != nil:
			ir.Walk(g.expr, func(n ir.Expr) bool {
				if c, ok := n.(ir.ColumnRef); ok {
					if c.Qualifier == alias {
						add(strings.ToLower(c.Name))
					} else {
						joinCols()
					}
				}
				return true
			})
		case g.r.table == 0:
			add(g.r.name)
		default:
			joinCols()
		}
	}
	return out
}

// publishedReads are the columns the published-query rule must find
// published besides the WHERE columns in conds: the grouping columns and
// every column the aggregate itself reads. A column the aggregate reads is
// kept even when WHERE restricts it: a published count of the selection
// (PublishedQuery's path without GROUP BY) fixes how many rows pass, not
// how they split among the selected values, which a SUM of the column
// depends on; kept, it is a grouping column there, which only an exactly
// matching published marginal covers.
func publishedReads(rd aggReads, conds map[string][]ir.Value) []string {
	out := slices.Clone(rd.group)
	add := func(c string, always bool) {
		if _, inWhere := conds[c]; c != "" && (always || !inWhere) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for _, c := range rd.where {
		add(c, false)
	}
	for _, list := range [][]string{rd.arg, rd.values, rd.counted, {rd.value}} {
		for _, c := range list {
			add(c, true)
		}
	}
	return out
}

// refuseThreshold refuses threshold key selection under blowfish and
// induced: it is an (ε, δ)-DP mechanism whose δ analysis assumes plain DP
// neighbours.
func refuseThreshold(ds *policies.Dataset, name string) error {
	if ds.Model != policies.ModelBlowfish && ds.Model != policies.ModelInduced {
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "GROUP BY %s needs a declared domain under model %s", name, ds.Model).
		WithHint("threshold key selection is analysed only under model dp; declare the possible values of %s in the policy", name)
}

// whereValues returns the WHERE clause as per-column value sets when it is
// a conjunction of col = literal and col IN (literals) on the private
// table (each column at most once); ok is false for anything else.
func (b *builder) whereValues() (map[string][]ir.Value, bool) {
	out := map[string][]ir.Value{}
	alias := b.sc.tables[0].alias
	var visit func(e ir.Expr) bool
	add := func(c ir.ColumnRef, vs []ir.Value) bool {
		name := strings.ToLower(c.Name)
		if c.Qualifier != alias {
			return false
		}
		if _, dup := out[name]; dup {
			return false
		}
		out[name] = vs
		return true
	}
	visit = func(e ir.Expr) bool {
		switch n := e.(type) {
		case nil:
			return true
		case ir.And:
			return visit(n.L) && visit(n.R)
		case ir.Compare:
			if n.Op != ir.OpEq {
				return false
			}
			c, okc := n.L.(ir.ColumnRef)
			l, okl := n.R.(ir.Literal)
			if !okc || !okl {
				c, okc = n.R.(ir.ColumnRef)
				l, okl = n.L.(ir.Literal)
			}
			return okc && okl && !l.Value.IsNull() && add(c, []ir.Value{l.Value})
		case ir.In:
			c, ok := n.X.(ir.ColumnRef)
			if !ok || n.Not {
				return false
			}
			var vs []ir.Value
			for _, x := range n.List {
				l, ok := x.(ir.Literal)
				if !ok || l.Value.IsNull() {
					return false
				}
				vs = append(vs, l.Value)
			}
			return add(c, vs)
		}
		return false
	}
	if !visit(b.plan.Backend.Where) {
		return nil, false
	}
	return out, true
}

// blowfishSensitivity is the sensitivity of one aggregate under a blowfish
// or induced dataset, from the analysis done when the policy was loaded.
func (b *builder) blowfishSensitivity(ds *policies.Dataset, main *policies.Table, s aggShape) (int64, error) {
	an := ds.Analysis
	if an == nil {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "dataset %s (model %s) has no constraint analysis; the policy did not load through the validator", ds.Name, ds.Model)
	}
	if b.plan.Keys.Mode == KeysThreshold {
		return 0, refuseThreshold(ds, b.missingDomain().name())
	}
	x := b.explainBlowfish(ds)
	ba := b.plan.Backend.Aggs[s.Index]
	label := b.plan.Aggs[s.Index].Label
	rd := b.queryColumns(s)
	where, group, value := rd.where, rd.group, rd.value
	if ba.Kind == ir.SumClamped && !rd.expr && rd.value == "" {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "SUM/AVG of a joined public column is not supported under model %s", ds.Model).
			WithHint("sum a column of the private table %s", main.Name)
	}
	agg := sensitivity.Aggregate{Kind: s.Kind, Lo: s.Lo, Hi: s.Hi}

	// A COUNT(*) (or histogram) without joins whose groups and WHERE
	// (= / IN on domain values) are unions of published cells is published
	// data: every neighbour keeps it. The same holds for any aggregate
	// whose row contribution is a function of the published cell a row
	// lies in: a grouping expression, a summed column or expression and a
	// COUNT argument then count as the columns they read. Proof: with U
	// those columns and the WHERE columns, exactly one published marginal's
	// (PublishedQuery), every row holds a declared value in each (verified
	// before serving) and contributes c(u) to group g(u) (c, g
	// deterministic: clamped, quantized, computed alike for every row), so
	// each output is Σ_u n_u·c(u) over the published counts n_u. A
	// distinct count is a function of the same counts too: the number of
	// distinct x(u) over the cells u of its group with n_u > 0 (x's
	// columns are among U: rd.counted).
	if conds, ok := b.whereValues(); ok && len(b.plan.Backend.Joins) == 0 && an.PublishedQuery(publishedReads(rd, conds), conds) {
		b.notes = append(b.notes, fmt.Sprintf("%s: sensitivity 0 — it is determined by the published constraints (%s), which every neighbour keeps; returned exactly, no budget charged for it",
			label, strings.Join(an.Constraints, "; ")))
		if an.Blowfish != nil {
			x.PerChange = append(x.PerChange, ExplainPerChange{Aggregate: label})
		}
		return 0, nil
	}

	if an.Induced != nil {
		if value != "" || ba.Kind == ir.CountRows {
			return b.inducedGraver(an, main, agg, value, label, s)
		}
		sens, err := sensitivity.Induced(sensitivity.InducedBounds{MaxL1: an.Induced.MaxL1, MaxHalf: an.Induced.MaxHalf}, agg)
		if err != nil {
			return 0, err
		}
		b.notes = append(b.notes, fmt.Sprintf("%s: sensitivity %g from the Graver basis of the published constraints (largest L1 %d, largest one-sided %d; %s)",
			label, float64(sens)*quantumOf(s), an.Induced.MaxL1, an.Induced.MaxHalf, an.Induced.Method))
		return sens, nil
	}

	bf := an.Blowfish
	var reach sensitivity.Reach
	if bf.SecretsOnly {
		g, err := secretGraph(ds, main, s)
		if err != nil {
			return 0, err
		}
		if sec := ds.Secrets; sec.Kind == policies.SecretsPartition && sec.Column != "" &&
			len(where) == 1 && where[0] == sec.Column &&
			bucketAligned(b.plan.Backend.Where, b.sc.tables[0].alias, sec, main.Column(sec.Column), verified(an, sec.Column)) {
			// The WHERE clause is a union of partition cells: no secret
			// pair moves a row into or out of it.
			where = nil
			b.notes = append(b.notes, fmt.Sprintf("%s: the WHERE clause on %s is a union of its partition buckets", label, sec.Column))
		}
		if sec := ds.Secrets; sec.Kind == policies.SecretsPartition && sec.Column != "" {
			// Keys constant on every bucket never move a row between
			// groups: they read as no column.
			var aligned []string
			group = b.groupReads(func(k groupKey) bool {
				if b.keyBucketAligned(k, sec, main.Column(sec.Column)) {
					aligned = append(aligned, k.name())
					return true
				}
				return false
			})
			if len(aligned) > 0 {
				b.notes = append(b.notes, fmt.Sprintf("%s: GROUP BY %s is constant on each partition bucket of %s, so no secret pair moves a row between its groups", label, strings.Join(aligned, ", "), sec.Column))
			}
		}
		where = append(where, rd.arg...)
		reach = g.Reach(where, group, rd.value)
		if rd.expr {
			reach = g.ReachExpr(where, group, rd.values)
			if step, ok := exprDistanceStep(ba.Expr, b.sc.tables[0].alias, ds.Secrets, main.Column(ds.Secrets.Column), s, b.parts[s.Index].SumType == policies.TypeInteger); ok && reach.Value {
				reach.ValueStep = max(step, 1)
				b.notes = append(b.notes, fmt.Sprintf("%s: the argument moves by at most %g along a secret pair (Lipschitz constant in %s × θ)", label, float64(step)*quantumOf(s), ds.Secrets.Column))
			}
		}
		if rd.counted != nil {
			reach = g.ReachExpr(where, group, rd.counted)
		}
	} else {
		where = append(where, rd.arg...)
		reach = sensitivity.AnyChange(where, group, rd.value)
		if rd.expr {
			reach = sensitivity.AnyChangeExpr(where, group, rd.values)
		}
		if rd.counted != nil {
			reach = sensitivity.AnyChangeExpr(where, group, rd.counted)
		}
	}
	if rd.expr && reach.Value && reach.ValueStep == 0 {
		b.notes = append(b.notes, fmt.Sprintf("%s: a change of a column the argument reads may move it anywhere in its range, so one tuple change costs up to max(hi − lo, |lo|, |hi|) (no Lipschitz bound in θ is derived for this expression)", label))
	}
	valueRule := ""
	if value != "" || ba.Kind == ir.CountRows {
		rows := b.sumRows(main, value, s)
		if lo, hi, nullable, fails, passes, ok := an.PassingRange(rows); ok {
			// The WHERE clause is read exactly on the constrained columns
			// (or there is none): a row leaves or enters it only if some
			// row can fail it, and a passing row adds a value in [lo, hi].
			if !passes {
				b.notes = append(b.notes, fmt.Sprintf("%s: sensitivity 0 — no row of the declared domains passes the WHERE clause; returned exactly, no budget charged for it", label))
				x.PerChange = append(x.PerChange, ExplainPerChange{Aggregate: label})
				return 0, nil
			}
			if !fails && reach.Filter {
				reach.Filter = false
				valueRule = "; every row of the declared domains passes the WHERE clause, so none enters or leaves it"
			}
			if value != "" && !nullable {
				agg.Lo, agg.Hi, reach.NonNull = lo, hi, true
				valueRule += fmt.Sprintf("; a passing row adds a value of the declared domain of %s clamped to the bounds, in [%g, %g]",
					value, float64(lo)*quantumOf(s), float64(hi)*quantumOf(s))
			}
		} else if lo, hi, ok := b.domainRange(an, value, s); value != "" && ok {
			// A constrained column holds only its declared domain values
			// (verified before serving), never NULL: a row adds a value
			// of the clamped domain, and a change stays within it.
			agg.Lo, agg.Hi, reach.NonNull = lo, hi, true
			valueRule = fmt.Sprintf("; a row adds a value of the declared domain of %s clamped to the bounds, in [%g, %g]",
				value, float64(lo)*quantumOf(s), float64(hi)*quantumOf(s))
		}
	}
	per, err := sensitivity.PerChange(agg, reach)
	if err != nil {
		return 0, err
	}
	sens, err := sensitivity.Blowfish(bf.MaxT, per)
	if err != nil {
		return 0, err
	}
	x.PerChange = append(x.PerChange, ExplainPerChange{Aggregate: label, Contribution: float64(per) * quantumOf(s)})
	switch {
	case sens == 0:
		b.notes = append(b.notes, fmt.Sprintf("%s: sensitivity 0 — no edge of the secret graph (%s) can change it: it reads only columns the secrets keep fixed (or none); returned exactly, no budget charged for it",
			label, describeSecrets(ds.Secrets)))
	case bf.EdgesKeepCounts:
		b.notes = append(b.notes, fmt.Sprintf("%s: sensitivity = the largest change by one secret pair of the secret graph (%s), %g: no secret pair changes a published count, so neighbours are single secret changes (maxT = 1, proven in constraints.edgesKeepCounts)%s",
			label, describeSecrets(ds.Secrets), float64(per)*quantumOf(s), valueRule))
	default:
		b.notes = append(b.notes, fmt.Sprintf("%s: sensitivity = maxT %d × per-change contribution %g (%s%s)", label, bf.MaxT, float64(per)*quantumOf(s), bf.Method, valueRule))
	}
	return sens, nil
}

// inducedGraver is the induced sensitivity of a SUM of value or of a
// COUNT(*) (value ""), the smallest of three sound bounds:
//   - the closed form sensitivity.Induced over the value range (the
//     clamped declared domain of a constrained summed column, else the
//     bounds);
//   - for an ungrouped count whose WHERE is = / IN, the per-predicate
//     bound (policies.Analysis.InducedCount);
//   - the Graver basis kept at load with what each row adds per tuple of
//     the constrained columns (policies.Analysis.InducedSum): the clamped
//     declared domain value of a constrained summed column, 0 where the
//     row fails the WHERE clause (read exactly on integer constrained
//     columns, or as = / IN), both where it may pass or fail.
func (b *builder) inducedGraver(an *policies.Analysis, main *policies.Table, agg sensitivity.Aggregate, value, label string, s aggShape) (int64, error) {
	narrowed := ""
	if value != "" {
		if lo, hi, ok := b.domainRange(an, value, s); ok {
			agg.Lo, agg.Hi = lo, hi
			narrowed = fmt.Sprintf(", over the declared domain of %s clamped to the bounds, [%g, %g]", value, float64(lo)*quantumOf(s), float64(hi)*quantumOf(s))
		}
	}
	closed, err := sensitivity.Induced(sensitivity.InducedBounds{MaxL1: an.Induced.MaxL1, MaxHalf: an.Induced.MaxHalf}, agg)
	if err != nil {
		return 0, err
	}
	q := quantumOf(s)
	best, note := closed, fmt.Sprintf("%s: sensitivity %g from the Graver basis of the published constraints (largest L1 %d, largest one-sided %d%s; %s)",
		label, float64(closed)*q, an.Induced.MaxL1, an.Induced.MaxHalf, narrowed, an.Induced.Method)
	if conds, ok := b.whereValues(); ok && value == "" && s.Kind == sensitivity.KindCount && len(b.plan.Backend.Joins) == 0 {
		if sens, ok := an.InducedCount(conds); ok && sens < best {
			best, note = sens, fmt.Sprintf("%s: sensitivity %d = the largest change of this count over the Graver basis of the published constraints (per-predicate bound, computed from the basis kept at load)", label, sens)
		}
	}
	if sens, exact, ok := an.InducedSum(b.sumRows(main, value, s)); ok && sens < best {
		what := "an upper bound: Σ |g_a| × the largest |amount| in atom a"
		if exact {
			what = "exact for enough rows"
		}
		amount := "1 when it passes the WHERE clause"
		if value != "" {
			amount = "its value of the declared domain clamped to the bounds"
		}
		best, note = sens, fmt.Sprintf("%s: sensitivity %g = the largest change of this aggregate over the Graver basis of the published constraints, each row adding %s (0 when it fails, both when it may pass or fail or be NULL); %s (closed form: %g; %s)",
			label, float64(sens)*q, amount, what, float64(closed)*q, an.Induced.Method)
	}
	b.notes = append(b.notes, note)
	return best, nil
}

func quantumOf(s aggShape) float64 {
	if s.Quantum == 0 {
		return 1
	}
	return s.Quantum
}

// secretGraph describes ds's secrets for the per-change calculus. θ is
// converted to lattice units of the aggregate: an integer column's values
// move by at most ⌊θ⌋ (clamping is 1-Lipschitz); a real column's
// quantized value FLOOR(clamp(x)/γ + 0.5) is monotone and shifts by one per
// γ, so it moves by at most ⌈θ/γ⌉.
func secretGraph(ds *policies.Dataset, main *policies.Table, s aggShape) (sensitivity.Secrets, error) {
	sec := ds.Secrets
	g := sensitivity.Secrets{Kind: sec.Kind, Column: sec.Column}
	switch sec.Kind {
	case policies.SecretsPartition:
		g.Partition = sec.Columns // empty for buckets: the column changes within its bucket
		if ranges, ok := sec.BucketRanges(); ok {
			// A value moves only within its bucket (values outside every
			// bucket are cells of their own): by at most the widest
			// bucket, converted to lattice units like θ below.
			var width float64
			for _, r := range ranges {
				width = max(width, r[1]-r[0])
			}
			col := main.Column(sec.Column)
			q := quantumOf(s)
			var step float64
			if col != nil && col.Type == policies.TypeInteger && q == 1 {
				step = math.Floor(width)
			} else {
				step = math.Ceil(width / q)
			}
			if step >= 1 && step < 1<<62 {
				g.Step = int64(step)
			}
		}
	case policies.SecretsDistance:
		col := main.Column(sec.Column)
		q := quantumOf(s)
		var step float64
		if col != nil && col.Type == policies.TypeInteger && q == 1 {
			step = math.Floor(sec.Theta)
		} else {
			// Stored doubles the policy puts at θ may differ by a little
			// more (0.8 − 0.6 = 0.20000000000000007 for θ = 0.2); a
			// summed value lies within the clamp, |v| ≤ M.
			m := float64(max(s.Hi, -s.Lo, s.Lo, -s.Hi)) * q
			step = math.Ceil(thetaWithRounding(sec.Theta, m) / q)
		}
		if !(step < 1<<62) {
			step = 1 << 62
		}
		g.Step = max(int64(step), 1)
	}
	return g, nil
}

// settleBlowfish runs after calibration: aggregates of sensitivity 0 are
// released exactly and need no share of ε, so ε is split over the others
// only; a query whose aggregates all have sensitivity 0 costs nothing.
func (b *builder) settleBlowfish(eps float64, ds *policies.Dataset) error {
	if ds.Model != policies.ModelBlowfish && ds.Model != policies.ModelInduced {
		return nil
	}
	var noisy []int
	for i, a := range b.plan.Aggs {
		if a.Sensitivity > 0 {
			noisy = append(noisy, i)
		}
	}
	if len(noisy) == len(b.plan.Aggs) {
		return nil
	}
	for i := range b.plan.Aggs {
		b.plan.Aggs[i].Epsilon = 0
	}
	if len(noisy) == 0 {
		b.plan.Budget.Epsilon = 0
		b.notes = append(b.notes, "every aggregate has sensitivity 0 under this policy: the answer is exact and charges ε = 0")
		return nil
	}
	for _, i := range noisy {
		a := &b.plan.Aggs[i]
		a.Epsilon = eps / float64(len(noisy))
		sc, err := scaleFor(a.Sensitivity, eps, len(noisy))
		if err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, "cannot calibrate noise for "+a.Label)
		}
		a.Scale = sc
	}
	b.notes = append(b.notes, fmt.Sprintf("aggregates of sensitivity 0 are exact and take no ε; ε = %g is split over the %d noisy ones", eps, len(noisy)))
	return nil
}

// neighborsWord names the neighbour relation explain reports: the dp
// setting, or the model's own relation (neighbors does not apply to
// blowfish and induced datasets).
func neighborsWord(ds *policies.Dataset) string {
	switch ds.Model {
	case policies.ModelBlowfish:
		if ds.Compensation == policies.CompensationSecretsOnly {
			return "blowfish (secrets-only)"
		}
		return "blowfish"
	case policies.ModelInduced:
		return "induced"
	}
	return ds.Neighbors
}

// verified reports whether col is a constrained column, whose declared
// domain serve verifies on every row (no NULL, no undeclared value).
func verified(an *policies.Analysis, col string) bool {
	_, ok := an.VerifiedDomain(col)
	return ok
}

// thetaWithRounding is how far apart two stored doubles of magnitude at
// most m can be when the policy (in decimals) puts them at distance θ:
// each is rounded by at most half an ulp, and so is their difference
// (constraints.Secrets.near uses the same margin).
func thetaWithRounding(theta, m float64) float64 {
	return theta + (2*m+theta)*0x1p-51
}
