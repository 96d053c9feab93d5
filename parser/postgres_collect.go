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
	c := pgCollector{refs: newRefs(), nodeOneof: pgNodeOneof(), fields: pgFields()}
	c.node(n)
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

// pgNodeOneof is Node's oneof, looked up once.
var pgNodeOneof = sync.OnceValue(func() protoreflect.OneofDescriptor {
	return (&pg.Node{}).ProtoReflect().Descriptor().Oneofs().ByName("node")
})

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

// node walks a Node. The node types of everyday SELECTs are walked by
// direct field reads, every other type by walk's protobuf reflection: the
// reflective walk costs an allocation or two per field of every message
// (a SelectStmt has 20), which made it most of a fresh statement's
// conversion. The direct walks visit exactly the message fields walk
// would, in the same (declaration) order, and do the same on each type;
// TestDirectWalkMatchesReflection checks that field by field on every
// node type of pg_query's schema, so a field added to one of these types
// by a pg_query upgrade fails it instead of hiding a relation.
func (c *pgCollector) node(n *pg.Node) {
	if n == nil {
		return
	}
	switch x := n.Node.(type) {
	case nil:
		return
	case *pg.Node_ColumnRef, *pg.Node_AConst, *pg.Node_String_, *pg.Node_Integer, *pg.Node_Float, *pg.Node_Boolean, *pg.Node_BitString, *pg.Node_AStar:
		return // leaves: nothing below them can read or call anything
	case *pg.Node_RangeVar:
		c.rangeVar(x.RangeVar)
	case *pg.Node_SelectStmt:
		c.selectStmt(x.SelectStmt)
	case *pg.Node_ResTarget:
		if r := x.ResTarget; r != nil {
			c.nodes(r.Indirection)
			c.node(r.Val)
		}
	case *pg.Node_AExpr:
		if e := x.AExpr; e != nil {
			if e.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
				c.refs.addFunc("nullif")
			}
			c.nodes(e.Name)
			c.node(e.Lexpr)
			c.node(e.Rexpr)
		}
	case *pg.Node_FuncCall:
		if f := x.FuncCall; f != nil {
			c.refs.addFunc(pgFuncName(f))
			c.nodes(f.Funcname)
			c.nodes(f.Args)
			c.nodes(f.AggOrder)
			c.node(f.AggFilter)
			c.windowDef(f.Over)
		}
	case *pg.Node_BoolExpr:
		if e := x.BoolExpr; e != nil {
			c.node(e.Xpr)
			c.nodes(e.Args)
		}
	case *pg.Node_List:
		if l := x.List; l != nil {
			c.nodes(l.Items)
		}
	case *pg.Node_TypeCast:
		if t := x.TypeCast; t != nil {
			c.node(t.Arg)
			c.typeName(t.TypeName)
		}
	case *pg.Node_SortBy:
		if s := x.SortBy; s != nil {
			c.node(s.Node)
			c.nodes(s.UseOp)
		}
	case *pg.Node_JoinExpr:
		if j := x.JoinExpr; j != nil {
			c.node(j.Larg)
			c.node(j.Rarg)
			c.nodes(j.UsingClause)
			c.alias(j.JoinUsingAlias)
			c.node(j.Quals)
			c.alias(j.Alias)
		}
	case *pg.Node_NullTest:
		if t := x.NullTest; t != nil {
			c.node(t.Xpr)
			c.node(t.Arg)
		}
	case *pg.Node_SubLink:
		if l := x.SubLink; l != nil {
			c.node(l.Xpr)
			c.node(l.Testexpr)
			c.nodes(l.OperName)
			c.node(l.Subselect)
		}
	case *pg.Node_RangeSubselect:
		if r := x.RangeSubselect; r != nil {
			c.node(r.Subquery)
			c.alias(r.Alias)
		}
	case *pg.Node_CaseExpr:
		if e := x.CaseExpr; e != nil {
			c.node(e.Xpr)
			c.node(e.Arg)
			c.nodes(e.Args)
			c.node(e.Defresult)
		}
	case *pg.Node_CaseWhen:
		if w := x.CaseWhen; w != nil {
			c.node(w.Xpr)
			c.node(w.Expr)
			c.node(w.Result)
		}
	default:
		// Any other type, including one added to pg_query later: ask
		// the oneof which one is set.
		m := n.ProtoReflect()
		if fd := m.WhichOneof(c.nodeOneof); fd != nil {
			c.walk(m.Get(fd).Message())
		}
	}
}

func (c *pgCollector) nodes(ns []*pg.Node) {
	for _, n := range ns {
		c.node(n)
	}
}

func (c *pgCollector) rangeVar(r *pg.RangeVar) {
	if r == nil {
		return
	}
	// A three-part name db.schema.table can only name the current
	// database in PostgreSQL, so the schema is what identifies it.
	if r.Schemaname != "" || !c.scope.visible(r.Relname) {
		c.refs.addRel(r.Schemaname, r.Relname)
	}
	// only its alias lies below
}

func (c *pgCollector) selectStmt(s *pg.SelectStmt) {
	if s == nil {
		return
	}
	if s.WithClause != nil {
		c.with(s.WithClause)
		defer c.scope.pop()
	}
	c.nodes(s.DistinctClause)
	if s.IntoClause != nil {
		c.walk(s.IntoClause.ProtoReflect()) // refused there
	}
	c.nodes(s.TargetList)
	c.nodes(s.FromClause)
	c.node(s.WhereClause)
	c.nodes(s.GroupClause)
	c.node(s.HavingClause)
	c.nodes(s.WindowClause)
	c.nodes(s.ValuesLists)
	c.nodes(s.SortClause)
	c.node(s.LimitOffset)
	c.node(s.LimitCount)
	c.nodes(s.LockingClause)
	c.selectStmt(s.Larg)
	c.selectStmt(s.Rarg)
}

func (c *pgCollector) windowDef(w *pg.WindowDef) {
	if w != nil {
		c.nodes(w.PartitionClause)
		c.nodes(w.OrderClause)
		c.node(w.StartOffset)
		c.node(w.EndOffset)
	}
}

func (c *pgCollector) typeName(t *pg.TypeName) {
	if t != nil {
		c.nodes(t.Names)
		c.nodes(t.Typmods)
		c.nodes(t.ArrayBounds)
	}
}

func (c *pgCollector) alias(a *pg.Alias) {
	if a != nil {
		c.nodes(a.Colnames)
	}
}

func (c *pgCollector) walk(m protoreflect.Message) {
	switch x := m.Interface().(type) {
	case *pg.Node:
		// A Node is a oneof over ~270 node types: find the one set
		// instead of ranging over all of them.
		c.node(x)
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
