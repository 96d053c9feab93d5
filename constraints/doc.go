// Package constraints analyses published exact counts (DESIGN.md model 3)
// and Blowfish secret graphs (model 2) once, when a policy is loaded, and
// returns the numbers the sensitivity calculus multiplies by:
//
//   - induced (Kifer–Machanavajjhala Def. 4.4): the largest L1 norm over the
//     Graver basis of the constraint matrix A over the atoms the predicates
//     cut the domain into (InducedBound), with the closed forms min(2r, 2c)
//     for row and column sums (kifer2011 Lemma 4.1) and k for a chain of
//     k−1 pair counts;
//   - blowfish, literal reading (He et al. Def. 4.1 with compensating
//     changes of any value): maxT, the largest number of tuples that differ
//     between neighbours, from the disjoint-predicate rule (BlowfishBound);
//   - blowfish, compensation: secrets-only: the policy graph of Def. 8.3,
//     its α and ξ, and Theorem 8.2's bound (which covers Thms 8.4–8.6);
//   - blowfish, either reading, when no edge of G changes a published
//     count: maxT = 1 (edgesKeepCounts, with its proof).
//
// Per query, the induced Graver basis kept at load also bounds counts and
// sums row by row (CountBound, SumBound): the caller says what one row of
// each tuple of the constrained columns can add.
//
// Every bound is an upper bound that the brute-force oracle in
// sensitivity/oracle checks on random small policies; when no proven bound
// applies the analysis returns an error naming the constraints, and the
// policy does not load. Never guess low.
//
// The package sees the domain as integer-coded columns (value i of a column
// is its i-th declared domain value); it must not import policies, planner
// or anything that talks to a database.
package constraints
