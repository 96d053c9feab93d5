package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/synopsis"
)

// SynopsisPlan says that a range count is answered from a released
// synopsis instead of a fresh release. Plan.Backend is then the histogram
// query that feeds the synopsis (run only when the synopsis is released,
// once per (table, column, ε)), and Plan.Budget is what that release
// costs; an answer from an already released synopsis costs nothing.
type SynopsisPlan struct {
	// Spec is the policy's declaration (table, column, mechanism, fan-out,
	// θ, domain).
	Spec *policies.Synopsis
	// Epsilon is the ε of the synopsis release (the session's ε).
	Epsilon float64
	// RowsPerUnit is k of the table (1 under model blowfish).
	RowsPerUnit int
	// Lo and Hi are the query's inclusive interval on the column (Lo > Hi:
	// the predicate is unsatisfiable and the count is 0).
	Lo, Hi int64
	// Key is the ledger key of the synopsis release: dataset fingerprint
	// (which covers the secrets and the synopsis declaration), table,
	// column, mechanism, parameters and ε.
	Key string
}

// Config is the synopsis package's configuration of this plan.
func (s *SynopsisPlan) Config() synopsis.Config {
	return synopsis.Config{
		Mechanism: s.Spec.Mechanism, Lo: s.Spec.Lo, Hi: s.Spec.Hi, Theta: s.Spec.Theta,
		Fanout: s.Spec.Fanout, RowsPerUnit: s.RowsPerUnit,
	}
}

// ExplainSynopsis is explain's "synopsis" object.
type ExplainSynopsis struct {
	Mechanism string  `json:"mechanism"`
	Epsilon   float64 `json:"epsilon"`
	Fanout    int     `json:"fanout,omitempty"`
	Theta     int64   `json:"theta"`
	Table     string  `json:"table"`
	Column    string  `json:"column"`
	Domain    []int64 `json:"domain"`
	// Range is the query's interval [lo, hi] on the column.
	Range []int64 `json:"range"`
	// The release's structure and noise (package synopsis): sensitivities
	// of the S and H node vectors under distance-θ neighbours, the ε split
	// and the discrete Laplace scales.
	SNodes       int     `json:"s_nodes"`
	HNodes       int     `json:"h_nodes"`
	SensitivityS int64   `json:"sensitivity_s"`
	SensitivityH int64   `json:"sensitivity_h"`
	EpsilonS     float64 `json:"epsilon_s"`
	EpsilonH     float64 `json:"epsilon_h"`
	ScaleS       float64 `json:"scale_s"`
	ScaleH       float64 `json:"scale_h"`
	// RawSD is the standard deviation of the raw (pre-inference)
	// estimator of the query's range; constrained inference lowers the
	// mean squared error further.
	RawSD float64 `json:"raw_sd"`
}

// planSynopsis decides whether the private plan being built can be
// answered from a synopsis the policy declares: model blowfish, a COUNT(*)
// (or COUNT of the column) over the private table alone, no GROUP BY, and
// a WHERE that is only a range on the synopsis column (comparisons with
// numeric literals, BETWEEN, =, joined by AND). Anything else is planned as
// usual.
func (b *builder) planSynopsis() error {
	pl := b.plan
	ds := b.sc.ds
	if ds.Model != policies.ModelBlowfish || len(ds.Synopses) == 0 || b.hasQuantile() {
		return nil
	}
	bq := pl.Backend
	if len(bq.Joins) > 0 || len(bq.GroupBy) > 0 || len(bq.Aggs) != 1 || pl.Keys.Mode != KeysNone || pl.Budget.Delta != 0 {
		return nil
	}
	main := b.sc.tables[0]
	col, lo, hi, ok := rangeOf(bq.Where, main.alias)
	if !ok {
		return nil
	}
	spec := ds.SynopsisFor(main.tbl.Name, col)
	if spec == nil {
		return nil
	}
	switch a := bq.Aggs[0]; a.Kind {
	case ir.CountRows:
	case ir.CountValues:
		if a.Column == nil || a.Column.Name != spec.Column {
			return nil // COUNT of another (nullable) column
		}
	default:
		return nil
	}
	eps := pl.Budget.Epsilon
	sp := &SynopsisPlan{Spec: spec, Epsilon: eps, RowsPerUnit: main.tbl.MaxRowsPerUnit, Lo: lo, Hi: hi}
	sp.Key = synopsisKey(ds, main.tbl, sp)
	c := ir.ColumnRef{Qualifier: main.alias, Name: spec.Column}
	// The histogram the synopsis is built from: non-NULL values only (a
	// NULL is at no distance from a number, so no secret pair turns a NULL
	// into a value); values outside the domain are clamped by the release.
	pl.Backend = &ir.BackendQuery{
		From: bq.From, Unit: bq.Unit, MaxRowsPerUnit: bq.MaxRowsPerUnit,
		Where:   ir.IsNull{X: c, Not: true},
		GroupBy: []ir.Expr{c},
		Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
	}
	pl.Aggs[0] = AggPlan{Label: pl.Aggs[0].Label, Quantum: 1, Epsilon: eps}
	pl.Synopsis = sp
	b.notes = append(b.notes,
		fmt.Sprintf("answered from the %s range synopsis of %s.%s (θ = %d, fan-out %d, ε = %g, Blowfish §7): the synopsis is released and charged once for this ε; every later range count on %s at this ε is answered from it without charge",
			spec.Mechanism, spec.Table, spec.Column, spec.Theta, spec.Fanout, eps, spec.Column),
		fmt.Sprintf("the synopsis counts the non-NULL values of %s, a value outside the declared range [%d, %d] at its nearest end; their total is public under distance secrets (no secret pair changes it) and is released exactly",
			spec.Column, spec.Lo, spec.Hi))
	return nil
}

func synopsisKey(ds *policies.Dataset, t *policies.Table, sp *SynopsisPlan) string {
	h := sha256.New()
	// ε as the shortest decimal, as the ledger charges it.
	fmt.Fprintf(h, "ddp-synopsis-v1\x00%s\x00%s.%s\x00%s\x00%s\x00%d/%d/%d/%d/%d\x00%s\x00",
		ds.Fingerprint, t.Schema, t.Name, sp.Spec.Column, sp.Spec.Mechanism,
		sp.Spec.Theta, sp.Spec.Fanout, sp.Spec.Lo, sp.Spec.Hi, sp.RowsPerUnit,
		strconv.FormatFloat(sp.Epsilon, 'g', -1, 64))
	return hex.EncodeToString(h.Sum(nil))
}

// explain fills explain's synopsis object and names the mechanism of the
// count column (nil-safe: no synopsis, no object).
func (s *SynopsisPlan) explain(x *Explanation) *ExplainSynopsis {
	if s == nil {
		return nil
	}
	e := &ExplainSynopsis{
		Mechanism: s.Spec.Mechanism, Epsilon: s.Epsilon, Fanout: s.Spec.Fanout, Theta: s.Spec.Theta,
		Table: s.Spec.Table, Column: s.Spec.Column, Domain: []int64{s.Spec.Lo, s.Spec.Hi}, Range: []int64{s.Lo, s.Hi},
	}
	if s.Spec.Mechanism == synopsis.Ordered {
		e.Fanout = 0
	}
	if l, err := synopsis.NewLayout(s.Config()); err == nil {
		e.SNodes, e.HNodes = l.Blocks(), l.HNodes()
		e.SensitivityS, e.SensitivityH = l.Sensitivity()
		if es, eh, err := l.Split(s.Epsilon); err == nil {
			e.EpsilonS, e.EpsilonH = es, eh
			ts, err1 := scaleOrZero(e.SensitivityS, es)
			th, err2 := scaleOrZero(e.SensitivityH, eh)
			if err1 == nil && err2 == nil {
				e.ScaleS, e.ScaleH = ts.Float64(), th.Float64()
				if a, b := max(s.Lo, s.Spec.Lo), min(s.Hi, s.Spec.Hi); a <= b {
					e.RawSD = math.Sqrt(l.RawVariance(int(a-s.Spec.Lo), int(b-s.Spec.Lo), ts, th))
				}
			}
		}
	}
	mech := "range synopsis (" + s.Spec.Mechanism + "): released once per ε, later range counts free; scale = standard deviation of the raw estimator of this range, ci95 = its Chebyshev bound √20·sd"
	for i := range x.Columns {
		if x.Columns[i].Aggregate == "count" {
			x.Columns[i].Mechanism = mech
			x.Columns[i].Sensitivity = float64(e.SensitivityS)
			x.Columns[i].Scale = e.RawSD
			x.Columns[i].CI95 = math.Ceil(math.Sqrt(20) * e.RawSD)
		}
	}
	for i := range x.Aggregates {
		x.Aggregates[i].Mechanism = mech
		x.Aggregates[i].Sensitivity = float64(e.SensitivityS)
		x.Aggregates[i].Scale = e.RawSD
	}
	return e
}

func scaleOrZero(sens int64, eps float64) (Scale, error) {
	if sens == 0 || eps == 0 {
		return Scale{}, nil
	}
	return noise.ScaleFor(big.NewRat(sens, 1), eps)
}

// rangeOf reads e as an interval on one column of the table aliased alias:
// comparisons of the column with numeric literals, BETWEEN and =, joined by
// AND. For an integer column c < 10.5 is c ≤ 10, and so on. ok is false
// for anything else (including no WHERE at all).
func rangeOf(e ir.Expr, alias string) (col string, lo, hi int64, ok bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	var walk func(e ir.Expr) bool
	use := func(c ir.Expr) bool {
		r, isCol := c.(ir.ColumnRef)
		if !isCol || r.Qualifier != alias || (col != "" && r.Name != col) {
			return false
		}
		col = r.Name
		return true
	}
	walk = func(e ir.Expr) bool {
		switch n := e.(type) {
		case ir.And:
			return walk(n.L) && walk(n.R)
		case ir.Between:
			if n.Not || !use(n.X) {
				return false
			}
			l, ok1 := lowerBound(n.Lo, false)
			h, ok2 := upperBound(n.Hi, false)
			if !ok1 || !ok2 {
				return false
			}
			lo, hi = max(lo, l.v), min(hi, h.v)
			if l.empty || h.empty {
				lo, hi = 1, 0
			}
			return true
		case ir.Compare:
			op, x, lit := n.Op, n.L, n.R
			if _, isLit := n.L.(ir.Literal); isLit {
				x, lit = n.R, n.L
				op = flip(op)
			}
			if !use(x) {
				return false
			}
			var bs []bound
			switch op {
			case ir.OpLt, ir.OpLe:
				b, ok := upperBound(lit, op == ir.OpLt)
				if !ok {
					return false
				}
				hi = min(hi, b.v)
				bs = append(bs, b)
			case ir.OpGt, ir.OpGe:
				b, ok := lowerBound(lit, op == ir.OpGt)
				if !ok {
					return false
				}
				lo = max(lo, b.v)
				bs = append(bs, b)
			case ir.OpEq:
				l, ok1 := lowerBound(lit, false)
				h, ok2 := upperBound(lit, false)
				if !ok1 || !ok2 {
					return false
				}
				lo, hi = max(lo, l.v), min(hi, h.v)
				bs = append(bs, l, h)
			default:
				return false
			}
			for _, b := range bs {
				if b.empty {
					lo, hi = 1, 0
				}
			}
			return true
		}
		return false
	}
	if e == nil || !walk(e) {
		return "", 0, 0, false
	}
	return col, lo, hi, true
}

// flip is op with its operands swapped: literal < column reads as
// column > literal (OpEq and OpNe are their own flips).
func flip(op ir.CmpOp) ir.CmpOp {
	switch op {
	case ir.OpLt:
		return ir.OpGt
	case ir.OpLe:
		return ir.OpGe
	case ir.OpGt:
		return ir.OpLt
	case ir.OpGe:
		return ir.OpLe
	}
	return op
}

// bound is an integer bound of a range; empty means no integer satisfies
// it (c < MinInt64, c > MaxInt64).
type bound struct {
	v     int64
	empty bool
}

// lowerBound is the smallest integer c with c ≥ x (strict: c > x).
func lowerBound(e ir.Expr, strict bool) (bound, bool) {
	l, isLit := e.(ir.Literal)
	if !isLit {
		return bound{}, false
	}
	switch v := l.Value; v.Kind {
	case ir.KindInt:
		if !strict {
			return bound{v: v.Int}, true
		}
		if v.Int == math.MaxInt64 {
			return bound{empty: true}, true
		}
		return bound{v: v.Int + 1}, true
	case ir.KindFloat:
		f := v.Float
		if math.IsNaN(f) {
			return bound{}, false
		}
		if strict {
			f = math.Floor(f) + 1
		} else {
			f = math.Ceil(f)
		}
		if f >= 0x1p63 {
			return bound{empty: true}, true
		}
		return bound{v: int64(max(f, -0x1p63))}, true
	}
	return bound{}, false
}

// upperBound is the largest integer c with c ≤ x (strict: c < x).
func upperBound(e ir.Expr, strict bool) (bound, bool) {
	l, isLit := e.(ir.Literal)
	if !isLit {
		return bound{}, false
	}
	switch v := l.Value; v.Kind {
	case ir.KindInt:
		if !strict {
			return bound{v: v.Int}, true
		}
		if v.Int == math.MinInt64 {
			return bound{empty: true}, true
		}
		return bound{v: v.Int - 1}, true
	case ir.KindFloat:
		f := v.Float
		if math.IsNaN(f) {
			return bound{}, false
		}
		if strict {
			f = math.Ceil(f) - 1
		} else {
			f = math.Floor(f)
		}
		if f < -0x1p63 {
			return bound{empty: true}, true
		}
		if f >= 0x1p63 {
			return bound{v: math.MaxInt64}, true
		}
		return bound{v: int64(f)}, true
	}
	return bound{}, false
}
