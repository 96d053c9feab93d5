package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// sizeFunctions report the on-disk size of relations, which grows with
// their row counts (DESIGN.md safety rules). In a pass-through statement
// to PostgreSQL they are replaced by NULL, so psql's \dt+ and \l+ and
// pgAdmin-style probes show blanks instead of failing.
var sizeFunctions = map[string]bool{
	"pg_table_size": true, "pg_relation_size": true, "pg_total_relation_size": true, "pg_indexes_size": true,
	"pg_database_size": true, "pg_tablespace_size": true,
}

func isSizeFunction(name string) bool {
	return sizeFunctions[strings.TrimPrefix(strings.ToLower(name), "pg_catalog.")]
}

// blankSizeFunctions rewrites every call of a size function in text (one
// PostgreSQL statement) into NULL::bigint, on the parse tree.
func blankSizeFunctions(text string) (string, error) {
	tree, err := pg.Parse(text)
	if err != nil || len(tree.Stmts) != 1 {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "a statement that asks for relation sizes cannot be rewritten")
	}
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if n, ok := m.Interface().(*pg.Node); ok {
			if f := n.GetFuncCall(); f != nil {
				var parts []string
				for _, p := range f.Funcname {
					parts = append(parts, p.GetString_().GetSval())
				}
				if isSizeFunction(strings.Join(parts, ".")) {
					n.Node = &pg.Node_TypeCast{TypeCast: &pg.TypeCast{
						Arg:      &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}},
						TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("int8")}, Typemod: -1},
					}}
					return
				}
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message())
				}
			case fd.IsMap():
			case fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	walk(tree.ProtoReflect())
	out, err := pg.Deparse(tree)
	if err != nil {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "a statement that asks for relation sizes cannot be rewritten")
	}
	return out, nil
}
