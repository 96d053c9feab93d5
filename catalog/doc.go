// Package catalog owns the rules about catalog and metadata statements that
// hold for both dialects: the one list of statistics columns (DESIGN.md
// safety rules: statistics in the catalog are private data), and for
// MySQL the information_schema allow list and the rewrite that forwards
// information_schema queries with every statistics column NULL
// (RewriteMySQL, on TiDB's syntax tree). The PostgreSQL allow-lists,
// blanking and the emulated catalogs move here with the client-side
// redesign.
//
// catalog imports nothing of the project but sqlerr (and TiDB's grammar
// types, never the grammar's entry points: the parser package parses):
// every front end, the planner and the session may use it.
package catalog
