// Package estimate fits dependence models from data for the advisory
// `ddp-proxy estimate-dependence` command and the DDP evaluation:
//
//   - the friend-distance model of Liu, Chakraborty and Mittal (NDSS 2016,
//     Eq. 26), P(D_j = d_j | D_i = d_i) = a(‖d_i − d_j‖₁ + b)^−c, fitted from
//     the attribute values of related pairs on the declared grid, two ways:
//     FitConditional (maximum likelihood of the grid-normalised conditional,
//     the form the ρ computation uses) and FitPairs (Backstrom, Sun and
//     Marlow, WWW 2010: the probability that two units at distance d are
//     related, by binomial maximum likelihood over all pairs of units);
//   - the maximal information coefficient (Reshef et al., Science 2011;
//     used as a dependence coefficient by Ali et al. 2022) between the
//     attributes of related pairs, MIC.
//
// Everything here reads data to produce numbers a person then declares in a
// policy. The proxy never calls it on the query path: a dependence estimated
// from the private data is itself a release about that data, and a fitted
// model that underestimates dependence weakens the DDP guarantee (Liu et al.
// §VI-D3). It imports dependence only for the model type the ρ computation
// takes; it must never import planner, release, ledger or wire.
package estimate
