// Package catalogtest is test material about catalog statistics, shared by
// the unit tests of the catalog rules (packages catalog and planner) and
// the end-to-end tests against real servers (cmd/ddp-proxy): one table of
// the catalog safety rules — statistics columns named or reached through
// *, positions over *, whole-row values, set operations, allowed
// relations and functions — each written once per dialect, with what the
// proxy must do in each; and the information_schema column lists of the
// MySQL servers they were checked against. Only tests import it.
package catalogtest

import (
	_ "embed"
	"fmt"
	"strings"
)

// Want is what a guard must do with a case.
type Want int

const (
	// Refused: an error with SQLSTATE 42501 (MySQL 1142); nothing is
	// forwarded.
	Refused Want = iota
	// Forwarded: the statement runs, and every statistic it reaches
	// without naming it reads as NULL.
	Forwarded
	// NotForwarded: refused as a statement the guard cannot check or
	// forward faithfully (SQLSTATE 0A000).
	NotForwarded
)

func (w Want) String() string {
	return [...]string{"refused", "forwarded", "not forwarded"}[w]
}

// Case is one attack (or one ordinary query that must keep working),
// written for each dialect that has a form of it. A dialect's statement is
// "" when the rule has no form there (MySQL has no whole-row values or
// system columns; PostgreSQL has no executable comments).
type Case struct {
	Name string
	// MySQL is the statement for MySQL and MariaDB, with the placeholders
	// of Fixture.Expand, and what the proxy must do with it.
	MySQL     string
	MySQLWant Want
	// Postgres is the same rule for PostgreSQL's pg_catalog, with the
	// placeholders of Fixture.Expand ({schema} is the tables' schema), and
	// what the proxy must do with it. A statistics column named in a
	// PostgreSQL catalog query reads as NULL (psql and pgjdbc name them),
	// where MySQL refuses it.
	Postgres     string
	PostgresWant Want
	// Ranks: on the end-to-end fixture (two private tables, one of
	// SmallRows and one of LargeRows rows, their sizes swapped between two
	// runs) the statement sent straight to the server returns different
	// results in the two runs — the attack works there, so the guard has
	// something to defeat.
	Ranks bool
	// PostgresRanks is Ranks for the PostgreSQL statement.
	PostgresRanks bool
	// Params is the number of ? markers.
	Params int
}

// Row counts of the end-to-end fixture's two tables.
const (
	SmallRows = 3
	LargeRows = 2000
)

// Fixture is what the placeholders of a case stand for:
//
//	{tables}  the two private tables' names as a list of string literals
//	{a}       the first table's name as a string literal
//	{schema}  the PostgreSQL schema of the tables (Database)
//	{innodb}  the two tables as InnoDB names ('db/name') string literals
//	{small}   SmallRows
//	{cols}    c1, ..., cN: one name per column of information_schema.TABLES
//	{row3}    the same list with TABLE_ROWS's position replaced by {small}
type Fixture struct {
	Database string
	Tables   [2]string
	// TablesColumns are the columns of information_schema.TABLES in order.
	TablesColumns []string
}

// Expand fills in sql's placeholders.
func (f Fixture) Expand(sql string) string {
	var cols, row3 []string
	for i, c := range f.TablesColumns {
		name := fmt.Sprintf("c%d", i+1)
		cols = append(cols, name)
		if strings.EqualFold(c, "TABLE_ROWS") {
			name = fmt.Sprint(SmallRows)
		}
		row3 = append(row3, name)
	}
	return strings.NewReplacer(
		"{tables}", "'"+f.Tables[0]+"', '"+f.Tables[1]+"'",
		"{a}", "'"+f.Tables[0]+"'",
		"{schema}", f.Database,
		"{innodb}", "'"+f.Database+"/"+f.Tables[0]+"', '"+f.Database+"/"+f.Tables[1]+"'",
		"{small}", fmt.Sprint(SmallRows),
		"{cols}", strings.Join(cols, ", "),
		"{row3}", strings.Join(row3, ", "),
	).Replace(sql)
}

// Cases lists the statistics rules. Tables and columns are MySQL's and
// MariaDB's; the fixture's tables have a secondary index named v.
var Cases = []Case{
	// Statistics reached without naming them: forwarded, read as NULL.
	{Name: "comment instead of a space before * (the report)", MySQL: "select/**/* from information_schema.tables where table_name in ({tables}) order by 8", MySQLWant: Forwarded, Ranks: true, Postgres: "select/**/* from pg_class where relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace order by 11", PostgresWant: Refused},
	{Name: "no spaces at all", MySQL: "select*from information_schema.tables where table_name in({tables})order by 8", MySQLWant: Forwarded, Ranks: true, Postgres: "select*from pg_class where relname in({tables})and relnamespace='{schema}'::regnamespace order by 11", PostgresWant: Refused},
	{Name: "newlines, tabs and a line comment", MySQL: "SELECT\n*\t-- x\nFROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER\nBY\t8", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT\n*\t-- x\nFROM pg_catalog.pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER\nBY\t11", PostgresWant: Refused},
	{Name: "hash comment", MySQL: "SELECT * # x\nFROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY 8 DESC", MySQLWant: Forwarded, Ranks: true},
	{Name: "qualified star", MySQL: "SELECT t.* FROM information_schema.TABLES t WHERE t.TABLE_NAME IN ({tables}) ORDER BY 8 DESC", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT c.* FROM pg_class c WHERE c.relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY 11 DESC", PostgresWant: Refused},
	{Name: "star and more", MySQL: "SELECT *, 1 FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY 8", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT *, 1 FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY 11", PostgresWant: Refused},
	{Name: "backquoted names in odd case", MySQL: "SELECT * FROM `Information_Schema`.`tAbLeS` WHERE `table_NAME` IN ({tables}) ORDER BY 8", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT * FROM \"pg_catalog\".\"pg_class\" WHERE \"relname\" IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY 11", PostgresWant: Refused},
	{Name: "GROUP BY position over star", MySQL: "SELECT *, COUNT(*) n FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) GROUP BY 8", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT *, count(*) n FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace GROUP BY 11", PostgresWant: Refused},
	{Name: "star in a derived table", MySQL: "SELECT * FROM (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})) x ORDER BY 8", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT * FROM (SELECT * FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace) x ORDER BY 11", PostgresWant: Refused},
	{Name: "star in a CTE", MySQL: "WITH x AS (SELECT * FROM information_schema.TABLES) SELECT * FROM x WHERE TABLE_NAME IN ({tables}) ORDER BY 8", MySQLWant: Forwarded, Ranks: true, Postgres: "WITH x AS (SELECT * FROM pg_class) SELECT * FROM x WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY 11", PostgresWant: Refused},
	{Name: "ORDER BY an alias from a CTE column list", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES) SELECT c3 FROM x WHERE c3 IN ({tables}) ORDER BY c8", MySQLWant: Forwarded, Ranks: true, Postgres: "WITH x(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11) AS (SELECT * FROM pg_class) SELECT c2 FROM x WHERE c2 IN ({tables}) ORDER BY c11", PostgresWant: Refused},
	{Name: "NATURAL JOIN with a candidate row count", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES NATURAL JOIN (SELECT {small} AS TABLE_ROWS) c WHERE TABLE_NAME IN ({tables})", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT relname FROM pg_class NATURAL JOIN (SELECT {small}::real AS reltuples) c WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "NATURAL JOIN over star inside EXISTS", MySQL: "SELECT o.TABLE_NAME FROM information_schema.TABLES o WHERE o.TABLE_NAME IN ({tables}) AND EXISTS (SELECT * FROM (SELECT * FROM information_schema.TABLES) i NATURAL JOIN (SELECT {small} AS TABLE_ROWS) c WHERE i.TABLE_NAME = o.TABLE_NAME)", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT o.relname FROM pg_class o WHERE o.relname IN ({tables}) AND o.relnamespace = '{schema}'::regnamespace AND EXISTS (SELECT * FROM (SELECT * FROM pg_class) i NATURAL JOIN (SELECT {small}::real AS reltuples) c WHERE i.oid = o.oid)", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "row comparison IN (SELECT * ...)", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES), y AS (SELECT c3, c8 FROM x) SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) AND (TABLE_NAME, {small}) IN (SELECT * FROM y)", MySQLWant: Forwarded, Ranks: true},
	{Name: "INTERSECT of whole rows", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})) SELECT c3 FROM (SELECT * FROM x INTERSECT SELECT {row3} FROM x) d", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT relname FROM (SELECT relname, reltuples FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace INTERSECT SELECT relname, {small}::real FROM pg_class) d", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "EXCEPT of whole rows", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})) SELECT c3 FROM (SELECT * FROM x EXCEPT SELECT {row3} FROM x) d ORDER BY c3", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT relname FROM (SELECT relname, reltuples FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace EXCEPT SELECT relname, {small}::real FROM pg_class) d ORDER BY relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "UNION DISTINCT of whole rows", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME = {a}) SELECT COUNT(*) FROM (SELECT * FROM x UNION SELECT {row3} FROM x) u", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT count(*) FROM (SELECT relname, reltuples FROM pg_class WHERE relname = {a} AND relnamespace = '{schema}'::regnamespace UNION SELECT relname, {small}::real FROM pg_class WHERE relname = {a} AND relnamespace = '{schema}'::regnamespace) u", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "MariaDB executable comment, which the grammar skips", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY /*M! TABLE_ROWS, */ TABLE_NAME", MySQLWant: Forwarded, Ranks: true},
	{Name: "STATISTICS.CARDINALITY by position", MySQL: "SELECT * FROM information_schema.STATISTICS WHERE TABLE_NAME IN ({tables}) AND INDEX_NAME = 'v' ORDER BY 10", MySQLWant: Forwarded, Ranks: true},
	{Name: "TABLES.AUTO_INCREMENT by position", MySQL: "SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY 14 DESC", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT * FROM pg_sequences WHERE schemaname = '{schema}' ORDER BY 11 DESC", PostgresWant: Refused},
	{Name: "three-part names and a star qualified by the table", MySQL: "SELECT information_schema.TABLES.TABLE_NAME, TABLES.* FROM information_schema.TABLES WHERE information_schema.TABLES.TABLE_NAME IN ({tables}) ORDER BY 9", MySQLWant: Forwarded, Ranks: true, Postgres: "SELECT pg_catalog.pg_class.relname, pg_class.* FROM pg_catalog.pg_class WHERE pg_catalog.pg_class.relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY 12", PostgresWant: Refused},
	{Name: "TABLE statement", MySQL: "TABLE information_schema.TABLES ORDER BY 8", MySQLWant: Forwarded, Postgres: "TABLE pg_class ORDER BY 11", PostgresWant: Refused},
	{Name: "a literal that reads like a statistics column", MySQL: "SELECT COLUMN_NAME, IF(EXTRA = 'auto_increment', 'YES', 'NO') FROM information_schema.COLUMNS WHERE TABLE_NAME IN ({tables})", MySQLWant: Forwarded, Postgres: "SELECT relname, CASE WHEN relkind = 'reltuples' THEN 1 ELSE 0 END FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY relname", PostgresWant: Forwarded},
	{Name: "parameters", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ? LIMIT ?, ?", MySQLWant: Forwarded, Params: 4},

	// Statistics named: refused, in any case, quoting or clause.
	{Name: "ORDER BY a statistics column", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY TABLE_ROWS", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY reltuples, relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "backquoted", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY `TABLE_ROWS`", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY \"reltuples\", relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "lower case", MySQL: "select table_name from information_schema.tables where table_name in ({tables}) order by table_rows desc", MySQLWant: Refused, Ranks: true, Postgres: "SELECT RELNAME FROM PG_CLASS WHERE RELNAME IN ({tables}) AND RELNAMESPACE = '{schema}'::REGNAMESPACE ORDER BY RELTUPLES DESC, RELNAME", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "qualified, backquoted, mixed case", MySQL: "SELECT t.TABLE_NAME FROM information_schema.TABLES t WHERE t.TABLE_NAME IN ({tables}) ORDER BY t.`Table_Rows`", MySQLWant: Refused, Ranks: true, Postgres: "SELECT c.relname FROM pg_class c WHERE c.relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY c.\"reltuples\", c.relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "inside a function", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY IF(TABLE_ROWS > 100, 1, 0), TABLE_NAME", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY CASE WHEN reltuples > 100 THEN 1 ELSE 0 END, relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "in WHERE", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) AND TABLE_ROWS > 100", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace AND reltuples > 100", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "in HAVING", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) GROUP BY TABLE_NAME HAVING MAX(TABLE_ROWS) > 100", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace GROUP BY relname HAVING max(reltuples) > 100 ORDER BY relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "in GROUP BY", MySQL: "SELECT COUNT(*), MIN(TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) GROUP BY TABLE_ROWS > 100", MySQLWant: Refused, Ranks: true, Postgres: "SELECT min(relname::text) FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace GROUP BY reltuples > 100 ORDER BY reltuples > 100", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "ORDER BY the alias of a statistics column", MySQL: "SELECT TABLE_NAME, TABLE_ROWS AS r FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY r", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname, reltuples AS r FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY r, relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "JOIN USING a statistics column", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES JOIN (SELECT {small} AS TABLE_ROWS) c USING (TABLE_ROWS) WHERE TABLE_NAME IN ({tables})", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class JOIN (SELECT {small}::real AS reltuples) c USING (reltuples) WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "MySQL executable comment, which the grammar reads", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY /*! TABLE_ROWS, */ TABLE_NAME", MySQLWant: Refused, Ranks: true},
	{Name: "in a correlated subquery", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES o WHERE TABLE_NAME IN ({tables}) AND (SELECT i.TABLE_ROWS FROM information_schema.TABLES i WHERE i.TABLE_NAME = o.TABLE_NAME) > 100", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class o WHERE o.relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace AND (SELECT i.reltuples FROM pg_class i WHERE i.oid = o.oid) > 100", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "STATISTICS.CARDINALITY", MySQL: "SELECT TABLE_NAME FROM information_schema.STATISTICS WHERE TABLE_NAME IN ({tables}) AND INDEX_NAME = 'v' ORDER BY CARDINALITY", MySQLWant: Refused, Ranks: true},
	{Name: "TABLES.AUTO_INCREMENT", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY AUTO_INCREMENT", MySQLWant: Refused, Ranks: true, Postgres: "SELECT sequencename FROM pg_sequences WHERE schemaname = '{schema}' ORDER BY last_value, sequencename", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "TABLES.DATA_LENGTH", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY DATA_LENGTH", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY pg_relation_size(oid), relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "in DEFAULT()", MySQL: "SELECT DEFAULT(TABLE_ROWS) FROM information_schema.TABLES", MySQLWant: Refused},
	{Name: "in a window", MySQL: "SELECT TABLE_NAME, ROW_NUMBER() OVER (ORDER BY TABLE_ROWS) FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname, row_number() OVER (ORDER BY reltuples, relname) FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY relname", PostgresWant: Forwarded, PostgresRanks: true},
	{Name: "TABLES.UPDATE_TIME", MySQL: "SELECT TABLE_NAME, UPDATE_TIME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})", MySQLWant: Refused, Postgres: "SELECT relname, xmin FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace", PostgresWant: Refused},
	{Name: "TABLES.CHECKSUM", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE CHECKSUM IS NOT NULL", MySQLWant: Refused},

	// Tables that are statistics through and through: not on the allow list.
	{Name: "INNODB_SYS_TABLESTATS (MariaDB)", MySQL: "SELECT * FROM information_schema.INNODB_SYS_TABLESTATS WHERE NAME IN ({innodb}) ORDER BY 4", MySQLWant: Refused, Ranks: true, Postgres: "SELECT relname FROM pg_stat_user_tables WHERE schemaname = '{schema}' ORDER BY n_live_tup, relname", PostgresWant: Refused},
	{Name: "INNODB_TABLESTATS (MySQL 8)", MySQL: "SELECT * FROM information_schema.INNODB_TABLESTATS", MySQLWant: Refused, Postgres: "SELECT * FROM pg_statistic", PostgresWant: Refused},
	{Name: "PARTITIONS", MySQL: "SELECT * FROM information_schema.PARTITIONS WHERE TABLE_NAME IN ({tables}) ORDER BY 13", MySQLWant: Refused, Ranks: true},
	{Name: "COLUMN_STATISTICS (MySQL 8)", MySQL: "SELECT * FROM information_schema.COLUMN_STATISTICS", MySQLWant: Refused, Postgres: "SELECT * FROM pg_stats WHERE schemaname = '{schema}'", PostgresWant: Refused},
	{Name: "TABLE_STATISTICS (MariaDB userstat)", MySQL: "SELECT * FROM information_schema.TABLE_STATISTICS", MySQLWant: Refused, Postgres: "SELECT * FROM pg_statio_user_tables", PostgresWant: Refused},

	// Rules with a form in one dialect only.
	{Name: "whole-row value", Postgres: "SELECT count(*) FROM pg_class c WHERE c.relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace AND c::text LIKE '%,{small},%'", PostgresWant: Refused},
	{Name: "row value of a star", Postgres: "SELECT count(*) FROM pg_class c WHERE c.relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace AND (c.*)::text LIKE '%,{small},%'", PostgresWant: Refused},
	{Name: "column alias list on a catalog relation", Postgres: "SELECT relname FROM pg_class AS c(o, relname, ns, t, ot, ow, am, fn, ts, p, r) WHERE relname IN ({tables}) ORDER BY r", PostgresWant: Refused},
	{Name: "statistics function off the allow list", Postgres: "SELECT relname, pg_stat_get_live_tuples(oid) FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace", PostgresWant: Refused,
		MySQL: "SELECT TABLE_NAME, SLEEP(0) FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})", MySQLWant: Refused},
	{Name: "activity function", Postgres: "SELECT pg_backend_pid()", PostgresWant: Refused},
	{Name: "size function", Postgres: "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relname IN ({tables}) AND relnamespace = '{schema}'::regnamespace ORDER BY relname", PostgresWant: Forwarded, PostgresRanks: true},

	// Forms the restored text could not forward faithfully.
	{Name: "LIMIT ? OFFSET ? would swap the arguments", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES LIMIT ? OFFSET ?", MySQLWant: NotForwarded, Params: 2},
}

//go:embed testdata/mariadb-10.11.tsv
var mariaDB string

//go:embed testdata/mysql-8.0.tsv
var mySQL8 string

// InfoSchemas are information_schema column lists as MySQLInfoSchemaQuery
// returns them (table, column, data type, column type): MariaDB 10.11's
// as read from the server, MySQL 8.0's (TABLES, STATISTICS and COLUMNS)
// from its reference manual.
func InfoSchemas() map[string][][4]string {
	out := map[string][][4]string{}
	for name, tsv := range map[string]string{"mariadb-10.11": mariaDB, "mysql-8.0": mySQL8} {
		for _, line := range strings.Split(strings.TrimSpace(tsv), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 4 {
				panic("catalogtest: bad line in " + name + ": " + line)
			}
			out[name] = append(out[name], [4]string{f[0], f[1], f[2], f[3]})
		}
	}
	return out
}
