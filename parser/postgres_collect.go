package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// pgCollect walks the whole parse tree of a statement by protobuf
// reflection, so that no node type can hide a relation or a function call
// from it: every message field is visited, including node types this
// package has never heard of. It also refuses what must never run as part
// of a read: SELECT INTO, row locks and data-modifying WITH.
func pgCollect(n *pg.Node) *refs {
	m := n.ProtoReflect()
	c := pgCollector{refs: newRefs(), nodeOneof: m.Descriptor().Oneofs().ByName("node")}
	c.walk(m)
	return c.refs
}

type pgCollector struct {
	refs      *refs
	scope     cteScope
	nodeOneof protoreflect.OneofDescriptor
}

func (c *pgCollector) walk(m protoreflect.Message) {
	switch x := m.Interface().(type) {
	case *pg.Node:
		// A Node is a oneof over ~270 node types: ask which one is set
		// instead of ranging over all of them (the walk's hot spot).
		if fd := m.WhichOneof(c.nodeOneof); fd != nil {
			c.walk(m.Get(fd).Message())
		}
		return
	case *pg.ColumnRef, *pg.A_Const, *pg.String, *pg.Integer, *pg.Float, *pg.Boolean, *pg.BitString, *pg.A_Star:
		return // leaves: nothing below them can read or call anything
	case *pg.RangeVar:
		// A three-part name db.schema.table can only name the current
		// database in PostgreSQL, so the schema is what identifies it.
		if x.Schemaname != "" || !c.scope.visible(x.Relname) {
			c.refs.addRel(x.Schemaname, x.Relname)
		}
		return // only its alias lies below
	case *pg.FuncCall:
		c.refs.addFunc(pgFuncName(x))
	case *pg.ParamRef:
		c.refs.params = max(c.refs.params, int(x.Number))
	case *pg.SQLValueFunction:
		op := strings.TrimPrefix(x.Op.String(), "SVFOP_")
		c.refs.addFunc(strings.ToLower(strings.TrimSuffix(op, "_N")))
	case *pg.CoalesceExpr:
		c.refs.addFunc("coalesce")
	case *pg.MinMaxExpr:
		if x.Op == pg.MinMaxOp_IS_LEAST {
			c.refs.addFunc("least")
		} else {
			c.refs.addFunc("greatest")
		}
	case *pg.A_Expr:
		if x.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			c.refs.addFunc("nullif")
		}
	case *pg.IntoClause:
		c.refs.refuse(readOnly("SELECT ... INTO (it creates a table)"))
	case *pg.LockingClause:
		c.refs.refuse(lockRefused())
	case *pg.InsertStmt:
		c.refs.refuse(readOnly("INSERT"))
	case *pg.UpdateStmt:
		c.refs.refuse(readOnly("UPDATE"))
	case *pg.DeleteStmt:
		c.refs.refuse(readOnly("DELETE"))
	case *pg.MergeStmt:
		c.refs.refuse(readOnly("MERGE"))
	}

	wfd := m.Descriptor().Fields().ByName("with_clause")
	if wfd != nil && m.Has(wfd) {
		if w, ok := m.Get(wfd).Message().Interface().(*pg.WithClause); ok {
			c.with(w)
			defer c.scope.pop()
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd == wfd || fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := range l.Len() {
				c.walk(l.Get(i).Message())
			}
			return true
		}
		if !fd.IsMap() {
			c.walk(v.Message())
		}
		return true
	})
}

// with opens the scope of a WITH clause and walks the CTE bodies with the
// names each one can see: the earlier CTEs, or all of them under
// RECURSIVE, where PostgreSQL lets CTEs refer to themselves and to later
// ones. The caller pops the scope after the statement body.
func (c *pgCollector) with(w *pg.WithClause) {
	c.scope.push()
	var names []string
	for _, n := range w.Ctes {
		if cte := n.GetCommonTableExpr(); cte != nil {
			names = append(names, cte.Ctename)
		}
	}
	if w.Recursive {
		for _, name := range names {
			c.scope.add(name)
		}
	}
	for _, n := range w.Ctes {
		c.walk(n.ProtoReflect())
		if cte := n.GetCommonTableExpr(); cte != nil && !w.Recursive {
			c.scope.add(cte.Ctename)
		}
	}
}

// pgFuncName is the called function as written, schema included. Calls
// the grammar generates for SQL-standard syntax (TRIM(...) →
// pg_catalog.btrim, EXTRACT, AT TIME ZONE) are listed without the
// pg_catalog prefix the analyst did not write. Quoted names keep their
// case, so "Version"() never matches a whitelist entry for version.
func pgFuncName(f *pg.FuncCall) string {
	parts := pgStrings(f.Funcname)
	if f.Funcformat == pg.CoercionForm_COERCE_SQL_SYNTAX && len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

// pgStrings extracts a list of String nodes (a qualified name).
func pgStrings(ns []*pg.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}

// pgTableRef converts a FROM-clause relation.
func pgTableRef(r *pg.RangeVar) ir.TableRef {
	t := ir.TableRef{Schema: r.Schemaname, Name: r.Relname}
	if r.Alias != nil {
		t.Alias = r.Alias.Aliasname
	}
	return t
}
