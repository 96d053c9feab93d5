package planner

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// ExplainGroupingSets is explain's account of grouping sets.
type ExplainGroupingSets struct {
	// Strategy is sum_of_finest_cells or per_set_release.
	Strategy string `json:"strategy"`
	// SumError, PerSetError: total noise variance over all rows in units
	// of one finest cell's (absent when not compared).
	SumError    *float64     `json:"sum_error,omitempty"`
	PerSetError *float64     `json:"per_set_error,omitempty"`
	Sets        []ExplainSet `json:"sets"`
}

// ExplainSet is one grouping set as written.
type ExplainSet struct {
	Keys []string `json:"keys"`
	// Released (per_set_release): the set's own release; the first of
	// duplicate sets carries it, the others name it in SameAs.
	Epsilon      float64      `json:"epsilon,omitempty"`
	Delta        float64      `json:"delta,omitempty"`
	KeySelection string       `json:"key_selection,omitempty"`
	Threshold    *int64       `json:"threshold,omitempty"`
	Aggregates   []ExplainAgg `json:"aggregates,omitempty"`
	BackendSQL   string       `json:"backend_sql,omitempty"`
	SameAs       *int         `json:"same_as,omitempty"`
}

// writeText prints the strategy and, released per set, each set's cost
// and backend query (explain without --json).
func (x *ExplainGroupingSets) writeText(w io.Writer, indent string) {
	if x == nil {
		return
	}
	fmt.Fprintf(w, "%sgrouping sets: %s\n", indent, x.Strategy)
	for i, s := range x.Sets {
		keys := "()"
		if len(s.Keys) > 0 {
			keys = "(" + strings.Join(s.Keys, ", ") + ")"
		}
		switch {
		case s.SameAs != nil:
			fmt.Fprintf(w, "%s  set %d %s: the rows of set %d again\n", indent, i+1, keys, *s.SameAs+1)
		case s.KeySelection == "":
			fmt.Fprintf(w, "%s  set %d %s\n", indent, i+1, keys)
		default:
			fmt.Fprintf(w, "%s  set %d %s: ε %g, δ %g, keys %s\n", indent, i+1, keys, s.Epsilon, s.Delta, s.KeySelection)
			for _, a := range s.Aggregates {
				fmt.Fprintf(w, "%s    %s: sensitivity %g, %s scale %g\n", indent, a.Label, a.Sensitivity, a.Mechanism, a.Scale)
			}
			if s.BackendSQL != "" {
				fmt.Fprintf(w, "%s    backend SQL: %s\n", indent, s.BackendSQL)
			}
		}
	}
}

func (pl *Plan) explainGroupingSets(render func(*ir.BackendQuery) (string, error)) *ExplainGroupingSets {
	gs := pl.GroupingSets
	if gs == nil {
		return nil
	}
	x := &ExplainGroupingSets{Strategy: gs.Strategy.String()}
	// JSON has no NaN or infinity: a number that is not finite is left out.
	finite := func(f float64) *float64 {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return &f
	}
	if gs.SumError+gs.SeparateError > 0 {
		x.SumError, x.PerSetError = finite(gs.SumError), finite(gs.SeparateError)
	}
	first := map[int]int{}
	for i, s := range gs.Sets {
		e := ExplainSet{Keys: []string{}}
		for _, g := range s {
			e.Keys = append(e.Keys, pl.Groups[g].Name)
		}
		if gs.Separate() {
			d := gs.Distinct[i]
			if f, ok := first[d]; ok {
				e.SameAs = &f
			} else {
				first[d] = i
				r := gs.Release[d]
				e.Epsilon, e.Delta = r.Budget.Epsilon, r.Budget.Delta
				switch r.Keys.Mode {
				case KeysNone:
					e.KeySelection = "none"
				case KeysDomain:
					e.KeySelection = "declared_domain"
				case KeysThreshold:
					e.KeySelection = "threshold"
					t := r.Keys.Threshold
					e.Threshold = &t
				}
				if render != nil {
					if sql, err := render(r.Backend); err == nil {
						e.BackendSQL = sql
					}
				}
				for _, a := range r.Aggs {
					e.Aggregates = append(e.Aggregates, ExplainAgg{
						Label: a.Label, Sensitivity: a.SensitivityValue(), Quantum: a.Quantum,
						Epsilon: a.Epsilon, Scale: a.ScaleValue(), Mechanism: a.Mechanism(),
					})
				}
			}
		}
		x.Sets = append(x.Sets, e)
	}
	return x
}
