package parser

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
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
