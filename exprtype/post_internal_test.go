package exprtype

import (
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestPostArithmeticSaturates: integer post-processing saturates at the
// int64 limits instead of wrapping (a noisy count times a large constant
// must not turn negative), and stays exact below them.
func TestPostArithmeticSaturates(t *testing.T) {
	tests := []struct {
		op   ir.ArithOp
		l, r int64
		want int64
	}{
		{ir.OpMul, math.MaxInt64 / 2, 3, math.MaxInt64},
		{ir.OpMul, math.MinInt64 / 2, 3, math.MinInt64},
		{ir.OpMul, -4, math.MaxInt64, math.MinInt64},
		{ir.OpAdd, math.MaxInt64, 1, math.MaxInt64},
		{ir.OpSub, math.MinInt64, 1, math.MinInt64},
		{ir.OpMul, 1 << 31, 1 << 31, 1 << 62},
		{ir.OpAdd, math.MaxInt64 - 5, 5, math.MaxInt64},
		{ir.OpSub, 7, 9, -2},
		{ir.OpMul, 123456789, 1000, 123456789000},
	}
	for _, tt := range tests {
		v, err := evalArith(tt.op, ir.Int(tt.l), ir.Int(tt.r))
		if err != nil || v.Kind != ir.KindInt || v.Int != tt.want {
			t.Errorf("%d %s %d = %v (%v), want %d", tt.l, tt.op, tt.r, v, err, tt.want)
		}
	}
}

func TestPostRoundDigits(t *testing.T) {
	call := func(args ...ir.Value) ir.Value {
		t.Helper()
		f := ir.Func{Name: "round"}
		for _, a := range args {
			f.Args = append(f.Args, ir.Literal{Value: a})
		}
		v, err := Eval(f, nil, PostDialect{})
		if err != nil {
			t.Fatalf("round%v: %v", args, err)
		}
		return v
	}
	tests := []struct {
		x, d ir.Value
		want ir.Value
	}{
		{ir.Float(41.23456), ir.Int(2), ir.Float(41.23)},
		{ir.Float(-41.235001), ir.Int(2), ir.Float(-41.24)},
		{ir.Float(2.5), ir.Int(0), ir.Float(3)},
		{ir.Float(-2.5), ir.Int(0), ir.Float(-3)},
		{ir.Int(1234), ir.Int(-2), ir.Float(1200)},
		{ir.Int(7), ir.Int(2), ir.Float(7)},
		{ir.Float(1e300), ir.Int(200), ir.Float(1e300)}, // no digit to drop; must not become Inf or NaN
		{ir.Null(), ir.Int(2), ir.Null()},
		{ir.Float(1.5), ir.Null(), ir.Null()},
	}
	for _, tt := range tests {
		if got := call(tt.x, tt.d); got != tt.want {
			t.Errorf("round(%v, %v) = %v, want %v", tt.x, tt.d, got, tt.want)
		}
	}
}

// TestPostUnknownOperator: an operator the evaluator does not know (one a
// newer parser may produce) is an error, never silently another operator.
func TestPostUnknownOperator(t *testing.T) {
	for _, args := range [][2]ir.Value{{ir.Int(6), ir.Int(3)}, {ir.Float(6), ir.Int(3)}} {
		if v, err := evalArith(ir.OpMul+10, args[0], args[1]); err == nil {
			t.Errorf("unknown operator on %v gave %v", args, v)
		}
	}
}

// TestPostDivision: division and remainder on noisy values follow the
// client's SQL (PostgreSQL's / and MySQL's DIV truncate integers toward
// zero, MySQL's / is real, % keeps the dividend's sign), a zero divisor
// gives NULL instead of failing the whole answer, and MinInt64 / -1
// saturates.
func TestPostDivision(t *testing.T) {
	tests := []struct {
		op   ir.ArithOp
		l, r ir.Value
		want ir.Value
	}{
		{ir.OpDiv, ir.Int(7), ir.Int(2), ir.Int(3)},
		{ir.OpDiv, ir.Int(-7), ir.Int(2), ir.Int(-3)},
		{ir.OpIntDiv, ir.Int(-7), ir.Int(2), ir.Int(-3)},
		{ir.OpDiv, ir.Int(7), ir.Int(0), ir.Null()},
		{ir.OpDiv, ir.Int(math.MinInt64), ir.Int(-1), ir.Int(math.MaxInt64)},
		{ir.OpDiv, ir.Int(9), ir.Int(-1), ir.Int(-9)},
		{ir.OpRealDiv, ir.Int(7), ir.Int(2), ir.Float(3.5)},
		{ir.OpRealDiv, ir.Int(7), ir.Int(0), ir.Null()},
		{ir.OpDiv, ir.Float(7), ir.Int(2), ir.Float(3.5)},
		{ir.OpDiv, ir.Float(7), ir.Float(0), ir.Null()},
		{ir.OpRealDiv, ir.Float(-1), ir.Int(4), ir.Float(-0.25)},
		{ir.OpMod, ir.Int(-7), ir.Int(3), ir.Int(-1)},
		{ir.OpMod, ir.Int(7), ir.Int(-3), ir.Int(1)},
		{ir.OpMod, ir.Int(7), ir.Int(0), ir.Null()},
		{ir.OpMod, ir.Int(math.MinInt64), ir.Int(-1), ir.Int(0)},
	}
	for _, tt := range tests {
		v, err := evalArith(tt.op, tt.l, tt.r)
		if err != nil || v != tt.want {
			t.Errorf("%v %s %v = %v (%v), want %v", tt.l, tt.op, tt.r, v, err, tt.want)
		}
	}
	if v, err := evalArith(ir.OpMod, ir.Float(7), ir.Int(2)); err == nil {
		t.Errorf("remainder of a real gave %v, want an error (the planner refuses it)", v)
	}
}

func evalArith(op ir.ArithOp, l, r ir.Value) (ir.Value, error) {
	return Eval(ir.Arith{Op: op, L: ir.Literal{Value: l}, R: ir.Literal{Value: r}}, nil, PostDialect{})
}

// TestLikeMatch: LIKE against hand-worked cases, including escapes, runs
// of % and a pattern that would backtrack exponentially.
func TestLikeMatch(t *testing.T) {
	for _, c := range []struct {
		s, p string
		fold bool
		want bool
	}{
		{"abc", "abc", false, true}, {"abc", "a%", false, true}, {"abc", "%c", false, true},
		{"abc", "a_c", false, true}, {"abc", "a_", false, false}, {"", "%", false, true},
		{"", "_", false, false}, {"a%c", `a\%c`, false, true}, {"abc", `a\%c`, false, false},
		{"a_c", `a\_c`, false, true}, {"abc", `a\_c`, false, false}, {"ABC", "a%", false, false},
		{"ABC", "a%", true, true}, {"héllo", "h_llo", false, true}, {"abcabc", "%b%b%", false, true},
		{"abcabc", "%b%b%b%", false, false}, {"ab", "%%%b", false, true},
		{strings.Repeat("a", 200), strings.Repeat("%a", 60) + "%b", false, false},
	} {
		if got := likeMatch(c.s, c.p, c.fold); got != c.want {
			t.Errorf("%q LIKE %q (fold %v) = %v, want %v", c.s, c.p, c.fold, got, c.want)
		}
	}
}
