-- The startup and metadata queries BI tools and drivers send, as they send
-- them (from their sources and statement logs; demo names). Each block is
-- headed "-- tool: T | dialect: postgres|mysql | expect: answer|refuse"
-- and, optionally, "| types: t1,t2" (the result columns' types as the
-- driver reports them). TestMetadataCorpus runs every block through the
-- proxy: "answer" must be answered, "refuse" (statistics about data,
-- other sessions) refused with insufficient_privilege.

-- tool: grafana | dialect: postgres | expect: answer
SELECT current_setting('server_version_num')::int/100 AS version
-- tool: grafana | dialect: postgres | expect: answer
SELECT quote_ident(table_name) AS table_name FROM information_schema.tables WHERE quote_ident(table_schema) NOT IN ('information_schema', 'pg_catalog', '_timescaledb_cache', '_timescaledb_catalog', '_timescaledb_internal', '_timescaledb_config', 'timescaledb_information', 'timescaledb_experimental') AND table_type = 'BASE TABLE' ORDER BY table_name
-- tool: grafana | dialect: postgres | expect: answer
SELECT quote_ident(column_name) AS column_name, data_type AS data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'people' ORDER BY column_name
-- tool: grafana | dialect: mysql | expect: answer
SELECT table_name FROM information_schema.tables WHERE table_schema = database() ORDER BY table_name
-- tool: psqlodbc | dialect: postgres | expect: answer | types: name
SELECT pg_client_encoding()
-- tool: psqlodbc | dialect: postgres | expect: answer
select oid, typbasetype from pg_type where typname = 'lo'
-- tool: psqlodbc | dialect: postgres | expect: answer
SHOW transaction_isolation
-- tool: tableau | dialect: postgres | expect: answer
SELECT version()
-- tool: tableau | dialect: postgres | expect: answer
select current_schema()
-- tool: tableau | dialect: postgres | expect: answer
SELECT n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2
-- tool: metabase | dialect: postgres | expect: answer
SELECT current_setting('TIMEZONE') AS timezone
-- tool: metabase | dialect: postgres | expect: answer | types: timestamptz
SELECT now()
-- tool: metabase | dialect: postgres | expect: answer
SELECT nspname AS schema FROM pg_catalog.pg_namespace WHERE nspname NOT IN ('information_schema', 'pg_catalog') AND nspname NOT LIKE 'pg_toast%' AND nspname NOT LIKE 'pg_temp%'
-- tool: metabase | dialect: postgres | expect: answer
SELECT TRUE AS "_" FROM "public"."people" WHERE 1 <> 1 LIMIT 0
-- tool: metabase | dialect: mysql | expect: answer
SELECT time_format(timediff(now(), utc_timestamp()), '%H:%i')
-- tool: metabase | dialect: mysql | expect: answer
SELECT @@session.time_zone
-- tool: superset | dialect: postgres | expect: answer
select pg_catalog.version()
-- tool: superset | dialect: postgres | expect: answer
show standard_conforming_strings
-- tool: sqlalchemy | dialect: postgres | expect: answer
show transaction isolation level
-- tool: sqlalchemy | dialect: postgres | expect: answer
SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace WHERE pg_catalog.pg_class.relkind = ANY (ARRAY['r', 'p']) AND pg_catalog.pg_class.relpersistence != 't' AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != 'pg_catalog'
-- tool: sqlalchemy | dialect: postgres | expect: answer | types: bool
select exists(select relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and relname = 'people')
-- tool: sqlalchemy | dialect: mysql | expect: answer
SELECT DATABASE()
-- tool: sqlalchemy | dialect: mysql | expect: answer
SHOW VARIABLES LIKE 'sql_mode'
-- tool: sqlalchemy | dialect: mysql | expect: answer
SHOW VARIABLES LIKE 'lower_case_table_names'
-- tool: sqlalchemy | dialect: mysql | expect: answer | types: BIGINT
SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'demo' AND table_name = 'no_such_table'
-- tool: sqlalchemy | dialect: mysql | expect: answer
SHOW CREATE TABLE `people`
-- tool: pymysql | dialect: mysql | expect: answer
SET NAMES utf8mb4
-- tool: pymysql | dialect: mysql | expect: answer
SET AUTOCOMMIT = 0
-- tool: connectorj | dialect: mysql | expect: answer
SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, @@character_set_server AS character_set_server, @@collation_server AS collation_server, @@collation_connection AS collation_connection, @@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout
-- tool: connectorj | dialect: mysql | expect: answer
SELECT @@session.transaction_read_only
-- tool: pgjdbc | dialect: postgres | expect: answer
SET extra_float_digits = 3
-- tool: pgjdbc | dialect: postgres | expect: answer
SET application_name = 'PostgreSQL JDBC Driver'
-- tool: pgjdbc | dialect: postgres | expect: answer
SELECT typinput='pg_catalog.array_in'::regproc as is_array, typtype, typname, pg_type.oid FROM pg_catalog.pg_type LEFT JOIN (select ns.oid as nspoid, ns.nspname, r.r from pg_namespace as ns join ( select s.r, (current_schemas(false))[s.r] as nspname from generate_series(1, array_upper(current_schemas(false), 1)) as s(r) ) as r using ( nspname ) ) as sp ON sp.nspoid = typnamespace WHERE pg_type.oid = 25 ORDER BY sp.r, pg_type.oid DESC
-- tool: dbeaver | dialect: postgres | expect: answer
SELECT current_schema(),session_user
-- tool: dbeaver | dialect: postgres | expect: answer
SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datallowconn AND NOT datistemplate OR db.datname = 'demo' ORDER BY db.datname
-- tool: dbeaver | dialect: postgres | expect: answer
select * from pg_catalog.pg_settings where name='standard_conforming_strings'
-- tool: pgcli | dialect: postgres | expect: answer
SELECT * FROM unnest(current_schemas(true))
-- tool: pgcli | dialect: postgres | expect: answer
SELECT n.nspname schema_name, p.proname func_name, p.proargnames, COALESCE(proallargtypes::regtype[], proargtypes::regtype[])::text[], p.proargmodes, prorettype::regtype::text return_type, p.prokind = 'a' is_aggregate, p.prokind = 'w' is_window, p.proretset is_set_returning, d.deptype = 'e' is_extension, pg_get_expr(proargdefaults, 0) AS arg_defaults FROM pg_catalog.pg_proc p INNER JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace LEFT JOIN pg_depend d ON d.objid = p.oid and d.deptype = 'e' WHERE p.prorettype::regtype != 'trigger'::regtype AND n.nspname = 'public' ORDER BY 1, 2
-- tool: psql | dialect: postgres | expect: answer
SELECT set_config('search_path', '"$user", public', false)
-- tool: psql | dialect: postgres | expect: answer
SELECT d.datname as "Name", pg_catalog.pg_get_userbyid(d.datdba) as "Owner", pg_catalog.pg_encoding_to_char(d.encoding) as "Encoding" FROM pg_catalog.pg_database d ORDER BY 1
-- tool: dbeaver | dialect: postgres | expect: refuse
SELECT relname, n_live_tup FROM pg_catalog.pg_stat_user_tables
-- tool: metabase | dialect: postgres | expect: refuse
SELECT * FROM pg_catalog.pg_stats WHERE tablename = 'people'
-- tool: citus | dialect: postgres | expect: refuse
SELECT logicalrelid, partmethod FROM pg_catalog.pg_dist_partition
-- tool: citus | dialect: postgres | expect: refuse
SELECT table_name, table_size FROM pg_catalog.citus_tables
-- tool: citus | dialect: postgres | expect: refuse
SELECT * FROM pg_catalog.citus_stat_statements
