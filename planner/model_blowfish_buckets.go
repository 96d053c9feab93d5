package planner

import (
	"errors"
	"math"
	"slices"

	"github.com/ddp-proxy/ddp-proxy/exprtype"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// maxBucketPoints caps the integer values bucketAligned evaluates.
const maxBucketPoints = 100_000

// bucketAligned reports whether a WHERE clause that reads only the
// bucketed partition column col (an integer column) has one truth value on
// all integers of each bucket. Then a secret pair (which keeps the bucket
// and may change every other column) can never move a row into or out of
// the WHERE clause: the predicate is a union of partition cells. Values
// outside every bucket are cells of their own, constant by definition. It
// evaluates the predicate at every integer of every bucket (at most
// maxBucketPoints in all) and answers false for anything it cannot
// evaluate exactly.
//
// The integers decide only when the column holds integers: integral is
// set for a constrained column (serve verifies its declared domain).
// Nothing verifies any other column, and a stored 0.5 in an INTEGER
// column (SQLite keeps it) lies in bucket [0, 1] yet fails x IN (0, 1)
// while its secret pair 1 passes. Then the predicate is evaluated over the
// bucket's real interval: a predicate of comparisons with numeric literals
// is constant between consecutive literals, so the bucket's ends, every
// literal inside it and one point between each two consecutive of those
// decide it exactly.
func bucketAligned(where ir.Expr, alias string, sec *policies.Secrets, col *policies.Column, integral bool) bool {
	ranges, ok := sec.BucketRanges()
	if !ok || col == nil || col.Type != policies.TypeInteger {
		return false
	}
	var cuts []float64
	if !integral {
		ir.Walk(where, func(e ir.Expr) bool {
			if l, ok := e.(ir.Literal); ok && l.Value.IsNumber() {
				if f, ok := l.Value.AsFloat(); ok && !math.IsNaN(f) {
					cuts = append(cuts, f)
				}
			}
			return true
		})
	}
	points := 0
	for _, r := range ranges {
		var vals []float64
		if integral {
			lo, hi := math.Ceil(r[0]), math.Floor(r[1])
			if lo > hi {
				continue
			}
			points += int(hi-lo) + 1
			if points > maxBucketPoints {
				return false
			}
			for v := lo; v <= hi; v++ {
				vals = append(vals, v)
			}
		} else {
			vals = realPoints(r[0], r[1], cuts)
			if points += len(vals); points > maxBucketPoints {
				return false
			}
		}
		for i, v := range vals {
			b, ok := evalOn(where, alias, sec.Column, v)
			if first, _ := evalOn(where, alias, sec.Column, vals[0]); !ok || i > 0 && b != first {
				return false
			}
		}
	}
	return true
}

// realPoints returns lo, hi, the cuts strictly between them and a point
// between each two consecutive of those, in increasing order: a predicate
// comparing one column with the cuts takes on [lo, hi] only the values it
// takes at these points.
func realPoints(lo, hi float64, cuts []float64) []float64 {
	if lo > hi {
		return nil
	}
	ends := []float64{lo, hi}
	for _, c := range cuts {
		if lo < c && c < hi {
			ends = append(ends, c)
		}
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	out := []float64{ends[0]}
	for i := 1; i < len(ends); i++ {
		if mid := ends[i-1] + (ends[i]-ends[i-1])/2; mid > ends[i-1] && mid < ends[i] {
			out = append(out, mid)
		}
		out = append(out, ends[i])
	}
	return out
}

// evalOn evaluates a predicate of one numeric column at value v.
func evalOn(e ir.Expr, alias, col string, v float64) (bool, bool) {
	return evalRow(e, alias, func(name string) (float64, bool) { return v, name == col }, false)
}

// evalRow evaluates a predicate of numeric columns of the row get reads
// (ok false for a column it does not know). It supports comparisons,
// BETWEEN, IN with numeric literals, AND, OR, NOT, and answers ok = false
// for anything else: every column get knows must be non-NULL, so SQL's
// three-valued logic is two-valued here. With integerOnly, a literal must
// be an integer or a float that is not a whole number: a float literal
// whose decimal text rounds to a whole number in float64 (2.99999999999999999)
// could compare differently in the backend's exact decimal arithmetic,
// while a non-whole float can never have an integer between its exact
// value and its float64 rounding.
func evalRow(e ir.Expr, alias string, get func(col string) (float64, bool), integerOnly bool) (bool, bool) {
	num := func(x ir.Expr) (float64, bool) {
		switch n := x.(type) {
		case ir.ColumnRef:
			if n.Qualifier == alias {
				return get(n.Name)
			}
		case ir.Literal:
			if n.Value.IsNumber() {
				f, ok := n.Value.AsFloat()
				if integerOnly && n.Value.Kind != ir.KindInt && f == math.Trunc(f) {
					return 0, false
				}
				return f, ok
			}
		case ir.Neg:
			if f, ok := n.X.(ir.Literal); ok && f.Value.IsNumber() {
				x, _ := f.Value.AsFloat()
				if integerOnly && f.Value.Kind != ir.KindInt && x == math.Trunc(x) {
					return 0, false
				}
				return -x, true
			}
		}
		return 0, false
	}
	eval := func(x ir.Expr) (bool, bool) { return evalRow(x, alias, get, integerOnly) }
	switch n := e.(type) {
	case ir.And:
		l, ok1 := eval(n.L)
		r, ok2 := eval(n.R)
		return l && r, ok1 && ok2
	case ir.Or:
		l, ok1 := eval(n.L)
		r, ok2 := eval(n.R)
		return l || r, ok1 && ok2
	case ir.Not:
		x, ok := eval(n.X)
		return !x, ok
	case ir.Compare:
		l, ok1 := num(n.L)
		r, ok2 := num(n.R)
		if !ok1 || !ok2 {
			return false, false
		}
		switch n.Op {
		case ir.OpEq:
			return l == r, true
		case ir.OpNe:
			return l != r, true
		case ir.OpLt:
			return l < r, true
		case ir.OpLe:
			return l <= r, true
		case ir.OpGt:
			return l > r, true
		case ir.OpGe:
			return l >= r, true
		}
	case ir.Between:
		x, ok1 := num(n.X)
		lo, ok2 := num(n.Lo)
		hi, ok3 := num(n.Hi)
		if !ok1 || !ok2 || !ok3 {
			return false, false
		}
		in := lo <= x && x <= hi
		return in != n.Not, true
	case ir.In:
		x, ok := num(n.X)
		if !ok {
			return false, false
		}
		found := false
		for _, it := range n.List {
			y, ok := num(it)
			if !ok {
				return false, false
			}
			found = found || x == y
		}
		return found != n.Not, true
	}
	return false, false
}

// keyBucketAligned reports whether the grouping expression g reads only
// the bucketed partition column of sec (an integer column) and is constant
// on each bucket. Then a secret pair, which keeps the column's bucket (and
// may change every other column, which g does not read), never moves a row
// between groups: g's groups are unions of partition cells. Values outside
// every bucket are cells of their own. For each bucket B it derives g's key
// set (exprtype.GroupKey, the analysis that gives released keys) with the
// column taken to hold exactly B's integers as stored and, where computed
// with, their clamp to the declared bounds: the clamp is monotone, so B's
// clamped values are the integers between the clamps of B's ends, which
// become the column's bounds for this derivation; on B every clamp then
// agrees with the declared one. The derived set holds every value g takes
// on B (it may hold more: then g is not found aligned), so a set of one
// value proves g constant on B. Anything else (another column, a bucket
// too large, an analysis error) answers false.
func (b *builder) keyBucketAligned(g groupKey, sec *policies.Secrets, col *policies.Column) bool {
	ranges, ok := sec.BucketRanges()
	if !ok || g.expr == nil || col == nil || col.Type != policies.TypeInteger {
		return false
	}
	only := true
	ir.Walk(g.src, func(n ir.Expr) bool {
		if c, ok := n.(ir.ColumnRef); ok {
			r, err := b.resolveColumn(c)
			only = only && err == nil && r.table == 0 && r.name == sec.Column
		}
		return only
	})
	if !only {
		return false
	}
	points := 0
	for _, rg := range ranges {
		lo, hi := math.Ceil(rg[0]), math.Floor(rg[1])
		if lo > hi {
			continue
		}
		if hi-lo >= exprtype.MaxDomain || math.Abs(lo) > 1<<53 || math.Abs(hi) > 1<<53 {
			return false
		}
		points += int(hi-lo) + 1
		if points > maxBucketPoints {
			return false
		}
		var stored []ir.Value
		for v := lo; v <= hi; v++ {
			stored = append(stored, ir.Int(int64(v)))
		}
		cols := func(c ir.ColumnRef) (exprtype.Column, error) {
			ec, err := b.exprColumn(c)
			if err != nil {
				return ec, err
			}
			ec.Domain, ec.Nullable = stored, false
			if ec.HasBounds {
				if ec.Lo.Kind != ir.KindInt || ec.Hi.Kind != ir.KindInt {
					return ec, errNotAligned
				}
				clamp := func(v int64) int64 { return min(max(v, ec.Lo.Int), ec.Hi.Int) }
				ec.Lo, ec.Hi = ir.Int(clamp(int64(lo))), ir.Int(clamp(int64(hi)))
			}
			return ec, nil
		}
		_, info, err := exprtype.GroupKey(g.src, cols)
		if err != nil || info.Domain == nil || len(info.Domain) != 1 {
			return false
		}
	}
	return true
}

var errNotAligned = errors.New("not analysed")
