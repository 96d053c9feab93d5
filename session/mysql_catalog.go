package session

import (
	"context"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// checkCatalog enforces the MySQL catalog rules a statement meets before
// the shared session: information_schema passes through only to a MySQL
// backend (or is answered from the policy), and only the tables of
// catalog's allow list. Statistics columns are the planner's business, on
// the syntax tree (catalog.RewriteMySQL): nothing here reads the text.
func (ms *mySession) checkCatalog(st *ir.Statement) error {
	for _, r := range st.Relations {
		if !strings.EqualFold(r.Schema, "information_schema") {
			continue
		}
		if ms.p.Policy().Backend.Driver != "mysql" && ms.p.current().info == nil {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"information_schema is only forwarded to a MySQL backend; this proxy's backend is %s", ms.p.Policy().Backend.Driver).
				WithHint("SHOW TABLES, SHOW COLUMNS FROM t and DESCRIBE t list what the policy exposes")
		}
		if !catalog.MySQLInfoSchemaAllowed(r.Name) {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"information_schema.%s holds statistics about private data or server state and is not readable through the privacy proxy", strings.ToUpper(r.Name))
		}
	}
	return nil
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
type InfoSchemaFunc func(ctx context.Context, sql string, args []ir.Value, database string, tables []emulated.MySQLTable) ([]backends.ColumnInfo, [][]ir.Value, error)

// infoSchemaLocal reports whether st reads only information_schema and
// must be answered from the policy (the backend is not MySQL).
func (ms *mySession) infoSchemaLocal(st *ir.Statement) bool {
	if ms.p.Policy().Backend.Driver == "mysql" || ms.p.current().info == nil || st.Kind != ir.StmtSelect {
		return false
	}
	if len(st.Relations) == 0 {
		// A clock probe (Metabase's time-zone offset) reads no relation
		// but calls functions the backend's dialect may lack.
		for _, f := range st.Functions {
			if clockFuncs[strings.ToLower(f)] {
				return true
			}
		}
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
	"now": true, "utc_timestamp": true, "current_timestamp": true, "timediff": true, "time_format": true,
}

// clockFuncs are MySQL's clock functions the emulated information_schema
// answers (in the session's time zone, UTC).
var clockFuncs = map[string]bool{"now": true, "utc_timestamp": true, "current_timestamp": true, "timediff": true, "time_format": true}

// runInfoSchema answers an information_schema query from the policy.
func (ms *mySession) runInfoSchema(ctx context.Context, st *ir.Statement, args []ir.Value) (Result, error) {
	for _, f := range st.Functions {
		if !infoSchemaFuncs[strings.ToLower(f)] {
			return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "function %s is not supported in information_schema queries on the %s backend", f, ms.p.Policy().Backend.Driver)
		}
	}
	var tables []emulated.MySQLTable
	for _, t := range ms.tables("") {
		// Each table in the database that names it in queries (the
		// session's database unless the policy declares a schema).
		schema := ms.p.Policy().CatalogSchema(ms.s.names(), t)
		cols, err := ms.describe(ctx, schema+"."+t.Name)
		if err != nil {
			return Result{}, err
		}
		ct := emulated.MySQLTable{Schema: schema, Name: t.Name, Comment: "private table, privacy unit " + t.Unit}
		if t.Public {
			ct.Comment = "public table"
		}
		for _, c := range cols {
			dt := c.sqlType
			if i := strings.IndexByte(dt, '('); i >= 0 {
				dt = dt[:i]
			}
			ct.Columns = append(ct.Columns, emulated.MySQLColumn{Name: c.name, DataType: dt, ColumnType: c.sqlType, Key: c.key, Comment: c.extra})
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
