package catalog

import "strings"

// Rule is what a pass-through statement to a PostgreSQL backend may do
// with one relation of the catalog schemas (pg_catalog,
// information_schema).
type Rule uint8

const (
	// Unknown relations are refused: the list below is an allow-list, so a
	// view that a new PostgreSQL version adds (and that may describe
	// statistics or other sessions) stays closed until it is reviewed.
	Unknown Rule = iota
	// Definitions: the relation holds only definitions (names, types,
	// ownership, options) and is forwarded as written.
	Definitions
	// Blanked: definitions plus statistics or activity columns (pg_class's
	// reltuples, pg_database's datfrozenxid, pg_sequences' last_value).
	// Every reference to it is replaced by a derived table that projects
	// its columns with those replaced by typed NULLs, so that no implicit
	// column reference (*, USING, NATURAL, row values, set operations) can
	// reach them.
	Blanked
	// Statistics: nothing but statistics about data (pg_statistic,
	// pg_stats, pg_stat_*, pg_statio_*). Refused.
	Statistics
	// Activity: what other sessions do or hold (pg_locks,
	// pg_stat_activity, pg_prepared_xacts, replication state). Refused.
	Activity
	// Secret: password hashes, connection strings, server files or raw
	// data (large objects). Refused.
	Secret
)

// pgRelations classifies every relation of pg_catalog (PostgreSQL 13 to
// 18) that a client may need, and the ones refused with a specific reason.
// Each Definitions entry was checked to hold no column about the amount,
// values or history of data and none about other sessions.
var pgRelations = map[string]Rule{
	// Base tables: the system catalogs proper.
	"pg_aggregate": Definitions, "pg_am": Definitions, "pg_amop": Definitions, "pg_amproc": Definitions,
	"pg_attrdef": Definitions, "pg_attribute": Definitions, "pg_auth_members": Definitions, "pg_cast": Definitions,
	"pg_collation": Definitions, "pg_constraint": Definitions, "pg_conversion": Definitions,
	"pg_db_role_setting": Definitions, "pg_default_acl": Definitions, "pg_depend": Definitions,
	"pg_description": Definitions, "pg_enum": Definitions, "pg_event_trigger": Definitions, "pg_extension": Definitions,
	"pg_foreign_data_wrapper": Definitions, "pg_foreign_server": Definitions, "pg_foreign_table": Definitions,
	"pg_index": Definitions, "pg_inherits": Definitions, "pg_init_privs": Definitions, "pg_language": Definitions,
	"pg_namespace": Definitions, "pg_opclass": Definitions, "pg_operator": Definitions, "pg_opfamily": Definitions,
	"pg_parameter_acl": Definitions, "pg_partitioned_table": Definitions, "pg_policy": Definitions, "pg_proc": Definitions,
	"pg_publication": Definitions, "pg_publication_namespace": Definitions, "pg_publication_rel": Definitions,
	"pg_range": Definitions, "pg_rewrite": Definitions, "pg_seclabel": Definitions, "pg_sequence": Definitions,
	"pg_shdepend": Definitions, "pg_shdescription": Definitions, "pg_shseclabel": Definitions,
	"pg_tablespace": Definitions, "pg_transform": Definitions, "pg_trigger": Definitions, "pg_ts_config": Definitions,
	"pg_ts_config_map": Definitions, "pg_ts_dict": Definitions, "pg_ts_parser": Definitions, "pg_ts_template": Definitions,
	"pg_type": Definitions,
	// pg_statistic_ext holds only the definitions of extended statistics
	// (columns, kinds), which psql's \d lists; their values are in
	// pg_statistic_ext_data.
	"pg_statistic_ext": Definitions,
	// Views over definitions.
	"pg_available_extension_versions": Definitions, "pg_available_extensions": Definitions, "pg_group": Definitions,
	"pg_indexes": Definitions, "pg_matviews": Definitions, "pg_policies": Definitions,
	"pg_publication_tables": Definitions, "pg_roles": Definitions, "pg_rules": Definitions, "pg_seclabels": Definitions,
	"pg_settings": Definitions, "pg_tables": Definitions, "pg_timezone_abbrevs": Definitions,
	"pg_timezone_names": Definitions, "pg_user": Definitions, "pg_views": Definitions,

	// Row and page counts (reltuples, relpages, relallvisible,
	// relallfrozen) and transaction-counter positions (relfrozenxid,
	// relminmxid), which advance with every write.
	"pg_class": Blanked,
	// datfrozenxid, datminmxid: transaction-counter positions.
	"pg_database": Blanked,
	// last_value counts the rows inserted through a sequence.
	"pg_sequences": Blanked,

	"pg_statistic": Statistics, "pg_statistic_ext_data": Statistics, "pg_stats": Statistics,
	"pg_stats_ext": Statistics, "pg_stats_ext_exprs": Statistics,

	"pg_locks": Activity, "pg_prepared_xacts": Activity, "pg_cursors": Activity, "pg_prepared_statements": Activity,
	"pg_replication_slots": Activity, "pg_replication_origin": Activity, "pg_replication_origin_status": Activity,
	"pg_subscription_rel": Activity, "pg_backend_memory_contexts": Activity, "pg_shmem_allocations": Activity,
	"pg_shmem_allocations_numa": Activity, "pg_aios": Activity, "pg_stat_activity": Activity,
	"pg_stat_replication": Activity, "pg_stat_ssl": Activity, "pg_stat_gssapi": Activity,
	"pg_stat_wal_receiver": Activity, "pg_stat_subscription": Activity, "pg_stat_recovery_prefetch": Activity,

	"pg_authid": Secret, "pg_shadow": Secret, "pg_user_mapping": Secret, "pg_user_mappings": Secret,
	"pg_hba_file_rules": Secret, "pg_ident_file_mappings": Secret, "pg_file_settings": Secret, "pg_config": Secret,
	"pg_largeobject": Secret, "pg_largeobject_metadata": Secret, "pg_subscription": Secret,
}

// informationSchemaRefused are the views of information_schema that are
// not forwarded: the internal _pg_* views and the options of user
// mappings, which hold foreign servers' passwords. The others are views
// over definitions (SQL-standard metadata).
var informationSchemaRefused = map[string]Rule{
	"user_mapping_options": Secret, "_pg_user_mappings": Secret,
	"_pg_foreign_data_wrappers": Secret, "_pg_foreign_servers": Secret,
	"_pg_foreign_table_columns": Secret, "_pg_foreign_tables": Secret,
}

// informationSchemaViews are the views of PostgreSQL's information_schema.
var informationSchemaViews = strings.Fields(`administrable_role_authorizations applicable_roles attributes
	character_sets check_constraint_routine_usage check_constraints collation_character_set_applicability
	collations column_column_usage column_domain_usage column_options column_privileges column_udt_usage
	columns constraint_column_usage constraint_table_usage data_type_privileges domain_constraints
	domain_udt_usage domains element_types enabled_roles foreign_data_wrapper_options foreign_data_wrappers
	foreign_server_options foreign_servers foreign_table_options foreign_tables information_schema_catalog_name
	key_column_usage parameters referential_constraints role_column_grants role_routine_grants
	role_table_grants role_udt_grants role_usage_grants routine_column_usage routine_privileges
	routine_routine_usage routine_sequence_usage routine_table_usage routines schemata sequences sql_features
	sql_implementation_info sql_parts sql_sizing table_constraints table_privileges tables transforms
	triggered_update_columns triggers udt_privileges usage_privileges user_defined_types user_mappings
	view_column_usage view_routine_usage view_table_usage views`)

// PostgresRelation returns the rule for a relation of a PostgreSQL
// backend's catalog. schema is "pg_catalog", "information_schema" or ""
// (an unqualified pg_* name, which pg_catalog resolves first); names are
// compared in lower case.
func PostgresRelation(schema, name string) Rule {
	schema, name = strings.ToLower(schema), strings.ToLower(name)
	switch schema {
	case "", "pg_catalog":
		if r, ok := pgRelations[name]; ok {
			return r
		}
		// Not reviewed one by one, but refused with the right reason.
		if strings.HasPrefix(name, "pg_stat") {
			return Statistics
		}
		// Citus's metadata describes the data: shard sizes and value
		// ranges (pg_dist_shard, pg_dist_placement's shardlength,
		// citus_shards' shard_size), row counts and query statistics
		// (citus_tables' table_size, citus_stat_statements).
		if strings.HasPrefix(name, "pg_dist_") || strings.HasPrefix(name, "citus_") {
			return Statistics
		}
		return Unknown
	case "information_schema":
		if r, ok := informationSchemaRefused[name]; ok {
			return r
		}
		for _, v := range informationSchemaViews {
			if v == name {
				return Definitions
			}
		}
	}
	return Unknown
}

// Relation is one catalog relation as the backend's own catalog describes
// it: every column in order with its type, so that a derived table can
// project exactly the relation's columns (PostgreSQL versions differ:
// relallfrozen exists from 18 on).
type Relation struct {
	Schema, Name string
	Columns      []Column
}

// Column is one column of a Relation; its type is the type's schema and
// name (pg_catalog, float4), which a cast of NULL can name.
type Column struct {
	Name       string
	TypeSchema string
	Type       string
}

// Relations describes the backend's catalog relations that have a
// statistics column (IsStatistics), keyed by schema and name. It is
// immutable once built.
type Relations struct {
	byName map[[2]string]*Relation
}

// NewRelations indexes rs.
func NewRelations(rs []Relation) *Relations {
	out := &Relations{byName: make(map[[2]string]*Relation, len(rs))}
	for i := range rs {
		out.byName[[2]string{rs[i].Schema, rs[i].Name}] = &rs[i]
	}
	return out
}

// Lookup returns the described relation schema.name (exact, case-sensitive
// names as PostgreSQL stores them), or nil.
func (r *Relations) Lookup(schema, name string) *Relation {
	if r == nil {
		return nil
	}
	return r.byName[[2]string{schema, name}]
}

// Len is the number of described relations.
func (r *Relations) Len() int {
	if r == nil {
		return 0
	}
	return len(r.byName)
}
