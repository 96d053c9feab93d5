package catalog

import (
	"strings"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// IsCatalogRelation reports whether schema.name is a relation of the
// backend's catalog, which only catalog's rules let a statement read. On a
// MySQL backend that is information_schema only: pg_catalog and pg_ names
// mean nothing there, and a table called pg_people is a table like any
// other, private unless the policy says otherwise.
func IsCatalogRelation(backend, schema, name string) bool {
	if backend == "mysql" {
		return strings.EqualFold(schema, "information_schema")
	}
	return isCatalogSchema(schema) || schema == "" && isCatalogRelation(name)
}

// isCatalogSchema reports whether a schema holds only metadata.
func isCatalogSchema(s string) bool {
	switch strings.ToLower(s) {
	case "pg_catalog", "information_schema":
		return true
	}
	return false
}

// isCatalogRelation reports whether an unqualified name is a PostgreSQL
// catalog relation (pg_catalog is always first on the search path).
func isCatalogRelation(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "pg_")
}

// CheckRelation refuses the catalog relations (IsCatalogRelation) a
// statement may not read. On a PostgreSQL backend this is the allow-list
// PostgresRelation (fail closed); on a MySQL backend the
// information_schema allow list; on the others (whose catalog queries the
// emulation answers), the relations known to hold statistics or secrets
// are refused.
func CheckRelation(backend, schema, relation string) error {
	n := strings.ToLower(relation)
	switch backend {
	case "postgres":
		name := n
		if schema != "" {
			name = strings.ToLower(schema) + "." + n
		}
		switch PostgresRelation(schema, relation) {
		case Definitions, Blanked:
			return nil
		case Statistics:
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"catalog relation %s holds statistics about private data and is not readable through the privacy proxy", name).
				WithHint("ask the proxy for a noisy COUNT(*) instead; table and column definitions are in pg_class and pg_attribute")
		case Activity:
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"catalog relation %s describes other sessions' activity and is not readable through the privacy proxy", name)
		case Secret:
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"catalog relation %s holds server secrets or data and is not readable through the privacy proxy", name)
		}
		return sqlerr.New(sqlerr.InsufficientPrivilege,
			"catalog relation %s is not on the privacy proxy's list of catalog relations that hold only definitions", name).
			WithHint("the proxy forwards the catalogs that psql, pgjdbc and SQLAlchemy read (pg_class, pg_attribute, pg_type, information_schema, ...)")
	case "mysql":
		if !MySQLInfoSchemaAllowed(relation) {
			return mysqlTableRefused(relation)
		}
		return nil
	}
	// pg_statistic_ext itself is allowed: it holds only the definitions of
	// extended statistics (columns, kinds), which psql's \d lists; their
	// values are in pg_statistic_ext_data.
	blocked := n == "pg_statistic" || n == "pg_statistic_ext_data" ||
		n == "pg_stats" || n == "pg_stats_ext" || n == "pg_stats_ext_exprs" ||
		strings.HasPrefix(n, "pg_stat_") || strings.HasPrefix(n, "pg_statio_")
	if blocked {
		return sqlerr.New(sqlerr.InsufficientPrivilege,
			"catalog relation %s holds statistics about private data and is not readable through the privacy proxy", n)
	}
	if secretCatalogs[n] {
		return sqlerr.New(sqlerr.InsufficientPrivilege,
			"catalog relation %s holds server secrets or data and is not readable through the privacy proxy", n)
	}
	return nil
}

// refuseFunction is the refusal of a function that is not on the
// pass-through allow-list, with the reason when it is a known kind.
func refuseFunction(f string) error {
	n := strings.TrimPrefix(strings.ToLower(f), "pg_catalog.")
	for _, p := range activityFunctionPrefixes {
		if strings.HasPrefix(n, p) {
			return sqlerr.New(sqlerr.InsufficientPrivilege,
				"function %s describes other sessions' activity (transactions, locks, backends) and is not allowed through the privacy proxy", f)
		}
	}
	if strings.HasPrefix(n, "pg_stat") {
		return sqlerr.New(sqlerr.InsufficientPrivilege,
			"function %s reads statistics about private data and is not allowed through the privacy proxy", f).
			WithHint("ask the proxy for a noisy COUNT(*) instead")
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "function %s is not allowed through the privacy proxy", f)
}

// activityFunctionPrefixes name functions about other sessions' activity.
// They only choose the message: every function off the allow-list is
// refused anyway.
var activityFunctionPrefixes = []string{
	"txid_", "pg_current_xact_id", "pg_current_snapshot", "pg_snapshot_", "pg_xact_", "pg_visible_in_snapshot",
	"pg_advisory_", "pg_try_advisory_", "pg_notification_queue_usage", "pg_backend_pid", "pg_blocking_pids",
	"pg_safe_snapshot_blocking_pids", "pg_current_wal", "pg_last_wal", "pg_last_xact", "pg_control_",
	"pg_lock_status", "pg_get_replication", "pg_stat_get_activity", "pg_stat_get_backend",
}

// passthroughFunctions are the functions a pass-through statement may
// call. It is an allow list (fail closed): functions that sleep, read
// files or tables, reveal sizes or statistics, or change state are absent.
var passthroughFunctions = map[string]bool{
	// General-purpose pure functions.
	"lower": true, "upper": true, "length": true, "char_length": true, "abs": true, "coalesce": true,
	"nullif": true, "trim": true, "btrim": true, "ltrim": true, "rtrim": true, "substring": true, "substr": true,
	"replace": true, "concat": true, "concat_ws": true, "left": true, "right": true, "position": true,
	"round": true, "floor": true, "ceil": true, "ceiling": true, "greatest": true, "least": true,
	"now": true, "current_timestamp": true, "current_date": true, "current_time": true,
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "string_agg": true, "array_agg": true,
	"array_to_string": true, "array_length": true, "unnest": true, "array_upper": true, "array_lower": true,
	"generate_series": true, "generate_subscripts": true, "quote_ident": true, "quote_literal": true,
	"format": true, "regexp_replace": true, "split_part": true, "to_char": true, "row_number": true,
	// MySQL's pure functions in connectors' metadata queries (Connector/J getColumns).
	"if": true, "ifnull": true, "isnull": true, "ucase": true, "lcase": true, "locate": true, "instr": true,
	"convert": true, "cast": true, "substring_index": true, "lpad": true, "rpad": true,
	// Session and server information.
	"version": true, "current_database": true, "current_schema": true, "current_schemas": true,
	"current_user": true, "session_user": true, "current_setting": true, "current_catalog": true,
	"database": true, "schema": true, "user": true, "connection_id": true, "last_insert_id": true,
	// Not pg_backend_pid nor txid_current: the proxy pools backend
	// connections, so they describe other sessions (which pooled backend
	// served them, how fast the server writes). pg_postmaster_start_time
	// stays: when the server started says nothing about data or sessions.
	"inet_server_addr": true, "inet_server_port": true, "pg_postmaster_start_time": true,
	"pg_is_in_recovery": true,
	// Catalog formatting and visibility used by psql, pgjdbc and SQLAlchemy.
	"format_type": true, "pg_get_userbyid": true, "pg_get_expr": true, "pg_get_indexdef": true,
	"pg_get_constraintdef": true, "pg_get_viewdef": true, "pg_get_triggerdef": true, "pg_get_ruledef": true,
	// psql's \d of a partition or a Citus distributed table: names only.
	"pg_partition_ancestors": true, "pg_partition_root": true, "pg_partition_tree": true,
	// Driver and BI-tool startup probes: the connection's encoding
	// (psqlODBC, Tableau), Metabase's time-zone offset on MySQL.
	"pg_client_encoding": true, "time_format": true, "timediff": true, "utc_timestamp": true,
	"pg_get_function_arguments": true, "pg_get_function_result": true, "pg_get_function_identity_arguments": true,
	"pg_get_partkeydef": true, "pg_get_statisticsobjdef_columns": true, "pg_get_serial_sequence": true,
	"pg_table_is_visible": true, "pg_type_is_visible": true, "pg_function_is_visible": true,
	"pg_opclass_is_visible": true, "pg_collation_is_visible": true, "pg_ts_config_is_visible": true,
	"pg_encoding_to_char": true, "pg_char_to_encoding": true, "obj_description": true, "col_description": true,
	"shobj_description": true, "has_table_privilege": true, "has_schema_privilege": true,
	"has_database_privilege": true, "has_column_privilege": true, "pg_has_role": true,
	"pg_my_temp_schema": true, "pg_is_other_temp_schema": true, "pg_get_keywords": true,
	"array_position": true, "pg_tablespace_location": true, "pg_get_partition_constraintdef": true,
	"pg_relation_is_publishable": true, "pg_column_is_updatable": true, "pg_relation_is_updatable": true,
	"pg_get_function_sqlbody": true, "pg_listening_channels": true, "pg_typeof": true,
	// Pure JSON constructors (SQLAlchemy 1.4's get_columns builds identity options).
	"json_build_object": true, "pg_size_pretty": true, "information_schema._pg_expandarray": true, "jsonb_build_object": true, "json_build_array": true, "jsonb_build_array": true,
}

// passthroughFunctionAllowed checks one function name (possibly
// qualified with pg_catalog).
func passthroughFunctionAllowed(name string) bool {
	n := strings.ToLower(name)
	n = strings.TrimPrefix(n, "pg_catalog.")
	return passthroughFunctions[n]
}

// secretCatalogs hold password hashes, server configuration or raw data
// (large objects): never forwarded, whatever the backend user may read.
var secretCatalogs = map[string]bool{
	"pg_authid": true, "pg_shadow": true, "pg_user_mapping": true, "pg_user_mappings": true,
	"pg_hba_file_rules": true, "pg_ident_file_mappings": true, "pg_file_settings": true,
	"pg_largeobject": true, "pg_largeobject_metadata": true, "pg_subscription": true,
}

// Passthrough is a statement that reads no private table and is forwarded
// to the backend (a catalog query, a public table, no relation at all):
// what CheckPassthrough needs to know about it.
type Passthrough struct {
	// Text is the statement in the client's grammar; NumParams its
	// number of parameter markers.
	Text      string
	NumParams int
	// Client is the client's dialect ("postgres" or "mysql"), Backend the
	// backend's driver ("postgres", "mysql", "sqlite").
	Client, Backend string
	// ReadsCatalog: some relation is a catalog relation
	// (IsCatalogRelation), already checked with CheckRelation.
	ReadsCatalog bool
	// Functions are the functions the statement calls, as the parser
	// lists them.
	Functions []string
	// Declared cuts PostgreSQL's column catalogs to what the policy
	// declares (nil: no cut).
	Declared *DeclaredColumns
	// PGRelations describes a PostgreSQL backend's catalog relations
	// with statistics columns; nil refuses statements that read them.
	PGRelations *Relations
	// MySQLInfo is a MySQL backend's information_schema column lists; nil
	// refuses statements that read information_schema.
	MySQLInfo *MySQLInfoSchema
	// MySQLParse parses MySQL text (parser.MySQLTree).
	MySQLParse MySQLParser
}

// CheckPassthrough applies every catalog safety rule to a pass-through
// statement, on its syntax tree (pg_query's for PostgreSQL text, TiDB's
// for MySQL text), and returns the text to forward: the client's, or the
// tree rewritten with statistics blanked. The rules, for both dialects:
//
//   - a statistics column (IsStatistics) named anywhere is refused, or
//     becomes NULL in a PostgreSQL catalog query;
//   - statistics reached without naming them (*, t.*, positions over *,
//     NATURAL/USING, whole-row values, set operations) read NULL through
//     derived tables (PostgreSQL: blankRelations, MySQL: RewriteMySQL), and
//     PostgreSQL's whole-row references and positions over * are refused
//     besides;
//   - functions are an allow list (passthroughFunctions); PostgreSQL's
//     size functions become NULL.
//
// The relations were checked with CheckRelation when the statement was
// classified.
func CheckPassthrough(p Passthrough) (string, error) {
	pgTree := p.Backend == "postgres" && p.Client != "mysql"
	sizes := false
	for _, f := range p.Functions {
		if isSizeFunction(f) && pgTree {
			sizes = true // blanked by checkCatalogTree
			continue
		}
		if !passthroughFunctionAllowed(f) {
			return "", refuseFunction(f)
		}
	}
	switch {
	case p.Backend == "mysql" && p.ReadsCatalog:
		if p.MySQLInfo == nil {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "information_schema queries need the backend's information_schema column lists, which were not read").
				WithHint("run the query through the proxy (ddp-proxy serve), which reads them from the backend")
		}
		return RewriteMySQL(p.Text, p.MySQLParse, p.MySQLInfo, p.NumParams)
	case p.Backend == "mysql":
		// A public table on a MySQL backend: statistics live in
		// information_schema only. The text goes as written, so it must
		// hold nothing the server runs that the grammar skipped.
		if err := checkVerbatimMySQL(p.Text); err != nil {
			return "", err
		}
		return p.Text, nil
	case pgTree:
		return checkCatalogTree(p.Text, treeCheck{catalog: p.ReadsCatalog, sizes: sizes, cols: p.Declared, rels: p.PGRelations})
	case p.Client == "mysql":
		// MySQL text to a backend of another dialect (SQLite; PostgreSQL
		// only without relations): no catalog to blank, so a statistics
		// name is refused.
		if err := refuseMySQLStatistics(p.Text, p.MySQLParse); err != nil {
			return "", err
		}
		if err := checkVerbatimOtherDialect(p.Text); err != nil {
			return "", err
		}
		return p.Text, nil
	default:
		// PostgreSQL text to a SQLite backend (public tables; its catalog
		// queries are answered by the emulation).
		if _, err := checkCatalogTree(p.Text, treeCheck{}); err != nil {
			return "", err
		}
		return p.Text, nil
	}
}

// checkVerbatimMySQL refuses MySQL text forwarded as written to a MySQL or
// MariaDB server when it holds an executable comment, which the server and
// TiDB's grammar may read differently: MariaDB's /*M! ... */ (TiDB skips
// it, MariaDB runs it), TiDB's own /*T! ... */ (TiDB reads it, the server
// skips it up to its first */, though TiDB read that */ inside a string),
// and /*! ... */ (a version the server does not reach is skipped the same
// way). What the server would run was never checked: SELECT 1+1 /*M!,
// (SELECT COUNT(*) FROM private) */ answered the private count exactly.
// The scan ignores quoting, so such a sequence inside a string literal is
// refused too (fail closed); the grammar decides everything else.
func checkVerbatimMySQL(text string) error {
	for i := 0; i+2 < len(text); i++ {
		if text[i] != '/' || text[i+1] != '*' {
			continue
		}
		rest := text[i+2:]
		if len(rest) >= 1 && rest[0] == '!' ||
			len(rest) >= 2 && rest[1] == '!' && (rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= 'a' && rest[0] <= 'z') {
			return hiddenText()
		}
	}
	return nil
}

// checkVerbatimOtherDialect refuses MySQL text forwarded as written to a
// backend of another dialect (SQLite, PostgreSQL) when the two lexers may
// split it differently: a backslash (an escape inside a MySQL string, a
// plain character elsewhere, so a string TiDB read as one value ends early
// there and what follows runs), #, -- and /* comments (MySQL's # and
// /*! ... */ are not comments there, PostgreSQL's nest, SQLite's -- needs
// no space). SELECT lower('a\') , (SELECT count(*) FROM people) -- ')
// was one string argument to TiDB and the private count to SQLite. Such
// statements name no relation (the planner refuses cross-dialect ones
// that do), so refusing them costs clients little.
func checkVerbatimOtherDialect(text string) error {
	if strings.ContainsAny(text, "\\#") || strings.Contains(text, "/*") || strings.Contains(text, "--") {
		return hiddenText()
	}
	return nil
}

func hiddenText() error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"this statement holds a comment, escape or executable comment that the backend would read differently from the proxy, so it is not forwarded").
		WithHint("remove comments and backslashes from the statement")
}
