// Package ledger owns privacy-budget accounting and the release cache of
// ddp-proxy: one bbolt file that records, per (user, dataset), how much ε and
// δ has been charged, the reservations still in flight, and every released
// answer keyed by the caller's cache key — and, next to it, the change log
// (wal.go) that makes each change durable before the bbolt file has it.
//
// # Protocol
//
// Every private answer goes through the same four steps (DESIGN.md, "Budget
// ledger"):
//
//	r, err := l.Charge(ctx, charge, limit)                // charge + audit entry, one log record (fdatasynced)
//	rows, err := backend.Run(...)                          // the private computation
//	out, err := r.CommitDeferred(cacheKey, release)       // charge final + released rows, fsync deferred
//	send(out)                                              // only now does a noisy byte leave
//
// Reserve charges before the backend runs, so a crash at any later point
// leaves the budget charged: a crash never yields an uncharged answer.
// The charge is decided in memory (exactly, under one mutex) and made
// durable by one append to the change log and one fdatasync, shared by
// every charge that arrives while the previous write runs (group commit).
// With Charge.Overlap the caller does not wait for that write before the
// backend runs; CommitDeferred and Commit wait for it instead, so it
// still precedes every byte sent. With budget leases (Options.Lease,
// lease.go) most charges wait for no fsync: they are written to the log
// inside a lease whose own record was fsynced, and a crash keeps the
// lease's unused rest charged. That fsync is the only one a fresh
// answer waits for: CommitDeferred's record rides with the next log write
// (usually the next charge's) or a short timer (Options.SettleDelay), and
// Close writes what is left. A crash before the record is durable leaves
// the reservation pending — charged — and loses the release, so a repeat
// is charged and drawn afresh; Lookup serves only durable releases (it
// waits for a deferred record of its key). Commit is the variant that
// waits for its own record. Checkpoints (every second, or when the log
// holds 32 MiB or 32,768 changes, and before the DBA's reads) switch the
// log's appends to its other segment and copy the changes of the one
// they left into the bbolt file in one fsynced transaction, while new
// changes are logged (a log write never waits for a bbolt commit); Open
// replays what only the log holds.
// Reservations a crash leaves behind stay charged and are listed by Pending
// (fail closed). Refund returns the cost and is only for failures that cannot
// depend on private data (no connection, backend down before the query ran);
// the caller decides, and a wrong Refund is a privacy leak.
//
// The Ledger implements release.Ledger, the interface its consumer owns
// (Charge, Release, Account, Remaining, Accounts, Reservations, Audit);
// Reserve, Lookup, Spent, Left, All and Pending are the same operations
// without a context, for tests and tools.
//
// # Audit history
//
// Each charge leaves an entry (audit.go): time, user, dataset, ε, δ, the
// statement's fingerprint and text, the release's cache key and the
// replica (Options.Replica). It is in the charge's log record, so it
// costs no fsync and is exactly as durable as the charge; a refund marks
// it. Audit (like Pending, All and Export) checkpoints first. Audit reads it in pages, never holding a read transaction
// while its caller works.
//
// # Retention
//
// Releases are kept until Options.Retention evicts them (retention.go): by
// age, and oldest first past a byte bound (applied as releases reach the
// bbolt file: a release still only in the log is checkpointed before it
// is served when a byte bound is set). An evicted release is gone: the
// repeat of its query is charged and drawn afresh. Compact rewrites the
// file offline to give freed pages back.
//
// # Exact arithmetic
//
// Budgets are never summed in float64. Each float64 ε or δ is read as the
// shortest decimal that round-trips to it (what the DBA wrote in the policy
// or the analyst in SET ddp.epsilon: 0.1 is 1/10) and held as an exact
// big.Rat; totals are stored as rational strings ("3/10"). So three charges
// of 0.1 fit a limit of 0.3 exactly and no rounding can let an overspend
// through. The noise mechanism must calibrate to the same ε (see
// budget.ExactDecimal), otherwise the released ε can exceed the charged one by half
// an ulp per query.
//
// # Damaged files
//
// Open creates a ledger only where no file exists, and builds it in a
// temporary file that is linked into place complete, so a file at the
// ledger path is always a whole ledger. An existing file is verified under
// its lock before bbolt maps it (verify.go: meta pages, size, every page
// bbolt will dereference), then with bbolt's Check, the budget digest over
// every account and reservation record (digest.go) and the budget
// invariants; an empty, truncated, corrupt or foreign file is refused with
// ErrDamaged and never adopted as a new ledger, because a ledger that
// starts afresh forgets charges.
//
// # Imports
//
// ledger may import budget (the shared Budget and record types) and
// sqlerr. It must never import
// planner, backends, wire or parser: the ledger does not know what a query
// is, only what it costs and the opaque bytes that were released.
package ledger
