package catalog

import "testing"

func TestPostgresRelation(t *testing.T) {
	for _, tt := range []struct {
		schema, name string
		want         Rule
	}{
		{"pg_catalog", "pg_namespace", Definitions},
		{"", "pg_attribute", Definitions},
		{"PG_CATALOG", "PG_TYPE", Definitions},
		{"pg_catalog", "pg_statistic_ext", Definitions},
		{"information_schema", "columns", Definitions},
		{"information_schema", "TABLES", Definitions},
		{"", "pg_class", Blanked},
		{"pg_catalog", "pg_database", Blanked},
		{"pg_catalog", "pg_sequences", Blanked},
		{"", "pg_statistic", Statistics},
		{"", "pg_statistic_ext_data", Statistics},
		{"pg_catalog", "pg_stats", Statistics},
		{"", "pg_stat_user_tables", Statistics},
		{"", "pg_statio_user_tables", Statistics},
		{"", "pg_stat_io", Statistics}, // PostgreSQL 16: by prefix
		{"", "pg_stat_activity", Activity},
		{"", "pg_locks", Activity},
		{"", "pg_prepared_xacts", Activity},
		{"", "pg_authid", Secret},
		{"information_schema", "user_mapping_options", Secret},
		{"", "pg_some_future_view", Unknown},
		{"information_schema", "statistics", Unknown}, // MySQL's, not PostgreSQL's
		{"public", "pg_class", Unknown},
	} {
		if got := PostgresRelation(tt.schema, tt.name); got != tt.want {
			t.Errorf("%s.%s: rule %d, want %d", tt.schema, tt.name, got, tt.want)
		}
	}
}

func TestRelationsLookup(t *testing.T) {
	var none *Relations
	if none.Lookup("pg_catalog", "pg_class") != nil || none.Len() != 0 {
		t.Fatal("a nil description describes something")
	}
	r := NewRelations([]Relation{{Schema: "pg_catalog", Name: "pg_class", Columns: []Column{{Name: "reltuples", TypeSchema: "pg_catalog", Type: "float4"}}}})
	if got := r.Lookup("pg_catalog", "pg_class"); got == nil || got.Columns[0].Type != "float4" {
		t.Fatalf("lookup: %+v", got)
	}
	// PostgreSQL stores names exactly: "PG_CLASS" is another relation.
	if r.Lookup("pg_catalog", "PG_CLASS") != nil || r.Lookup("", "pg_class") != nil {
		t.Fatal("lookup is not exact")
	}
}
