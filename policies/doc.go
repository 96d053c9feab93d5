// Package policies owns the policy file: its schema (types.go), the loader
// (strict YAML decoding with the line of every field remembered by its
// dotted path), defaults, validation that reports every problem at once
// with file:line, the derived forms the planner needs (resolved domains,
// dataset fingerprints) and the lookup helpers (users, tables, columns).
//
// Paths. Every field is addressed by a dotted path made of mapping keys and
// sequence indexes, e.g. datasets.census.tables.people.columns.zip.domain.
// Table and column keys appear lower-case. A user is addressed by name
// (users.alice.budgets.census.epsilon); the index form (users.0...) also
// works and is the only form for a user whose name is empty, all digits or
// a duplicate. Policy.Line and Policy.Position turn a path into a line.
//
// Lifecycle. Load = parse, strict decode (unknown keys and YAML type
// errors stop here), environment, paths, then Validate, which normalizes,
// applies defaults, resolves domains, computes fingerprints and checks
// everything, returning all problems at once. A loaded Policy is read-only
// and safe for concurrent readers; Validate mutates it, so call it only
// before sharing the policy.
//
// Environment. Load reads the environment (${VAR} in backend.dsn and the
// users' password_env) once; nothing else in the package does, and the
// package holds no global mutable state.
//
// This package must never import the parser, planner, backends, noise,
// ledger or wire packages: they all depend on it. It may import ir (for
// typed domain values) and yaml.v3.
package policies
