// Package dependence owns the dependence side of the ddp model (DESIGN.md
// "Privacy models" item 4, liu2016 §V–§VI): dependence coefficients ρ from a
// probabilistic model (rho.go: the friend-distance model of Eq. 26, ρ by
// Eq. 18, by Eq. 14 itself, and the any-query bound the planner uses
// because Eq. 14 alone does not cover counts and histograms), the σ/ρ fixed
// point that picks the noise multiplier m (multiplier.go), and the
// dependence structure (groups, weighted and directed edges, or a declared
// size L) read from the backend once at policy load and summarised for the
// planner (load.go).
//
// The structure is public by assumption (the paper's): it is read with
// ordinary SELECTs over the relationship or group table, never per query,
// and the planner only sees its summary (policies.DependenceStructure) and
// asks its Solver for the multiplier of an ε.
//
// dependence must never import planner, release, wire or ledger; it may
// import policies (for the declared dependence) and read the backend through
// the small Querier interface it defines.
package dependence
