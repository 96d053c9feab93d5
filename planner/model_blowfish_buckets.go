package planner

import (
	"math"

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
func bucketAligned(where ir.Expr, alias string, sec *policies.Secrets, col *policies.Column) bool {
	ranges, ok := sec.BucketRanges()
	if !ok || col == nil || col.Type != policies.TypeInteger {
		return false
	}
	points := 0
	for _, r := range ranges {
		lo, hi := math.Ceil(r[0]), math.Floor(r[1])
		if lo > hi {
			continue
		}
		points += int(hi-lo) + 1
		if points > maxBucketPoints {
			return false
		}
		first, ok := evalOn(where, alias, sec.Column, lo)
		if !ok {
			return false
		}
		for v := lo + 1; v <= hi; v++ {
			if b, ok := evalOn(where, alias, sec.Column, v); !ok || b != first {
				return false
			}
		}
	}
	return true
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
