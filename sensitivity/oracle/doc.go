// Package oracle is the brute-force sensitivity oracle (DESIGN.md
// "Brute-force oracle"): it enumerates every database of a tiny space
// (a few units over a domain of a few values), keeps those satisfying an
// optional constraint, builds neighbour pairs straight from a neighbour
// relation's definition and returns the largest L1 change of a query over
// those pairs, with a witness pair.
//
// It exists so that every closed form and graph algorithm in package
// sensitivity (and in later models: Blowfish, induced neighbours, dependent
// DP) is tested against the definition rather than against its own
// derivation. Neighbour relations are plain functions, so each model plugs
// in its own.
//
// The oracle is exponential in the size of the space and knows nothing of
// policies: it must never be used on a release path. Only _test.go files may
// import it. It imports nothing from this project.
package oracle
