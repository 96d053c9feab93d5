// Package sensitivity owns the sensitivity calculus: for each privacy model a
// policy can declare, the largest change of a query's true answer (its L1
// sensitivity) between neighbouring databases. The planner asks it for one
// number per noise step and scales noise to it; nothing else in the proxy
// reasons about neighbours.
//
// This file set covers the dp model (DESIGN.md "Privacy models" item 1):
// unbounded and bounded neighbours with a per-unit contribution bound k, for
// COUNT, GROUP BY histograms, clamped SUM and grouped SUM. Every result is an
// exact integer in the caller's lattice units (real bounds are converted to
// integer multiples of the release quantum before calling), and every entry
// point validates its inputs and reports int64 overflow as an error instead
// of wrapping, because a wrapped sensitivity would be a privacy failure.
// Later models (Blowfish, induced neighbours, dependent DP) add files here.
//
// Every closed form is checked against the brute-force oracle in
// sensitivity/oracle by property tests; the oracle is test-only and must
// never be imported by non-test code.
//
// sensitivity must never import planner, backends, wire, ledger or any
// database driver: it is pure arithmetic on numbers the planner hands it.
package sensitivity
