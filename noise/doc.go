// Package noise owns the randomness of ddp-proxy and the exact samplers the
// release step adds to true aggregates:
//
//   - Source, the one injectable randomness interface, with CryptoSource
//     (crypto/rand, the only source production code may use) and
//     SeededSource (deterministic, for tests only);
//   - unbiased uniform integers and rational Bernoulli trials built on it;
//   - BernoulliExp, an exact Bernoulli(exp(−γ)) for rational γ, and
//     DiscreteLaplace, the exact two-sided geometric distribution, both after
//     Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
//     Privacy" (2020), Algorithms 1 and 2;
//   - Exponential, the exponential mechanism sampled exactly by rejection
//     with BernoulliExp, and its Rate ε/(2Δu) rounded down;
//   - Scale (the noise scale Δ/ε as an exact rational), Lattice (the
//     power-of-two grid real-valued sums are computed and released on) and
//     ThresholdFor (the release threshold of GROUP BY keys without a
//     declared domain).
//
// No floating-point number is ever on the sampling path: a float inverse CDF
// leaks the true value through the gaps of the floating-point grid
// (Mironov, "On significance of the least significant bits for differential
// privacy", 2012). Floats appear only where parameters are converted exactly
// (big.Rat.SetFloat64) or where a bound is computed conservatively
// (ThresholdFor, HalfWidth), never to decide a sampled value.
//
// noise imports only the standard library and sqlerr. It must never import
// planner, ledger, wire, backends, parser or policies: the release step calls
// into noise, never the other way round. Nothing here keeps global mutable
// state; every sampler takes its Source explicitly.
package noise
