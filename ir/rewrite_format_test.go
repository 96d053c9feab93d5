package ir

import (
	"reflect"
	"strings"
	"testing"
)

// TestRewriteNodesFormatInside: every node Rewrite hands its function is
// written verbatim into the text of each node above it, for every node type
// Rewrite descends into. planner.narrowKeys relies on it: a WHERE conjunct
// whose text does not contain a group key's text holds no node formatted
// as the key, so it skips rewriting that conjunct.
func TestRewriteNodesFormatInside(t *testing.T) {
	col := func(n string) Expr { return ColumnRef{Qualifier: "t0", Name: n} }
	lit := func(v int64) Expr { return Literal{Value: Int(v)} }
	root := And{
		L: Or{
			L: Compare{L: col("a"), R: Neg{X: lit(1)}},
			R: Between{X: Arith{L: col("b"), R: lit(2)}, Lo: lit(3), Hi: Arith{Op: OpRealDiv, L: col("c"), R: lit(4)}, Not: true},
		},
		R: And{
			L: In{X: Cast{X: col("d"), To: CastText}, List: []Expr{Literal{Value: String("x")}, Literal{Value: Float(1.5)}}},
			R: Or{
				L: Like{X: Func{Name: "lower", Args: []Expr{col("e")}}, Pattern: Literal{Value: String("p%")}, Not: true},
				R: Not{X: IsNull{X: Case{
					Whens: []When{{Cond: Compare{L: Clamp{X: col("f"), Lo: Int(0), Hi: Int(9)}, R: lit(5)}, Then: col("g")}},
					Else:  Window{Arg: col("h"), PartitionBy: []Expr{col("i")}, OrderBy: []OrderItem{{Expr: col("j"), Desc: true}}},
				}}},
			},
		},
	}
	text := FormatExpr(root)
	seen := map[reflect.Type]bool{}
	_, _ = Rewrite(root, func(n Expr) (Expr, error) {
		seen[reflect.TypeOf(n)] = true
		if inner := FormatExpr(n); !strings.Contains(text, inner) {
			t.Errorf("%s is not written inside %s", inner, text)
		}
		return n, nil
	})
	for _, want := range []Expr{And{}, Or{}, Compare{}, Neg{}, Between{}, Arith{}, In{}, Cast{}, Literal{}, Like{}, Func{},
		Not{}, IsNull{}, Case{}, Clamp{}, Window{}, ColumnRef{}} {
		if !seen[reflect.TypeOf(want)] {
			t.Errorf("no %T visited", want)
		}
	}
}
