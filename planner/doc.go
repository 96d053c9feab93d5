// Package planner turns a parsed statement plus the policy into a Plan: for
// a private aggregate, the backend query (an ir.BackendQuery with the
// contribution bound), one noise step per true aggregate with its
// sensitivity and ε share, how group keys are chosen (declared domain or
// threshold selection), and the post-processing (HAVING, ORDER BY, LIMIT)
// applied to the noisy rows; for a public or catalog statement, the
// pass-through decision. Planning is pure: it never talks to a backend, never
// draws noise and never spends budget (package release does), so explain can
// call it freely.
//
// Totality. Every expression evaluated on private rows is total: it cannot
// raise an error for any value the row may hold, because whether a query
// fails is itself an exact bit about the data (an overflow that happens
// only for one person's salary reads that salary by binary search).
// Private and public-joined columns enter expressions through their clamp
// to the declared bounds (or the extent of a declared numeric domain);
// package exprtype computes each expression's type and range by interval
// arithmetic and the planner refuses, at plan time and before any charge,
// any expression whose range can leave the backend type (int64; |x| ≤
// 1e300 for doubles, and no product that can underflow to zero), any type
// error and any LIKE pattern that is not a well-formed literal. A column
// without bounds may be compared, never computed with. The renderer emits
// forms that cannot fail (clamps in BIGINT/DOUBLE, saturating sums).
//
// Group keys. A GROUP BY key is a column or an expression (lowered by
// exprtype.GroupKey, like an aggregate argument). Its key set is a
// declared domain, the distinct values of a public column, or for an
// expression the domain exprtype derives from the policy; with a key
// set every key is released and zero counts are noised, otherwise keys
// come from threshold selection (δ > 0) or the query is refused. A WHERE
// conjunct on a key alone narrows its key set (narrow.go: those groups
// are empty on every database). Without an aggregate, a query over key
// sets is answered with the keys alone (Plan.KeysOnly), free.
//
// Grouping sets (ROLLUP, CUBE, GROUPING SETS; groupingsets.go). The query
// is planned as the GROUP BY of all its keys (the finest grouping). With
// key sets for all of them, each set's rows may be summed from the noisy
// finest cells (post-processing) or each distinct set released as its own
// histogram with ε shared among the noisy sets (one charge); the plan
// takes the one with the smaller total noise variance over all rows.
// Without key sets, the sets are released separately, threshold selection
// where a set has no key set.
//
// Failures that cannot depend on data are refused here too, uncharged: a
// literal of the wrong type (42883/42804) or a quoted number that does not
// parse (22P02), text with a NUL byte or invalid UTF-8 (22021), and a
// backend statement over the backend's fixed limits — bind parameters
// (54000) and expression depth (54001), measured by rendering the backend
// query exactly (Options.Limits, filled by the caller from the dialect).
//
// planner may import ir, sqlerr, exprtype, policies, sensitivity and noise
// (for scales). It must never import wire front ends, parser internals, ledger or
// a database driver. It defines the Backend interface that backends/
// implement.
package planner
