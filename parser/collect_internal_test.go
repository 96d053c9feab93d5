package parser

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// walkByRange is pgCollect's walk as it was before the field table and
// the direct Node reads (a copy): every node reached by protobuf Range.
// The faster walk must find exactly what it finds.
func (c *pgCollector) walkByRange(m protoreflect.Message) {
	switch x := m.Interface().(type) {
	case *pg.Node:
		if fd := m.WhichOneof(c.nodeOneof); fd != nil {
			c.walkByRange(m.Get(fd).Message())
		}
		return
	case *pg.ColumnRef, *pg.A_Const, *pg.String, *pg.Integer, *pg.Float, *pg.Boolean, *pg.BitString, *pg.A_Star:
		return
	case *pg.RangeVar:
		if x.Schemaname != "" || !c.scope.visible(x.Relname) {
			c.refs.addRel(x.Schemaname, x.Relname)
		}
		return
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
				c.walkByRange(n.ProtoReflect())
				if cte := n.GetCommonTableExpr(); cte != nil && !w.Recursive {
					c.scope.add(cte.Ctename)
				}
			}
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
				c.walkByRange(l.Get(i).Message())
			}
			return true
		}
		if !fd.IsMap() {
			c.walkByRange(v.Message())
		}
		return true
	})
}

// sqlCorpus is every string literal that looks like SQL in this
// package's and the planner's tests, the fuzz seeds and the fuzz corpus.
func sqlCorpus(t *testing.T) []string {
	var out []string
	files, _ := filepath.Glob("*_test.go")
	more, _ := filepath.Glob("../planner/*_test.go")
	fset := token.NewFileSet()
	for _, name := range append(files, more...) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					u := strings.ToUpper(s)
					if strings.Contains(u, "SELECT") || strings.Contains(u, "WITH") || strings.Contains(u, "TABLE") {
						out = append(out, s)
					}
				}
			}
			return true
		})
	}
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, name := range seeds {
		f, err := parser.ParseFile(fset, name, "package p\nvar _ = "+strings.TrimPrefix(readTestFile(t, name), "go test fuzz v1\n"), 0)
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out = append(out, s)
				}
			}
			return true
		})
	}
	return append(out, fuzzSeeds...)
}

// TestCollectMatchesRangeWalk: on every SQL text of the tests (over a
// thousand statements: CTEs, subqueries, locking, INTO, DML in WITH …) the
// walk finds the same relations, functions, parameters and refusal as the
// walk by protobuf Range.
func TestCollectMatchesRangeWalk(t *testing.T) {
	compared := 0
	for _, sql := range sqlCorpus(t) {
		res, err := pg.Parse(sql)
		if err != nil {
			continue
		}
		for _, raw := range res.Stmts {
			got := pgCollect(raw.Stmt)
			m := raw.Stmt.ProtoReflect()
			c := pgCollector{refs: newRefs(), nodeOneof: m.Descriptor().Oneofs().ByName("node"), fields: pgFields()}
			c.walkByRange(m)
			want := c.refs
			if byFields := collectByFields(raw.Stmt); !sameRefs(got, byFields) {
				t.Fatalf("%s:\nwalk   %v %v %d %v\nfields %v %v %d %v", sql, got.rels, got.funcs, got.params, got.refused,
					byFields.rels, byFields.funcs, byFields.params, byFields.refused)
			}
			// Range's order is left undefined on purpose (protobuf-go
			// swaps two fields per message type, fixed per binary), so
			// the lists are compared as sets, and a refusal by presence.
			if !sameSet(got.rels, want.rels) || !sameSet(got.funcs, want.funcs) || got.params != want.params ||
				(got.refused == nil) != (want.refused == nil) {
				t.Fatalf("%s:\nwalk  %v %v %d %v\nRange %v %v %d %v", sql, got.rels, got.funcs, got.params, got.refused, want.rels, want.funcs, want.params, want.refused)
			}
			compared++
		}
	}
	if compared < 500 {
		t.Fatalf("only %d statements compared", compared)
	}
	t.Logf("%d statements compared", compared)
}

func readTestFile(t *testing.T, name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameSet[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[T]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// walkFields is pgCollect's walk as it was before the direct walks (a
// copy): every node by protobuf reflection, fields in declaration order.
// The direct walks must find what it finds, in the same order.
func (c *pgCollector) walkFields(m protoreflect.Message) {
	switch x := m.Interface().(type) {
	case *pg.Node:
		if fd := m.WhichOneof(c.nodeOneof); fd != nil {
			c.walkFields(m.Get(fd).Message())
		}
		return
	case *pg.ColumnRef, *pg.A_Const, *pg.String, *pg.Integer, *pg.Float, *pg.Boolean, *pg.BitString, *pg.A_Star:
		return
	case *pg.RangeVar:
		if x.Schemaname != "" || !c.scope.visible(x.Relname) {
			c.refs.addRel(x.Schemaname, x.Relname)
		}
		return
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
	mf := messageFields(m.Descriptor())
	if wfd := mf.with; wfd != nil && m.Has(wfd) {
		if w, ok := m.Get(wfd).Message().Interface().(*pg.WithClause); ok {
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
				c.walkFields(n.ProtoReflect())
				if cte := n.GetCommonTableExpr(); cte != nil && !w.Recursive {
					c.scope.add(cte.Ctename)
				}
			}
			defer c.scope.pop()
		}
	}
	for _, fd := range mf.children {
		if !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for i := range l.Len() {
				c.walkFields(l.Get(i).Message())
			}
			continue
		}
		c.walkFields(m.Get(fd).Message())
	}
}

func collectByFields(n *pg.Node) *refs {
	c := pgCollector{refs: newRefs(), nodeOneof: pgNodeOneof(), fields: pgFields()}
	c.walkFields(n.ProtoReflect())
	return c.refs
}

func sameRefs(a, b *refs) bool {
	return slices.Equal(a.rels, b.rels) && slices.Equal(a.funcs, b.funcs) && a.params == b.params &&
		(a.refused == nil) == (b.refused == nil) && (a.refused == nil || a.refused.Error() == b.refused.Error())
}

// markedTree fills every message field of a new message of type d, down
// to depth levels: a Node field (or each list) holds a RangeVar of its own
// name, a RangeVar field is one, a FuncCall names a function of its own
// (an A_Expr is a NULLIF, which names one too),
// any other message is filled the same way one level down. A walk that
// skips a field misses that field's relation.
func markedTree(d protoreflect.MessageDescriptor, depth int, next *int) protoreflect.Message {
	m := newMessage(d)
	if rv, ok := m.Interface().(*pg.RangeVar); ok {
		*next++
		rv.Relname = "r" + strconv.Itoa(*next)
		return m
	}
	if f, ok := m.Interface().(*pg.FuncCall); ok {
		*next++
		f.Funcname = []*pg.Node{pg.MakeStrNode("f" + strconv.Itoa(*next))}
	}
	if e, ok := m.Interface().(*pg.A_Expr); ok {
		e.Kind = pg.A_Expr_Kind_AEXPR_NULLIF // the kind the walk acts on
	}
	if depth == 0 {
		return m
	}
	fds := d.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			continue
		}
		var child protoreflect.Message
		if fd.Message().FullName() == "pg_query.Node" {
			*next++
			child = pg.MakeSimpleRangeVarNode("n"+strconv.Itoa(*next), 0).ProtoReflect()
		} else {
			child = markedTree(fd.Message(), depth-1, next)
		}
		if fd.IsList() {
			m.Mutable(fd).List().Append(protoreflect.ValueOfMessage(child))
		} else {
			m.Set(fd, protoreflect.ValueOfMessage(child))
		}
	}
	return m
}

func newMessage(d protoreflect.MessageDescriptor) protoreflect.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	if err != nil {
		panic(err)
	}
	return mt.New()
}

// TestDirectWalkMatchesReflection: for every node type of pg_query's
// schema, a Node of that type with every message field filled (two levels
// down, each holding relations of its own) gives pgCollect the same
// relations, functions, parameters and refusal, in the same order, as
// the walk by reflection over every field. Then the same as the child of
// each directly walked type's fields, so that the nodes below a direct
// walk are reached too.
func TestDirectWalkMatchesReflection(t *testing.T) {
	oneof := pgNodeOneof()
	fds := oneof.Fields()
	compared := 0
	for i := range fds.Len() {
		fd := fds.Get(i)
		next := 0
		n := &pg.Node{}
		n.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(markedTree(fd.Message(), 3, &next)))
		got, want := pgCollect(n), collectByFields(n)
		if !sameRefs(got, want) {
			t.Errorf("%s:\ndirect %v %v %d %v\nfields %v %v %d %v", fd.Message().FullName(), got.rels, got.funcs, got.params, got.refused,
				want.rels, want.funcs, want.params, want.refused)
		}
		compared++
	}
	if compared < 200 {
		t.Fatalf("only %d node types", compared)
	}
}
