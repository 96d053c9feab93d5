package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// pgPsqlList recognises psql's "List of relations" query (\dt, \d without
// a name): a SELECT over pg_catalog's pg_class, pg_namespace and pg_am
// whose columns are Schema, Name, Type and Owner (not \dt+'s Size and
// Description, which would show row counts), with c.relkind IN (...) and
// optionally c.relname OPERATOR(pg_catalog.~) 'pattern' among the
// conjuncts of WHERE. It returns nil for any other statement.
func pgPsqlList(s *pg.SelectStmt, rels []ir.TableRef) *ir.PsqlList {
	if s == nil || len(rels) == 0 || s.Op != pg.SetOperation_SETOP_NONE {
		return nil
	}
	for _, r := range rels {
		if !strings.EqualFold(r.Schema, "pg_catalog") {
			return nil
		}
		switch strings.ToLower(r.Name) {
		case "pg_class", "pg_namespace", "pg_am":
		default:
			return nil
		}
	}
	cols := map[string]bool{}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil {
			cols[rt.Name] = true
		}
	}
	if !cols["Schema"] || !cols["Name"] || !cols["Type"] || !cols["Owner"] || cols["Size"] || cols["Description"] {
		return nil
	}
	var out *ir.PsqlList
	for _, c := range pgConjuncts(s.WhereClause) {
		e := c.GetAExpr()
		if e == nil {
			continue
		}
		switch {
		case e.Kind == pg.A_Expr_Kind_AEXPR_IN && pgColumnNamed(e.Lexpr, "relkind"):
			l := &ir.PsqlList{}
			for _, it := range e.Rexpr.GetList().GetItems() {
				if sv := it.GetAConst().GetSval(); sv != nil {
					l.Relkinds = append(l.Relkinds, sv.Sval)
				}
			}
			if out != nil {
				l.Pattern, l.HasPattern = out.Pattern, out.HasPattern
			}
			out = l
		case e.Kind == pg.A_Expr_Kind_AEXPR_OP && pgOpName(e.Name) == "~" && pgColumnNamed(e.Lexpr, "relname"):
			r := e.Rexpr
			if cc := r.GetCollateClause(); cc != nil {
				r = cc.Arg
			}
			sv := r.GetAConst().GetSval()
			if sv == nil {
				return nil // a pattern that is not a constant: not psql's
			}
			if out == nil {
				out = &ir.PsqlList{}
			}
			out.Pattern, out.HasPattern = sv.Sval, true
		}
	}
	if out == nil || out.Relkinds == nil {
		return nil
	}
	return out
}

// pgConjuncts flattens the ANDs at the top of a WHERE clause.
func pgConjuncts(n *pg.Node) []*pg.Node {
	if n == nil {
		return nil
	}
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg.BoolExprType_AND_EXPR {
		var out []*pg.Node
		for _, a := range b.Args {
			out = append(out, pgConjuncts(a)...)
		}
		return out
	}
	return []*pg.Node{n}
}

// pgColumnNamed reports whether n is a column reference whose last field is name.
func pgColumnNamed(n *pg.Node, name string) bool {
	c := n.GetColumnRef()
	if c == nil || len(c.Fields) == 0 {
		return false
	}
	return c.Fields[len(c.Fields)-1].GetString_().GetSval() == name
}

// pgOpName is an operator's name without its schema (OPERATOR(pg_catalog.~) is "~").
func pgOpName(name []*pg.Node) string {
	if len(name) == 0 {
		return ""
	}
	return name[len(name)-1].GetString_().GetSval()
}
