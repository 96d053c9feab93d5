package planner

import (
	"fmt"
	"math"

	"github.com/ddp-proxy/ddp-proxy/aggregate"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Explanation is the privacy plan of one statement as explain prints it
// (explain --json, EXPLAIN through the wire). Field names are stable: tools
// and tests read them. Later models add fields; none is ever renamed.
type Explanation struct {
	StatementClass string        `json:"statement_class"`
	Dataset        string        `json:"dataset,omitempty"`
	Model          string        `json:"model,omitempty"`
	Neighbors      string        `json:"neighbors,omitempty"`
	Epsilon        float64       `json:"epsilon"`
	Delta          float64       `json:"delta"`
	BackendSQL     string        `json:"backend_sql,omitempty"`
	KeySelection   string        `json:"key_selection,omitempty"`
	Threshold      *int64        `json:"threshold,omitempty"`
	MaxRowsPerUnit int           `json:"max_rows_per_unit,omitempty"`
	Columns        []ExplainCol  `json:"columns,omitempty"`
	Aggregates     []ExplainAgg  `json:"aggregates,omitempty"`
	Notes          []string      `json:"notes,omitempty"`
	Refused        bool          `json:"refused,omitempty"`
	SQLState       string        `json:"sqlstate,omitempty"`
	Reason         string        `json:"reason,omitempty"`
	Hint           string        `json:"hint,omitempty"`
	Passthrough    *ExplainPass  `json:"passthrough,omitempty"`
	Statements     []Explanation `json:"statements,omitempty"`

	// Model-specific fields, flattened into the object when present. Their
	// field names must not collide with each other or with the above.
	*ExplainBlowfish
	*ExplainDependence
	// Synopsis is set for a range count answered from a synopsis
	// (synopsis.go).
	Synopsis *ExplainSynopsis `json:"synopsis,omitempty"`
	// GroupingSets is set for ROLLUP, CUBE and GROUPING SETS
	// (groupingsets.go): the strategy and each set's release.
	GroupingSets *ExplainGroupingSets `json:"grouping_sets,omitempty"`
}

// ExplainCol is one output column.
type ExplainCol struct {
	Name        string  `json:"name"`
	Aggregate   string  `json:"aggregate"` // "" for a group key
	Sensitivity float64 `json:"sensitivity"`
	Mechanism   string  `json:"mechanism"`
	Scale       float64 `json:"scale"`
	Epsilon     float64 `json:"epsilon"`
	CI95        float64 `json:"ci95"`
	// PostProcessing is the expression the proxy computes (OutExpr), over
	// the names of the outputs it reads.
	PostProcessing string `json:"post_processing,omitempty"`
	// CI95OverN (VAR, STDDEV): the 95% half-width for a group of n rows
	// is CI95OverN/n (Mechanism says how it was derived).
	CI95OverN float64 `json:"ci95_over_n,omitempty"`
	// RankError (quantiles: MIN, MAX, median, percentiles): with
	// probability at least 95% the value's rank is within this many rows
	// of the requested one.
	RankError float64 `json:"rank_error,omitempty"`
	// Parts are the noisy true aggregates a composite aggregate (AVG)
	// is computed from, each with its own noise and ε share.
	Parts []ExplainPart `json:"parts,omitempty"`
}

// ExplainPart is one noisy part of a composite aggregate column.
type ExplainPart struct {
	Label       string  `json:"label"`
	Sensitivity float64 `json:"sensitivity"`
	Mechanism   string  `json:"mechanism"`
	Scale       float64 `json:"scale"`
	Epsilon     float64 `json:"epsilon"`
	CI95        float64 `json:"ci95"`
}

// Summary is output o's noise as its unit summarizes it: the one the plan
// stored when it was completed, else computed now.
func (pl *Plan) Summary(o Output) aggregate.Summary {
	if o.Summary != nil {
		return *o.Summary
	}
	return o.Unit.Summarize(pl.PartNoise(o))
}

// summarize stores each aggregate output's Summary, once the parts' noise
// is final, for explain and every answer's cost notice to read.
func (pl *Plan) summarize() {
	for i, o := range pl.Outputs {
		if o.Kind == OutAggregate && o.Summary == nil {
			s := o.Unit.Summarize(pl.PartNoise(o))
			pl.Outputs[i].Summary = &s
		}
	}
}

// PartNoise describes the noise of an aggregate output's parts, in its
// unit's Parts order.
func (pl *Plan) PartNoise(o Output) []aggregate.PartNoise {
	out := make([]aggregate.PartNoise, len(o.Parts))
	for i, pi := range o.Parts {
		a := pl.Aggs[pi]
		ba := pl.Backend.Aggs[pi]
		out[i] = aggregate.PartNoise{Label: a.Label, Sensitivity: a.SensitivityValue(), Mechanism: a.Mechanism(), Scale: a.ScaleValue(),
			Quantum: a.Quantum, Epsilon: a.Epsilon, CI95: a.CI95(), Lo: ba.Lo, Hi: ba.Hi, RankError: a.RankError()}
	}
	return out
}

// formatPost renders a post-processing expression with each output
// reference shown as the output's name (hidden aggregates as their label,
// windows as written over those names).
func (pl *Plan) formatPost(e ir.Expr) string {
	named, err := pl.nameOutputs(e)
	if err != nil {
		return ir.FormatExpr(e)
	}
	return ir.FormatExpr(named)
}

func (pl *Plan) nameOutputs(e ir.Expr) (ir.Expr, error) {
	return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		if f, ok := n.(ir.Func); ok && f.Name == "round" && len(f.Args) > 1 {
			// The analysis's marker of a double (exprtype.PostType) is
			// not part of the query as written.
			if l, ok := f.Args[len(f.Args)-1].(ir.Literal); ok && l.Value.Kind == ir.KindBool {
				f.Args = f.Args[:len(f.Args)-1]
				return f, nil
			}
		}
		r, ok := n.(ir.OutputRef)
		if !ok || r.Index < 0 || r.Index >= len(pl.Outputs) {
			return n, nil
		}
		o := pl.Outputs[r.Index]
		switch {
		case o.Kind == OutWindow:
			return pl.nameOutputs(o.Window)
		case o.Hidden && o.Kind == OutAggregate:
			return ir.ColumnRef{Name: o.AggLabel()}, nil
		}
		return ir.ColumnRef{Name: o.Name}, nil
	})
}

// ExplainAgg is one true aggregate with its noise step.
type ExplainAgg struct {
	Label       string  `json:"label"`
	Sensitivity float64 `json:"sensitivity"`
	Quantum     float64 `json:"quantum"`
	Epsilon     float64 `json:"epsilon"`
	Scale       float64 `json:"scale"`
	Mechanism   string  `json:"mechanism"`
	// RankError: a quantile part's 95% rank error bound in rows.
	RankError float64 `json:"rank_error,omitempty"`
}

// ExplainPass describes a pass-through statement.
type ExplainPass struct {
	SQL string `json:"sql"`
}

// Refusal explains a refused statement.
func Refusal(err error) Explanation {
	e := sqlerr.As(err)
	return Explanation{StatementClass: "refused", Refused: true, SQLState: e.Code.SQLState, Reason: e.Message, Hint: e.Hint}
}

// Explain describes pl. render renders the backend query in the backend's
// dialect (nil: omit backend_sql).
func (pl *Plan) Explain(render func(*ir.BackendQuery) (string, error)) Explanation {
	if pl.Class == ClassPassthrough && pl.Rendered {
		return Explanation{StatementClass: "passthrough", Passthrough: &ExplainPass{SQL: pl.SQL},
			Notes: []string{"reads only public tables: translated to the backend's dialect as shown (literals bound as parameters), exact, no budget spent"}}
	}
	if pl.Class == ClassPassthrough {
		return Explanation{StatementClass: "passthrough", Passthrough: &ExplainPass{SQL: pl.SQL},
			Notes: []string{"reads only public tables or the catalog: forwarded as shown (catalog statistics read as NULL), exact, no budget spent"}}
	}
	x := Explanation{
		StatementClass: "private_aggregate",
		Dataset:        pl.Dataset.Name,
		Model:          pl.Dataset.Model,
		Neighbors:      neighborsWord(pl.Dataset),
		Epsilon:        pl.Budget.Epsilon,
		Delta:          pl.Budget.Delta,
		MaxRowsPerUnit: pl.Backend.MaxRowsPerUnit,
		Notes:          pl.Notes,

		ExplainBlowfish:   pl.Blowfish,
		ExplainDependence: pl.Dependence,
	}
	if x.Model == "" {
		x.Model = "dp"
	}
	if render != nil && !pl.NoRows && !pl.KeysOnly && !pl.GroupingSets.Separate() {
		if sql, err := render(pl.Backend); err == nil {
			x.BackendSQL = sql
		} else {
			x.Notes = append(x.Notes, "backend SQL: "+sqlerr.As(err).Message)
		}
	}
	switch pl.Keys.Mode {
	case KeysDomain:
		x.KeySelection = "declared_domain"
	case KeysThreshold:
		x.KeySelection = "threshold"
		t := pl.Keys.Threshold
		if !pl.GroupingSets.Separate() { // each set has its own (grouping_sets)
			x.Threshold = &t
		}
	}
	for _, a := range pl.Aggs {
		x.Aggregates = append(x.Aggregates, ExplainAgg{
			Label: a.Label, Sensitivity: a.SensitivityValue(), Quantum: a.Quantum,
			Epsilon: a.Epsilon, Scale: a.ScaleValue(), Mechanism: a.Mechanism(), RankError: a.RankError(),
		})
	}
	for _, o := range pl.Outputs[:pl.NumVisible] {
		c := ExplainCol{Name: o.Name, Mechanism: "none"}
		switch o.Kind {
		case OutAggregate:
			parts := pl.PartNoise(o)
			s := pl.Summary(o)
			c.Aggregate = o.Unit.Name
			c.Sensitivity, c.Mechanism, c.Scale, c.Epsilon, c.CI95 = s.Sensitivity, s.Mechanism, s.Scale, s.Epsilon, s.CI95
			c.CI95OverN, c.RankError = s.CI95OverN, s.RankError
			if len(parts) > 1 {
				for _, p := range parts {
					c.Parts = append(c.Parts, ExplainPart{Label: p.Label, Sensitivity: p.Sensitivity, Mechanism: p.Mechanism, Scale: p.Scale, Epsilon: p.Epsilon, CI95: p.CI95})
				}
			}
		case OutGroup:
			c.Mechanism = "group key (" + x.KeySelection + ")"
			if pl.NoRows {
				c.Mechanism = "group key (no group: the answer has no row)"
			}
		case OutExpr:
			c.Mechanism = "post-processing (computed by the proxy on the noisy row, no extra cost)"
			if pl.NoRows {
				c.Mechanism = "typed only: the answer has no row"
			}
			if o.Expr != nil {
				c.PostProcessing = pl.formatPost(o.Expr)
			}
		}
		if math.IsNaN(c.CI95) {
			c.CI95 = 0
		}
		x.Columns = append(x.Columns, c)
	}
	for _, st := range pl.Stages {
		x.Columns = pl.stageColumns(st, x.Columns)
	}
	x.Synopsis = pl.Synopsis.explain(&x)
	x.GroupingSets = pl.explainGroupingSets(render)
	return x
}

// Mechanism names the noise step.
func (a AggPlan) Mechanism() string {
	switch {
	case a.Quantile != nil && a.Sensitivity == 0:
		return "none (sensitivity 0: the best candidate)"
	case a.Quantile != nil:
		return "exponential"
	case a.Sensitivity == 0:
		return "none (sensitivity 0)"
	}
	if a.Quantum == 1 {
		return "discrete_laplace"
	}
	return fmt.Sprintf("lattice_laplace(gamma=%g)", a.Quantum)
}

// stageColumns explains a stage's columns from those of the level below: a
// column passed through keeps its explanation, any other is
// post-processing written over the names of the columns below.
func (pl *Plan) stageColumns(st Stage, below []ExplainCol) []ExplainCol {
	var name func(ir.Expr) ir.Expr
	name = func(e ir.Expr) ir.Expr {
		named, err := ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
			r, ok := n.(ir.OutputRef)
			switch {
			case !ok:
				return n, nil
			case r.Index < st.In:
				return ir.ColumnRef{Name: below[r.Index].Name}, nil
			case r.Index-st.In < len(st.Outputs) && st.Outputs[r.Index-st.In].Kind == OutWindow:
				return name(st.Outputs[r.Index-st.In].Window), nil
			}
			return n, nil
		})
		if err != nil {
			return e
		}
		return named
	}
	var cols []ExplainCol
	for _, o := range st.Outputs[:st.NumVisible] {
		if r, ok := o.Expr.(ir.OutputRef); ok && r.Index < st.In {
			c := below[r.Index]
			c.Name = o.Name
			cols = append(cols, c)
			continue
		}
		c := ExplainCol{Name: o.Name, Mechanism: "post-processing (computed by the proxy on the noisy rows, no extra cost)"}
		if o.Expr != nil {
			c.PostProcessing = ir.FormatExpr(name(o.Expr))
		}
		cols = append(cols, c)
	}
	return cols
}
