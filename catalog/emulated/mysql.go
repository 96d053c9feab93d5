package emulated

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MySQLTable is one table as MySQL's information_schema shows it, in
// database Schema ("" = the session's database).
type MySQLTable struct {
	Schema, Name, Comment string
	Columns               []MySQLColumn
}

// MySQLColumn is one column: DataType as in DATA_TYPE (bigint, double,
// text, tinyint), ColumnType as in COLUMN_TYPE (tinyint(1)).
type MySQLColumn struct {
	Name, DataType, ColumnType, Key, Comment string
}

// tableDefs are the information_schema tables, with MySQL's column names.
// Statistics columns exist (clients select them) and are always NULL.
var tableDefs = []struct{ name, cols string }{
	{"schemata", "CATALOG_NAME TEXT, SCHEMA_NAME TEXT, DEFAULT_CHARACTER_SET_NAME TEXT, DEFAULT_COLLATION_NAME TEXT, SQL_PATH TEXT"},
	{"tables", "TABLE_CATALOG TEXT, TABLE_SCHEMA TEXT, TABLE_NAME TEXT, TABLE_TYPE TEXT, ENGINE TEXT, VERSION INTEGER, ROW_FORMAT TEXT, " +
		"TABLE_ROWS INTEGER, AVG_ROW_LENGTH INTEGER, DATA_LENGTH INTEGER, MAX_DATA_LENGTH INTEGER, INDEX_LENGTH INTEGER, DATA_FREE INTEGER, " +
		"AUTO_INCREMENT INTEGER, CREATE_TIME TEXT, UPDATE_TIME TEXT, CHECK_TIME TEXT, TABLE_COLLATION TEXT, CHECKSUM INTEGER, CREATE_OPTIONS TEXT, TABLE_COMMENT TEXT"},
	{"columns", "TABLE_CATALOG TEXT, TABLE_SCHEMA TEXT, TABLE_NAME TEXT, COLUMN_NAME TEXT, ORDINAL_POSITION INTEGER, COLUMN_DEFAULT TEXT, " +
		"IS_NULLABLE TEXT, DATA_TYPE TEXT, CHARACTER_MAXIMUM_LENGTH INTEGER, CHARACTER_OCTET_LENGTH INTEGER, NUMERIC_PRECISION INTEGER, " +
		"NUMERIC_SCALE INTEGER, DATETIME_PRECISION INTEGER, CHARACTER_SET_NAME TEXT, COLLATION_NAME TEXT, COLUMN_TYPE TEXT, COLUMN_KEY TEXT, " +
		"EXTRA TEXT, PRIVILEGES TEXT, COLUMN_COMMENT TEXT, GENERATION_EXPRESSION TEXT"},
	{"statistics", "TABLE_CATALOG TEXT, TABLE_SCHEMA TEXT, TABLE_NAME TEXT, NON_UNIQUE INTEGER, INDEX_SCHEMA TEXT, INDEX_NAME TEXT, SEQ_IN_INDEX INTEGER, " +
		"COLUMN_NAME TEXT, COLLATION TEXT, CARDINALITY INTEGER, SUB_PART INTEGER, PACKED TEXT, NULLABLE TEXT, INDEX_TYPE TEXT, COMMENT TEXT, INDEX_COMMENT TEXT"},
	{"key_column_usage", "CONSTRAINT_CATALOG TEXT, CONSTRAINT_SCHEMA TEXT, CONSTRAINT_NAME TEXT, TABLE_CATALOG TEXT, TABLE_SCHEMA TEXT, TABLE_NAME TEXT, " +
		"COLUMN_NAME TEXT, ORDINAL_POSITION INTEGER, POSITION_IN_UNIQUE_CONSTRAINT INTEGER, REFERENCED_TABLE_SCHEMA TEXT, REFERENCED_TABLE_NAME TEXT, REFERENCED_COLUMN_NAME TEXT"},
	{"table_constraints", "CONSTRAINT_CATALOG TEXT, CONSTRAINT_SCHEMA TEXT, CONSTRAINT_NAME TEXT, TABLE_SCHEMA TEXT, TABLE_NAME TEXT, CONSTRAINT_TYPE TEXT"},
	{"referential_constraints", "CONSTRAINT_CATALOG TEXT, CONSTRAINT_SCHEMA TEXT, CONSTRAINT_NAME TEXT, UNIQUE_CONSTRAINT_CATALOG TEXT, " +
		"UNIQUE_CONSTRAINT_SCHEMA TEXT, UNIQUE_CONSTRAINT_NAME TEXT, MATCH_OPTION TEXT, UPDATE_RULE TEXT, DELETE_RULE TEXT, TABLE_NAME TEXT, REFERENCED_TABLE_NAME TEXT"},
	{"views", "TABLE_CATALOG TEXT, TABLE_SCHEMA TEXT, TABLE_NAME TEXT, VIEW_DEFINITION TEXT, CHECK_OPTION TEXT, IS_UPDATABLE TEXT, DEFINER TEXT, SECURITY_TYPE TEXT, " +
		"CHARACTER_SET_CLIENT TEXT, COLLATION_CONNECTION TEXT"},
	{"routines", "SPECIFIC_NAME TEXT, ROUTINE_CATALOG TEXT, ROUTINE_SCHEMA TEXT, ROUTINE_NAME TEXT, ROUTINE_TYPE TEXT, DATA_TYPE TEXT, ROUTINE_COMMENT TEXT"},
	{"parameters", "SPECIFIC_CATALOG TEXT, SPECIFIC_SCHEMA TEXT, SPECIFIC_NAME TEXT, ORDINAL_POSITION INTEGER, PARAMETER_MODE TEXT, PARAMETER_NAME TEXT, DATA_TYPE TEXT"},
	{"triggers", "TRIGGER_CATALOG TEXT, TRIGGER_SCHEMA TEXT, TRIGGER_NAME TEXT, EVENT_MANIPULATION TEXT, EVENT_OBJECT_SCHEMA TEXT, EVENT_OBJECT_TABLE TEXT"},
	{"character_sets", "CHARACTER_SET_NAME TEXT, DEFAULT_COLLATE_NAME TEXT, DESCRIPTION TEXT, MAXLEN INTEGER"},
	{"collations", "COLLATION_NAME TEXT, CHARACTER_SET_NAME TEXT, ID INTEGER, IS_DEFAULT TEXT, IS_COMPILED TEXT, SORTLEN INTEGER"},
	{"engines", "ENGINE TEXT, SUPPORT TEXT, COMMENT TEXT, TRANSACTIONS TEXT, XA TEXT, SAVEPOINTS TEXT"},
}

// QueryMySQL runs sql (a SELECT over information_schema, already vetted by
// the session) with args bound to its ? markers.
//
// The columns are typed in the proxy's vocabulary (ir.ColType): SQLite's
// declared type where it has one, else what the values are (typeComputed).
func QueryMySQL(ctx context.Context, sql string, args []ir.Value, database string, tables []MySQLTable) ([]ir.Column, [][]ir.Value, error) {
	db, err := driver.Open("file:ddp-information-schema?mode=memory", func(c *sqlite3.Conn) error {
		for _, name := range []string{"database", "schema"} {
			if err := c.CreateFunction(name, 0, sqlite3.DETERMINISTIC, func(ctx sqlite3.Context, _ ...sqlite3.Value) {
				ctx.ResultText(database)
			}); err != nil {
				return err
			}
		}
		return mysqlFunctions(c)
	})
	if err != nil {
		return nil, nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: catalog database")
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database, one connection
	if err := load(ctx, db, database, tables); err != nil {
		return nil, nil, sqlerr.Wrap(sqlerr.Internal, err, "internal error: catalog database")
	}
	bound := make([]any, len(args))
	for i, a := range args {
		switch a.Kind {
		case ir.KindInt:
			bound[i] = a.Int
		case ir.KindFloat:
			bound[i] = a.Float
		case ir.KindString:
			bound[i] = a.Str
		case ir.KindBool:
			bound[i] = a.Bool
		case ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
			bound[i] = ir.CanonicalText(a.Kind, a.Int) // a typed date parameter, as text
		}
	}
	rows, err := db.QueryContext(ctx, rewriteConvert(sql), bound...)
	if err != nil {
		// SQLite's message names the construct it lacks; the database
		// holds the policy's catalog only, so nothing private can leak.
		return nil, nil, sqlerr.Wrap(sqlerr.FeatureNotSupported, err,
			fmt.Sprintf("this information_schema query cannot be answered on a non-MySQL backend (%s)", shortMessage(err))).
			WithHint("SHOW TABLES, SHOW COLUMNS FROM t and DESCRIBE t list what the policy exposes")
	}
	defer rows.Close()
	var cols []backends.ColumnInfo
	var out [][]ir.Value
	err = backends.DecodeRows(rows, func(c []backends.ColumnInfo) func([]ir.Value) error {
		cols = c
		return func(row []ir.Value) error { out = append(out, row); return nil }
	}, func(err error) error { return sqlerr.Wrap(sqlerr.Internal, err, "internal error: catalog query") })
	if err != nil {
		return nil, nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, nil, sqlerr.Wrap(sqlerr.FeatureNotSupported, err, "this information_schema query cannot be answered on a non-MySQL backend")
	}
	typeComputed(cols, out)
	res := make([]ir.Column, len(cols))
	for i, c := range cols {
		res[i] = ir.Column{Name: c.Name, Type: backends.ResultType(c.Type)}
	}
	return res, out, nil
}

// typeComputed types the columns SQLite declares no type for (COUNT(*),
// arithmetic) from their values, as MySQL would type them: BIGINT when
// every value is an integer, DOUBLE when every value is a number. Sent as
// text instead, COUNT(*) reads "0", which clients take for true
// (SQLAlchemy's has_table, and so pandas read_sql, which first asks
// whether the query text names a table).
func typeComputed(cols []backends.ColumnInfo, rows [][]ir.Value) {
	for i := range cols {
		if cols[i].Type != "" {
			continue
		}
		ints, nums, seen := true, true, false
		for _, r := range rows {
			switch v := r[i]; {
			case v.IsNull():
				continue
			case v.Kind == ir.KindInt:
			case v.Kind == ir.KindFloat:
				ints = false
			default:
				ints, nums = false, false
			}
			seen = true
		}
		switch {
		case !seen:
		case ints:
			cols[i].Type = "BIGINT"
		case nums:
			cols[i].Type = "DOUBLE"
		}
	}
}

func shortMessage(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimPrefix(msg, "sqlite3: ")
}

// load creates information_schema (an attached in-memory schema, so the
// client's qualified names resolve) and fills it.
func load(ctx context.Context, db *sql.DB, database string, tables []MySQLTable) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ':memory:' AS information_schema"); err != nil {
		return err
	}
	for _, t := range tableDefs {
		if _, err := conn.ExecContext(ctx, "CREATE TABLE information_schema."+t.name+" ("+t.cols+")"); err != nil {
			return err
		}
	}
	exec := func(q string, args ...any) error {
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	}
	if err := exec(`INSERT INTO information_schema.schemata VALUES ('def', ?, 'utf8mb4', 'utf8mb4_general_ci', NULL), ('def', 'information_schema', 'utf8', 'utf8_general_ci', NULL)`, database); err != nil {
		return err
	}
	// A table declared in a schema of its own is shown in that database
	// (where db.table names it in queries).
	schemaOf := func(t MySQLTable) string {
		if t.Schema == "" {
			return database
		}
		return t.Schema
	}
	seen := map[string]bool{strings.ToLower(database): true, "information_schema": true}
	for _, t := range tables {
		if s := schemaOf(t); !seen[strings.ToLower(s)] {
			seen[strings.ToLower(s)] = true
			if err := exec(`INSERT INTO information_schema.schemata VALUES ('def', ?, 'utf8mb4', 'utf8mb4_general_ci', NULL)`, s); err != nil {
				return err
			}
		}
	}
	if err := exec(`INSERT INTO information_schema.character_sets VALUES ('utf8mb4', 'utf8mb4_general_ci', 'UTF-8 Unicode', 4)`); err != nil {
		return err
	}
	if err := exec(`INSERT INTO information_schema.collations VALUES ('utf8mb4_general_ci', 'utf8mb4', 45, 'Yes', 'Yes', 1)`); err != nil {
		return err
	}
	if err := exec(`INSERT INTO information_schema.engines VALUES ('InnoDB', 'DEFAULT', 'read-only through ddp-proxy', 'YES', 'NO', 'NO')`); err != nil {
		return err
	}
	for _, t := range tables {
		if err := exec(`INSERT INTO information_schema.tables (TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, VERSION, ROW_FORMAT,
TABLE_COLLATION, CREATE_OPTIONS, TABLE_COMMENT) VALUES ('def', ?, ?, 'BASE TABLE', 'InnoDB', 10, 'Dynamic', 'utf8mb4_general_ci', '', ?)`,
			schemaOf(t), t.Name, t.Comment); err != nil {
			return err
		}
		for i, c := range t.Columns {
			var charLen, octets, precision, scale, charset, collation any
			switch c.DataType {
			case "text":
				charLen, octets, charset, collation = 65535, 65535, "utf8mb4", "utf8mb4_general_ci"
			case "bigint":
				precision, scale = 19, 0
			case "tinyint":
				precision, scale = 3, 0
			case "double":
				precision = 22
			}
			if err := exec(`INSERT INTO information_schema.columns VALUES ('def', ?, ?, ?, ?, NULL, 'YES', ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, '', 'select', ?, '')`,
				schemaOf(t), t.Name, c.Name, i+1, c.DataType, charLen, octets, precision, scale, charset, collation, c.ColumnType, c.Key, c.Comment); err != nil {
				return err
			}
		}
	}
	return nil
}

// mysqlFunctions defines the MySQL string functions connectors' metadata
// queries use that SQLite lacks (MariaDB Connector/J's getColumns uses
// LOCATE and UCASE).
func mysqlFunctions(c *sqlite3.Conn) error {
	text := func(v sqlite3.Value) (string, bool) {
		if v.Type() == sqlite3.NULL {
			return "", false
		}
		return v.Text(), true
	}
	locate := func(ctx sqlite3.Context, arg ...sqlite3.Value) {
		sub, ok1 := text(arg[0])
		str, ok2 := text(arg[1])
		if !ok1 || !ok2 {
			ctx.ResultNull()
			return
		}
		start := 1
		if len(arg) == 3 {
			start = int(arg[2].Int64())
		}
		if start < 1 || start > len(str)+1 {
			ctx.ResultInt64(0)
			return
		}
		i := strings.Index(strings.ToLower(str[start-1:]), strings.ToLower(sub))
		if i < 0 {
			ctx.ResultInt64(0)
			return
		}
		ctx.ResultInt64(int64(start + i))
	}
	fold := func(f func(string) string) sqlite3.ScalarFunction {
		return func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			if s, ok := text(arg[0]); ok {
				ctx.ResultText(f(s))
			} else {
				ctx.ResultNull()
			}
		}
	}
	extreme := func(less bool) sqlite3.ScalarFunction {
		return func(ctx sqlite3.Context, arg ...sqlite3.Value) {
			best := -1
			for i, a := range arg {
				if a.Type() == sqlite3.NULL {
					ctx.ResultNull()
					return
				}
				if best < 0 || (a.Float() < arg[best].Float()) == less && a.Float() != arg[best].Float() {
					best = i
				}
			}
			if best < 0 {
				ctx.ResultNull()
				return
			}
			ctx.ResultValue(arg[best])
		}
	}
	// The clock, for Metabase's time-zone probe SELECT
	// time_format(timediff(now(), utc_timestamp()), '%H:%i'): the session's
	// time zone is UTC, so now() is utc_timestamp().
	clock := func(ctx sqlite3.Context, _ ...sqlite3.Value) {
		ctx.ResultText(time.Now().UTC().Format(time.DateTime))
	}
	timediff := func(ctx sqlite3.Context, arg ...sqlite3.Value) {
		a, ok1 := text(arg[0])
		b, ok2 := text(arg[1])
		ta, err1 := time.Parse(time.DateTime, a)
		tb, err2 := time.Parse(time.DateTime, b)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			ctx.ResultNull()
			return
		}
		d := ta.Sub(tb).Round(time.Second)
		sign := ""
		if d < 0 {
			sign, d = "-", -d
		}
		h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
		ctx.ResultText(fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, sec))
	}
	timeFormat := func(ctx sqlite3.Context, arg ...sqlite3.Value) {
		t, ok1 := text(arg[0])
		f, ok2 := text(arg[1])
		if !ok1 || !ok2 {
			ctx.ResultNull()
			return
		}
		sign := ""
		if strings.HasPrefix(t, "-") {
			sign, t = "-", t[1:]
		}
		parts := strings.SplitN(t, ":", 3)
		if len(parts) != 3 {
			ctx.ResultNull()
			return
		}
		sec, _, _ := strings.Cut(parts[2], ".")
		r := strings.NewReplacer("%H", parts[0], "%k", strings.TrimPrefix(parts[0], "0"), "%i", parts[1], "%s", sec, "%S", sec, "%%", "%")
		ctx.ResultText(sign + r.Replace(f))
	}
	for _, f := range []struct {
		name string
		n    int
		fn   sqlite3.ScalarFunction
	}{
		{"locate", 2, locate}, {"locate", 3, locate},
		{"ucase", 1, fold(strings.ToUpper)}, {"lcase", 1, fold(strings.ToLower)},
		{"least", -1, extreme(true)}, {"greatest", -1, extreme(false)},
		{"now", 0, clock}, {"utc_timestamp", 0, clock}, {"current_timestamp", 0, clock},
		{"timediff", 2, timediff}, {"time_format", 2, timeFormat},
	} {
		if err := c.CreateFunction(f.name, f.n, sqlite3.DETERMINISTIC, f.fn); err != nil {
			return err
		}
	}
	return nil
}

// rewriteConvert turns MySQL's CONVERT(expr, type) into CAST(expr AS
// type), which SQLite understands (Connector/J writes CONVERT(...,
// UNSIGNED INTEGER)). CONVERT(expr USING charset) is left alone.
func rewriteConvert(sql string) string {
	lower := strings.ToLower(maskStrings(sql))
	var b strings.Builder
	last := 0
	for i := 0; i < len(sql); {
		j := strings.Index(lower[i:], "convert")
		if j < 0 {
			break
		}
		k := i + j
		if k > 0 && isIdentByte(lower[k-1]) || k+7 < len(lower) && isIdentByte(lower[k+7]) {
			i = k + 7
			continue
		}
		p := k + 7
		for p < len(sql) && sql[p] == ' ' {
			p++
		}
		if p >= len(sql) || sql[p] != '(' {
			i = k + 7
			continue
		}
		end, comma := matchParen(sql, p)
		if end < 0 || comma < 0 {
			i = k + 7
			continue
		}
		b.WriteString(sql[last:k])
		b.WriteString("CAST(" + rewriteConvert(sql[p+1:comma]) + " AS " + strings.TrimSpace(sql[comma+1:end]) + ")")
		last = end + 1
		i = end + 1
	}
	b.WriteString(sql[last:])
	return b.String()
}

// maskStrings blanks the contents of quoted strings and identifiers,
// keeping every byte offset.
func maskStrings(s string) string {
	b := []byte(s)
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote == 0 && (c == '\'' || c == '"' || c == '`'):
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

// matchParen returns the index of the parenthesis closing the one at open,
// and of the last comma at its top level (-1 when none).
func matchParen(s string, open int) (end, comma int) {
	depth, comma := 0, -1
	var quote byte
	for i := open; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i, comma
			}
		case c == ',' && depth == 1:
			comma = i
		}
	}
	return -1, -1
}

func isIdentByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z'
}
