package parser

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// myCollect walks a statement with TiDB's own visitor, which descends into
// every child (subqueries in any clause, CTE bodies, set-operation
// branches, derived tables, function arguments), and records what it
// reads. It also numbers the ? markers left to right: TiDB's parser leaves
// their Order unset, and their byte offsets give the written order.
func myCollect(n ast.Node) (*refs, map[*test_driver.ParamMarkerExpr]int) {
	c := &myCollector{refs: newRefs()}
	n.Accept(c)
	slices.SortFunc(c.markers, func(a, b *test_driver.ParamMarkerExpr) int { return a.Offset - b.Offset })
	params := make(map[*test_driver.ParamMarkerExpr]int, len(c.markers))
	for i, m := range c.markers {
		params[m] = i + 1
	}
	c.refs.params = len(c.markers)
	return c.refs, params
}

type myCollector struct {
	refs    *refs
	scope   cteScope
	markers []*test_driver.ParamMarkerExpr
}

func (c *myCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.With != nil {
			c.scope.push()
		}
		if x.LockInfo != nil && x.LockInfo.LockType != ast.SelectLockNone {
			c.refs.refuse(lockRefused())
		}
		if x.SelectIntoOpt != nil {
			if x.SelectIntoOpt.Tp == ast.SelectIntoVars {
				c.refs.refuse(notSupported("SELECT ... INTO variables"))
			} else {
				c.refs.refuse(readOnly("SELECT ... INTO OUTFILE/DUMPFILE (it writes a file)"))
			}
		}
	case *ast.SetOprStmt:
		if x.With != nil {
			c.scope.push()
		}
	case *ast.CommonTableExpression:
		// MySQL lets a CTE see the earlier ones and, under RECURSIVE,
		// itself; never the later ones.
		if x.IsRecursive {
			c.scope.add(x.Name.O)
		}
	case *ast.TableName:
		if x.Schema.O != "" || !c.scope.visible(x.Name.O) {
			c.refs.addRel(x.Schema.O, x.Name.O)
		}
	case *ast.FuncCallExpr:
		name := strings.ToLower(x.FnName.O)
		if x.Schema.O != "" {
			name = strings.ToLower(x.Schema.O) + "." + name
		}
		c.refs.addFunc(name)
	case *ast.AggregateFuncExpr:
		c.refs.addFunc(strings.ToLower(x.F))
	case *ast.WindowFuncExpr:
		c.refs.addFunc(strings.ToLower(x.Name))
	case *test_driver.ParamMarkerExpr:
		c.markers = append(c.markers, x)
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		c.refs.refuse(readOnly("data modification"))
	}
	return n, false
}

func (c *myCollector) Leave(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.With != nil {
			c.scope.pop()
		}
	case *ast.SetOprStmt:
		if x.With != nil {
			c.scope.pop()
		}
	case *ast.CommonTableExpression:
		if !x.IsRecursive {
			c.scope.add(x.Name.O)
		}
	}
	return n, true
}
