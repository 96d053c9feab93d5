// Package mysql is the MySQL / MariaDB backend, on go-sql-driver/mysql. It
// renders the IR in sqlrender.MySQL, sets a server-side statement timeout
// on every pooled session (max_execution_time on MySQL, max_statement_time
// on MariaDB) and makes those sessions read-only, and reads the schema for
// `check --connect` and the unique-unit shortcut.
//
// It needs MySQL ≥ 8.0.17 or MariaDB ≥ 10.4 (window functions, CAST AS
// DOUBLE). It imports backends, sqlrender, ir and sqlerr only.
package mysql
