// Package catalog owns every rule about catalog and metadata statements,
// for both dialects, and applies them on the parse tree (pg_query's for
// PostgreSQL text, TiDB's for MySQL text; never by reading the text):
//
//   - the one list of statistics columns (statistics.go, IsStatistics):
//     statistics in the catalog are private data (DESIGN.md safety rules);
//   - which relations are catalog relations and which may be read
//     (IsCatalogRelation, CheckRelation): PostgreSQL's allow-list
//     (postgres.go, PostgresRelation), MySQL's information_schema allow
//     list (mysql.go, MySQLInfoSchemaAllowed, CheckMySQLInfoSchema);
//   - the function allow-lists (passthrough.go for pass-through
//     statements, mysql.go for the emulated information_schema);
//   - the checks and rewrites of a pass-through statement
//     (CheckPassthrough): PostgreSQL's on the pg_query tree
//     (postgres_tree.go: statistics named become NULL, whole-row values,
//     column alias lists and positions over * are refused, system columns
//     refused, size functions blanked, every relation with a statistics
//     column read through a derived table that blanks it, column catalogs
//     cut to the declared columns); MySQL's on the TiDB tree (mysql.go,
//     RewriteMySQL: statistics named are refused, every information_schema
//     table with a statistics column is read through a derived table that
//     blanks it); outside a catalog query a statistics column named is
//     refused in either grammar;
//   - the last line on results (results.go): statistics columns blanked by
//     name, rows naming undeclared relations or columns dropped.
//
// The emulated catalogs — PostgreSQL's pg_catalog and information_schema,
// MySQL's information_schema, for backends of another dialect — are in
// the subpackage emulated, which links SQLite; both are built from one
// description of what the policy exposes (emulated.Describe).
//
// Adding an emulated catalog relation touches one place: its entry in
// emulated's relations list (catalog/emulated/relations.go: schema, name,
// OID, columns with PostgreSQL types) for PostgreSQL, or in tableDefs
// (catalog/emulated/mysql.go) for MySQL; rows, if it has any, come from
// the Exposed tables where the catalog is filled (Catalog.build, load).
// A MySQL table must also be on this package's information_schema allow
// list, which a test of emulated checks. Adding a pass-through catalog
// relation is one entry of pgRelations (postgres.go) or
// mysqlInfoSchemaTables (mysql.go); a safety rule is one row of
// internal/catalogtest's Cases, which runs in both dialects (planner's and
// cmd/ddp-proxy's TestCatalogRules).
//
// catalog imports sqlerr, ir, policies, pg_query and TiDB's grammar types
// (never the grammar's entry points: the parser package parses MySQL, and
// hands its parser in as MySQLParser); the planner and the session call
// it.
package catalog
