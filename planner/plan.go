package planner

import (
	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// Class is what the planner decided to do with a statement.
type Class uint8

const (
	// ClassPrivate is an aggregate over a private table: noised and charged.
	ClassPrivate Class = iota
	// ClassPassthrough reads only public tables, the catalog, or no table
	// at all: the statement text is forwarded to the backend unchanged.
	ClassPassthrough
)

func (c Class) String() string {
	if c == ClassPrivate {
		return "private_aggregate"
	}
	return "passthrough"
}

// Plan is the privacy plan of one statement.
type Plan struct {
	Class Class

	// ClassPassthrough: the SQL to forward: the client's own text, or for a
	// catalog query the text restored from its checked, rewritten tree.
	SQL string
	// Rendered marks SQL as rendered by the proxy (a row read of public
	// tables translated to the backend's dialect, rows.go): it binds
	// Args, not the client's arguments.
	Rendered bool
	Args     []ir.Value
	// Types, for a rendered read, types each output column from the
	// policy where the backend cannot (ir.TypeUnknown: the backend's
	// type); nil when unknown.
	Types []ir.ColType

	// ClassPrivate.
	Dataset *policies.Dataset
	Table   *policies.Table
	// Budget is the (ε, δ) the release charges.
	Budget  policies.Budget
	Backend *ir.BackendQuery
	// Aggs is parallel to Backend.Aggs: the noise step of each true
	// aggregate. Each one is a separate release with its own share of ε.
	Aggs []AggPlan
	// Groups is parallel to Backend.GroupBy.
	Groups []GroupPlan
	Keys   KeySelection
	// Outputs are the columns of the noisy result: the visible ones (the
	// select list, in order) first, then hidden ones that HAVING or ORDER
	// BY need.
	Outputs    []Output
	NumVisible int
	// Having is evaluated on noisy rows; it references outputs only
	// (ir.OutputRef), literals and operators.
	Having  ir.Expr
	OrderBy []OrderKey
	// Post is the client's dialect as post-processing needs it (casts,
	// NULL order of windows).
	Post exprtype.PostDialect
	// NullsHigh: NULL sorts after every value in windows' ORDER BY (the
	// client speaks PostgreSQL), as in OrderKey.
	NullsHigh bool
	Limit     *int64
	Offset    *int64
	// Stages are the SELECT levels around the query (ir.Stage), innermost
	// first, computed over its result rows in order; the last one's
	// visible outputs are the result's columns (Visible).
	Stages []Stage
	// Notes explain the plan in words (explain output).
	Notes []string
	// Model-specific parts of the plan (nil under dp): what explain reports
	// for blowfish/induced (model_blowfish.go) and ddp (model_ddp.go), and
	// a range count answered from a released synopsis (synopsis.go).
	Blowfish   *ExplainBlowfish
	Dependence *ExplainDependence
	Synopsis   *SynopsisPlan
	// NoRows: the answer has no row whatever the data (LIMIT 0, a WHERE or
	// HAVING folding to false; with WHERE false and no GROUP BY,
	// aggregates give their one exact row over no input, which HAVING
	// then filters): it is answered from the plan alone, without the
	// backend and without charge, and Aggs carry no calibration.
	NoRows bool
	// KeysOnly: GROUP BY without an aggregate over declared or derived
	// key sets (Keys.Mode KeysDomain, no Aggs). The answer is the key
	// set, public by the policy: no backend call, no charge.
	KeysOnly bool
	// GroupingSets is GROUP BY ROLLUP / CUBE / GROUPING SETS (nil for a
	// plain GROUP BY): how the sets' rows are released (groupingsets.go).
	GroupingSets *GroupingSetsPlan
	// CacheKey identifies the release (the noisy aggregate table before
	// post-processing): same dataset policy, same true aggregates, same
	// sensitivities and ε shares, same key selection.
	CacheKey string
}

// AggPlan is the noise step of one true aggregate.
type AggPlan struct {
	// Label names the aggregate for explain ("count(*)", "sum(age)").
	Label string
	// Sensitivity is the L1 sensitivity in units of Quantum (over all
	// groups when grouped).
	Sensitivity int64
	// Quantum is the real value of one unit: 1 for counts and integer
	// sums, the lattice step γ for sums of real columns.
	Quantum float64
	// Epsilon is this aggregate's share of the query's ε.
	Epsilon float64
	// Scale is the discrete Laplace scale in units (Sensitivity/Epsilon).
	Scale Scale
	// Multiplier is the ddp dependence multiplier m (0 under other models):
	// the noise is scaled to the dependent sensitivity m·Sensitivity.
	Multiplier float64
	// Quantile is set for a quantile part (planner/quantile.go): released
	// by the exponential mechanism, not by noise on a true value.
	Quantile *QuantilePlan
}

// ScaleValue returns the noise scale in output units (Scale × Quantum).
func (a AggPlan) ScaleValue() float64 {
	if a.Quantile != nil {
		return 0 // no additive noise: see RankError
	}
	return a.Scale.Float64() * a.Quantum
}

// GroupPlan is one GROUP BY key: a column, or an expression (Expr).
type GroupPlan struct {
	Name string
	// Expr marks a key that is an expression (Backend.GroupBy holds it
	// lowered); its Domain, when set, is derived from the declared
	// bounds and domains of its columns (exprtype.Info.Domain).
	Expr bool
	Type string // a policies.Type* constant; "" when unknown (public column without declaration)
	// Domain is the declared key set (nil when DomainFrom or threshold
	// selection supplies the keys).
	Domain []ir.Value
	// DomainFrom, when set, computes the key set from a public table:
	// the keys of this query's result are the domain. It reads public data
	// only, so it costs nothing.
	DomainFrom *ir.BackendQuery
	// DomainSQL is a declared domain query over public tables, in the
	// backend's dialect.
	DomainSQL string
	// NullKey adds NULL to the domain: the column belongs to a LEFT-joined
	// table, whose columns read NULL for rows without a match.
	NullKey bool
}

// KeyMode says how the released group keys are chosen.
type KeyMode uint8

const (
	// KeysNone: no GROUP BY, exactly one row.
	KeysNone KeyMode = iota
	// KeysDomain: every key of the declared domains (cartesian product),
	// present in the data or not; zero counts are noised too.
	KeysDomain
	// KeysThreshold: keys come from the data and a key is released only
	// when its noisy count reaches Threshold ((ε, δ)-DP).
	KeysThreshold
)

// KeySelection is how group keys are chosen.
type KeySelection struct {
	Mode      KeyMode
	Threshold int64 // KeysThreshold: release a key iff noisy count ≥ Threshold
	CountAgg  int   // KeysThreshold: index of the CountRows aggregate used
}

// OutputKind is the kind of a result column.
type OutputKind uint8

const (
	OutGroup OutputKind = iota
	// OutAggregate is an aggregate: its Unit computes it from the noisy
	// true aggregates Parts.
	OutAggregate
	// OutExpr is computed by the proxy from the other outputs of the row
	// (post-processing): Expr references them as ir.OutputRef.
	OutExpr
	// OutWindow is a window function over the result rows (Window, whose
	// argument and keys reference outputs as ir.OutputRef), computed by
	// the proxy after HAVING (post-processing; never sent to the backend).
	OutWindow
	// OutGrouping is GROUPING(keys) (Grouping, indexes into Groups): a
	// function of the grouping set of the row, public (groupingsets.go).
	OutGrouping
)

// Output is one column of the noisy result.
type Output struct {
	Name string
	Kind OutputKind
	// Type is the policies column type of the value: the unit's result
	// type for an aggregate, the group column's type for keys.
	Type  string
	Group int // OutGroup
	// Unit, Arg and Parts (OutAggregate): the aggregate, its analysed
	// argument, and the indexes into Aggs of its parts (in the unit's
	// Parts order; identical parts of different outputs are shared).
	Unit   *aggregate.Unit
	Arg    aggregate.Arg
	Parts  []int
	Hidden bool
	// Expr (OutExpr) is the post-processing expression over outputs
	// (ir.OutputRef), literals, operators and functions. Nil in a plan
	// that reads no row for a column that is never evaluated.
	Expr ir.Expr
	// AfterWindows (OutExpr): Expr reads a window's output, so it is
	// computed after the windows (and after HAVING, which cannot read it).
	AfterWindows bool
	// Window (OutWindow) is the window function.
	Window ir.Window
	// Summary (OutAggregate) is the unit's summary of its parts' noise,
	// filled once when the plan is complete (a variance's takes thousands
	// of simulated draws); nil until then. Read it through Plan.Summary.
	Summary *aggregate.Summary
	// Grouping (OutGrouping) are the keys GROUPING(...) reads.
	Grouping []int
}

// OrderKey is one ORDER BY key over outputs.
type OrderKey struct {
	Output int
	Desc   bool
	// NullsHigh sorts NULL after every value (PostgreSQL: last ascending,
	// first descending); otherwise before (MySQL). A LEFT join's NULL
	// group lands where the client's own database would put it.
	NullsHigh bool
}

// AggLabel names an aggregate output as written over its argument
// ("avg(age)", "count(*)"), for explain and the cost notice.
func (o Output) AggLabel() string {
	text := o.Arg.Text
	if o.Arg.Star {
		text = "*"
	}
	if o.Arg.Distinct {
		text = "DISTINCT " + text
	}
	return o.Unit.Name + "(" + text + ")"
}
