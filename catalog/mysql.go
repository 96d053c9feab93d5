package catalog

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// mysqlInfoSchemaTables are the information_schema tables a MySQL client
// may read through the proxy. It is an allow list (fail closed):
// COLUMN_STATISTICS (histograms), PARTITIONS (row counts per partition),
// INNODB_* and the MariaDB userstat tables (row counts, sizes),
// PROCESSLIST (other sessions' statements) and anything new are refused.
var mysqlInfoSchemaTables = map[string]bool{
	"schemata": true, "tables": true, "columns": true, "statistics": true, "views": true,
	"key_column_usage": true, "table_constraints": true, "referential_constraints": true, "check_constraints": true,
	"routines": true, "parameters": true, "triggers": true, "events": true,
	"character_sets": true, "collations": true, "collation_character_set_applicability": true,
	"engines": true, "keywords": true, "column_privileges": true, "table_privileges": true, "schema_privileges": true,
}

// MySQLInfoSchemaAllowed reports whether information_schema.<table> (any
// case) may be read through the proxy.
func MySQLInfoSchemaAllowed(table string) bool { return mysqlInfoSchemaTables[strings.ToLower(table)] }

// MySQLInfoSchemaQuery reads the column lists NewMySQLInfoSchema needs from
// the backend itself: one row (TABLE_NAME, COLUMN_NAME, DATA_TYPE,
// COLUMN_TYPE) per column of information_schema, in ordinal order.
// MariaDB and MySQL 8 differ (MariaDB's TABLES ends with MAX_INDEX_LENGTH
// and TEMPORARY), and so do their versions, so no list is written down
// here.
const MySQLInfoSchemaQuery = "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS " +
	"WHERE TABLE_SCHEMA = 'information_schema' ORDER BY TABLE_NAME, ORDINAL_POSITION"

// MySQLInfoSchema is the information_schema of one MySQL or MariaDB
// server: each table's columns in ordinal order. It is read-only once
// built and safe for concurrent use.
type MySQLInfoSchema struct {
	tables map[string]*mysqlTable // by lower-case name
}

type mysqlTable struct {
	name  string // as the server spells it (TABLES)
	cols  []MySQLColumn
	stats bool // some column is a statistics column
}

// MySQLColumn is one column of an information_schema table: DataType as in
// DATA_TYPE (bigint), ColumnType as in COLUMN_TYPE (bigint(21) unsigned).
type MySQLColumn struct {
	Name, DataType, ColumnType string
}

// NewMySQLInfoSchema builds the column lists from the rows of
// MySQLInfoSchemaQuery: table, column, data type, column type.
func NewMySQLInfoSchema(rows [][4]string) (*MySQLInfoSchema, error) {
	s := &MySQLInfoSchema{tables: map[string]*mysqlTable{}}
	for _, r := range rows {
		key := strings.ToLower(r[0])
		t := s.tables[key]
		if t == nil {
			t = &mysqlTable{name: r[0]}
			s.tables[key] = t
		}
		t.cols = append(t.cols, MySQLColumn{Name: r[1], DataType: r[2], ColumnType: r[3]})
		t.stats = t.stats || IsStatistics(r[1])
	}
	if s.tables["tables"] == nil || s.tables["statistics"] == nil {
		// Not a MySQL server, or one that hides its catalog from us: the
		// rewrite could not know which columns to blank.
		return nil, fmt.Errorf("the backend's information_schema lists no columns of TABLES and STATISTICS (%d rows read)", len(rows))
	}
	return s, nil
}

// RewriteMySQL checks a pass-through statement that reads MySQL's
// information_schema on its syntax tree and returns the text to forward:
// the tree restored, never the client's text, so that comments (and
// MariaDB's /*M! ... */, which TiDB's grammar skips but MariaDB runs) and
// anything else the grammar did not see cannot reach the backend.
//
//   - A reference to a statistics column (IsStatistics) by name, in any
//     case or quoting and in any clause (USING included), is refused.
//   - Every information_schema table that holds a statistics column is
//     replaced by a derived table of the same name or alias that projects
//     its columns in order with those columns as typed NULLs:
//     information_schema.TABLES becomes (SELECT TABLE_CATALOG, ...,
//     CAST(NULL AS UNSIGNED) AS TABLE_ROWS, ... FROM
//     information_schema.TABLES) AS TABLES. Whatever reaches a statistics
//     column without naming it — *, t.*, ORDER BY/GROUP BY positions,
//     NATURAL JOIN, whole-row comparisons, set operations, CTE or derived
//     column lists — only ever sees NULL.
//   - information_schema tables outside the allow list are refused.
//
// parse is the parser package's MySQLTree; info holds the backend's
// column lists; numParams is the number of ? markers, which must come out
// in the order the client wrote them.
func RewriteMySQL(sql string, parse MySQLParser, info *MySQLInfoSchema, numParams int) (out string, err error) {
	defer func() {
		// The walk and Restore run third-party code over a client's tree.
		if r := recover(); r != nil {
			out, err = "", notForwardable()
		}
	}()
	stmt, err := parse(sql)
	if err != nil {
		return "", err
	}
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return "", notForwardable()
	}
	if info == nil {
		return "", sqlerr.New(sqlerr.Internal, "internal error: the backend's information_schema columns are not known")
	}
	r := &myRewriter{info: info, unaliased: map[string]string{}, others: map[string]bool{}}
	stmt.Accept(r)
	if r.err != nil {
		return "", r.err
	}
	r.requalify()
	var b strings.Builder
	flags := format.DefaultRestoreFlags | format.RestoreStringEscapeBackslash | format.RestoreStringWithoutDefaultCharset
	if err := stmt.Restore(format.NewRestoreCtx(flags, &b)); err != nil {
		return "", notForwardable()
	}
	// A ? is bound by position: Restore writes some clauses in another
	// order than they may be written (LIMIT ? OFFSET ? becomes LIMIT ?,?),
	// which would swap the client's arguments.
	if len(r.markers) != numParams {
		return "", notForwardable()
	}
	for i := 1; i < len(r.markers); i++ {
		if r.markers[i] <= r.markers[i-1] {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "the parameters of this information_schema query cannot be forwarded in the order they were written").
				WithHint("write LIMIT ?, ? instead of LIMIT ? OFFSET ?, or put the values in the statement")
		}
	}
	// The backend reads the restored text, so it must be the statement
	// checked here. TiDB's printer is not total (a name in invalid UTF-8
	// is printed as ?): the text must parse back to a tree that prints
	// the same.
	out = b.String()
	again, err := parse(out)
	if err != nil {
		return "", notForwardable()
	}
	var b2 strings.Builder
	if err := again.Restore(format.NewRestoreCtx(flags, &b2)); err != nil || b2.String() != out {
		return "", notForwardable()
	}
	return out, nil
}

// MySQLParser parses one MySQL statement into a fresh TiDB syntax tree
// (parser.MySQLTree: the parser package is the one reader of SQL text).
type MySQLParser func(sql string) (ast.StmtNode, error)

func notForwardable() error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "this information_schema query cannot be checked for statistics and is not forwarded").
		WithHint("name the information_schema columns you need in a plain SELECT")
}

func statisticsRefused(name string) error {
	return sqlerr.New(sqlerr.InsufficientPrivilege,
		"catalog column %s describes private data (row counts, sizes or value statistics) and is not readable through the privacy proxy", strings.ToUpper(name)).
		WithHint("name the information_schema columns you need; statistics columns read as NULL in SELECT * and cannot be named")
}

// myRewriter is the ast.Visitor of RewriteMySQL.
type myRewriter struct {
	info *MySQLInfoSchema
	err  error
	// unaliased maps the lower-case name of each rewritten table written
	// without an alias to the alias its derived table gets (the server's
	// spelling); others holds the lower-case names of all other relations,
	// so that a qualifier naming both is left alone.
	unaliased map[string]string
	others    map[string]bool
	// qualified column references and t.* fields, requalified after the
	// walk (a select list is visited before FROM).
	columns []*ast.ColumnName
	stars   []*ast.WildCardField
	// markers are the text offsets of the ? markers in the order Restore
	// writes them.
	markers []int
}

func (r *myRewriter) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func mysqlTableRefused(table string) error {
	return sqlerr.New(sqlerr.InsufficientPrivilege,
		"information_schema.%s holds statistics about private data or server state and is not readable through the privacy proxy", strings.ToUpper(table))
}

func isInfoSchema(schema ast.CIStr) bool { return schema.L == "information_schema" }

// table looks an information_schema table up, refusing what is not
// allowed or not known to the backend.
func (r *myRewriter) table(tn *ast.TableName) *mysqlTable {
	if !MySQLInfoSchemaAllowed(tn.Name.O) {
		r.fail(mysqlTableRefused(tn.Name.O))
		return nil
	}
	t := r.info.tables[tn.Name.L]
	if t == nil {
		r.fail(sqlerr.New(sqlerr.UndefinedTable, "information_schema.%s does not exist on the backend", strings.ToUpper(tn.Name.O)))
	}
	return t
}

func (r *myRewriter) Enter(n ast.Node) (ast.Node, bool) {
	if r.err != nil {
		return n, true
	}
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.Kind == ast.SelectStmtKindTable {
			// TABLE t is SELECT * FROM t; a derived table cannot follow
			// TABLE, so it is written as the SELECT.
			x.Kind = ast.SelectStmtKindSelect
			if x.SelectStmtOpts == nil {
				x.SelectStmtOpts = &ast.SelectStmtOpts{SQLCache: true}
			}
			x.Fields = &ast.FieldList{Fields: []*ast.SelectField{{WildCard: &ast.WildCardField{}}}}
		}
		if x.Fields != nil {
			for _, f := range x.Fields.Fields {
				keepName(f)
			}
		}
	case *ast.SelectField:
		if x.WildCard != nil && x.WildCard.Table.O != "" {
			r.stars = append(r.stars, x.WildCard)
		}
	case *ast.DefaultExpr:
		// DEFAULT(col): TiDB's walk does not visit the column.
		if x.Name != nil && IsStatistics(x.Name.Name.O) {
			r.fail(statisticsRefused(x.Name.Name.O))
		}
	case *ast.ColumnName:
		if IsStatistics(x.Name.O) {
			r.fail(statisticsRefused(x.Name.O))
		}
		if x.Table.O != "" {
			r.columns = append(r.columns, x)
		}
	case *ast.TableSource:
		tn, ok := x.Source.(*ast.TableName)
		if !ok || !isInfoSchema(tn.Schema) {
			name := x.AsName.L
			if name == "" && ok {
				name = tn.Name.L
			}
			r.others[name] = true
			return n, false
		}
		t := r.table(tn)
		if t == nil || !t.stats {
			name := x.AsName.L
			if name == "" {
				name = tn.Name.L
			}
			r.others[name] = true
			return n, false // the TableName is checked below
		}
		if tn.AsOf != nil || tn.TableSample != nil || len(tn.IndexHints) > 0 || len(tn.PartitionNames) > 0 {
			r.fail(notForwardable())
			return n, true
		}
		if x.AsName.O == "" {
			x.AsName = ast.NewCIStr(t.name)
			r.unaliased[tn.Name.L] = t.name
		}
		x.Source = derivedTable(t)
		return x, true // its columns are ours
	case *ast.TableName:
		// Not the source of a table reference (those are handled above):
		// only tables without statistics may appear here.
		if isInfoSchema(x.Schema) {
			if t := r.table(x); t != nil && t.stats {
				r.fail(notForwardable())
			}
		}
	}
	return n, false
}

func (r *myRewriter) Leave(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
		return &orderedMarker{ParamMarkerExpr: m, restored: &r.markers}, true
	}
	return n, r.err == nil
}

// requalify points qualified references to a rewritten table written
// without an alias (information_schema.TABLES.TABLE_NAME, tables.*) at its
// derived table's alias.
func (r *myRewriter) requalify() {
	target := func(schema, table ast.CIStr) (string, bool) {
		alias, ok := r.unaliased[table.L]
		if !ok || r.others[table.L] || (schema.O != "" && !isInfoSchema(schema)) {
			return "", false
		}
		return alias, true
	}
	for _, c := range r.columns {
		if alias, ok := target(c.Schema, c.Table); ok {
			c.Schema, c.Table = ast.CIStr{}, ast.NewCIStr(alias)
		}
	}
	for _, w := range r.stars {
		if alias, ok := target(w.Schema, w.Table); ok {
			w.Schema, w.Table = ast.CIStr{}, ast.NewCIStr(alias)
		}
	}
}

// keepName gives an unaliased select-list item the name MySQL shows for
// it as the client wrote it. Clients read results by name, and the
// restored text would name some differently: table_name read from a
// derived table comes back as TABLE_NAME, count(*) is restored as
// COUNT(1). A literal restores to its own name.
func keepName(f *ast.SelectField) {
	if f.Expr == nil || f.AsName.O != "" {
		return
	}
	switch e := f.Expr.(type) {
	case *ast.ColumnNameExpr:
		f.AsName = ast.NewCIStr(e.Name.Name.O)
	case ast.ValueExpr:
	default:
		// MySQL's limit for an alias is 256 characters; a longer name is
		// left to the server.
		if t := strings.TrimSpace(f.Text()); t != "" && utf8.RuneCountInString(t) <= 256 && !strings.ContainsRune(t, 0) {
			f.AsName = ast.NewCIStr(t)
		}
	}
}

// derivedTable is SELECT <t's columns, statistics as typed NULLs> FROM
// information_schema.<t>, built as a tree (it never passes through text).
func derivedTable(t *mysqlTable) *ast.SelectStmt {
	fields := make([]*ast.SelectField, len(t.cols))
	for i, c := range t.cols {
		if IsStatistics(c.Name) {
			fields[i] = &ast.SelectField{Expr: nullOf(c), AsName: ast.NewCIStr(c.Name)}
		} else {
			fields[i] = &ast.SelectField{Expr: &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(c.Name)}}}
		}
	}
	return &ast.SelectStmt{
		SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
		Kind:           ast.SelectStmtKindSelect,
		Fields:         &ast.FieldList{Fields: fields},
		From: &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{
			Source: &ast.TableName{Schema: ast.NewCIStr("information_schema"), Name: ast.NewCIStr(t.name)},
		}}},
	}
}

// nullOf is a NULL of the column's type (CAST(NULL AS UNSIGNED) for
// TABLE_ROWS), so that clients still see a number or a date there.
func nullOf(c MySQLColumn) ast.ExprNode {
	var tp *types.FieldType
	switch strings.ToLower(c.DataType) {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		tp = types.NewFieldType(mysql.TypeLonglong)
		if strings.Contains(strings.ToLower(c.ColumnType), "unsigned") {
			tp.AddFlag(mysql.UnsignedFlag)
		}
	case "decimal":
		tp = types.NewFieldType(mysql.TypeNewDecimal)
	case "datetime", "timestamp":
		tp = types.NewFieldType(mysql.TypeDatetime)
	case "date":
		tp = types.NewFieldType(mysql.TypeDate)
	case "time":
		tp = types.NewFieldType(mysql.TypeDuration)
	default:
		tp = types.NewFieldType(mysql.TypeVarString)
	}
	return &ast.FuncCastExpr{Expr: ast.NewValueExpr(nil, "", ""), Tp: tp, FunctionType: ast.CastFunction}
}

// orderedMarker is a ? that records its text offset when restored.
type orderedMarker struct {
	*test_driver.ParamMarkerExpr
	restored *[]int
}

func (m *orderedMarker) Restore(ctx *format.RestoreCtx) error {
	*m.restored = append(*m.restored, m.Offset)
	return m.ParamMarkerExpr.Restore(ctx)
}

// refuseMySQLStatistics refuses MySQL text that names a statistics column
// anywhere (a statement to a backend of another dialect, which has no
// information_schema to blank), on the TiDB tree.
func refuseMySQLStatistics(sql string, parse MySQLParser) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = notForwardable()
		}
	}()
	stmt, err := parse(sql)
	if err != nil {
		return err
	}
	v := &statisticsNames{}
	stmt.Accept(v)
	return v.err
}

// statisticsNames is an ast.Visitor that records the first statistics
// column named.
type statisticsNames struct{ err error }

func (v *statisticsNames) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	switch x := n.(type) {
	case *ast.DefaultExpr:
		// DEFAULT(col): TiDB's walk does not visit the column.
		if x.Name != nil && IsStatistics(x.Name.Name.O) {
			v.err = statisticsRefused(x.Name.Name.O)
		}
	case *ast.ColumnName:
		if IsStatistics(x.Name.O) {
			v.err = statisticsRefused(x.Name.O)
		}
	}
	return n, false
}

func (v *statisticsNames) Leave(n ast.Node) (ast.Node, bool) { return n, v.err == nil }

// CheckMySQLInfoSchema applies the catalog rules to a MySQL client's
// references to information_schema before anything runs: it passes
// through only to a MySQL backend, or is answered by the emulation
// (emulated: the proxy has one), and only for the tables of the allow
// list.
func CheckMySQLInfoSchema(backend string, emulated bool, relations []ir.TableRef) error {
	for _, r := range relations {
		if !strings.EqualFold(r.Schema, "information_schema") {
			continue
		}
		if backend != "mysql" && !emulated {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"information_schema is only forwarded to a MySQL backend; this proxy's backend is %s", backend).
				WithHint("SHOW TABLES, SHOW COLUMNS FROM t and DESCRIBE t list what the policy exposes")
		}
		if !MySQLInfoSchemaAllowed(r.Name) {
			return mysqlTableRefused(r.Name)
		}
	}
	return nil
}

// emulatedMySQLFunctions are the functions an information_schema query may
// call when the emulation answers it (everything there is public; the
// list only keeps SQLite's own functions out).
var emulatedMySQLFunctions = map[string]bool{
	"if": true, "ifnull": true, "coalesce": true, "nullif": true, "concat": true, "concat_ws": true,
	"lower": true, "upper": true, "lcase": true, "ucase": true, "trim": true, "ltrim": true, "rtrim": true,
	"replace": true, "substring": true, "substr": true, "length": true, "char_length": true,
	"database": true, "schema": true, "count": true, "max": true, "min": true, "group_concat": true,
	"cast": true, "abs": true, "locate": true, "instr": true,
	"least": true, "greatest": true,
}

// mysqlClockFunctions are MySQL's clock functions (Metabase's time-zone
// probe) the emulated information_schema also answers (in the session's time zone, UTC) even in a
// statement that reads no relation.
var mysqlClockFunctions = map[string]bool{"now": true, "utc_timestamp": true, "current_timestamp": true, "timediff": true, "time_format": true}

// IsMySQLClockFunction reports whether f (any case) is one of them.
func IsMySQLClockFunction(f string) bool { return mysqlClockFunctions[strings.ToLower(f)] }

// CheckEmulatedMySQLFunctions refuses an information_schema query to the
// emulation that calls a function off emulatedMySQLFunctions.
func CheckEmulatedMySQLFunctions(backend string, functions []string) error {
	for _, f := range functions {
		if lf := strings.ToLower(f); !emulatedMySQLFunctions[lf] && !mysqlClockFunctions[lf] {
			return sqlerr.New(sqlerr.FeatureNotSupported, "function %s is not supported in information_schema queries on the %s backend", f, backend)
		}
	}
	return nil
}
