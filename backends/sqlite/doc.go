// Package sqlite is the embedded SQLite backend (github.com/ncruces/go-sqlite3
// through its database/sql driver; the SQLite build is compiled into the
// module, so no cgo and no import of the deprecated .../embed package,
// which now only prints a warning). It is a backends.Engine over a pool
// whose every connection has PRAGMA case_sensitive_like = ON — Open refuses
// a build where that does not take effect — so LIKE matches case exactly,
// as in PostgreSQL. Statement timeouts and cancellation go through the
// context, which the driver turns into sqlite3_interrupt.
//
// It must never import the planner or any privacy package.
package sqlite
