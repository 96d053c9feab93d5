package backendtest

import (
	"math/rand/v2"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

func tc(name string) ir.ColumnRef { return ir.ColumnRef{Qualifier: "t", Name: name} }
func pc(name string) ir.ColumnRef { return ir.ColumnRef{Qualifier: "p", Name: name} }
func lit(v ir.Value) ir.Literal   { return ir.Literal{Value: v} }

// gen draws type-correct random expressions (PostgreSQL refuses ill-typed
// ones), using the public table's columns only when the query joins it.
type gen struct {
	rng  *rand.Rand
	join bool
}

// RandomQuery draws a BackendQuery over d's tables: optional join, a
// random WHERE over every expression node type, 0–2 grouping columns, 1–3
// aggregates of every kind, and a contribution bound k in {0,1,2,3}.
func (d *Data) RandomQuery(rng *rand.Rand) *ir.BackendQuery {
	g := gen{rng: rng, join: rng.IntN(2) == 0}
	q := &ir.BackendQuery{
		From:           ir.TableRef{Name: d.PrivateName, Alias: "t"},
		Unit:           tc("uid"),
		MaxRowsPerUnit: rng.IntN(4),
	}
	if g.join {
		q.Joins = []ir.Join{{Table: ir.TableRef{Name: d.PublicName, Alias: "p"}, Left: tc("cid"), Right: pc("id"),
			Outer: rng.IntN(2) == 0, NullSafe: rng.IntN(3) == 0}}
	}
	if rng.IntN(5) > 0 {
		q.Where = g.boolean(3)
	}
	groupCols := []ir.Expr{tc("s"), tc("b"), tc("i"), tc("f"), g.groupExpr()}
	if g.join {
		groupCols = append(groupCols, pc("region"))
	}
	rng.Shuffle(len(groupCols), func(i, j int) { groupCols[i], groupCols[j] = groupCols[j], groupCols[i] })
	q.GroupBy = groupCols[:rng.IntN(3)]
	for range 1 + rng.IntN(3) {
		q.Aggs = append(q.Aggs, g.agg())
	}
	return q
}

// groupExpr is a grouping expression as the planner lowers the ones BI
// tools send: an integer histogram bin of a clamped column, a CASE of
// text labels (lower case: MySQL's collation would merge case
// variants), a bucket, or a truth value.
func (g gen) groupExpr() ir.Expr {
	i := ir.Clamp{X: tc("i"), Lo: ir.Int(-12), Hi: ir.Int(12)}
	switch g.rng.IntN(4) {
	case 0:
		w := lit(ir.Int(int64(2 + g.rng.IntN(4))))
		return ir.Arith{Op: ir.OpMul, L: ir.Arith{Op: ir.OpDiv, L: i, R: w}, R: w}
	case 1:
		k := ir.Case{Whens: []ir.When{
			{Cond: ir.Compare{Op: ir.OpLt, L: tc("i"), R: lit(ir.Int(0))}, Then: lit(ir.String("neg"))},
			{Cond: ir.Compare{Op: ir.OpGt, L: tc("i"), R: lit(ir.Int(5))}, Then: lit(ir.String("big"))},
		}}
		if g.rng.IntN(2) == 0 {
			k.Else = lit(ir.String("small"))
		}
		return k
	case 2:
		return ir.Func{Name: "width_bucket", Args: []ir.Expr{i, lit(ir.Int(-10)), lit(ir.Int(10)), lit(ir.Int(4))}}
	}
	return g.boolean(1)
}

func (g gen) agg() ir.BackendAgg {
	col := func(names ...string) *ir.ColumnRef {
		c := tc(names[g.rng.IntN(len(names))])
		return &c
	}
	switch g.rng.IntN(4) {
	case 0:
		return ir.BackendAgg{Kind: ir.CountRows}
	case 1:
		return ir.BackendAgg{Kind: ir.CountValues, Column: col("i", "f", "s", "b")}
	case 2:
		lo := float64([]int{-10, -3, 0, 4}[g.rng.IntN(4)])
		return ir.BackendAgg{Kind: ir.SumClamped, Column: col("i"), Lo: lo, Hi: lo + float64(g.rng.IntN(21))}
	}
	lo := []float64{-7.5, -1, 0, 0.3}[g.rng.IntN(4)]
	return ir.BackendAgg{
		Kind: ir.SumClamped, Column: col("i", "f"),
		Lo: lo, Hi: lo + []float64{0, 0.5, 5, 12.25}[g.rng.IntN(4)],
		Quantum: []float64{0.1, 0.25, 1, 3, 0.01}[g.rng.IntN(5)],
	}
}

func (g gen) boolean(depth int) ir.Expr {
	if depth <= 0 {
		return ir.IsNull{X: g.anyColumn(), Not: g.rng.IntN(2) == 0}
	}
	d := depth - 1
	not := g.rng.IntN(3) == 0
	switch g.rng.IntN(13) {
	case 0:
		return ir.Compare{Op: ir.CmpOp(g.rng.IntN(6)), L: g.number(d), R: g.numberOrNull(d)}
	case 1:
		return ir.Compare{Op: ir.CmpOp(g.rng.IntN(6)), L: g.text(d), R: g.text(d)}
	case 2:
		return ir.Between{X: g.number(d), Lo: g.number(d), Hi: g.number(d), Not: not}
	case 3:
		list := []ir.Expr{g.numLit()}
		for range g.rng.IntN(3) {
			list = append(list, g.numberOrNull(0))
		}
		return ir.In{X: g.number(d), List: list, Not: not}
	case 4:
		list := []ir.Expr{lit(ir.String(randomText(g.rng)))}
		for range g.rng.IntN(3) {
			list = append(list, g.text(0))
		}
		return ir.In{X: g.text(d), List: list, Not: not}
	case 5, 6:
		var pat ir.Expr = lit(ir.String(randomPattern(g.rng)))
		if g.rng.IntN(4) == 0 {
			pat = g.text(0)
		}
		return ir.Like{X: g.text(d), Pattern: pat, Not: not, CaseInsensitive: g.rng.IntN(2) == 0}
	case 7:
		return ir.IsNull{X: g.anyColumn(), Not: not}
	case 8:
		return ir.And{L: g.boolean(d), R: g.boolean(d)}
	case 9:
		return ir.Or{L: g.boolean(d), R: g.boolean(d)}
	case 10:
		return ir.Not{X: g.boolean(d)}
	case 11:
		return tc("b")
	}
	return ir.Compare{Op: ir.OpEq, L: tc("b"), R: lit(ir.Bool(g.rng.IntN(2) == 0))}
}

func (g gen) anyColumn() ir.Expr {
	cols := []ir.ColumnRef{tc("uid"), tc("i"), tc("f"), tc("s"), tc("b"), tc("cid")}
	if g.join {
		cols = append(cols, pc("region"), pc("w"))
	}
	return cols[g.rng.IntN(len(cols))]
}

func (g gen) numLit() ir.Expr {
	if g.rng.IntN(2) == 0 {
		return lit(ir.Int(int64(g.rng.IntN(41) - 20)))
	}
	return lit(ir.Float(RandomFloat(g.rng)))
}

func (g gen) numberOrNull(depth int) ir.Expr {
	if g.rng.IntN(8) == 0 {
		return lit(ir.Null())
	}
	return g.number(depth)
}

func (g gen) number(depth int) ir.Expr {
	leaf := func() ir.Expr {
		cols := []ir.Expr{tc("i"), tc("f"), tc("i"), tc("uid")}
		if g.join {
			cols = append(cols, pc("w"))
		}
		switch g.rng.IntN(5) {
		case 0:
			return g.numLit()
		case 1:
			// What the planner computes with: a column clamped to its
			// bounds (integer columns to integers, reals to reals).
			if g.rng.IntN(2) == 0 {
				lo := int64(g.rng.IntN(11) - 8)
				return ir.Clamp{X: tc("i"), Lo: ir.Int(lo), Hi: ir.Int(lo + int64(g.rng.IntN(11)))}
			}
			return ir.Clamp{X: tc("f"), Lo: ir.Float(-2.5), Hi: ir.Float([]float64{0, 7.25, 1e6}[g.rng.IntN(3)])}
		}
		return cols[g.rng.IntN(len(cols))]
	}
	if depth <= 0 || g.rng.IntN(2) == 0 {
		return leaf()
	}
	d := depth - 1
	switch g.rng.IntN(7) {
	case 6:
		if g.rng.IntN(3) == 0 {
			return ir.Func{Name: "nullif", Args: []ir.Expr{g.number(d), g.numberOrNull(d)}}
		}
		args := []ir.Expr{g.number(d)}
		for range 1 + g.rng.IntN(2) {
			args = append(args, g.numberOrNull(d))
		}
		return ir.Func{Name: []string{"greatest", "least"}[g.rng.IntN(2)], Args: args}
	case 5:
		// The first arm is a number, so no backend has to type a CASE
		// of NULLs (PostgreSQL would make it text).
		k := ir.Case{Whens: []ir.When{{Cond: g.boolean(d), Then: g.number(d)}}}
		for range g.rng.IntN(2) {
			k.Whens = append(k.Whens, ir.When{Cond: g.boolean(d), Then: g.numberOrNull(d)})
		}
		if g.rng.IntN(3) > 0 {
			k.Else = g.numberOrNull(d)
		}
		return k
	case 0:
		return ir.Arith{Op: ir.ArithOp(g.rng.IntN(3)), L: g.number(d), R: g.number(d)}
	case 1:
		return ir.Neg{X: g.number(d)}
	case 2:
		name := []string{"abs", "floor", "ceil", "round"}[g.rng.IntN(4)]
		return ir.Func{Name: name, Args: []ir.Expr{g.number(d)}}
	case 3:
		args := []ir.Expr{g.number(d)}
		for range g.rng.IntN(3) {
			args = append(args, g.number(d))
		}
		return ir.Func{Name: "coalesce", Args: args}
	}
	return ir.Func{Name: "length", Args: []ir.Expr{g.text(d)}}
}

func (g gen) text(depth int) ir.Expr {
	if depth <= 0 || g.rng.IntN(2) == 0 {
		switch g.rng.IntN(3) {
		case 0:
			return lit(ir.String(randomText(g.rng)))
		case 1:
			if g.join {
				return pc("region")
			}
		}
		return tc("s")
	}
	d := depth - 1
	switch g.rng.IntN(6) {
	case 0:
		return ir.Func{Name: "coalesce", Args: []ir.Expr{g.text(d), g.text(d)}}
	case 1:
		return ir.Case{Whens: []ir.When{{Cond: g.boolean(d), Then: g.text(d)}}, Else: g.text(d)}
	}
	name := []string{"lower", "upper", "trim", "ltrim", "rtrim"}[g.rng.IntN(5)]
	return ir.Func{Name: name, Args: []ir.Expr{g.text(d)}}
}

// randomPattern draws a LIKE pattern from wildcards, escaped wildcards
// and letters of both cases; never a dangling backslash.
func randomPattern(rng *rand.Rand) string {
	tokens := []string{"%", "_", `\%`, `\_`, "a", "b", "A", "B", " "}
	p := ""
	for range rng.IntN(5) {
		p += tokens[rng.IntN(len(tokens))]
	}
	return p
}

// RandomDistinctQuery draws a query as RandomQuery does and gives it 1–3
// aggregates of which at least one is a distinct count (over a column of
// every type, the unit, a text column as the planner passes it — CAST to
// text, counted in the exact collation — or a lowered expression); the
// others are of any kind. It draws from rng after RandomQuery, so the
// queries RandomQuery draws for a seed do not change.
func (d *Data) RandomDistinctQuery(rng *rand.Rand) *ir.BackendQuery {
	q := d.RandomQuery(rng)
	g := gen{rng: rng, join: len(q.Joins) > 0}
	q.Aggs = []ir.BackendAgg{g.distinct()}
	for range rng.IntN(3) {
		if rng.IntN(2) == 0 {
			q.Aggs = append(q.Aggs, g.distinct())
		} else {
			q.Aggs = append(q.Aggs, g.agg())
		}
	}
	rng.Shuffle(len(q.Aggs), func(i, j int) { q.Aggs[i], q.Aggs[j] = q.Aggs[j], q.Aggs[i] })
	return q
}

func (g gen) distinct() ir.BackendAgg {
	text := func(c ir.ColumnRef) ir.BackendAgg {
		return ir.BackendAgg{Kind: ir.CountDistinct, Expr: ir.Cast{X: c, To: ir.CastText}}
	}
	column := func(name string) ir.BackendAgg {
		c := tc(name)
		return ir.BackendAgg{Kind: ir.CountDistinct, Column: &c}
	}
	switch g.rng.IntN(9) {
	case 0:
		return column("uid") // the number of units
	case 1:
		return column("i")
	case 2:
		return column("f")
	case 3:
		return column("b")
	case 4:
		return column("cid")
	case 5:
		if g.join {
			return text(pc("region"))
		}
		return text(tc("s"))
	case 6:
		return ir.BackendAgg{Kind: ir.CountDistinct, Expr: g.groupExpr()}
	case 7:
		return ir.BackendAgg{Kind: ir.CountDistinct, Expr: g.number(2)}
	}
	return text(tc("s"))
}
