package sqlrender

// Expression-depth limits, as the deepest parenthesis nesting Render may
// produce (Shape.Depth). Each is the backend's own limit less a margin,
// measured by TestDepthLimitsHold against the real servers:
//   - SQLite: SQLITE_MAX_EXPR_DEPTH, 1000 in the embedded build.
//   - PostgreSQL: max_stack_depth (2 MB by default) bounds the recursion
//     of the parser and executor.
//   - MySQL/MariaDB: the parser's stack and thread_stack.
const (
	sqliteMaxDepth   = 400
	postgresMaxDepth = 400
	mysqlMaxDepth    = 400
)
