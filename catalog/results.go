package catalog

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// The functions below are the last line of the catalog rules, applied to
// the rows a pass-through statement returns: by column name, whatever the
// statement was. They never add a value; they only blank or drop.

// Blank sets every statistics column (IsStatistics) of a result to NULL:
// SELECT * FROM pg_class or information_schema.TABLES keeps the column,
// which clients expect, without its value.
func Blank(columns []string, rows [][]ir.Value) {
	stats := StatisticsIndexes(columns)
	for _, row := range rows {
		BlankRow(stats, row)
	}
}

// StatisticsIndexes returns the positions of a result's statistics
// columns, for BlankRow on rows streamed one at a time.
func StatisticsIndexes(columns []string) []int {
	var stats []int
	for i, c := range columns {
		if IsStatistics(c) {
			stats = append(stats, i)
		}
	}
	return stats
}

// BlankRow sets a row's values at stats (StatisticsIndexes) to NULL.
func BlankRow(stats []int, row []ir.Value) {
	for _, i := range stats {
		row[i] = ir.Null()
	}
}

// keepRows returns the rows keep accepts (all when keep is nil), in rows'
// backing array.
func keepRows(rows [][]ir.Value, keep func(row []ir.Value) bool) [][]ir.Value {
	if keep == nil {
		return rows
	}
	kept := rows[:0]
	for _, row := range rows {
		if keep(row) {
			kept = append(kept, row)
		}
	}
	return kept
}

// tableNameColumns are catalog result columns that name a relation, with
// the column that names its schema in the same catalog.
var tableNameColumns = map[string][]string{
	"relname": {"nspname"}, "table_name": {"table_schema", "table_schem"}, "tablename": {"schemaname"}, "viewname": {"schemaname"},
}

// systemSchema reports whether a schema belongs to the server itself.
func systemSchema(s string) bool {
	s = strings.ToLower(s)
	return s == "pg_catalog" || s == "information_schema" || strings.HasPrefix(s, "pg_toast") || strings.HasPrefix(s, "pg_temp")
}

// declaresTableNamed reports whether pol declares a table of this name in
// any schema.
func declaresTableNamed(pol *policies.Policy, name string) bool {
	for _, dn := range pol.DatasetNames {
		if _, ok := pol.Datasets[dn].Tables[strings.ToLower(name)]; ok {
			return true
		}
	}
	return false
}

// HideUnexposed drops the rows of a catalog result that name a relation
// the policy does not declare (outside the system schemas), so table
// listings (information_schema.tables, pg_class, pg_tables, SQLAlchemy's
// inspector) show only what analysts may query. Relations whose schema is
// not in the result are judged by name alone: unknown names are hidden
// unless they look like system relations (pg_ prefix) or shown reports
// them (a backend's indexes over declared columns; nil: none). It returns
// the rows kept, in rows' backing array.
func HideUnexposed(pol *policies.Policy, columns []string, rows [][]ir.Value, shown func(name string) bool) [][]ir.Value {
	return keepRows(rows, ExposedRows(pol, columns, shown))
}

// ExposedRows returns HideUnexposed's test of one row of a result with
// these columns, decided once per result: nil when no column names a
// relation (every row is kept).
func ExposedRows(pol *policies.Policy, columns []string, shown func(name string) bool) func(row []ir.Value) bool {
	nameCol, schemaCol := -1, -1
	for i, c := range columns {
		if scs, ok := tableNameColumns[strings.ToLower(c)]; ok && nameCol < 0 {
			nameCol = i
			for j, c2 := range columns {
				for _, sc := range scs {
					if strings.EqualFold(c2, sc) {
						schemaCol = j
					}
				}
			}
		}
	}
	if nameCol < 0 {
		// psql's listings (\dt+, \d+, \dv...) alias the columns "Schema"
		// and "Name"; a lone "name" column elsewhere (pg_settings) is not
		// a relation name.
		for i, c := range columns {
			switch c {
			case "Name":
				nameCol = i
			case "Schema":
				schemaCol = i
			}
		}
		if nameCol < 0 || schemaCol < 0 {
			return nil
		}
	}
	return func(row []ir.Value) bool {
		name := row[nameCol].Text()
		schema := ""
		if schemaCol >= 0 {
			schema = row[schemaCol].Text()
		}
		switch {
		case schemaCol >= 0 && systemSchema(schema):
			return true
		case schemaCol < 0 && strings.HasPrefix(strings.ToLower(name), "pg_"):
			return true
		case schemaCol < 0:
			// No schema in the result (SQLAlchemy's table list filters
			// by schema in WHERE): a table of that name in any schema.
			return declaresTableNamed(pol, name) || (shown != nil && shown(name))
		}
		_, t := pol.LookupTable(schema, name)
		return t != nil
	}
}

// HideUndeclaredColumns drops the rows of a result that lists columns
// (information_schema.COLUMNS and the like: TABLE_NAME and COLUMN_NAME)
// naming a column of a declared table that the policy does not list, as
// DESCRIBE hides them (the privacy unit is named in the policy and
// stays). A private table without a column list shows none: only a
// public one shows the backend's columns (emulated.Describe). It returns
// the rows kept, in rows' backing array.
func HideUndeclaredColumns(pol *policies.Policy, columns []string, rows [][]ir.Value) [][]ir.Value {
	return keepRows(rows, DeclaredColumnRows(pol, columns))
}

// DeclaredColumnRows returns HideUndeclaredColumns's test of one row of a
// result with these columns, decided once per result: nil when the result
// does not list columns (every row is kept).
func DeclaredColumnRows(pol *policies.Policy, columns []string) func(row []ir.Value) bool {
	tableCol, schemaCol, columnCol := -1, -1, -1
	for i, c := range columns {
		switch strings.ToLower(c) {
		case "table_name":
			tableCol = i
		case "table_schema":
			schemaCol = i
		case "column_name":
			columnCol = i
		}
	}
	if tableCol < 0 || columnCol < 0 {
		return nil
	}
	return func(row []ir.Value) bool {
		schema := ""
		if schemaCol >= 0 {
			schema = row[schemaCol].Text()
		}
		_, t := pol.LookupTable(schema, row[tableCol].Text())
		col := strings.ToLower(row[columnCol].Text())
		switch {
		case t == nil, len(t.ColumnNames) == 0 && t.Public:
			return true
		case len(t.ColumnNames) == 0, t.Columns[col] == nil && !strings.EqualFold(col, t.Unit):
			return false
		}
		return true
	}
}
