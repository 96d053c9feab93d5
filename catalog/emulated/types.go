package emulated

import (
	"fmt"
	"strings"
)

// pgType is one row of the emulated pg_type (a built-in base type).
type pgType struct {
	oid      int64
	name     string // typname
	display  string // format_type's name
	length   int64  // typlen
	byVal    bool
	category string
	array    int64 // oid of the array type
	collate  bool  // collatable (typcollation = 100)
}

// builtinTypes are the base types the emulated catalog knows, with
// PostgreSQL's own OIDs (clients such as pgjdbc map OIDs to their types).
var builtinTypes = []pgType{
	{16, "bool", "boolean", 1, true, "B", 1000, false},
	{17, "bytea", "bytea", -1, false, "U", 1001, false},
	{18, "char", `"char"`, 1, true, "Z", 1002, false},
	{19, "name", "name", 64, false, "S", 1003, true},
	{20, "int8", "bigint", 8, true, "N", 1016, false},
	{21, "int2", "smallint", 2, true, "N", 1005, false},
	{22, "int2vector", "int2vector", -1, false, "A", 1006, false},
	{23, "int4", "integer", 4, true, "N", 1007, false},
	{24, "regproc", "regproc", 4, true, "N", 1008, false},
	{25, "text", "text", -1, false, "S", 1009, true},
	{26, "oid", "oid", 4, true, "N", 1028, false},
	{30, "oidvector", "oidvector", -1, false, "A", 1013, false},
	{114, "json", "json", -1, false, "U", 199, false},
	{700, "float4", "real", 4, true, "N", 1021, false},
	{701, "float8", "double precision", 8, true, "N", 1022, false},
	{1033, "aclitem", "aclitem", 12, false, "U", 1034, false},
	{1042, "bpchar", "character", -1, false, "S", 1014, true},
	{1043, "varchar", "character varying", -1, false, "S", 1015, true},
	{1082, "date", "date", 4, true, "D", 1182, false},
	{1083, "time", "time without time zone", 8, true, "D", 1183, false},
	{1114, "timestamp", "timestamp without time zone", 8, true, "D", 1115, false},
	{1184, "timestamptz", "timestamp with time zone", 8, true, "D", 1185, false},
	{1186, "interval", "interval", 16, false, "T", 1187, false},
	{1700, "numeric", "numeric", -1, false, "N", 1231, false},
	{2205, "regclass", "regclass", 4, true, "N", 2210, false},
	{2206, "regtype", "regtype", 4, true, "N", 2211, false},
	{2950, "uuid", "uuid", 16, false, "U", 2951, false},
	{3802, "jsonb", "jsonb", -1, false, "U", 3807, false},
}

// Type OIDs used when exposing tables.
const (
	OIDBool        = 16
	OIDInt8        = 20
	OIDInt4        = 23
	OIDText        = 25
	OIDFloat8      = 701
	OIDVarchar     = 1043
	OIDNumeric     = 1700
	OIDDate        = 1082
	OIDTimestamp   = 1114
	OIDTimestampTZ = 1184
	OIDBytea       = 17
)

func typeByOID(oid int64) (pgType, bool) {
	for _, t := range builtinTypes {
		if t.oid == oid {
			return t, true
		}
		if t.array == oid {
			return pgType{oid: t.array, name: "_" + t.name, display: t.display + "[]", length: -1, category: "A", collate: t.collate}, true
		}
	}
	return pgType{}, false
}

func typeByName(name string) (pgType, bool) {
	name = strings.ToLower(name)
	for _, t := range builtinTypes {
		if t.name == name || t.display == name {
			return t, true
		}
		if "_"+t.name == name || t.display+"[]" == name {
			a, _ := typeByOID(t.array)
			return a, true
		}
	}
	switch name {
	case "integer", "int":
		return typeByName("int4")
	case "smallint":
		return typeByName("int2")
	case "boolean":
		return typeByName("bool")
	}
	return pgType{}, false
}

// formatType is PostgreSQL's format_type(oid, typmod).
func formatType(oid, typmod int64) string {
	t, ok := typeByOID(oid)
	if !ok {
		return "???"
	}
	if typmod >= 0 {
		switch oid {
		case 1042, 1043:
			if typmod >= 4 {
				return fmt.Sprintf("%s(%d)", t.display, typmod-4)
			}
		case 1700:
			if typmod >= 4 {
				m := typmod - 4
				return fmt.Sprintf("numeric(%d,%d)", (m>>16)&0xffff, m&0xffff)
			}
		}
	}
	return t.display
}

// TypeForBackend maps a backend's declared column type (SQLite's declared
// type, MySQL's or PostgreSQL's data type) to the PostgreSQL type OID the
// proxy presents. Anything unrecognised is text, which is also what the
// proxy sends such values as.
func TypeForBackend(decl string) int64 {
	d := strings.ToUpper(strings.TrimSpace(decl))
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = strings.TrimSpace(d[:i])
	}
	switch {
	case d == "BOOLEAN" || d == "BOOL":
		return OIDBool
	case strings.Contains(d, "INT"):
		return OIDInt8
	case strings.Contains(d, "REAL") || strings.Contains(d, "FLOA") || strings.Contains(d, "DOUB"):
		return OIDFloat8
	case d == "NUMERIC" || d == "DECIMAL":
		return OIDNumeric
	case d == "DATE":
		return OIDDate
	case d == "TIMESTAMP" || d == "DATETIME" || d == "TIMESTAMP WITHOUT TIME ZONE":
		return OIDTimestamp
	case d == "TIMESTAMPTZ" || d == "TIMESTAMP WITH TIME ZONE":
		return OIDTimestampTZ
	case d == "BLOB" || d == "BYTEA":
		return OIDBytea
	}
	return OIDText
}
