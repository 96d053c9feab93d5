package emulated

import "strings"

// relation is one emulated catalog relation: its schema, name, fixed OID
// (PostgreSQL's own for pg_catalog tables, so 'pg_class'::regclass is what
// clients expect) and columns as "name type" pairs with PostgreSQL types.
type relation struct {
	schema, name string
	oid          int64
	cols         string
}

// relations lists every emulated relation. Each is a plain table filled
// when the catalog is built; those without rows are deliberately empty
// (no indexes, constraints, defaults, comments, policies, publications,
// inheritance or sequences are exposed).
var relations = []relation{
	{"pg_catalog", "pg_namespace", 2615, "oid oid, nspname name, nspowner oid, nspacl _aclitem"},
	{"pg_catalog", "pg_class", 1259, `oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid,
		relam oid, relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4,
		reltoastrelid oid, relhasindex bool, relisshared bool, relpersistence char, relkind char, relnatts int2,
		relchecks int2, relhasrules bool, relhastriggers bool, relhassubclass bool, relrowsecurity bool,
		relforcerowsecurity bool, relispopulated bool, relreplident char, relispartition bool, relrewrite oid,
		relfrozenxid xid, relminmxid xid, relacl _aclitem, reloptions _text, relpartbound text`},
	{"pg_catalog", "pg_attribute", 1249, `attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2,
		attnum int2, attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char,
		attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, attgenerated char,
		attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, attacl _aclitem, attoptions _text,
		attfdwoptions _text, attmissingval text`},
	{"pg_catalog", "pg_type", 1247, `oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool,
		typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid,
		typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc,
		typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char,
		typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin text,
		typdefault text, typacl _aclitem`},
	{"pg_catalog", "pg_index", 2610, `indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool,
		indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, indisclustered bool,
		indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, indisreplident bool, indkey int2vector,
		indcollation oidvector, indclass oidvector, indoption int2vector, indexprs text, indpred text`},
	{"pg_catalog", "pg_constraint", 2606, `oid oid, conname name, connamespace oid, contype char, condeferrable bool,
		condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, confrelid oid,
		confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int4, connoinherit bool,
		conkey _int2, confkey _int2, conpfeqop _oid, conppeqop _oid, conffeqop _oid, confdelsetcols _int2,
		conexclop _oid, conbin text`},
	{"pg_catalog", "pg_description", 2609, "objoid oid, classoid oid, objsubid int4, description text"},
	{"pg_catalog", "pg_shdescription", 2396, "objoid oid, classoid oid, description text"},
	{"pg_catalog", "pg_attrdef", 2604, "oid oid, adrelid oid, adnum int2, adbin text"},
	{"pg_catalog", "pg_database", 1262, `oid oid, datname name, datdba oid, encoding int4, datlocprovider char,
		datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid,
		dattablespace oid, datcollate text, datctype text, daticulocale text, datcollversion text, datacl _aclitem`},
	{"pg_catalog", "pg_am", 2601, "oid oid, amname name, amhandler regproc, amtype char"},
	{"pg_catalog", "pg_roles", 11000, `rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool,
		rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamptz,
		rolbypassrls bool, rolconfig _text, oid oid`},
	{"pg_catalog", "pg_user", 11001, `usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool,
		usebypassrls bool, passwd text, valuntil timestamptz, useconfig _text`},
	{"pg_catalog", "pg_auth_members", 1261, `oid oid, roleid oid, member oid, grantor oid, admin_option bool,
		inherit_option bool, set_option bool`},
	{"pg_catalog", "pg_collation", 3456, `oid oid, collname name, collnamespace oid, collowner oid, collprovider char,
		collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text,
		collversion text`},
	{"pg_catalog", "pg_inherits", 2611, "inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool"},
	{"pg_catalog", "pg_policy", 3256, `oid oid, polname name, polrelid oid, polcmd char, polpermissive bool,
		polroles _oid, polqual text, polwithcheck text`},
	{"pg_catalog", "pg_statistic_ext", 3381, `oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid,
		stxstattarget int4, stxkeys int2vector, stxkind _char, stxexprs text`},
	{"pg_catalog", "pg_publication", 6104, `oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool,
		pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool`},
	{"pg_catalog", "pg_publication_namespace", 6237, "oid oid, pnpubid oid, pnnspid oid"},
	{"pg_catalog", "pg_publication_rel", 6106, "oid oid, prpubid oid, prrelid oid, prqual text, prattrs int2vector"},
	{"pg_catalog", "pg_sequence", 2224, `seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8,
		seqmin int8, seqcache int8, seqcycle bool`},
	{"pg_catalog", "pg_enum", 3501, "oid oid, enumtypid oid, enumsortorder float4, enumlabel name"},
	{"pg_catalog", "pg_tablespace", 1213, "oid oid, spcname name, spcowner oid, spcacl _aclitem, spcoptions _text"},
	{"pg_catalog", "pg_trigger", 2620, `oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2,
		tgenabled char, tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool,
		tginitdeferred bool, tgnargs int2, tgattr int2vector, tgargs bytea, tgqual text, tgoldtable name,
		tgnewtable name`},
	{"pg_catalog", "pg_rewrite", 2618, `oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char,
		is_instead bool, ev_qual text, ev_action text`},
	{"pg_catalog", "pg_foreign_table", 3118, "ftrelid oid, ftserver oid, ftoptions _text"},
	{"pg_catalog", "pg_extension", 3079, `oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool,
		extversion text, extconfig _oid, extcondition _text`},
	{"pg_catalog", "pg_proc", 1255, `oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4,
		prorows float4, provariadic oid, prosupport regproc, prokind char, prosecdef bool, proleakproof bool,
		proisstrict bool, proretset bool, provolatile char, proparallel char, pronargs int2, pronargdefaults int2,
		prorettype oid, proargtypes oidvector, proallargtypes _oid, proargmodes _char, proargnames _text,
		proargdefaults text, protrftypes _oid, prosrc text, probin text, prosqlbody text, proconfig _text,
		proacl _aclitem`},
	// pgcli's function completion joins pg_depend, its casing query
	// pg_language; no functions are exposed, so both are empty.
	{"pg_catalog", "pg_depend", 2608, `classid oid, objid oid, objsubid int4, refclassid oid, refobjid oid,
		refobjsubid int4, deptype char`},
	{"pg_catalog", "pg_language", 2612, `oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool,
		lanplcallfoid oid, laninline oid, lanvalidator oid, lanacl _aclitem`},
	{"pg_catalog", "pg_settings", 11006, `name text, setting text, unit text, category text, short_desc text,
		extra_desc text, context text, vartype text, source text, min_val text, max_val text, enumvals _text,
		boot_val text, reset_val text, sourcefile text, sourceline int4, pending_restart bool`},
	{"pg_catalog", "pg_tables", 11002, `schemaname name, tablename name, tableowner name, tablespace name,
		hasindexes bool, hasrules bool, hastriggers bool, rowsecurity bool`},
	{"pg_catalog", "pg_views", 11003, "schemaname name, viewname name, viewowner name, definition text"},
	{"pg_catalog", "pg_matviews", 11004, `schemaname name, matviewname name, matviewowner name, tablespace name,
		hasindexes bool, ispopulated bool, definition text`},
	{"pg_catalog", "pg_indexes", 11005, "schemaname name, tablename name, indexname name, tablespace name, indexdef text"},
	{"information_schema", "schemata", 13001, `catalog_name name, schema_name name, schema_owner name,
		default_character_set_catalog name, default_character_set_schema name, default_character_set_name name,
		sql_path text`},
	{"information_schema", "tables", 13002, `table_catalog name, table_schema name, table_name name, table_type text,
		self_referencing_column_name name, reference_generation text, user_defined_type_catalog name,
		user_defined_type_schema name, user_defined_type_name name, is_insertable_into text, is_typed text,
		commit_action text`},
	{"information_schema", "columns", 13003, `table_catalog name, table_schema name, table_name name, column_name name,
		ordinal_position int4, column_default text, is_nullable text, data_type text, character_maximum_length int4,
		character_octet_length int4, numeric_precision int4, numeric_precision_radix int4, numeric_scale int4,
		datetime_precision int4, interval_type text, interval_precision int4, character_set_catalog name,
		character_set_schema name, character_set_name name, collation_catalog name, collation_schema name,
		collation_name name, domain_catalog name, domain_schema name, domain_name name, udt_catalog name,
		udt_schema name, udt_name name, scope_catalog name, scope_schema name, scope_name name,
		maximum_cardinality int4, dtd_identifier name, is_self_referencing text, is_identity text,
		identity_generation text, identity_start text, identity_increment text, identity_maximum text,
		identity_minimum text, identity_cycle text, is_generated text, generation_expression text,
		is_updatable text`},
	{"information_schema", "views", 13004, `table_catalog name, table_schema name, table_name name, view_definition text,
		check_option text, is_updatable text, is_insertable_into text, is_trigger_updatable text,
		is_trigger_deletable text, is_trigger_insertable_into text`},
	{"information_schema", "table_constraints", 13005, `constraint_catalog name, constraint_schema name,
		constraint_name name, table_catalog name, table_schema name, table_name name, constraint_type text,
		is_deferrable text, initially_deferred text, enforced text, nulls_distinct text`},
	{"information_schema", "key_column_usage", 13006, `constraint_catalog name, constraint_schema name,
		constraint_name name, table_catalog name, table_schema name, table_name name, column_name name,
		ordinal_position int4, position_in_unique_constraint int4`},
	{"information_schema", "referential_constraints", 13007, `constraint_catalog name, constraint_schema name,
		constraint_name name, unique_constraint_catalog name, unique_constraint_schema name,
		unique_constraint_name name, match_option text, update_rule text, delete_rule text`},
	{"information_schema", "routines", 13008, `specific_catalog name, specific_schema name, specific_name name,
		routine_catalog name, routine_schema name, routine_name name, routine_type text, data_type text`},
}

type relColumn struct{ name, typ string }

func (r relation) columns() []relColumn {
	var out []relColumn
	for _, part := range strings.Split(r.cols, ",") {
		f := strings.Fields(part)
		out = append(out, relColumn{f[0], f[1]})
	}
	return out
}

// relkind is 'v' for the system views, 'r' for catalog tables.
func (r relation) relkind() string {
	if r.schema == "information_schema" || r.oid >= 11000 && r.oid < 12000 {
		return "v"
	}
	return "r"
}

// declType is the SQLite declared type of a column of PostgreSQL type t:
// the PostgreSQL name (read back for the result's RowDescription) and a
// suffix that gives SQLite the right affinity, so that c.oid = '16385'
// compares numbers as in PostgreSQL.
func declType(t string) string {
	switch t {
	case "bool", "oid", "int2", "int4", "int8", "xid":
		return t + "__int"
	case "float4", "float8":
		return t + "__real"
	}
	return t + "__text"
}

// pgTypeOfDecl reverses declType; "" when decl is not one of ours.
func pgTypeOfDecl(decl string) string {
	t, _, ok := strings.Cut(strings.ToLower(decl), "__")
	if !ok {
		return ""
	}
	return t
}

// boolColumns are the boolean catalog columns, for comparisons with
// 't'/'f' literals (PostgreSQL coerces the literal; SQLite would not).
var boolColumns = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range relations {
		for _, c := range r.columns() {
			if c.typ == "bool" {
				m[c.name] = true
			}
		}
	}
	return m
}()
