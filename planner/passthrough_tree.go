package planner

import (
	"github.com/ddp-proxy/ddp-proxy/catalog"
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

// checkCatalogTree inspects a pass-through statement that reads the
// PostgreSQL catalog (one statement) on its parse tree, and returns the
// text to forward. Statistics columns are refused by name elsewhere
// (mentionsStatistics) and blanked by name in SELECT * results; this
// closes the ways to read them without naming them:
//   - a whole-row reference (SELECT c FROM pg_class c, ROW(c.*),
//     array_agg(x) over a subquery x) carries every column;
//   - a column alias list (FROM pg_class AS c(a, b, ...), WITH x(a, ...))
//     renames them before a SELECT * shows them.
//
// Statistics columns (catalog.IsStatistics) become NULL wherever they are
// referenced, keeping their output names, so pgjdbc's getIndexInfo gets
// a NULL CARDINALITY instead of an error; with blankSizes, size functions
// become NULL::bigint.
//
// Column lists are cut to what the policy declares: a reference to
// pg_attribute or information_schema.columns reads a filtered subquery
// in which a declared table with a column list shows only those columns
// (cols; nil: no restriction).
func checkCatalogTree(text string, blankSizes bool, cols *declaredColumns) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", sqlerr.New(sqlerr.FeatureNotSupported, "this catalog query cannot be checked for statistics and is not forwarded")
		}
	}()
	tree, err := pg.Parse(text)
	if err != nil || len(tree.Stmts) != 1 {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "this catalog query cannot be checked for statistics and is not forwarded")
	}
	// Pass 1: range names, and the stars that stand alone in a select list.
	ranges := map[string]bool{}     // names of ranges of composite rows
	qualifiers := map[string]bool{} // every name that can qualify a column
	okStars := map[*pg.ColumnRef]bool{}
	var refusal error
	refuse := func(format string, args ...any) {
		if refusal == nil {
			refusal = sqlerr.New(sqlerr.InsufficientPrivilege, format, args...).
				WithHint("name the catalog columns you need; statistics columns (reltuples, relpages, ...) are not readable")
		}
	}
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		switch x := n.Node.(type) {
		case *pg.Node_RangeVar:
			if a := x.RangeVar.Alias; a != nil {
				ranges[a.Aliasname] = true
				if len(a.Colnames) > 0 {
					refuse("column alias lists on catalog queries are not allowed through the privacy proxy")
				}
			} else {
				ranges[x.RangeVar.Relname] = true
			}
		case *pg.Node_RangeSubselect:
			if a := x.RangeSubselect.Alias; a != nil {
				ranges[a.Aliasname] = true
				if len(a.Colnames) > 0 {
					refuse("column alias lists on catalog queries are not allowed through the privacy proxy")
				}
			}
		// A function in FROM (generate_series(...) s) is not a range of
		// composite rows: psql uses s as the value. It still qualifies
		// columns (s.r).
		case *pg.Node_RangeFunction:
			if a := x.RangeFunction.Alias; a != nil {
				qualifiers[a.Aliasname] = true
			}
		case *pg.Node_CommonTableExpr:
			ranges[x.CommonTableExpr.Ctename] = true
			if len(x.CommonTableExpr.Aliascolnames) > 0 {
				refuse("column alias lists on catalog queries are not allowed through the privacy proxy")
			}
		case *pg.Node_JoinExpr:
			if a := x.JoinExpr.Alias; a != nil {
				ranges[a.Aliasname] = true
			}
		case *pg.Node_SelectStmt:
			star := false
			for _, t := range x.SelectStmt.TargetList {
				if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil {
					okStars[cr] = true
					if f := cr.Fields; len(f) > 0 && f[len(f)-1].GetAStar() != nil {
						star = true
					}
				}
			}
			// A position (ORDER BY 10) over a star addresses a column
			// by number: it may be a statistics column (pg_class's 10th
			// is relpages), and sorting by it ranks tables by size even
			// though the values are blanked afterwards.
			if star {
				var positional []*pg.Node
				for _, sb := range x.SelectStmt.SortClause {
					positional = append(positional, sb.GetSortBy().GetNode())
				}
				positional = append(positional, x.SelectStmt.DistinctClause...)
				positional = append(positional, x.SelectStmt.GroupClause...)
				for _, e := range positional {
					if c := e.GetAConst(); c != nil && c.GetIval() != nil {
						refuse("ORDER BY, GROUP BY or DISTINCT ON by column position over SELECT * is not allowed in catalog queries through the privacy proxy (the position may be a statistics column)")
					}
				}
			}
		}
	})
	for r := range ranges {
		qualifiers[r] = true
	}
	// Unnamed select-list items keep their output name when blanked.
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		if rt := n.GetResTarget(); rt != nil && rt.Name == "" {
			if cr := rt.GetVal().GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
				if name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval(); catalog.IsStatistics(name) {
					rt.Name = name
				}
			}
		}
	})
	// Pass 2: whole-row references; statistics columns and size functions
	// become NULL; column catalogs are filtered.
	changed := false
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		if rv := n.GetRangeVar(); rv != nil && cols != nil {
			if sub := cols.filtered(rv); sub != nil {
				n.Node = sub.Node
				changed = true
				return
			}
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
			f := cr.Fields
			last := f[len(f)-1]
			name := last.GetString_().GetSval()
			switch {
			case last.GetAStar() != nil && !okStars[cr]:
				refuse("a row value (x.* outside a select list) of a catalog query is not allowed through the privacy proxy")
			case name != "" && ranges[name] && (len(f) == 1 || !qualifiers[f[len(f)-2].GetString_().GetSval()]):
				refuse("a whole-row reference (%s) in a catalog query is not allowed through the privacy proxy", name)
			case catalog.IsStatistics(name):
				n.Node = nullOf(statisticsType[name]).Node
				changed = true
			}
			return
		}
		if ind := n.GetAIndirection(); ind != nil {
			for _, x := range ind.Indirection {
				if catalog.IsStatistics(x.GetString_().GetSval()) {
					n.Node = nullOf(statisticsType[x.GetString_().GetSval()]).Node
					changed = true
					return
				}
			}
		}
		if f := n.GetFuncCall(); f != nil && blankSizes {
			var parts []string
			for _, p := range f.Funcname {
				parts = append(parts, p.GetString_().GetSval())
			}
			if isSizeFunction(strings.Join(parts, ".")) {
				n.Node = nullOf("int8").Node
				changed = true
			}
		}
	})
	if refusal != nil {
		return "", refusal
	}
	if !changed {
		return text, nil
	}
	out, err = pg.Deparse(tree)
	if err != nil {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "this catalog query cannot be rewritten without its statistics and is not forwarded")
	}
	return out, nil
}

// statisticsType is the type of a blanked statistics column, so that
// expressions over it still resolve (round(reltuples)); "" is untyped.
var statisticsType = map[string]string{"reltuples": "float4", "relpages": "int4", "relallvisible": "int4", "relallfrozen": "int4"}

// nullOf is NULL, cast to the pg_catalog type t unless t is "".
func nullOf(t string) *pg.Node {
	null := &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}}
	if t == "" {
		return null
	}
	return &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{
		Arg: null, TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode(t)}, Typemod: -1},
	}}}
}

// visitNodes calls fn on every Node under m, parents first. A node that
// fn replaces is not descended into.
func visitNodes(m protoreflect.Message, fn func(*pg.Node)) {
	if n, ok := m.Interface().(*pg.Node); ok {
		before := n.Node
		fn(n)
		if n.Node != before {
			return
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visitNodes(l.Get(i).Message(), fn)
			}
		case fd.IsMap():
		case fd.Message() != nil:
			visitNodes(v.Message(), fn)
		}
		return true
	})
}

// declaredColumns lists, for each declared table with a column list, the
// columns analysts may see.
type declaredColumns struct {
	tables  [][]string // schema, table
	columns [][]string // schema, table, column
}

func (p *Planner) declaredColumns() *declaredColumns {
	d := &declaredColumns{}
	for _, dn := range p.pol.DatasetNames {
		for _, t := range p.pol.Datasets[dn].Tables {
			if len(t.ColumnNames) == 0 {
				continue // a public table without a list shows all its columns
			}
			schema := strings.ToLower(t.Schema)
			if schema == "" {
				schema = strings.ToLower(p.pol.DefaultSchema())
			}
			d.tables = append(d.tables, []string{schema, t.Name})
			for _, c := range t.ColumnNames {
				d.columns = append(d.columns, []string{schema, t.Name, c})
			}
		}
	}
	if len(d.tables) == 0 {
		return nil
	}
	return d
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func valuesList(rows [][]string) string {
	var b strings.Builder
	b.WriteString("VALUES ")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for j, v := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sqlString(v))
		}
		b.WriteString(")")
	}
	return b.String()
}

// filtered returns the subquery that replaces rv when rv names
// pg_attribute or information_schema.columns, else nil. Lower-case
// names: PostgreSQL folds the policy's unquoted identifiers the same way.
func (d *declaredColumns) filtered(rv *pg.RangeVar) *pg.Node {
	schema, name := strings.ToLower(rv.Schemaname), strings.ToLower(rv.Relname)
	var sql string
	switch {
	case name == "pg_attribute" && (schema == "" || schema == "pg_catalog"):
		sql = "SELECT * FROM pg_catalog.pg_attribute WHERE attnum <= 0 OR NOT EXISTS (" +
			"SELECT 1 FROM pg_catalog.pg_class r JOIN pg_catalog.pg_namespace s ON s.oid = r.relnamespace " +
			"WHERE r.oid = attrelid AND (s.nspname::text, r.relname::text) IN (" + valuesList(d.tables) + ")) OR EXISTS (" +
			"SELECT 1 FROM pg_catalog.pg_class r JOIN pg_catalog.pg_namespace s ON s.oid = r.relnamespace " +
			"WHERE r.oid = attrelid AND (s.nspname::text, r.relname::text, attname::text) IN (" + valuesList(d.columns) + "))"
	case name == "columns" && schema == "information_schema":
		sql = "SELECT * FROM information_schema.columns WHERE (table_schema::text, table_name::text) NOT IN (" + valuesList(d.tables) +
			") OR (table_schema::text, table_name::text, column_name::text) IN (" + valuesList(d.columns) + ")"
	default:
		return nil
	}
	tree, err := pg.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		panic("planner: column filter does not parse: " + sql) // recovered: the statement is refused
	}
	alias := rv.Alias
	if alias == nil {
		alias = &pg.Alias{Aliasname: rv.Relname}
	}
	return &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{Subquery: tree.Stmts[0].Stmt, Alias: alias}}}
}
