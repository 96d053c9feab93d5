// Package backendtest is the shared harness of the backend tests: random
// data with a public join table, random BackendQueries over every ir node
// type, and a brute-force Go evaluation of a BackendQuery (SQL three-valued
// logic, contribution bounding, clamped and quantized sums) that the real
// databases are compared with.
//
// The bounding reference relies on the renderer's documented window order:
// a unit keeps its k smallest projected tuples (group columns, then
// aggregate inputs, NULLs first). Rows that tie are identical in every
// column the aggregates read, so the expected result is unique and the
// comparison is exact, not statistical. Text is generated from ASCII only,
// so byte order (Go, SQLite) and the test database's C collation agree.
//
// Test-only: nothing outside backends' tests may import it.
package backendtest
