// Package exprtype owns the typing and value-range inference of the
// expression language, and with them the totality rule of DESIGN.md:
// every expression evaluated on private rows is total — it cannot raise
// an error for any value a row may hold. Whether a query fails is itself
// one exact bit about the data (an overflow that happens only for one
// person's salary reads that salary by binary search), so the decision is
// taken here, at plan time and before anything is charged, from public
// information only: the declared column types and bounds and the literals
// of the query.
//
// The analysis:
//   - gives every node a Type (integer, real, text, boolean; unknown for
//     the undeclared columns of a public table, null for the NULL literal)
//     and refuses what the backend would refuse whatever the data (a text
//     compared with a number, lower(integer), LIKE on a number, NOT of a
//     number): SQLSTATE 42883 or 42804, never a backend error after the
//     charge;
//   - coerces quoted literals the way PostgreSQL coerces an untyped
//     literal (age = '30' compares with 30; '3x' is 22P02), and refuses
//     text literals a backend would reject (a NUL byte, invalid UTF-8:
//     22021);
//   - lets a column enter a computation (arithmetic, a function) only
//     through its clamp to the declared bounds (an ir.Clamp the renderer
//     emits as LEAST(GREATEST(col, lo), hi) in BIGINT or DOUBLE), so every
//     computed value has a known range whatever the stored value; a column
//     without bounds may be compared, never computed with;
//   - computes each node's range by interval arithmetic — exactly, with
//     math/big, for integers; outward-rounded for reals, together with a
//     grain that bounds how close to zero a nonzero value can be — and
//     refuses (22003) any node whose range can leave the backend type:
//     int64 for integers, |x| ≤ MaxReal for reals, and real products that
//     could underflow to zero (PostgreSQL raises an error for that);
//   - refuses LIKE patterns that are not literals or that end in the
//     escape character (PostgreSQL raises an error when it meets one);
//   - makes division total by construction: a zero divisor gives NULL
//     (the renderer writes NULLIF(b, 0)), and the range is taken over the
//     nonzero divisors — exactly for integers (so -2^63 / -1 is refused),
//     outward-rounded for reals with an underflow check; / keeps the
//     client dialect's meaning (ir.OpDiv truncates two integers, as
//     PostgreSQL does; ir.OpRealDiv is MySQL's);
//   - analyses every arm of a CASE over the whole range of its inputs,
//     whatever condition guards it (no backend promises to evaluate only
//     the chosen arm), the range being the hull of the arms;
//   - allows only the casts that cannot fail for any value of the
//     operand's range and that every backend computes alike.
//
// The oracle test (oracle_test.go) checks every rule by brute force:
// random expressions over tiny bounded columns, every assignment
// evaluated as PostgreSQL would, every value inside the inferred range.
//
// The result is the lowered expression the backend runs: columns
// resolved through the caller's callback and clamped where they are
// computed with, literals converted to the types the analysis assumed,
// NULL propagated at plan time (PostgreSQL cannot type NULL + NULL), and
// floor/ceil/round of integers removed (they are the identity, and
// PostgreSQL would compute them in double precision).
//
// GroupKey (Scalar for a grouping key) also derives a finite domain
// (Info.Domain, domain.go): the set
// of values the lowered expression can take, the image of its columns'
// values (every integer of a computed column's clamping bounds when they
// are few, else a declared static domain) through literals, CASE arms
// (NULL without ELSE), integer arithmetic with truncating division and
// remainder, double arithmetic, casts, and each function's Image rule,
// evaluated over the product of the arguments' domains only where Go
// computes exactly what every backend computes (no text order or
// non-ASCII case mapping: those follow the backend's collation and
// locale). The planner uses it as a grouping key set. Fold computes a
// constant lowered expression by the same rules (three-valued logic for
// predicates, unsure where backends could disagree); the planner uses it
// to narrow a key set by WHERE. domain_test.go checks the domain by
// brute force, like the oracle.
//
// Functions come from one table (funcs.go): arity, type and range rule,
// domain rule (Image), totality argument and rendering per dialect. The parsers take the
// allowed names and arities from it, the renderer the spellings. Adding a
// function is one entry there plus a test.
//
// Post-processing (post.go, window.go) is the same language over one noisy
// output row (select list, HAVING, ORDER BY) and window functions over the
// output rows, computed by the proxy after the noise: PostType types and
// lowers it at plan time (the planner's result types, refusals before the
// charge), Eval and EvalWindow compute it in package release. Each table
// entry's Post field holds that function's post-processing type rule and
// evaluator, next to its WHERE rules, so the two cannot drift apart (the
// parsers allow in post-processing exactly the entries that have one).
// No range is proved there; instead evaluation is total by construction: a
// zero divisor gives NULL, integers saturate, casts that could fail are
// refused by PostType. Semantics follow the client's dialect where the IR
// does not already say it (PostDialect), checked against PostgreSQL and
// MariaDB by TestPostEvaluatorOracle.
//
// exprtype imports only ir and sqlerr. The parser, the planner and the
// SQL renderer (backends/sqlrender) import it; it must never import any
// of them, nor policies, drivers or the privacy maths.
package exprtype
