// Package sqlrender turns an ir.BackendQuery (and the ir.Expr of its WHERE)
// into SQL text plus bound arguments for one SQL dialect. A Dialect is a
// small table of spellings (identifier quote, placeholder style, casts,
// LEAST/GREATEST, LIKE handling, limits); function spellings come from
// package exprtype's function table. Render is shared, so a
// new dialect (MySQL: backquotes, `?`, LEAST/GREATEST, window functions) is
// one more constructor next to Postgres and SQLite.
//
// Rules every dialect follows:
//   - identifiers are always quoted, embedded quote characters doubled;
//   - no ir.Literal value is ever spliced into the text: each becomes a
//     placeholder with its value in Statement.Args. The only text spliced
//     is what this package writes itself: keywords, the NULL keyword for
//     NULL literals (a placeholder would carry no type), the contribution
//     bound k (an int from the policy, formatted with strconv), the
//     constant 0.5 of the rounding, the int64 limits a sum saturates at
//     and the thresholds below which a real reads as 0 (ir.TinyReal, a
//     quarter of a sum's quantum), formatted with strconv;
//   - every form is total: an ir.Clamp is rendered in BIGINT or DOUBLE
//     with NULL kept NULL, sums saturate instead of overflowing, and no
//     division or product can underflow. What is rendered cannot fail
//     for any value a row holds (the planner checked the ranges);
//   - ir.Param, ir.Aggregate and ir.OutputRef never reach a backend: they
//     are planner bugs and yield sqlerr.Internal.
//
// The package must not import database drivers, the planner or any privacy
// package: it reads ir and exprtype's function table and produces text.
package sqlrender
