package policies

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
)

var atCharacter = regexp.MustCompile(` \(at character \d+\)`)

// parseCountPredicate reads the SQL form of a count constraint,
//
//	count: "region IN ('north', 'east') AND age BETWEEN 18 AND 64"
//
// into the same conjunction of per-column conditions as the mapping form.
// Only what that form can say is accepted: an AND of col = literal, col IN
// (literals), col BETWEEN lo AND hi, and col >= lo / col <= hi pairs on the
// same column (an inclusive range needs both ends). Anything else (OR, NOT,
// <>, LIKE, strict or one-sided comparisons) is refused: the analysis cuts
// the domain into atoms with these shapes only, and guessing would risk a
// wrong bound.
func parseCountPredicate(text string) ([]Condition, error) {
	stmts, err := parser.Parse(parser.Postgres, "SELECT COUNT(*) FROM t WHERE "+text)
	if err != nil {
		// The position would count the wrapper's characters: drop it.
		msg := atCharacter.ReplaceAllString(err.Error(), "")
		return nil, fmt.Errorf("count: %q is not a SQL predicate: %s", text, msg)
	}
	if len(stmts) != 1 || stmts[0].Query == nil || stmts[0].Query.Where == nil {
		return nil, fmt.Errorf("count: %q is not a single SQL predicate", text)
	}
	type bounds struct {
		lo, hi       *float64
		loOp, hiText string
	}
	var conds []Condition
	ranges := map[string]*bounds{}
	var order []string
	var walk func(e ir.Expr) error
	walk = func(e ir.Expr) error {
		switch n := e.(type) {
		case ir.And:
			if err := walk(n.L); err != nil {
				return err
			}
			return walk(n.R)
		case ir.Compare:
			col, lit, op, ok := columnAndLiteral(n)
			if !ok {
				return fmt.Errorf("count: %s compares something other than a column with a literal", ir.FormatExpr(n))
			}
			switch op {
			case ir.OpEq:
				conds = append(conds, Condition{Column: col, Values: []any{lit}})
				return nil
			case ir.OpGe, ir.OpLe:
				x, ok := number(lit)
				if !ok {
					return fmt.Errorf("count: %s: a range needs numbers", ir.FormatExpr(n))
				}
				b := ranges[col]
				if b == nil {
					b = &bounds{}
					ranges[col] = b
					order = append(order, col)
				}
				end := &b.lo
				if op == ir.OpLe {
					end = &b.hi
				}
				if *end != nil {
					return fmt.Errorf("count: column %s has two %s bounds", col, op)
				}
				*end = &x
				return nil
			}
			return fmt.Errorf("count: %s: use =, IN, BETWEEN or a >= and <= pair (inclusive ranges)", ir.FormatExpr(n))
		case ir.In:
			c, ok := n.X.(ir.ColumnRef)
			if !ok || n.Not {
				return fmt.Errorf("count: %s: use column IN (values)", ir.FormatExpr(n))
			}
			cond := Condition{Column: strings.ToLower(c.Name)}
			for _, it := range n.List {
				v, ok := literal(it)
				if !ok {
					return fmt.Errorf("count: %s: IN lists literals only", ir.FormatExpr(n))
				}
				cond.Values = append(cond.Values, v)
			}
			conds = append(conds, cond)
			return nil
		case ir.Between:
			c, ok := n.X.(ir.ColumnRef)
			lo, okLo := literal(n.Lo)
			hi, okHi := literal(n.Hi)
			flo, nLo := number(lo)
			fhi, nHi := number(hi)
			if !ok || n.Not || !okLo || !okHi || !nLo || !nHi {
				return fmt.Errorf("count: %s: use column BETWEEN number AND number", ir.FormatExpr(n))
			}
			conds = append(conds, Condition{Column: strings.ToLower(c.Name), Range: []float64{flo, fhi}})
			return nil
		}
		return fmt.Errorf("count: %s: a published count is an AND of column = value, column IN (...), column BETWEEN lo AND hi", ir.FormatExpr(e))
	}
	if err := walk(stmts[0].Query.Where); err != nil {
		return nil, err
	}
	for _, col := range order {
		b := ranges[col]
		if b.lo == nil || b.hi == nil {
			return nil, fmt.Errorf("count: column %s needs both a >= and a <= bound (an inclusive range)", col)
		}
		conds = append(conds, Condition{Column: col, Range: []float64{*b.lo, *b.hi}})
	}
	return conds, nil
}

// columnAndLiteral reads col op literal or literal op col (flipping op).
func columnAndLiteral(c ir.Compare) (col string, lit any, op ir.CmpOp, ok bool) {
	flip := map[ir.CmpOp]ir.CmpOp{ir.OpEq: ir.OpEq, ir.OpNe: ir.OpNe, ir.OpLt: ir.OpGt, ir.OpLe: ir.OpGe, ir.OpGt: ir.OpLt, ir.OpGe: ir.OpLe}
	if cr, isCol := c.L.(ir.ColumnRef); isCol {
		if v, isLit := literal(c.R); isLit {
			return strings.ToLower(cr.Name), v, c.Op, true
		}
	}
	if cr, isCol := c.R.(ir.ColumnRef); isCol {
		if v, isLit := literal(c.L); isLit {
			return strings.ToLower(cr.Name), v, flip[c.Op], true
		}
	}
	return "", nil, 0, false
}

// literal returns a literal's value as the YAML decoder would have given
// it (int, float64, string, bool).
func literal(e ir.Expr) (any, bool) {
	switch n := e.(type) {
	case ir.Literal:
		switch n.Value.Kind {
		case ir.KindInt:
			return int(n.Value.Int), true
		case ir.KindFloat:
			return n.Value.Float, true
		case ir.KindString:
			return n.Value.Str, true
		case ir.KindBool:
			return n.Value.Bool, true
		}
	case ir.Neg:
		if v, ok := literal(n.X); ok {
			switch x := v.(type) {
			case int:
				return -x, true
			case float64:
				return -x, true
			}
		}
	}
	return nil, false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
