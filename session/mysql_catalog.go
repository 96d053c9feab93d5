package session

import (
	"context"
	"github.com/ddp-proxy/ddp-proxy/catalog"
	"regexp"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// infoSchemaAllowed are the information_schema tables a MySQL client may
// read through the proxy on a MySQL backend. It is an allow list (fail
// closed): COLUMN_STATISTICS (histograms), INNODB_* and the MariaDB
// userstat tables (row counts, sizes), PROCESSLIST (other sessions'
// statements) and anything new are refused. Rows naming tables the policy
// does not declare are dropped by hideUnexposed.
var infoSchemaAllowed = map[string]bool{
	"schemata": true, "tables": true, "columns": true, "statistics": true, "views": true,
	"key_column_usage": true, "table_constraints": true, "referential_constraints": true, "check_constraints": true,
	"routines": true, "parameters": true, "triggers": true, "events": true,
	"character_sets": true, "collations": true, "collation_character_set_applicability": true,
	"engines": true, "keywords": true, "column_privileges": true, "table_privileges": true, "schema_privileges": true,
}

var (
	selectStar      = regexp.MustCompile(`(?s)(\bselect\s+(distinct\s+)?\*|\.\*|,\s*\*)`)
	positionalOrder = regexp.MustCompile(`(?s)\b(order|group)\s+by\s+(.*,\s*)?\d+\b`)
)

// checkCatalog enforces the MySQL catalog rules before a statement reaches
// the shared session: information_schema passes through only to a MySQL
// backend, only the allowed tables, and never naming a statistics column.
func (ms *mySession) checkCatalog(st *ir.Statement) error {
	info := false
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "information_schema") {
			continue
		}
		info = true
		if ms.p.Policy().Backend.Driver != "mysql" && ms.p.current().info == nil {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"information_schema is only forwarded to a MySQL backend; this proxy's backend is %s", ms.p.Policy().Backend.Driver).
				WithHint("SHOW TABLES, SHOW COLUMNS FROM t and DESCRIBE t list what the policy exposes")
		}
		if !infoSchemaAllowed[strings.ToLower(r.Name)] {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"information_schema.%s holds statistics about private data or server state and is not readable through the privacy proxy", strings.ToUpper(r.Name))
		}
	}
	if !info || ms.infoSchemaLocal(st) {
		// From the policy, every statistics column is NULL.
		return nil
	}
	lower := strings.ToLower(stripStrings(st.Text))
	if selectStar.MatchString(lower) && positionalOrder.MatchString(lower) {
		// SELECT * ... ORDER BY 8 sorts by TABLE_ROWS although its values
		// are blanked: the order of the rows would rank the tables' sizes.
		return sqlerr.New(sqlerr.InsufficientPrivilege,
			"ORDER BY or GROUP BY a column position with SELECT * on information_schema is not allowed through the privacy proxy (it could sort by statistics columns)").
			WithHint("name the columns to select and sort by")
	}
	for _, c := range catalog.StatisticsColumns() {
		if containsIdent(lower, c) {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"catalog column %s describes private data (row counts, sizes or value statistics) and is not readable through the privacy proxy", strings.ToUpper(c))
		}
	}
	return nil
}

// stripStrings blanks the contents of quoted strings ('...' and "...",
// both strings in MySQL's default mode), so that a literal such as
// EXTRA = 'auto_increment' is not taken for the column of that name.
func stripStrings(s string) string {
	b := []byte(s)
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == '\\' && i+1 < len(b):
			b[i], b[i+1] = ' ', ' '
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b[i] = ' '
		}
	}
	return string(b)
}

// containsIdent reports whether word occurs in s as a whole identifier.
func containsIdent(s, word string) bool {
	isIdent := func(b byte) bool { return b == '_' || b == '$' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' }
	for i := 0; ; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		k := i + j
		if (k == 0 || !isIdent(s[k-1])) && (k+len(word) >= len(s) || !isIdent(s[k+len(word)])) {
			return true
		}
		i = k + 1
	}
}

// blankMySQLStatistics nulls the MySQL statistics columns of a
// pass-through result (SELECT * FROM information_schema.TABLES); the
// shared session has blanked TABLE_ROWS, DATA_LENGTH and the like already.
func (ms *mySession) blankMySQLStatistics(r *Result) {
	tableCol, schemaCol, columnCol := -1, -1, -1
	for i, c := range r.Columns {
		switch n := strings.ToLower(c.Name); {
		case catalog.IsStatistics(n):
			for _, row := range r.Rows {
				row[i] = ir.Null()
			}
		case n == "table_name":
			tableCol = i
		case n == "table_schema":
			schemaCol = i
		case n == "column_name":
			columnCol = i
		}
	}
	if tableCol < 0 || columnCol < 0 {
		return
	}
	// information_schema.COLUMNS and the like: a private table's columns
	// the policy does not list stay hidden, as in DESCRIBE (the unit is
	// named in the policy and stays).
	kept := r.Rows[:0]
	for _, row := range r.Rows {
		schema := ""
		if schemaCol >= 0 {
			schema = row[schemaCol].Text()
		}
		_, t := ms.p.Policy().LookupTable(schema, row[tableCol].Text())
		col := strings.ToLower(row[columnCol].Text())
		if t != nil && len(t.ColumnNames) > 0 && t.Columns[col] == nil && !strings.EqualFold(col, t.Unit) {
			continue
		}
		kept = append(kept, row)
	}
	r.Rows = kept
	r.Tag = "SELECT " + itoa(len(kept))
}

// InfoSchemaFunc runs a MySQL information_schema query over the catalog
// the session describes (see Config.InfoSchema).
type InfoSchemaFunc func(ctx context.Context, sql string, args []ir.Value, database string, tables []CatalogTable) ([]backends.ColumnInfo, [][]ir.Value, error)

// CatalogTable is one table as MySQL's information_schema shows it.
type CatalogTable struct {
	Name, Comment string
	Columns       []CatalogColumn
}

// CatalogColumn is one column: DataType as in DATA_TYPE (bigint, double,
// text, tinyint), ColumnType as in COLUMN_TYPE (tinyint(1)).
type CatalogColumn struct {
	Name, DataType, ColumnType, Key, Comment string
}

// infoSchemaLocal reports whether st reads only information_schema and
// must be answered from the policy (the backend is not MySQL).
func (ms *mySession) infoSchemaLocal(st *ir.Statement) bool {
	if ms.p.Policy().Backend.Driver == "mysql" || ms.p.current().info == nil || st.Kind != ir.StmtSelect || len(st.Relations) == 0 {
		return false
	}
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "information_schema") {
			return false
		}
	}
	return true
}

// infoSchemaFuncs are the functions an information_schema query may call
// when answered from the policy (everything there is public; the list
// only keeps SQLite's own functions out).
var infoSchemaFuncs = map[string]bool{
	"if": true, "ifnull": true, "coalesce": true, "nullif": true, "concat": true, "concat_ws": true,
	"lower": true, "upper": true, "lcase": true, "ucase": true, "trim": true, "ltrim": true, "rtrim": true,
	"replace": true, "substring": true, "substr": true, "length": true, "char_length": true,
	"database": true, "schema": true, "count": true, "max": true, "min": true, "group_concat": true,
	"cast": true, "abs": true, "locate": true, "instr": true,
	"least": true, "greatest": true,
}

// runInfoSchema answers an information_schema query from the policy.
func (ms *mySession) runInfoSchema(ctx context.Context, st *ir.Statement, args []ir.Value) (Result, error) {
	for _, f := range st.Functions {
		if !infoSchemaFuncs[strings.ToLower(f)] {
			return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "function %s is not supported in information_schema queries on the %s backend", f, ms.p.Policy().Backend.Driver)
		}
	}
	var tables []CatalogTable
	for _, t := range ms.tables("") {
		cols, err := ms.describe(ctx, t.Name)
		if err != nil {
			return Result{}, err
		}
		ct := CatalogTable{Name: t.Name, Comment: "private table, privacy unit " + t.Unit}
		if t.Public {
			ct.Comment = "public table"
		}
		for _, c := range cols {
			dt := c.sqlType
			if i := strings.IndexByte(dt, '('); i >= 0 {
				dt = dt[:i]
			}
			ct.Columns = append(ct.Columns, CatalogColumn{Name: c.name, DataType: dt, ColumnType: c.sqlType, Key: c.key, Comment: c.extra})
		}
		tables = append(tables, ct)
	}
	cols, rows, err := ms.p.current().info(ctx, st.Text, args, ms.currentDatabase(), tables)
	if err != nil {
		return Result{}, err
	}
	r := Result{Rows: rows, Tag: "SELECT " + itoa(len(rows))}
	for _, c := range cols {
		r.Columns = append(r.Columns, Column{Name: c.Name, Type: backendType(c.Type)})
	}
	return r, nil
}
