// Package ir is the intermediate representation of queries: the single
// contract between the front ends (which parse SQL text of one dialect into
// Statement values), the planner (which checks a Query against the policy and
// lowers it into a BackendQuery) and the backends (which render a
// BackendQuery in their own SQL dialect and return the true aggregates).
//
// ir must not import any other package of this project, nor any SQL parser,
// wire or database package: front ends and backends depend on it, never the
// other way round.
package ir
