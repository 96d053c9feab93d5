// Package demo builds everything `ddp-proxy demo` needs on a machine with
// nothing but Go: an SQLite database with realistic tables and a commented
// policy file that protects them, plus example queries to show a newcomer.
//
// It owns the demo data: a 5,000-row sample of the UCI Adult census data,
// embedded from data/adult_sample.csv.gz (CC BY 4.0; see data/README.md for
// the attribution and how the sample was made), loaded as the private
// table people; and a synthetic, Gowalla-like check-in data set generated
// from a fixed seed (private checkins, the friendships between users, and
// the public cells and venue_categories tables). Everything is
// deterministic: two builds write the same rows.
//
// Build writes the files; it does not start the proxy, open the ledger or
// listen on anything (the demo command does). The generated policy is an
// ordinary policy file, loaded by policies.Load like any other.
//
// demo may import policies (for constants only) and the SQLite driver. It
// must never import the planner, release, ledger, wire front ends or any
// privacy code: the demo is data and configuration, not a second path
// around the checks.
package demo
