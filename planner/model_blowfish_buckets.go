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

// evalOn evaluates a predicate of one numeric column at value v. It
// supports comparisons, BETWEEN, IN with numeric literals, AND, OR, NOT.
func evalOn(e ir.Expr, alias, col string, v float64) (bool, bool) {
	num := func(x ir.Expr) (float64, bool) {
		switch n := x.(type) {
		case ir.ColumnRef:
			if n.Qualifier == alias && n.Name == col {
				return v, true
			}
		case ir.Literal:
			if n.Value.IsNumber() {
				return n.Value.AsFloat()
			}
		case ir.Neg:
			if f, ok := n.X.(ir.Literal); ok && f.Value.IsNumber() {
				x, _ := f.Value.AsFloat()
				return -x, true
			}
		}
		return 0, false
	}
	switch n := e.(type) {
	case ir.And:
		l, ok1 := evalOn(n.L, alias, col, v)
		r, ok2 := evalOn(n.R, alias, col, v)
		return l && r, ok1 && ok2
	case ir.Or:
		l, ok1 := evalOn(n.L, alias, col, v)
		r, ok2 := evalOn(n.R, alias, col, v)
		return l || r, ok1 && ok2
	case ir.Not:
		x, ok := evalOn(n.X, alias, col, v)
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
