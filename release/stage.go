package release

import (
	"sort"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// runStage computes one SELECT level over the rows of the level below
// (post-processing): WHERE, then the windows over the rows it kept, then
// the expressions, ORDER BY, OFFSET and LIMIT, as SQL orders them.
func runStage(pl *planner.Plan, st planner.Stage, below [][]ir.Value) ([][]ir.Value, error) {
	rows := make([][]ir.Value, 0, len(below))
	for _, b := range below {
		if st.Where != nil {
			v, err := exprtype.Eval(st.Where, b, pl.Post)
			if err != nil {
				return nil, err
			}
			if !exprtype.IsTrue(v) {
				continue
			}
		}
		row := make([]ir.Value, st.In+len(st.Outputs))
		copy(row, b)
		rows = append(rows, row)
	}
	for i, o := range st.Outputs {
		if o.Kind != planner.OutWindow {
			continue
		}
		vs, err := exprtype.EvalWindow(o.Window, rows, pl.NullsHigh, pl.Post)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			rows[r][st.In+i] = vs[r]
		}
	}
	for _, row := range rows {
		for i, o := range st.Outputs {
			if o.Kind == planner.OutExpr && o.Expr != nil {
				v, err := exprtype.Eval(o.Expr, row, pl.Post)
				if err != nil {
					return nil, err
				}
				row[st.In+i] = v
			}
		}
	}
	rows = OrderAndLimit(rows, st.OrderBy, st.Offset, st.Limit)
	for i := range rows {
		rows[i] = rows[i][st.In : st.In+st.NumVisible]
	}
	return rows, nil
}

// stageColumns describes a stage's columns from those of the level below:
// a column passed through keeps its description (and noise scale), any
// other is post-processing of the noisy columns it reads.
func stageColumns(st planner.Stage, below []Column) []Column {
	var cols []Column
	for _, o := range st.Outputs[:st.NumVisible] {
		if r, ok := o.Expr.(ir.OutputRef); ok && r.Index < st.In {
			c := below[r.Index]
			c.Name, c.Type = o.Name, o.Type
			cols = append(cols, c)
			continue
		}
		c := Column{Name: o.Name, Type: o.Type, Uses: stageInputs(st, o.Expr, below)}
		if len(c.Uses) > 0 {
			c.Aggregate = "expr"
		}
		cols = append(cols, c)
	}
	return cols
}

// stageInputs lists the noisy aggregates a stage expression reads, through
// the columns below and the stage's windows, in order of first use.
func stageInputs(st planner.Stage, e ir.Expr, below []Column) []Column {
	var out []Column
	seen := map[string]bool{}
	add := func(c Column) {
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	var visit func(ir.Expr)
	visit = func(e ir.Expr) {
		ir.Walk(e, func(n ir.Expr) bool {
			r, ok := n.(ir.OutputRef)
			switch {
			case !ok:
			case r.Index < st.In:
				c := below[r.Index]
				switch c.Aggregate {
				case "":
				case "expr":
					for _, u := range c.Uses {
						add(u)
					}
				default:
					add(c)
				}
			case r.Index-st.In < len(st.Outputs):
				if o := st.Outputs[r.Index-st.In]; o.Kind == planner.OutWindow {
					visit(o.Window)
				}
			}
			return true
		})
	}
	visit(e)
	return out
}

// OrderAndLimit sorts rows by the keys (stably: rows the keys do not
// order keep the order of the level below), then applies OFFSET and LIMIT.
func OrderAndLimit(rows [][]ir.Value, keys []planner.OrderKey, offset, limit *int64) [][]ir.Value {
	if len(keys) > 0 {
		sort.SliceStable(rows, func(i, j int) bool {
			for _, k := range keys {
				a, b := rows[i][k.Output], rows[j][k.Output]
				c := ir.CompareValues(a, b) // NULL first
				if k.NullsHigh && a.IsNull() != b.IsNull() {
					c = -c
				}
				if c != 0 {
					return (c < 0) != k.Desc
				}
			}
			return false
		})
	}
	if offset != nil {
		rows = rows[min(int(*offset), len(rows)):]
	}
	if limit != nil && int(*limit) < len(rows) {
		rows = rows[:*limit]
	}
	return rows
}
