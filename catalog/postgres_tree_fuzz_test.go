package catalog

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// FuzzCheckCatalogTree: any statement is checked, rewritten or refused;
// the rewrite never crashes (the deparser is C code) and what it forwards
// reads the described catalog relations only through the derived tables
// that blank their statistics, names no statistics or system column and
// calls no size function.
func FuzzCheckCatalogTree(f *testing.F) {
	for _, s := range []string{
		"SELECT relname, reltuples FROM pg_catalog.pg_class",
		"SELECT pg_size_pretty(pg_table_size(c.oid)) FROM pg_class c WHERE c.relpages > 0 ORDER BY c.reltuples",
		"SELECT (c).reltuples, x.* FROM pg_class c, LATERAL (SELECT relallvisible) x",
		"WITH t AS (SELECT reltuples FROM pg_class) SELECT * FROM t UNION SELECT relpages FROM pg_class",
		"SELECT CASE WHEN reltuples > 0 THEN pg_total_relation_size(oid) END FROM pg_class GROUP BY 1 HAVING max(relpages) > 1",
		"SELECT relname, g FROM pg_class JOIN (SELECT g, g::real AS reltuples FROM generate_series(0,5000000) g) t USING (reltuples)",
		"SELECT relname FROM pg_class NATURAL JOIN (SELECT 2001::real AS reltuples) t",
		"SELECT x.* FROM (SELECT * FROM pg_class) x NATURAL JOIN (TABLE pg_database) d",
		"SELECT * FROM pg_class INTERSECT SELECT * FROM pg_catalog.pg_class c EXCEPT SELECT * FROM pg_class",
		"SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class WHERE pg_catalog.pg_class.oid IN (SELECT oid FROM pg_class)",
		"SELECT last_value FROM pg_sequences s JOIN pg_class c ON c.relname = s.sequencename",
	} {
		f.Add(s)
	}
	f.Add("SELECT a.attname FROM pg_attribute a, information_schema.columns c WHERE a.attname = c.column_name")
	cols := &DeclaredColumns{tables: [][]string{{"public", "people"}}, columns: [][]string{{"public", "people", "age"}}}
	rels := smallRelations()
	f.Fuzz(func(t *testing.T, text string) {
		out, err := checkCatalogTree(text, treeCheck{catalog: true, sizes: true, cols: cols, rels: rels})
		if err != nil {
			return
		}
		// The deparser does not always print re-parseable SQL
		// ((0).a → 0.a): PostgreSQL then refuses it too, which leaks
		// nothing. What parses must hold the invariants.
		tree, err := pg.Parse(out)
		if err != nil || len(tree.Stmts) != 1 {
			return
		}
		if msg := blankedInvariant(tree, rels); msg != "" {
			t.Fatalf("%q forwarded as %q: %s", text, out, msg)
		}
	})
}

// blankedInvariant returns "" when tree reads every relation rels
// describes only as the single FROM item of a derived table that projects
// exactly its columns with the statistics columns as NULLs, and names no
// statistics column, system column or size function; else what is wrong.
func blankedInvariant(tree *pg.ParseResult, rels *Relations) string {
	safe := map[*pg.RangeVar]bool{}
	msg := ""
	var visitSelect func(s *pg.SelectStmt)
	visitSelect = func(s *pg.SelectStmt) {
		if s == nil || len(s.FromClause) != 1 {
			return
		}
		rv := s.FromClause[0].GetRangeVar()
		if rv == nil {
			return
		}
		rel := rels.Lookup(rv.Schemaname, rv.Relname)
		// pg_database's derived table keeps only the served database's row.
		filtered := rel != nil && rel.Name == "pg_database" && isDatabaseFilter(s.WhereClause)
		if rel == nil || rv.Alias != nil || len(s.TargetList) != len(rel.Columns) || s.WhereClause != nil && !filtered ||
			len(s.GroupClause) != 0 || s.HavingClause != nil || len(s.SortClause) != 0 || s.LimitCount != nil ||
			s.LimitOffset != nil || len(s.DistinctClause) != 0 || s.WithClause != nil || len(s.WindowClause) != 0 {
			return
		}
		for i, c := range rel.Columns {
			rt := s.TargetList[i].GetResTarget()
			if IsStatistics(c.Name) {
				tc := rt.GetVal().GetTypeCast()
				if rt.Name != c.Name || tc == nil || !tc.GetArg().GetAConst().GetIsnull() {
					return
				}
				continue
			}
			cr := rt.GetVal().GetColumnRef()
			if rt.Name != "" || cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_().GetSval() != c.Name {
				return
			}
		}
		safe[rv] = true
	}
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		if s := n.GetSelectStmt(); s != nil {
			visitSelect(s)
		}
	})
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		switch x := n.Node.(type) {
		case *pg.Node_RangeVar:
			rv := x.RangeVar
			schema := rv.Schemaname
			if schema == "" {
				schema = "pg_catalog"
			}
			if rels.Lookup(schema, rv.Relname) != nil && !safe[rv] {
				msg = "reads " + rv.Relname + " outside its blanking derived table"
			}
		case *pg.Node_ColumnRef:
			if f := x.ColumnRef.Fields; len(f) > 0 {
				name := f[len(f)-1].GetString_().GetSval()
				if IsStatistics(name) || systemColumns[name] {
					msg = "names column " + name
				}
			}
		case *pg.Node_FuncCall:
			var parts []string
			for _, p := range x.FuncCall.Funcname {
				parts = append(parts, p.GetString_().GetSval())
			}
			if len(parts) > 0 && isSizeFunction(parts[len(parts)-1]) {
				msg = "calls " + parts[len(parts)-1]
			}
		}
	})
	return msg
}

// isDatabaseFilter reports whether w is databaseFilter's
// datname = pg_catalog.current_database() (locations aside: w was parsed).
func isDatabaseFilter(w *pg.Node) bool {
	e := w.GetAExpr()
	if e == nil || e.Kind != pg.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "=" {
		return false
	}
	l := e.Lexpr.GetColumnRef().GetFields()
	f := e.Rexpr.GetFuncCall()
	if len(l) != 1 || l[0].GetString_().GetSval() != "datname" || f == nil || len(f.Args) != 0 || len(f.Funcname) != 2 {
		return false
	}
	return f.Funcname[0].GetString_().GetSval() == "pg_catalog" && f.Funcname[1].GetString_().GetSval() == "current_database"
}
