// Package catalog owns the rules about catalog and metadata statements that
// hold for both dialects: the one list of statistics columns (DESIGN.md
// safety rules: statistics in the catalog are private data), the
// allow-list of PostgreSQL catalog relations a pass-through may read
// (PostgresRelation) and the description of the backend's catalog
// relations that hold statistics columns (Relations), from which the
// planner builds the derived tables that blank them. The function
// allow-lists, blanking and the emulated catalogs move here with the
// client-side redesign.
//
// catalog imports nothing of the project: every front end, the planner and
// the session may use it.
package catalog
