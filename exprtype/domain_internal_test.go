package exprtype

import (
	"math"
	"math/big"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// TestArithValueOverflow: integer arithmetic of the domain rules answers
// exactly or not at all, checked against math/big near the int64 limits.
func TestArithValueOverflow(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 3, 7, -7, 1 << 31, 3037000499, 3037000500, -3037000500,
		math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, 1 << 62, -(1 << 62)}
	for _, a := range vals {
		for _, b := range vals {
			for _, op := range []ir.ArithOp{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMod} {
				x, y := big.NewInt(a), big.NewInt(b)
				var z *big.Int
				switch op {
				case ir.OpAdd:
					z = x.Add(x, y)
				case ir.OpSub:
					z = x.Sub(x, y)
				case ir.OpMul:
					z = x.Mul(x, y)
				case ir.OpDiv, ir.OpMod:
					if b == 0 {
						if v, ok := arithValue(op, ir.Int(a), ir.Int(b)); !ok || !v.IsNull() {
							t.Errorf("%d %s 0 = %v, %v; want NULL", a, op, v, ok)
						}
						continue
					}
					q, m := new(big.Int).QuoRem(x, y, new(big.Int))
					z = q
					if op == ir.OpMod {
						z = m
					}
				}
				v, ok := arithValue(op, ir.Int(a), ir.Int(b))
				fits := z.IsInt64() && !(op == ir.OpMod && a == math.MinInt64 && b == -1)
				if ok != fits || ok && v.Int != z.Int64() {
					t.Errorf("%d %s %d = %v, %v; want %s (fits %v)", a, op, b, v, ok, z, fits)
				}
			}
		}
	}
}

// TestIntRangeOpsKeepInputs: the range operations never modify their
// inputs (results may share them), which intPoint relies on to use one
// value as both bounds of a literal's range.
func TestIntRangeOpsKeepInputs(t *testing.T) {
	vals := []int64{-7, -1, 0, 1, 3, 1 << 40}
	ops := map[string]func(a, b IntRange) IntRange{
		"add": addInt, "sub": subInt, "mul": mulInt, "hull": hullInt, "quo": quoInt, "mod": modInt,
		"neg": func(a, _ IntRange) IntRange { return negInt(a) }, "abs": func(a, _ IntRange) IntRange { return absInt(a) },
	}
	for name, op := range ops {
		for _, x := range vals {
			for _, y := range vals {
				a, b := intPoint(x), intPoint(y)
				op(a, b)
				if a.Lo.Int64() != x || a.Hi.Int64() != x || b.Lo.Int64() != y || b.Hi.Int64() != y {
					t.Fatalf("%s(%d, %d) modified its inputs: %v, %v", name, x, y, a, b)
				}
			}
		}
	}
}
