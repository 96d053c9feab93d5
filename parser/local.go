package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// This file recognises local SELECTs (ir.Statement.Local): a select list
// of literals, variables and argument-less session functions over no
// table, which connectors send on connect (SELECT @@version_comment,
// SELECT version(), a pool's SELECT 1). The session answers them from its
// own state; recognising them on the tree, not the text, means comments,
// version comments, quoting and casing are read as the server reads them.

// pgLocal returns the items of a local PostgreSQL SELECT, nil for any other.
func pgLocal(s *pg.SelectStmt) []ir.LocalItem {
	if s == nil || s.Op != pg.SetOperation_SETOP_NONE || len(s.TargetList) == 0 ||
		len(s.FromClause) > 0 || s.WhereClause != nil || len(s.GroupClause) > 0 || s.HavingClause != nil ||
		len(s.SortClause) > 0 || s.LimitCount != nil || s.LimitOffset != nil || len(s.DistinctClause) > 0 ||
		s.WithClause != nil || s.IntoClause != nil || len(s.WindowClause) > 0 || len(s.ValuesLists) > 0 || len(s.LockingClause) > 0 {
		return nil
	}
	items := make([]ir.LocalItem, 0, len(s.TargetList))
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil
		}
		it, ok := pgLocalItem(rt.Val)
		if !ok {
			return nil
		}
		if rt.Name != "" {
			it.Output = rt.Name
		}
		items = append(items, it)
	}
	return items
}

// pgLocalItem reads one item; its Output is what PostgreSQL names an
// unaliased column (the function's name, "?column?" for a literal).
func pgLocalItem(n *pg.Node) (ir.LocalItem, bool) {
	switch x := n.GetNode().(type) {
	case *pg.Node_FuncCall:
		f := x.FuncCall
		if len(f.Args) > 0 || f.AggStar || f.AggDistinct || f.FuncVariadic || f.Over != nil || f.AggFilter != nil ||
			len(f.AggOrder) > 0 || len(f.Funcname) == 0 || len(f.Funcname) > 2 {
			return ir.LocalItem{}, false
		}
		if len(f.Funcname) == 2 && f.Funcname[0].GetString_().GetSval() != "pg_catalog" {
			return ir.LocalItem{}, false
		}
		name := f.Funcname[len(f.Funcname)-1].GetString_().GetSval()
		return ir.LocalItem{Kind: ir.LocalFunc, Name: name, Output: name}, name != ""
	case *pg.Node_SqlvalueFunction:
		op := x.SqlvalueFunction.Op
		name := strings.ToLower(strings.TrimPrefix(op.String(), "SVFOP_"))
		if strings.HasSuffix(name, "_n") || op == pg.SQLValueFunctionOp_SQLVALUE_FUNCTION_OP_UNDEFINED {
			return ir.LocalItem{}, false // CURRENT_TIME(3): a precision is an argument
		}
		return ir.LocalItem{Kind: ir.LocalFunc, Name: name, Output: name}, true
	case *pg.Node_AConst:
		v, err := pgConst(x.AConst)
		if err != nil {
			return ir.LocalItem{}, false
		}
		return ir.LocalItem{Kind: ir.LocalLiteral, Value: v, Output: "?column?"}, true
	}
	return ir.LocalItem{}, false
}

// myLocal returns the items of a local MySQL SELECT (FROM DUAL and a
// LIMIT of at least one row allowed), nil for any other.
func myLocal(s *ast.SelectStmt) []ir.LocalItem {
	if s.Kind != ast.SelectStmtKindSelect || s.From != nil || s.Where != nil || s.GroupBy != nil || s.Having != nil ||
		s.OrderBy != nil || s.Distinct || s.With != nil || s.SelectIntoOpt != nil || s.LockInfo != nil ||
		len(s.WindowSpecs) > 0 || s.Fields == nil || len(s.Fields.Fields) == 0 {
		return nil
	}
	if s.Limit != nil {
		n, err := myLimit(s.Limit.Count)
		if err != nil || n == nil || *n < 1 || s.Limit.Offset != nil {
			return nil
		}
	}
	items := make([]ir.LocalItem, 0, len(s.Fields.Fields))
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil || f.Expr == nil {
			return nil
		}
		it, ok := myLocalItem(f.Expr)
		if !ok {
			return nil
		}
		// MySQL names an unaliased column after the item as written.
		it.Output = f.AsName.O
		if it.Output == "" {
			it.Output = strings.TrimSpace(f.Text())
			// The last item of a version comment (/*!40101 SELECT
			// @@x */) carries the comment's end in its text.
			if out, ok := strings.CutSuffix(it.Output, "*/"); ok && !strings.Contains(out, "/*") {
				it.Output = strings.TrimSpace(out)
			}
		}
		items = append(items, it)
	}
	return items
}

func myLocalItem(e ast.ExprNode) (ir.LocalItem, bool) {
	switch x := e.(type) {
	case *ast.VariableExpr:
		if x.Value != nil { // @a := 1 assigns
			return ir.LocalItem{}, false
		}
		if x.IsSystem {
			return ir.LocalItem{Kind: ir.LocalSysVar, Name: strings.ToLower(x.Name), Global: x.IsGlobal || x.IsInstance}, true
		}
		return ir.LocalItem{Kind: ir.LocalUserVar, Name: strings.ToLower(x.Name)}, true
	case *ast.FuncCallExpr:
		if len(x.Args) > 0 || x.Schema.O != "" {
			return ir.LocalItem{}, false
		}
		return ir.LocalItem{Kind: ir.LocalFunc, Name: x.FnName.L}, true
	case *ast.UnaryOperationExpr:
		if x.Op != opcode.Minus {
			return ir.LocalItem{}, false
		}
		it, ok := myLocalItem(x.V)
		if !ok || it.Kind != ir.LocalLiteral {
			return ir.LocalItem{}, false
		}
		switch it.Value.Kind {
		case ir.KindInt:
			if it.Value.Int == -it.Value.Int && it.Value.Int != 0 {
				return ir.LocalItem{}, false // -(-2^63) does not fit
			}
			it.Value = ir.Int(-it.Value.Int)
		case ir.KindFloat:
			it.Value = ir.Float(-it.Value.Float)
		default:
			return ir.LocalItem{}, false
		}
		return it, true
	case *test_driver.ValueExpr:
		v, err := myValue(x)
		if err != nil {
			return ir.LocalItem{}, false
		}
		if v.Kind == ir.KindBool { // MySQL's TRUE is the integer 1
			b := int64(0)
			if v.Bool {
				b = 1
			}
			v = ir.Int(b)
		}
		return ir.LocalItem{Kind: ir.LocalLiteral, Value: v}, true
	}
	return ir.LocalItem{}, false
}
