package planner

import (
	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Stage is a planned ir.Stage: one SELECT level over the rows of the level
// below (the query's visible outputs after its HAVING, windows, ORDER BY
// and LIMIT; then the previous stage's). It is post-processing of the one
// release: nothing of it reaches the backend, the ε split or the release
// key.
//
// A stage row is the level below's row (In columns) followed by Outputs:
// ir.OutputRef i < In reads column i below, In+j reads Outputs[j]. Where
// reads the columns below; the windows (OutWindow) run over the rows Where
// kept and read the columns below; the expressions (OutExpr) read those
// and the windows. OrderBy indexes the stage row.
type Stage struct {
	In         int
	Outputs    []Output // the visible ones (the select list) first
	NumVisible int
	Where      ir.Expr
	OrderBy    []OrderKey
	Limit      *int64
	Offset     *int64
}

// Visible returns the columns of the plan's result: those of its last
// stage, or the query's visible outputs.
func (pl *Plan) Visible() []Output {
	if n := len(pl.Stages); n > 0 {
		s := pl.Stages[n-1]
		return s.Outputs[:s.NumVisible]
	}
	return pl.Outputs[:pl.NumVisible]
}

// stages plans the SELECT levels around the query, innermost first.
func (b *builder) stages(q *ir.Query) error {
	if len(q.Stages) == 0 {
		return nil
	}
	in := make([]exprtype.Out, b.plan.NumVisible)
	for i := range in {
		in[i] = b.outType(i)
	}
	for _, st := range q.Stages {
		ps, out, err := b.stage(st, in)
		if err != nil {
			return err
		}
		b.plan.Stages = append(b.plan.Stages, ps)
		in = out
	}
	b.notes = append(b.notes, "the SELECT levels around the aggregate query (windows over windows, filters on them) are computed by the proxy over its noisy output rows, level by level (post-processing of the same release, no extra cost)")
	return nil
}

// stageBuilder binds one stage's expressions to its row.
type stageBuilder struct {
	b    *builder
	ps   *Stage
	in   []exprtype.Out
	outs []exprtype.Out // parallel to ps.Outputs
}

func (s *stageBuilder) outType(i int) exprtype.Out {
	if i < len(s.in) {
		return s.in[i]
	}
	return s.outs[i-len(s.in)]
}

func (s *stageBuilder) add(o Output, t exprtype.Out) int {
	s.ps.Outputs = append(s.ps.Outputs, o)
	s.outs = append(s.outs, t)
	return s.ps.In + len(s.ps.Outputs) - 1
}

// stage plans one level over columns typed by in; it returns the types of
// its visible columns (the next level's input).
func (b *builder) stage(st ir.Stage, in []exprtype.Out) (Stage, []exprtype.Out, error) {
	ps := Stage{In: len(in), Limit: st.Limit, Offset: st.Offset}
	s := &stageBuilder{b: b, ps: &ps, in: in}
	if st.Where != nil {
		if err := s.check(st.Where, false); err != nil {
			return Stage{}, nil, err
		}
		w, t, err := exprtype.PostType(st.Where, s.outType, b.plan.Post)
		if err != nil {
			return Stage{}, nil, err
		}
		if l, null := w.(ir.Literal); t != exprtype.Boolean && !(null && l.Value.IsNull()) {
			return Stage{}, nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of WHERE must be boolean, not %s", policiesType(t))
		}
		ps.Where = w
	}
	for _, it := range st.Select {
		s.add(Output{Name: it.Name, Kind: OutExpr}, exprtype.Out{})
	}
	ps.NumVisible = len(ps.Outputs)
	for i, it := range st.Select {
		x, t, err := s.expr(it.Expr)
		if err != nil {
			return Stage{}, nil, err
		}
		ps.Outputs[i].Expr, ps.Outputs[i].Type, s.outs[i] = x, policiesType(t.Type), t
		if ps.Outputs[i].Name == "" {
			ps.Outputs[i].Name = "?column?"
		}
	}
	for _, o := range st.OrderBy {
		k := OrderKey{Desc: o.Desc, NullsHigh: o.Nulls.High(o.Desc, b.nullsHigh)}
		if r, ok := o.Expr.(ir.OutputRef); ok && r.Index >= 0 && r.Index < ps.In {
			k.Output = r.Index
		} else {
			x, t, err := s.expr(o.Expr)
			if err != nil {
				return Stage{}, nil, err
			}
			k.Output = s.add(Output{Name: "?column?", Kind: OutExpr, Type: policiesType(t.Type), Expr: x, Hidden: true}, t)
		}
		ps.OrderBy = append(ps.OrderBy, k)
	}
	for _, v := range []*int64{st.Limit, st.Offset} {
		if v != nil && *v < 0 {
			return Stage{}, nil, sqlerr.New(sqlerr.InvalidParameterValue, "LIMIT and OFFSET must not be negative")
		}
	}
	return ps, s.outs[:ps.NumVisible], nil
}

// expr binds and checks an expression of the select list or ORDER BY:
// each window becomes a hidden output of the stage.
func (s *stageBuilder) expr(e ir.Expr) (ir.Expr, exprtype.Out, error) {
	if err := s.check(e, true); err != nil {
		return nil, exprtype.Out{}, err
	}
	x, err := ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
		w, ok := n.(ir.Window)
		if !ok {
			return n, nil
		}
		lw, t, err := exprtype.PostWindow(w, s.outType, s.b.plan.Post)
		if err != nil {
			return nil, err
		}
		out := Output{Name: w.Func.String(), Kind: OutWindow, Type: policiesType(t), Window: lw, Hidden: true}
		return ir.OutputRef{Index: s.add(out, windowOut(t, w.Func))}, nil
	})
	if err != nil {
		return nil, exprtype.Out{}, err
	}
	x, t, err := exprtype.PostType(x, s.outType, s.b.plan.Post)
	if err != nil {
		return nil, exprtype.Out{}, err
	}
	out := exprtype.Out{Type: t}
	if r, ok := x.(ir.OutputRef); ok {
		out = s.outType(r.Index) // a column passed through keeps its precision
	}
	return x, out, nil
}

// check refuses what a stage cannot compute: a reference outside the
// level below (the parser writes none), a parameter, an aggregate (it
// would aggregate the released rows again), a window where SQL forbids
// one (windowsOK false: WHERE) or inside another window.
func (s *stageBuilder) check(e ir.Expr, windowsOK bool) error {
	var err error
	var visit func(e ir.Expr, inWindow bool)
	visit = func(e ir.Expr, inWindow bool) {
		ir.Walk(e, func(n ir.Expr) bool {
			if err != nil {
				return false
			}
			switch n := n.(type) {
			case ir.OutputRef:
				if n.Index < 0 || n.Index >= s.ps.In {
					err = sqlerr.New(sqlerr.Internal, "internal error: a stage reads column %d of %d", n.Index, s.ps.In)
				}
			case ir.ColumnRef, ir.Clamp:
				err = sqlerr.New(sqlerr.Internal, "internal error: %T in a stage", n)
			case ir.Param:
				err = sqlerr.New(sqlerr.FeatureNotSupported, "parameters are not supported in a SELECT over an aggregate subquery").
					WithHint("write the value as a literal")
			case ir.Aggregate:
				err = sqlerr.New(sqlerr.FeatureNotSupported, "aggregating the result of an aggregate query is not supported; write one aggregate query over the table")
			case ir.Window:
				switch {
				case !windowsOK:
					err = sqlerr.New(sqlerr.WindowingError, "window functions are not allowed in WHERE")
				case inWindow:
					err = sqlerr.New(sqlerr.WindowingError, "window functions cannot be nested: %s", ir.FormatExpr(n))
				default:
					parts := append([]ir.Expr{n.Arg}, n.PartitionBy...)
					for _, o := range n.OrderBy {
						parts = append(parts, o.Expr)
					}
					for _, p := range parts {
						visit(p, true)
					}
				}
				return false
			}
			return err == nil
		})
	}
	visit(e, false)
	return err
}
