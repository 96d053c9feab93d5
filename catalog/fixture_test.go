package catalog

// smallRelations is a hand-written description of three catalog relations
// with statistics columns, cut down from PostgreSQL 15's so that the
// expected rewrites in the tests can be written out by hand. The real
// description is read from the server (backends/postgres) and used by the
// session tests against PostgreSQL.
func smallRelations() *Relations {
	col := func(name, typ string) Column {
		return Column{Name: name, TypeSchema: "pg_catalog", Type: typ}
	}
	return NewRelations([]Relation{
		{Schema: "pg_catalog", Name: "pg_class", Columns: []Column{
			col("oid", "oid"), col("relname", "name"), col("relnamespace", "oid"), col("relpages", "int4"),
			col("reltuples", "float4"), col("relkind", "char"), col("relfrozenxid", "xid"),
		}},
		{Schema: "pg_catalog", Name: "pg_database", Columns: []Column{
			col("oid", "oid"), col("datname", "name"), col("datfrozenxid", "xid"),
		}},
		{Schema: "pg_catalog", Name: "pg_sequences", Columns: []Column{
			col("schemaname", "name"), col("sequencename", "name"), col("last_value", "int8"),
		}},
	})
}
