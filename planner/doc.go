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
// planner may import ir, sqlerr, policies, sensitivity and noise (for
// scales). It must never import wire front ends, parser internals, ledger or
// a database driver. It defines the Backend interface that backends/
// implement.
package planner
