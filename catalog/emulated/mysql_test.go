package emulated

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

var mysqlTables = []MySQLTable{
	{Name: "people", Comment: "private table, privacy unit id", Columns: []MySQLColumn{
		{Name: "age", DataType: "bigint", ColumnType: "bigint", Comment: "bounds 0..100"},
		{Name: "sex", DataType: "text", ColumnType: "text"},
		{Name: "member", DataType: "tinyint", ColumnType: "tinyint(1)"},
	}},
	{Name: "regions", Comment: "public table", Columns: []MySQLColumn{{Name: "id", DataType: "bigint", ColumnType: "bigint", Key: "PRI"}}},
}

func TestQueryMySQL(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		args []ir.Value
		want [][]string
	}{
		{"tables of the database", "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME",
			nil, [][]string{{"people", "BASE TABLE"}, {"regions", "BASE TABLE"}}},
		{"statistics are NULL", "SELECT `TABLE_ROWS`, DATA_LENGTH, AUTO_INCREMENT FROM `information_schema`.`tables` WHERE table_name = 'people'",
			nil, [][]string{{"NULL", "NULL", "NULL"}}},
		{"columns with a bound parameter", "SELECT COLUMN_NAME, DATA_TYPE, ORDINAL_POSITION FROM information_schema.COLUMNS WHERE TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
			[]ir.Value{ir.String("people")}, [][]string{{"age", "bigint", "1"}, {"sex", "text", "2"}, {"member", "tinyint", "3"}}},
		{"Connector/J type name", "SELECT UCASE(IF(COLUMN_TYPE LIKE '%(%)%', CONCAT(SUBSTRING(COLUMN_TYPE, 1, LOCATE('(', COLUMN_TYPE) - 1), SUBSTRING(COLUMN_TYPE, 1 + LOCATE(')', COLUMN_TYPE))), COLUMN_TYPE)) FROM information_schema.columns WHERE column_name = 'member'",
			nil, [][]string{{"TINYINT"}}},
		{"CONVERT and LEAST", "SELECT CONVERT(CASE DATA_TYPE WHEN 'tinyint' THEN 0 ELSE NUMERIC_SCALE END, UNSIGNED INTEGER), LEAST(CHARACTER_MAXIMUM_LENGTH, 100), GREATEST(2, 7, 3) FROM information_schema.columns WHERE column_name = 'sex'",
			nil, [][]string{{"NULL", "100", "7"}}},
		{"schemata", "SELECT SCHEMA_NAME FROM information_schema.schemata ORDER BY 1", nil, [][]string{{"information_schema"}, {"shop"}}},
		{"primary key", "SELECT COLUMN_NAME FROM information_schema.columns WHERE COLUMN_KEY = 'PRI'", nil, [][]string{{"id"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, rows, err := QueryMySQL(context.Background(), tc.sql, tc.args, "shop", mysqlTables)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.want) {
				t.Fatalf("rows = %v, want %v", rows, tc.want)
			}
			for i, row := range rows {
				for j, v := range row {
					got := v.Text()
					if v.IsNull() {
						got = "NULL"
					}
					if got != tc.want[i][j] {
						t.Errorf("row %d col %d = %q, want %q", i, j, got, tc.want[i][j])
					}
				}
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	_, _, err := QueryMySQL(context.Background(), "SELECT nosuch FROM information_schema.tables", nil, "shop", mysqlTables)
	if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("unknown column: %v", err)
	}
}

func TestRewriteConvert(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT CONVERT(a, UNSIGNED INTEGER) x":           "SELECT CAST(a AS UNSIGNED INTEGER) x",
		"SELECT convert (f(a, b), SIGNED) FROM t":         "SELECT CAST(f(a, b) AS SIGNED) FROM t",
		"SELECT CONVERT(CONVERT(a, CHAR), SIGNED)":        "SELECT CAST(CAST(a AS CHAR) AS SIGNED)",
		"SELECT CONVERT(a USING utf8mb4), 'convert(x,y)'": "SELECT CONVERT(a USING utf8mb4), 'convert(x,y)'",
		"SELECT reconvert(a, b)":                          "SELECT reconvert(a, b)",
	} {
		if got := rewriteConvert(in); got != want {
			t.Errorf("rewriteConvert(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestComputedColumnTypes: a computed column (SQLite declares no type for
// it) is typed from its values, so SQLAlchemy's has_table reads COUNT(*)
// as the integer 0, not the string "0" (which Python takes for true).
func TestComputedColumnTypes(t *testing.T) {
	tests := []struct {
		sql  string
		want []ir.ColType
	}{
		{"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'shop' AND table_name = 'nope'", []ir.ColType{ir.TypeInt8}},
		{"SELECT COUNT(*), SUM(ORDINAL_POSITION) / 2.0, MAX(COLUMN_NAME), NULL FROM information_schema.columns", []ir.ColType{ir.TypeInt8, ir.TypeFloat8, ir.TypeText, ir.TypeText}},
	}
	for _, tc := range tests {
		cols, rows, err := QueryMySQL(context.Background(), tc.sql, nil, "shop", mysqlTables)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			if c.Type != tc.want[i] {
				t.Errorf("%s: column %d typed %v, want %v", tc.sql, i, c.Type, tc.want[i])
			}
		}
		if len(rows) != 1 || rows[0][0].Kind != ir.KindInt {
			t.Errorf("%s: %v, want one row starting with an integer", tc.sql, rows)
		}
	}
}
