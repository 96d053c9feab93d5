// Package emulated emulates the PostgreSQL system catalog for backends
// that have none (SQLite today, MySQL later), so that PostgreSQL clients'
// metadata queries — psql's \d, \d+ and \l, information_schema, pgjdbc's
// DatabaseMetaData, SQLAlchemy's inspector — work through the proxy.
//
// The catalog is a set of real relations (pg_namespace, pg_class,
// pg_attribute, pg_type, pg_index, pg_constraint, pg_description,
// pg_database, information_schema.tables/columns/schemata, ...) held in
// an in-memory SQLite database and materialised from what the policy
// exposes: only declared tables, only their declared columns (all backend
// columns for a public table that declares none), with PostgreSQL types
// derived from the policy or the backend's declared types. It holds no
// statistics: reltuples is -1, relpages and relallvisible are 0, and the
// size functions return NULL.
//
// A client's query is parsed with PostgreSQL's own grammar (pg_query),
// rewritten on the syntax tree into SQLite (casts to reg* types become
// lookups, OPERATOR(pg_catalog.~) a regular-expression function, arrays
// JSON arrays, = ANY(array) a json_each subquery, LIKE PostgreSQL's LIKE
// with its backslash escape, every string constant a bound parameter),
// deparsed and run. PostgreSQL catalog functions (format_type,
// pg_get_expr, pg_table_is_visible, obj_description, ...) are Go functions
// registered on that SQLite connection. A query that uses a relation,
// function, operator or construct the emulation does not have is refused
// with sqlerr.FeatureNotSupported and a hint that says what works: never
// answered approximately.
//
// It also answers MySQL information_schema queries when the backend is
// not MySQL (SQLite, PostgreSQL), so BI tools and connectors speaking
// MySQL can list tables and columns (QueryMySQL). Each such query runs on
// a fresh in-memory SQLite database holding a MySQL-shaped
// information_schema built from what the session hands over (the
// policy's tables and columns, nothing from the backend's data); SQLite
// accepts the backquotes, IF(), CONCAT() and LIKE these queries use, and
// DATABASE() is defined as the session's database.
//
// emulated imports the SQLite engine for its own private in-memory
// databases only; it never touches the backend. It is a package of its
// own so that catalog, which the planner imports, does not link SQLite.
package emulated
