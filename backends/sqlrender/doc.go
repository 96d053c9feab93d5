// Package sqlrender turns an ir.BackendQuery (and the ir.Expr of its WHERE)
// into SQL text plus bound arguments for one SQL dialect. A Dialect is a
// small table of spellings (identifier quote, placeholder style, casts,
// LEAST/GREATEST, LIKE handling, function names); Render is shared, so a
// new dialect (MySQL: backquotes, `?`, LEAST/GREATEST, window functions) is
// one more constructor next to Postgres and SQLite.
//
// Rules every dialect follows:
//   - identifiers are always quoted, embedded quote characters doubled;
//   - no ir.Literal value is ever spliced into the text: each becomes a
//     placeholder with its value in Statement.Args. The only text spliced
//     is what this package writes itself: keywords, the NULL keyword for
//     NULL literals (a placeholder would carry no type), the contribution
//     bound k (an int from the policy, formatted with strconv) and the
//     constant 0.5 of the rounding;
//   - ir.Param, ir.Aggregate and ir.OutputRef never reach a backend: they
//     are planner bugs and yield sqlerr.Internal;
//   - a function the dialect cannot compute identically is refused with
//     sqlerr.FeatureNotSupported instead of being approximated.
//
// The package must not import database drivers, the planner or any privacy
// package: it only reads ir and produces text.
package sqlrender
