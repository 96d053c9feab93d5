package emulated

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Exposed is one table as every emulated catalog shows it. Describe
// builds the list once from the policy (and, for a public table that
// declares no columns, the backend); PGTables and MySQLTables only
// translate it into each dialect's types, so both emulations always show
// the same tables and columns.
type Exposed struct {
	// Schema is the schema (PostgreSQL) or database (MySQL) the client's
	// catalog shows the table under (policies.Policy.CatalogSchema).
	Schema, Name string
	// Comment says whether the table is private and its privacy unit.
	Comment string
	Columns []ExposedColumn
}

// ExposedColumn is one column of an Exposed table.
type ExposedColumn struct {
	Name string
	// PolicyType is the declared type (policies.Type*); "" for a column
	// read from the backend, whose declared type is BackendType.
	PolicyType, BackendType string
	// Key is "PRI" for a public table's key column.
	Key string
	// Comment lists what the policy says of the column (privacy unit,
	// bounds, groupable).
	Comment string
}

// ColumnLister is a backend that can describe a table.
type ColumnLister interface {
	Columns(ctx context.Context, schema, table string) ([]backends.ColumnInfo, error)
}

// Describe is the one builder of the emulated catalogs' contents: every
// table of tables (in order) with the columns the policy exposes — its
// declared columns, or all of the backend's for a public table that
// declares none (lister may be nil when no such table exists). Nothing
// about the data is read.
func Describe(ctx context.Context, pol *policies.Policy, names policies.Names, tables []*policies.Table, lister ColumnLister) ([]Exposed, error) {
	out := make([]Exposed, 0, len(tables))
	for _, t := range tables {
		e := Exposed{Schema: pol.CatalogSchema(names, t), Name: t.Name, Comment: "private table, privacy unit " + t.Unit}
		if t.Public {
			e.Comment = "public table"
		}
		for _, cn := range t.ColumnNames {
			c := t.Columns[cn]
			col := ExposedColumn{Name: cn, PolicyType: c.Type}
			var notes []string
			if !t.Public && strings.EqualFold(cn, t.Unit) {
				notes = append(notes, "privacy unit")
			}
			if t.Public && strings.EqualFold(cn, t.Key) {
				col.Key = "PRI"
			}
			if len(c.Bounds) == 2 {
				notes = append(notes, "bounds "+strconv.FormatFloat(c.Bounds[0], 'g', -1, 64)+".."+strconv.FormatFloat(c.Bounds[1], 'g', -1, 64))
			}
			if c.Domain != nil {
				notes = append(notes, "groupable")
			}
			col.Comment = strings.Join(notes, ", ")
			e.Columns = append(e.Columns, col)
		}
		if len(t.ColumnNames) == 0 && t.Public {
			if lister == nil {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the %s backend cannot describe table %s for the emulated catalog", pol.Backend.Driver, t.Name)
			}
			cols, err := lister.Columns(ctx, t.Schema, t.Name)
			if err != nil {
				return nil, err
			}
			for _, c := range cols {
				col := ExposedColumn{Name: c.Name, BackendType: c.Type}
				if strings.EqualFold(c.Name, t.Key) {
					col.Key = "PRI"
				}
				e.Columns = append(e.Columns, col)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// PGTables is es as the emulated PostgreSQL catalog holds it: PostgreSQL
// types, lower-case backend column names.
func PGTables(es []Exposed) []Table {
	out := make([]Table, 0, len(es))
	for _, e := range es {
		t := Table{Schema: e.Schema, Name: e.Name}
		for _, c := range e.Columns {
			if c.PolicyType == "" {
				t.Columns = append(t.Columns, Column{Name: strings.ToLower(c.Name), TypeOID: TypeForBackend(c.BackendType)})
				continue
			}
			t.Columns = append(t.Columns, Column{Name: c.Name, TypeOID: PolicyTypeOID(c.PolicyType)})
		}
		out = append(out, t)
	}
	return out
}

// MySQLTables is es as the emulated MySQL information_schema holds it:
// MySQL's DATA_TYPE and COLUMN_TYPE.
func MySQLTables(es []Exposed) []MySQLTable {
	out := make([]MySQLTable, 0, len(es))
	for _, e := range es {
		t := MySQLTable{Schema: e.Schema, Name: e.Name, Comment: e.Comment}
		for _, c := range e.Columns {
			ct := strings.ToLower(c.BackendType)
			if c.PolicyType != "" {
				ct = MySQLTypeName(c.PolicyType)
			}
			dt := ct
			if i := strings.IndexByte(dt, '('); i >= 0 {
				dt = dt[:i]
			}
			t.Columns = append(t.Columns, MySQLColumn{Name: c.Name, DataType: dt, ColumnType: ct, Key: c.Key, Comment: c.Comment})
		}
		out = append(out, t)
	}
	return out
}

// A declared column is presented as the type the proxy sends its values
// in (policies.ResultType, the one mapping from policy types); these are
// that type's names in each emulated catalog. Anything else is text.
var (
	pgTypeOID = map[ir.ColType]int64{
		ir.TypeInt8: OIDInt8, ir.TypeFloat8: OIDFloat8, ir.TypeBool: OIDBool,
		ir.TypeDate: OIDDate, ir.TypeTimestamp: OIDTimestamp, ir.TypeTimestampTZ: OIDTimestampTZ,
	}
	mysqlTypeName = map[ir.ColType]string{
		ir.TypeInt8: "bigint", ir.TypeFloat8: "double", ir.TypeBool: "tinyint(1)",
		ir.TypeDate: "date", ir.TypeTimestamp: "datetime(6)", ir.TypeTimestampTZ: "datetime(6)",
	}
)

// PolicyTypeOID is the PostgreSQL type a declared column is presented as.
func PolicyTypeOID(t string) int64 {
	if oid, ok := pgTypeOID[policies.ResultType(t)]; ok {
		return oid
	}
	return OIDText
}

// MySQLTypeName is the MySQL column type a declared column is presented
// as (DESCRIBE's Type, information_schema's COLUMN_TYPE).
func MySQLTypeName(policyType string) string {
	if n, ok := mysqlTypeName[policies.ResultType(policyType)]; ok {
		return n
	}
	return "text"
}

// AllTables is every table the policy declares, by name (datasets in
// order for equal names): what both emulated catalogs list.
func AllTables(pol *policies.Policy) []*policies.Table {
	var out []*policies.Table
	for _, dn := range pol.DatasetNames {
		for _, t := range pol.Datasets[dn].Tables {
			if t != nil {
				out = append(out, t)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *policies.Table) int { return strings.Compare(a.Name, b.Name) })
	return out
}
