// Package catalog owns the rules about catalog and metadata statements that
// hold for both dialects. For now it is the one list of statistics columns
// (DESIGN.md safety rules: statistics in the catalog are private data); the
// allow-lists, blanking and the emulated catalogs move here with the
// client-side redesign.
//
// catalog imports nothing of the project: every front end, the planner and
// the session may use it.
package catalog
