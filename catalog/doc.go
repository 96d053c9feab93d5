// Package catalog owns the rules about catalog and metadata statements that
// hold for both dialects: the one list of statistics columns (DESIGN.md
// safety rules: statistics in the catalog are private data); for
// PostgreSQL the allow-list of catalog relations a pass-through may read
// (PostgresRelation) and the description of the backend's catalog
// relations that hold statistics columns (Relations), from which the
// planner builds the derived tables that blank them; for MySQL the
// information_schema allow list and the rewrite that forwards
// information_schema queries with every statistics column NULL
// (RewriteMySQL, on TiDB's syntax tree). The function allow-lists and the
// emulated catalogs move here with the client-side redesign.
//
// catalog imports nothing of the project but sqlerr (and TiDB's grammar
// types, never the grammar's entry points: the parser package parses):
// every front end, the planner and the session may use it.
package catalog
