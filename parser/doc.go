// Package parser turns SQL text of the client's dialect (PostgreSQL or
// MySQL) into ir.Statement values: it splits multi-statement strings,
// classifies each statement (aggregate-capable SELECT, session statement,
// EXPLAIN, refused, empty) and, for SELECTs inside the aggregate subset,
// builds the ir.Query the planner works on.
//
// PostgreSQL text goes through PostgreSQL's own grammar (pg_query_go /
// libpg_query), MySQL text through TiDB's MySQL grammar; the dialect
// walkers live in postgres*.go and mysql*.go, the rules they share
// (refusals, the predicate function whitelist, GROUP BY resolution, CTE
// scoping, messages) in classify.go. Subqueries and CTEs in FROM are
// converted by each walker into a small nested form and merged into the
// query by one dialect-neutral pass (flatten.go): the planner only ever
// sees a flat ir.Query, so a wrapped query and the flat query it means
// share one release.
//
// The front ends parse through a Cache: by exact text, and for PostgreSQL
// also by shape (shape.go), so that a statement sent again with new
// literal values reuses the checked tree of its first text instead of
// running libpg_query. The shape lexer (shape_lex.go) only proposes where
// the literals are; the first text's tree must confirm each of them, and
// the tests compare the results with fresh parses.
//
// Classification fails closed:
//   - A statement type not recognised is StmtRefused (FeatureNotSupported,
//     or ReadOnly when it writes), never a SELECT or a session statement.
//   - Relations and Functions of a SELECT are collected by walking the
//     whole parse tree generically (protobuf reflection for PostgreSQL,
//     TiDB's visitor for MySQL), so subqueries in any clause, CTE bodies,
//     set-operation branches, LATERAL items and function arguments are all
//     listed. Only references to a CTE name in that CTE's scope are left
//     out; listing too much only makes the planner refuse.
//   - SELECT ... INTO, row locking (FOR UPDATE/SHARE, LOCK IN SHARE MODE)
//     and data-modifying WITH anywhere in a statement refuse the whole
//     statement; so do SET values that are not constants (a subquery in
//     SET @x = (...) would read a table).
//   - Query is set only when the statement fits the subset exactly; any
//     other construct leaves it nil and says why in NotAggregate. A query
//     refused only by the grouping rule is also kept in Ungrouped, which
//     the planner reads for references to the privacy unit and never plans.
//
// Conventions the consumers rely on:
//   - Identifiers: PostgreSQL's are folded by its grammar (quoted ones keep
//     their case, including quoted function names, so "Version"() never
//     matches a whitelist entry for version()); MySQL's are kept as written
//     and compared case-insensitively where the parser compares them.
//     Function names are lower-cased for MySQL.
//   - Relations are deduplicated by (Schema, Name) with Alias empty. A
//     PostgreSQL three-part name db.schema.table lists schema.table:
//     PostgreSQL cannot reach another database, so the schema is what
//     identifies the relation.
//   - The IR function length counts characters: CHAR_LENGTH and
//     CHARACTER_LENGTH map to it, MySQL's byte-counting LENGTH is refused.
//   - GROUP BY n and GROUP BY alias resolve to the grouping column they
//     name; ORDER BY n becomes ir.OutputRef, ORDER BY alias stays a
//     ColumnRef for the planner. JOIN ... USING (c) with a join chain on
//     its left leaves the left column unqualified for the planner.
//   - MySQL ? markers are numbered 1, 2, ... left to right; NumParams is
//     their count, or the highest $n for PostgreSQL.
//   - Session statements: Setting names are lower-case and dotted as
//     written; MySQL @@session./@@global. prefixes become Scope. MySQL
//     SHOW/DESCRIBE put what is shown in Settings[0].Name ("variables",
//     "tables", "columns", "index", "create table", ...) and the LIKE
//     pattern or the table ("db.t") in its Value; further entries carry
//     "database" (SHOW TABLES FROM db), "like" and "column". SHOW statements
//     not listed (TABLE STATUS and others exposing row counts) are refused.
//   - EXPLAIN of a refused statement is refused with the inner error. The
//     inner statement of StmtExplain has an empty Text: forward the outer
//     statement's Text.
//
// parser may import ir, sqlerr, exprtype (the function table: names and
// arities) and the two grammar packages. It must never
// import the planner, policies, backends, wire front ends, the ledger or a
// database driver: it only reads text.
package parser
