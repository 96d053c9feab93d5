package exprtype

import (
	"sort"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// PostWindow checks a window function whose argument, partition and order
// keys were bound to outputs (ir.OutputRef, typed by out) and returns it
// lowered with its result type: count and the ranking functions give
// integers, sum keeps an integer argument's type, avg gives a real, min
// and max their argument's type.
func PostWindow(w ir.Window, out func(int) Out, d PostDialect) (ir.Window, Type, error) {
	p := postChecker{out: out, d: d}
	var at Type
	if w.Arg != nil {
		x, t, err := p.check(w.Arg)
		if err != nil {
			return ir.Window{}, 0, err
		}
		w.Arg, at = x, t
	}
	part := make([]ir.Expr, len(w.PartitionBy))
	for i, e := range w.PartitionBy {
		x, _, err := p.check(e)
		if err != nil {
			return ir.Window{}, 0, err
		}
		part[i] = x
	}
	w.PartitionBy = part
	order := make([]ir.OrderItem, len(w.OrderBy))
	for i, o := range w.OrderBy {
		x, _, err := p.check(o.Expr)
		if err != nil {
			return ir.Window{}, 0, err
		}
		o.Expr = x
		order[i] = o
	}
	w.OrderBy = order
	switch w.Func {
	case ir.WinCount, ir.WinRowNumber, ir.WinRank, ir.WinDenseRank:
		return w, Integer, nil
	case ir.WinSum, ir.WinAvg:
		if !at.numeric() && at != Null {
			return ir.Window{}, 0, mismatch("%s needs a number, not %s: %s", w.Func, at, ir.FormatExpr(w))
		}
		if w.Func == ir.WinAvg || at == Real {
			return w, Real, nil
		}
		return w, Integer, nil
	case ir.WinMin, ir.WinMax:
		return w, at, nil
	}
	return ir.Window{}, 0, sqlerr.New(sqlerr.FeatureNotSupported, "window function %s is not supported", w.Func)
}

// EvalWindow computes a window checked by PostWindow over the result rows
// (after HAVING, as SQL computes windows), one value per row. nullsHigh
// sorts NULL keys after the others (PostgreSQL) instead of before (MySQL).
// Sums of integers saturate; a frame with no non-NULL value gives NULL
// for sum, avg, min and max, 0 for count.
func EvalWindow(w ir.Window, rows [][]ir.Value, nullsHigh bool, d PostDialect) ([]ir.Value, error) {
	n := len(rows)
	out := make([]ir.Value, n)
	evalAll := func(e ir.Expr) ([]ir.Value, error) {
		vs := make([]ir.Value, n)
		for i, r := range rows {
			v, err := Eval(e, r, d)
			if err != nil {
				return nil, err
			}
			vs[i] = v
		}
		return vs, nil
	}
	var parts, keys [][]ir.Value
	for _, e := range w.PartitionBy {
		vs, err := evalAll(e)
		if err != nil {
			return nil, err
		}
		parts = append(parts, vs)
	}
	for _, o := range w.OrderBy {
		vs, err := evalAll(o.Expr)
		if err != nil {
			return nil, err
		}
		keys = append(keys, vs)
	}
	var args []ir.Value
	if w.Arg != nil {
		vs, err := evalAll(w.Arg)
		if err != nil {
			return nil, err
		}
		args = vs
	}
	cmpKeys := func(a, b int) int {
		for k, o := range w.OrderBy {
			x, y := keys[k][a], keys[k][b]
			if o.Nulls != ir.NullsDefault && x.IsNull() != y.IsNull() {
				// An explicit NULL order holds whatever the direction.
				if x.IsNull() == (o.Nulls == ir.NullsLast) {
					return 1
				}
				return -1
			}
			c := ir.CompareValues(x, y) // NULL first
			if nullsHigh && x.IsNull() != y.IsNull() {
				c = -c
			}
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	// Partitions, in order of first appearance.
	var groups [][]int
	for i := 0; i < n; i++ {
		placed := false
		for g := range groups {
			if samePartition(parts, groups[g][0], i) {
				groups[g] = append(groups[g], i)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []int{i})
		}
	}
	for _, g := range groups {
		sort.SliceStable(g, func(a, b int) bool { return cmpKeys(g[a], g[b]) < 0 })
		rank, dense := 0, 0
		for pos := 0; pos < len(g); {
			// The peers of g[pos]: rows with equal order keys (all rows of
			// the partition when there is no ORDER BY).
			end := pos + 1
			for end < len(g) && cmpKeys(g[pos], g[end]) == 0 {
				end++
			}
			dense++
			rank = pos + 1
			frame := g[:end]
			if len(w.OrderBy) == 0 {
				frame = g
			}
			agg := aggregate(w, frame, args)
			for j := pos; j < end; j++ {
				switch w.Func {
				case ir.WinRowNumber:
					out[g[j]] = ir.Int(int64(j + 1))
				case ir.WinRank:
					out[g[j]] = ir.Int(int64(rank))
				case ir.WinDenseRank:
					out[g[j]] = ir.Int(int64(dense))
				default:
					out[g[j]] = agg
				}
			}
			pos = end
		}
	}
	return out, nil
}

func samePartition(parts [][]ir.Value, a, b int) bool {
	for _, vs := range parts {
		// NULL keys form one partition, as in GROUP BY.
		if vs[a].IsNull() != vs[b].IsNull() || ir.CompareValues(vs[a], vs[b]) != 0 {
			return false
		}
	}
	return true
}

// aggregate is the window aggregate over the frame's rows.
func aggregate(w ir.Window, frame []int, args []ir.Value) ir.Value {
	if w.Func.Ranking() {
		return ir.Null()
	}
	if w.Func == ir.WinCount {
		c := 0
		for _, i := range frame {
			if args == nil || !args[i].IsNull() {
				c++
			}
		}
		return ir.Int(int64(c))
	}
	var acc ir.Value
	count := 0
	for _, i := range frame {
		v := args[i]
		if v.IsNull() {
			continue
		}
		count++
		if acc.IsNull() {
			acc = v
			continue
		}
		switch w.Func {
		case ir.WinSum, ir.WinAvg:
			if acc.Kind == ir.KindInt && v.Kind == ir.KindInt {
				acc = ir.Int(SaturatingAdd(acc.Int, v.Int))
			} else {
				a, _ := acc.AsFloat()
				b, _ := v.AsFloat()
				acc = ir.Float(a + b)
			}
		case ir.WinMin:
			if ir.CompareValues(v, acc) < 0 {
				acc = v
			}
		case ir.WinMax:
			if ir.CompareValues(v, acc) > 0 {
				acc = v
			}
		}
	}
	if w.Func == ir.WinAvg && !acc.IsNull() {
		s, _ := acc.AsFloat()
		return ir.Float(s / float64(count))
	}
	return acc
}
