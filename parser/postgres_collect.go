package parser

import (
	"strings"
	"sync"

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
	c := pgCollector{refs: newRefs(), nodeOneof: m.Descriptor().Oneofs().ByName("node"), fields: pgFields()}
	c.walk(m)
	return c.refs
}

type pgCollector struct {
	refs      *refs
	scope     cteScope
	nodeOneof protoreflect.OneofDescriptor
	fields    map[protoreflect.FullName]*pgMessageFields
}

// pgMessageFields lists the fields of one message type that the walk
// descends into: every message-typed field, singular or repeated, except
// the WITH clause, which the walk handles first (its CTE names scope the
// rest).
type pgMessageFields struct {
	with     protoreflect.FieldDescriptor // nil when the type has none
	children []protoreflect.FieldDescriptor
}

func messageFields(d protoreflect.MessageDescriptor) *pgMessageFields {
	mf := &pgMessageFields{}
	fds := d.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		switch {
		case fd.Name() == "with_clause":
			mf.with = fd
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			mf.children = append(mf.children, fd)
		}
	}
	return mf
}

// pgFields is messageFields for every message type of pg_query's schema,
// computed once: the walk used to find these by ranging over all fields
// of every node and looking with_clause up by name each time, about a
// third of its cost.
var pgFields = sync.OnceValue(func() map[protoreflect.FullName]*pgMessageFields {
	msgs := pg.File_pg_query_proto.Messages()
	out := make(map[protoreflect.FullName]*pgMessageFields, msgs.Len())
	for i := range msgs.Len() {
		out[msgs.Get(i).FullName()] = messageFields(msgs.Get(i))
	}
	return out
})

// nodeChild returns the node type set in a Node. The common types are read
// directly, the others (and any type added to pg_query later) by asking
// the oneof which one is set, as before: the result is the same message.
func (c *pgCollector) nodeChild(n *pg.Node, m protoreflect.Message) protoreflect.Message {
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef, *pg.Node_AConst, *pg.Node_String_, *pg.Node_Integer, *pg.Node_Float, *pg.Node_Boolean, *pg.Node_AStar:
		return nil // leaves: the walk returns at once on them (below)
	case *pg.Node_ResTarget:
		return x.ResTarget.ProtoReflect()
	case *pg.Node_AExpr:
		return x.AExpr.ProtoReflect()
	case *pg.Node_FuncCall:
		return x.FuncCall.ProtoReflect()
	case *pg.Node_RangeVar:
		return x.RangeVar.ProtoReflect()
	case *pg.Node_SelectStmt:
		return x.SelectStmt.ProtoReflect()
	case *pg.Node_BoolExpr:
		return x.BoolExpr.ProtoReflect()
	case *pg.Node_List:
		return x.List.ProtoReflect()
	case *pg.Node_TypeCast:
		return x.TypeCast.ProtoReflect()
	case *pg.Node_SortBy:
		return x.SortBy.ProtoReflect()
	case *pg.Node_JoinExpr:
		return x.JoinExpr.ProtoReflect()
	case *pg.Node_NullTest:
		return x.NullTest.ProtoReflect()
	case *pg.Node_SubLink:
		return x.SubLink.ProtoReflect()
	case *pg.Node_RangeSubselect:
		return x.RangeSubselect.ProtoReflect()
	case *pg.Node_CaseExpr:
		return x.CaseExpr.ProtoReflect()
	case *pg.Node_CaseWhen:
		return x.CaseWhen.ProtoReflect()
	}
	if fd := m.WhichOneof(c.nodeOneof); fd != nil {
		return m.Get(fd).Message()
	}
	return nil
}

func (c *pgCollector) walk(m protoreflect.Message) {
	switch x := m.Interface().(type) {
	case *pg.Node:
		// A Node is a oneof over ~270 node types: find the one set
		// instead of ranging over all of them.
		if child := c.nodeChild(x, m); child != nil {
			c.walk(child)
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

	d := m.Descriptor()
	mf := c.fields[d.FullName()]
	if mf == nil {
		mf = messageFields(d) // not in pg_query's schema: cannot happen, but stay total
	}
	if wfd := mf.with; wfd != nil && m.Has(wfd) {
		if w, ok := m.Get(wfd).Message().Interface().(*pg.WithClause); ok {
			c.with(w)
			defer c.scope.pop()
		}
	}
	// Has, then Get: exactly the fields Range would visit (set singular
	// messages, non-empty lists), in declaration order. (Range's order
	// is undefined on purpose: protobuf-go swaps two fields per message
	// type, differently per binary, which made the order of the
	// functions and relations found depend on the build.)
	for _, fd := range mf.children {
		if !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for i := range l.Len() {
				c.walk(l.Get(i).Message())
			}
			continue
		}
		c.walk(m.Get(fd).Message())
	}
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
