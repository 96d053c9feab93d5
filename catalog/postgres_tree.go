package catalog

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ddp-proxy/ddp-proxy/policies"
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

// treeCheck says what checkCatalogTree does to one statement.
type treeCheck struct {
	// catalog: the statement reads PostgreSQL's catalog, so every check
	// and rewrite below applies. Otherwise (a public table, or no
	// relation) statistics and system columns named are refused and
	// sizes blanked.
	catalog bool
	// sizes: size functions become NULL::bigint.
	sizes bool
	// cols cuts the column catalogs to the declared columns (nil: no cut).
	cols *DeclaredColumns
	// rels describes the backend's catalog relations that hold statistics
	// columns (Blanked and any other the server has). nil: a
	// statement that reads a Blanked relation is refused.
	rels *Relations
}

// checkCatalogTree inspects a pass-through statement to PostgreSQL (one
// statement) on its parse tree, and returns the text to forward.
//
// What makes a catalog query safe is the derived-table rewrite
// (blankRelations): every reference to a catalog relation that holds a
// statistics or activity column (pg_class, pg_database, pg_sequences) is
// replaced by a derived table that projects the relation's columns, as the
// backend describes them, with those columns replaced by typed NULLs and
// the original name or alias kept. USING, NATURAL, *, whole-row values,
// row comparisons and set operations downstream can then only see NULLs.
//
// Before it, as defence in depth and for clearer messages:
//   - a whole-row reference (SELECT c FROM pg_class c, ROW(c.*),
//     array_agg(x) over a subquery x), a column alias list (FROM pg_class
//     AS c(a, b, ...), WITH x(a, ...)) and a column position over SELECT *
//     are refused;
//   - system columns (xmin, xmax, cmin, cmax, ctid) are refused: they
//     show transaction ids, hence other sessions' write rate;
//   - statistics columns (IsStatistics) become NULL wherever they
//     are named, keeping their output names, so pgjdbc's getIndexInfo
//     gets a NULL CARDINALITY instead of an error; with sizes, size
//     functions become NULL::bigint.
//
// Column lists are cut to what the policy declares: a reference to
// pg_attribute or information_schema.columns reads a filtered subquery
// in which a declared table with a column list shows only those columns.
func checkCatalogTree(text string, tc treeCheck) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", sqlerr.New(sqlerr.FeatureNotSupported, "this catalog query cannot be checked for statistics and is not forwarded")
		}
	}()
	tree, err := pg.Parse(text)
	if err != nil || len(tree.Stmts) != 1 {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "this catalog query cannot be checked for statistics and is not forwarded")
	}
	var refusal error
	refuse := func(format string, args ...any) {
		if refusal == nil {
			refusal = sqlerr.New(sqlerr.InsufficientPrivilege, format, args...).
				WithHint("name the catalog columns you need; statistics columns (reltuples, relpages, ...) are not readable")
		}
	}
	changed := false
	if tc.catalog {
		changed = checkImplicitReferences(tree, tc.cols, refuse)
	}
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
			name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
			if systemColumns[name] && refusal == nil {
				refusal = sqlerr.New(sqlerr.InsufficientPrivilege,
					"system column %s is not readable through the privacy proxy: transaction ids and row positions reveal other sessions' writes", name).
					WithHint("select the catalog's ordinary columns (oid, relname, ...)")
			}
			// Outside a catalog query there is no derived table to
			// blank a statistics column: naming one is refused (a
			// catalog query's were replaced by NULL above).
			if !tc.catalog && IsStatistics(name) && refusal == nil {
				refusal = pgStatisticsRefused(name)
			}
			return
		}
		if ind := n.GetAIndirection(); ind != nil && !tc.catalog {
			for _, x := range ind.Indirection {
				if name := x.GetString_().GetSval(); IsStatistics(name) && refusal == nil {
					refusal = pgStatisticsRefused(name)
				}
			}
		}
		if f := n.GetFuncCall(); f != nil && tc.sizes {
			var parts []string
			for _, p := range f.Funcname {
				parts = append(parts, p.GetString_().GetSval())
			}
			if isSizeFunction(strings.Join(parts, ".")) {
				n.Node = pgNullOf("int8").Node
				changed = true
			}
		}
	})
	if refusal != nil {
		return "", refusal
	}
	if tc.catalog {
		blanked, err := blankRelations(tree, tc.rels)
		if err != nil {
			return "", err
		}
		changed = changed || blanked
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

func pgStatisticsRefused(name string) error {
	return sqlerr.New(sqlerr.InsufficientPrivilege,
		"catalog column %s describes private data (row counts, sizes or value statistics) and is not readable through the privacy proxy", name)
}

// systemColumns are PostgreSQL's system columns that describe the
// history of a row (the transactions that wrote it, its position). tableoid
// is not among them: it is the table's own oid.
var systemColumns = map[string]bool{"xmin": true, "xmax": true, "cmin": true, "cmax": true, "ctid": true}

// checkImplicitReferences refuses whole-row references, column alias
// lists and positions over SELECT * in a catalog query, replaces named
// statistics columns by NULL and cuts the column catalogs to the declared
// columns. It reports whether it changed the tree.
func checkImplicitReferences(tree *pg.ParseResult, cols *DeclaredColumns, refuse func(string, ...any)) bool {
	// Pass 1: range names, and the stars that stand alone in a select list.
	ranges := map[string]bool{}     // names of ranges of composite rows
	qualifiers := map[string]bool{} // every name that can qualify a column
	okStars := map[*pg.ColumnRef]bool{}
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
		case *pg.Node_RangeTableSample:
			// TABLESAMPLE needs a table, not the derived table that
			// blanks statistics; no client samples the catalog.
			refuse("TABLESAMPLE in catalog queries is not allowed through the privacy proxy")
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
			selectStars(x.SelectStmt, okStars, refuse)
		}
	})
	for r := range ranges {
		qualifiers[r] = true
	}
	// Unnamed select-list items keep their output name when blanked.
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		if rt := n.GetResTarget(); rt != nil && rt.Name == "" {
			if cr := rt.GetVal().GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
				if name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval(); IsStatistics(name) {
					rt.Name = name
				}
			}
		}
	})
	// Pass 2: whole-row references; statistics columns become NULL;
	// column catalogs are filtered.
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
			case IsStatistics(name):
				n.Node = pgNullOf(statisticsType[name]).Node
				changed = true
			}
			return
		}
		if ind := n.GetAIndirection(); ind != nil {
			for _, x := range ind.Indirection {
				if IsStatistics(x.GetString_().GetSval()) {
					n.Node = pgNullOf(statisticsType[x.GetString_().GetSval()]).Node
					changed = true
					return
				}
			}
		}
	})
	return changed
}

// selectStars records the stars that stand alone in the select lists of
// s and of the branches of its set operation (which are SelectStmts, not
// Nodes), and refuses positions over them. It reports whether s's output
// has a star.
func selectStars(s *pg.SelectStmt, okStars map[*pg.ColumnRef]bool, refuse func(string, ...any)) bool {
	if s == nil {
		return false
	}
	l := selectStars(s.Larg, okStars, refuse)
	r := selectStars(s.Rarg, okStars, refuse)
	star := l || r
	for _, t := range s.TargetList {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil {
			okStars[cr] = true
			if f := cr.Fields; len(f) > 0 && f[len(f)-1].GetAStar() != nil {
				star = true
			}
		}
	}
	// A position (ORDER BY 10) over a star addresses a column by number:
	// it may be a statistics column (pg_class's 10th is relpages), and
	// sorting by it ranks tables by size even though the values are
	// blanked afterwards.
	if !star {
		return false
	}
	var positional []*pg.Node
	for _, sb := range s.SortClause {
		positional = append(positional, sb.GetSortBy().GetNode())
	}
	positional = append(positional, s.DistinctClause...)
	positional = append(positional, s.GroupClause...)
	for _, e := range positional {
		if c := e.GetAConst(); c != nil && c.GetIval() != nil {
			refuse("ORDER BY, GROUP BY or DISTINCT ON by column position over SELECT * is not allowed in catalog queries through the privacy proxy (the position may be a statistics column)")
		}
	}
	return true
}

// blankRelations replaces every reference to a catalog relation that rels
// describes (one with statistics or activity columns) by a derived table
// that projects its columns with those replaced by typed NULLs, under the
// reference's alias or, without one, the relation's name:
//
//	pg_catalog.pg_class c → (SELECT oid, relname, ..., NULL::pg_catalog.float4 AS reltuples, ...
//	                         FROM pg_catalog.pg_class) AS c
//
// Column references qualified with the schema (pg_catalog.pg_class.relname,
// as SQLAlchemy writes them) lose the schema, since a derived table's name
// cannot be qualified. With rels nil, a reference to a Blanked
// relation is refused (fail closed). It reports whether it changed the tree.
func blankRelations(tree *pg.ParseResult, rels *Relations) (bool, error) {
	ctes := map[string]bool{}
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		if c := n.GetCommonTableExpr(); c != nil {
			ctes[c.Ctename] = true
		}
	})
	var refusal error
	rewritten := map[string]bool{} // relation names replaced by derived tables
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		rv := n.GetRangeVar()
		if rv == nil || refusal != nil {
			return
		}
		schema := rv.Schemaname
		switch {
		case schema == "" && strings.HasPrefix(rv.Relname, "pg_"):
			if ctes[rv.Relname] {
				// The name may be the WITH query or the catalog relation,
				// depending on scope: do not guess.
				refusal = sqlerr.New(sqlerr.InsufficientPrivilege,
					"a WITH query named like the catalog relation %s is not allowed in catalog queries through the privacy proxy", rv.Relname).
					WithHint("rename the WITH query")
				return
			}
			schema = "pg_catalog"
		case schema == "pg_catalog" || schema == "information_schema":
		default:
			return
		}
		rel := rels.Lookup(schema, rv.Relname)
		if rel == nil {
			if rels == nil && PostgresRelation(schema, rv.Relname) == Blanked {
				refusal = sqlerr.New(sqlerr.FeatureNotSupported,
					"catalog relation %s.%s has statistics columns, and without the backend's description of its columns it cannot be read with them blanked", schema, rv.Relname).
					WithHint("the proxy reads that description from the backend when it serves the query; an offline explain cannot")
			}
			return
		}
		alias := rv.Alias
		if alias == nil {
			alias = &pg.Alias{Aliasname: rv.Relname}
		}
		n.Node = &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{Subquery: pgDerivedTable(rel), Alias: alias}}
		rewritten[rv.Relname] = true
	})
	if refusal != nil {
		return false, refusal
	}
	if len(rewritten) == 0 {
		return false, nil
	}
	visitNodes(tree.ProtoReflect(), func(n *pg.Node) {
		cr := n.GetColumnRef()
		if cr == nil || len(cr.Fields) < 3 {
			return
		}
		f := cr.Fields
		schema, rel := f[len(f)-3].GetString_().GetSval(), f[len(f)-2].GetString_().GetSval()
		if (schema == "pg_catalog" || schema == "information_schema") && rewritten[rel] {
			cr.Fields = f[len(f)-2:]
		}
	})
	return true, nil
}

// pgDerivedTable is the SELECT that reads rel with its statistics columns
// replaced by NULLs of their own types (so that expressions over them
// still resolve: round(reltuples), the UNION of two catalog queries).
func pgDerivedTable(rel *Relation) *pg.Node {
	targets := make([]*pg.Node, 0, len(rel.Columns))
	for _, c := range rel.Columns {
		if IsStatistics(c.Name) {
			null := &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{
				Arg:      &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}},
				TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode(c.TypeSchema), pg.MakeStrNode(c.Type)}, Typemod: -1},
			}}}
			targets = append(targets, pg.MakeResTargetNodeWithNameAndVal(c.Name, null, -1))
			continue
		}
		targets = append(targets, pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(c.Name)}, -1), -1))
	}
	var where *pg.Node
	if rel.Schema == "pg_catalog" && rel.Name == "pg_database" {
		where = databaseFilter()
	}
	return &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: targets,
		FromClause: []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{
			Schemaname: rel.Schema, Relname: rel.Name, Inh: true, Relpersistence: "p", Location: -1,
		}}}},
		WhereClause: where,
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
		Op:          pg.SetOperation_SETOP_NONE,
	}}}
}

// databaseFilter keeps the rows of pg_database for the database the
// policy serves (the backend's current one): the cluster's other
// databases (psql's \l lists them) are not the analyst's business, and
// their names say what else the server holds.
func databaseFilter() *pg.Node {
	return pg.MakeAExprNode(pg.A_Expr_Kind_AEXPR_OP, []*pg.Node{pg.MakeStrNode("=")},
		pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode("datname")}, -1),
		pg.MakeFuncCallNode([]*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("current_database")}, nil, -1), -1)
}

// statisticsType is the type of a blanked statistics column, so that
// expressions over it still resolve (round(reltuples)); "" is untyped.
var statisticsType = map[string]string{
	"reltuples": "float4", "relpages": "int4", "relallvisible": "int4", "relallfrozen": "int4",
	"relfrozenxid": "xid", "relminmxid": "xid", "datfrozenxid": "xid", "datminmxid": "xid", "last_value": "int8",
}

// pgNullOf is NULL, cast to the pg_catalog type t unless t is "".
func pgNullOf(t string) *pg.Node {
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

// DeclaredColumns lists, for each declared table with a column list and
// each private table (whose undeclared columns are never shown, so none
// when it lists none), the columns analysts may see: a PostgreSQL catalog
// pass-through reads pg_attribute and information_schema.columns cut to
// them.
type DeclaredColumns struct {
	tables  [][]string // schema, table
	columns [][]string // schema, table, column
}

// Declared is pol's DeclaredColumns; nil when no table has a column list.
func Declared(pol *policies.Policy) *DeclaredColumns {
	d := &DeclaredColumns{}
	for _, dn := range pol.DatasetNames {
		for _, t := range pol.Datasets[dn].Tables {
			if len(t.ColumnNames) == 0 && t.Public {
				continue // a public table without a list shows all its columns
			}
			schema := strings.ToLower(t.Schema)
			if schema == "" {
				schema = strings.ToLower(pol.DefaultSchema())
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
	if len(d.columns) == 0 {
		// Only private tables without a list: no column is shown, and
		// VALUES needs a row (no table has an empty name).
		d.columns = [][]string{{"", "", ""}}
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
func (d *DeclaredColumns) filtered(rv *pg.RangeVar) *pg.Node {
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
		panic("catalog: column filter does not parse: " + sql) // recovered: the statement is refused
	}
	alias := rv.Alias
	if alias == nil {
		alias = &pg.Alias{Aliasname: rv.Relname}
	}
	return &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{Subquery: tree.Stmts[0].Stmt, Alias: alias}}}
}
