// Package budget holds the small types the privacy budget travels in: the
// (ε, δ) pair, and the records a budget ledger keeps about it (a charge,
// an account, a pending reservation, an audit entry). They live here, the
// lowest package that needs them, so that policies, the ledgers (the
// embedded bbolt one in package ledger, a database one beside it) and
// their consumer, package release, share them without importing one
// another. ExactDecimal, the reading of a float64 amount as the exact
// decimal both ledgers charge, lives here for the same reason: whoever
// adds charges up for display (the admin budget page) reads them as the
// ledgers do without importing one.
//
// budget imports only the standard library.
package budget
