package sqlrender

// Expression-depth limits, as the deepest parenthesis nesting Render may
// produce (Shape.Depth); the planner refuses deeper statements (54001)
// before anything is charged. Measured with the renderer's own output
// (nested +, *, NOT, OR, AND, abs, coalesce, unary minus, lower) inside
// the contribution-bounding subquery, on the builds the tests use; each
// limit keeps a margin below the shallowest failure:
//   - SQLite (the embedded ncruces wasm build): nested function calls
//     overflow the wasm C stack at depth ~220 and panic inside the driver
//     (arithmetic at ~328; NOT/OR chains reach SQLITE_MAX_EXPR_DEPTH,
//     1000). The panic would take the proxy down, so the margin is wide.
//   - MySQL/MariaDB: MariaDB 10.11's default thread_stack (292 kB) fails
//     with error 1436 at depth ~539 (nested lower); a server configured
//     with a smaller thread_stack fails earlier.
//   - PostgreSQL: depth 3000 runs in every shape with the default
//     max_stack_depth (2 MB); "stack depth limit exceeded" comes near
//     5000. Planning such expressions takes over a second each, so the
//     limit is that of MySQL, which no real query comes near.
//
// TestDepthLimitsHold (backends) runs every shape at these depths on the
// real servers.
const (
	sqliteMaxDepth   = 150
	mysqlMaxDepth    = 400
	postgresMaxDepth = 400
)

// maxSQLBytes caps a rendered statement: far above any real query (a
// 30,000-item IN list is about 100 kB), far below the backends' own caps
// (MySQL's default max_allowed_packet is 16 MB).
const maxSQLBytes = 4 << 20
