// Package catalogtest is test material about catalog statistics, shared by
// the unit tests of the catalog guards (package catalog) and the
// end-to-end tests against real servers (cmd/ddp-proxy): one table of the
// ways to read a statistic of a private table through a catalog query,
// and the information_schema column lists of the servers they were
// checked against. Only tests import it.
//
// The table is meant to grow a PostgreSQL column (the same rule, written
// for pg_catalog) so that both dialects' guards run the same list.
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

// Case is one attack (or one ordinary query that must keep working).
type Case struct {
	Name string
	// MySQL is the statement for MySQL and MariaDB, with the placeholders
	// of Fixture.Expand.
	MySQL string
	Want  Want
	// Ranks: on the end-to-end fixture (two private tables, one of
	// SmallRows and one of LargeRows rows, their sizes swapped between two
	// runs) the statement sent straight to the server returns different
	// results in the two runs — the attack works there, so the guard has
	// something to defeat.
	Ranks bool
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
	{Name: "comment instead of a space before * (the report)", MySQL: "select/**/* from information_schema.tables where table_name in ({tables}) order by 8", Want: Forwarded, Ranks: true},
	{Name: "no spaces at all", MySQL: "select*from information_schema.tables where table_name in({tables})order by 8", Want: Forwarded, Ranks: true},
	{Name: "newlines, tabs and a line comment", MySQL: "SELECT\n*\t-- x\nFROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER\nBY\t8", Want: Forwarded, Ranks: true},
	{Name: "hash comment", MySQL: "SELECT * # x\nFROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY 8 DESC", Want: Forwarded, Ranks: true},
	{Name: "qualified star", MySQL: "SELECT t.* FROM information_schema.TABLES t WHERE t.TABLE_NAME IN ({tables}) ORDER BY 8 DESC", Want: Forwarded, Ranks: true},
	{Name: "star and more", MySQL: "SELECT *, 1 FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY 8", Want: Forwarded, Ranks: true},
	{Name: "backquoted names in odd case", MySQL: "SELECT * FROM `Information_Schema`.`tAbLeS` WHERE `table_NAME` IN ({tables}) ORDER BY 8", Want: Forwarded, Ranks: true},
	{Name: "GROUP BY position over star", MySQL: "SELECT *, COUNT(*) n FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) GROUP BY 8", Want: Forwarded, Ranks: true},
	{Name: "star in a derived table", MySQL: "SELECT * FROM (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})) x ORDER BY 8", Want: Forwarded, Ranks: true},
	{Name: "star in a CTE", MySQL: "WITH x AS (SELECT * FROM information_schema.TABLES) SELECT * FROM x WHERE TABLE_NAME IN ({tables}) ORDER BY 8", Want: Forwarded, Ranks: true},
	{Name: "ORDER BY an alias from a CTE column list", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES) SELECT c3 FROM x WHERE c3 IN ({tables}) ORDER BY c8", Want: Forwarded, Ranks: true},
	{Name: "NATURAL JOIN with a candidate row count", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES NATURAL JOIN (SELECT {small} AS TABLE_ROWS) c WHERE TABLE_NAME IN ({tables})", Want: Forwarded, Ranks: true},
	{Name: "NATURAL JOIN over star inside EXISTS", MySQL: "SELECT o.TABLE_NAME FROM information_schema.TABLES o WHERE o.TABLE_NAME IN ({tables}) AND EXISTS (SELECT * FROM (SELECT * FROM information_schema.TABLES) i NATURAL JOIN (SELECT {small} AS TABLE_ROWS) c WHERE i.TABLE_NAME = o.TABLE_NAME)", Want: Forwarded, Ranks: true},
	{Name: "row comparison IN (SELECT * ...)", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES), y AS (SELECT c3, c8 FROM x) SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) AND (TABLE_NAME, {small}) IN (SELECT * FROM y)", Want: Forwarded, Ranks: true},
	{Name: "INTERSECT of whole rows", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})) SELECT c3 FROM (SELECT * FROM x INTERSECT SELECT {row3} FROM x) d", Want: Forwarded, Ranks: true},
	{Name: "EXCEPT of whole rows", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})) SELECT c3 FROM (SELECT * FROM x EXCEPT SELECT {row3} FROM x) d ORDER BY c3", Want: Forwarded, Ranks: true},
	{Name: "UNION DISTINCT of whole rows", MySQL: "WITH x({cols}) AS (SELECT * FROM information_schema.TABLES WHERE TABLE_NAME = {a}) SELECT COUNT(*) FROM (SELECT * FROM x UNION SELECT {row3} FROM x) u", Want: Forwarded, Ranks: true},
	{Name: "MariaDB executable comment, which the grammar skips", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY /*M! TABLE_ROWS, */ TABLE_NAME", Want: Forwarded, Ranks: true},
	{Name: "STATISTICS.CARDINALITY by position", MySQL: "SELECT * FROM information_schema.STATISTICS WHERE TABLE_NAME IN ({tables}) AND INDEX_NAME = 'v' ORDER BY 10", Want: Forwarded, Ranks: true},
	{Name: "TABLES.AUTO_INCREMENT by position", MySQL: "SELECT * FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY 14 DESC", Want: Forwarded, Ranks: true},
	{Name: "three-part names and a star qualified by the table", MySQL: "SELECT information_schema.TABLES.TABLE_NAME, TABLES.* FROM information_schema.TABLES WHERE information_schema.TABLES.TABLE_NAME IN ({tables}) ORDER BY 9", Want: Forwarded, Ranks: true},
	{Name: "TABLE statement", MySQL: "TABLE information_schema.TABLES ORDER BY 8", Want: Forwarded},
	{Name: "a literal that reads like a statistics column", MySQL: "SELECT COLUMN_NAME, IF(EXTRA = 'auto_increment', 'YES', 'NO') FROM information_schema.COLUMNS WHERE TABLE_NAME IN ({tables})", Want: Forwarded},
	{Name: "parameters", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ? LIMIT ?, ?", Want: Forwarded, Params: 4},

	// Statistics named: refused, in any case, quoting or clause.
	{Name: "ORDER BY a statistics column", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY TABLE_ROWS", Want: Refused, Ranks: true},
	{Name: "backquoted", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY `TABLE_ROWS`", Want: Refused, Ranks: true},
	{Name: "lower case", MySQL: "select table_name from information_schema.tables where table_name in ({tables}) order by table_rows desc", Want: Refused, Ranks: true},
	{Name: "qualified, backquoted, mixed case", MySQL: "SELECT t.TABLE_NAME FROM information_schema.TABLES t WHERE t.TABLE_NAME IN ({tables}) ORDER BY t.`Table_Rows`", Want: Refused, Ranks: true},
	{Name: "inside a function", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY IF(TABLE_ROWS > 100, 1, 0), TABLE_NAME", Want: Refused, Ranks: true},
	{Name: "in WHERE", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) AND TABLE_ROWS > 100", Want: Refused, Ranks: true},
	{Name: "in HAVING", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) GROUP BY TABLE_NAME HAVING MAX(TABLE_ROWS) > 100", Want: Refused, Ranks: true},
	{Name: "in GROUP BY", MySQL: "SELECT COUNT(*), MIN(TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) GROUP BY TABLE_ROWS > 100", Want: Refused, Ranks: true},
	{Name: "ORDER BY the alias of a statistics column", MySQL: "SELECT TABLE_NAME, TABLE_ROWS AS r FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY r", Want: Refused, Ranks: true},
	{Name: "JOIN USING a statistics column", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES JOIN (SELECT {small} AS TABLE_ROWS) c USING (TABLE_ROWS) WHERE TABLE_NAME IN ({tables})", Want: Refused, Ranks: true},
	{Name: "MySQL executable comment, which the grammar reads", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY /*! TABLE_ROWS, */ TABLE_NAME", Want: Refused, Ranks: true},
	{Name: "in a correlated subquery", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES o WHERE TABLE_NAME IN ({tables}) AND (SELECT i.TABLE_ROWS FROM information_schema.TABLES i WHERE i.TABLE_NAME = o.TABLE_NAME) > 100", Want: Refused, Ranks: true},
	{Name: "STATISTICS.CARDINALITY", MySQL: "SELECT TABLE_NAME FROM information_schema.STATISTICS WHERE TABLE_NAME IN ({tables}) AND INDEX_NAME = 'v' ORDER BY CARDINALITY", Want: Refused, Ranks: true},
	{Name: "TABLES.AUTO_INCREMENT", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY AUTO_INCREMENT", Want: Refused, Ranks: true},
	{Name: "TABLES.DATA_LENGTH", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables}) ORDER BY DATA_LENGTH", Want: Refused, Ranks: true},
	{Name: "in DEFAULT()", MySQL: "SELECT DEFAULT(TABLE_ROWS) FROM information_schema.TABLES", Want: Refused},
	{Name: "in a window", MySQL: "SELECT TABLE_NAME, ROW_NUMBER() OVER (ORDER BY TABLE_ROWS) FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})", Want: Refused, Ranks: true},
	{Name: "TABLES.UPDATE_TIME", MySQL: "SELECT TABLE_NAME, UPDATE_TIME FROM information_schema.TABLES WHERE TABLE_NAME IN ({tables})", Want: Refused},
	{Name: "TABLES.CHECKSUM", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES WHERE CHECKSUM IS NOT NULL", Want: Refused},

	// Tables that are statistics through and through: not on the allow list.
	{Name: "INNODB_SYS_TABLESTATS (MariaDB)", MySQL: "SELECT * FROM information_schema.INNODB_SYS_TABLESTATS WHERE NAME IN ({innodb}) ORDER BY 4", Want: Refused, Ranks: true},
	{Name: "INNODB_TABLESTATS (MySQL 8)", MySQL: "SELECT * FROM information_schema.INNODB_TABLESTATS", Want: Refused},
	{Name: "PARTITIONS", MySQL: "SELECT * FROM information_schema.PARTITIONS WHERE TABLE_NAME IN ({tables}) ORDER BY 13", Want: Refused, Ranks: true},
	{Name: "COLUMN_STATISTICS (MySQL 8)", MySQL: "SELECT * FROM information_schema.COLUMN_STATISTICS", Want: Refused},
	{Name: "TABLE_STATISTICS (MariaDB userstat)", MySQL: "SELECT * FROM information_schema.TABLE_STATISTICS", Want: Refused},

	// Forms the restored text could not forward faithfully.
	{Name: "LIMIT ? OFFSET ? would swap the arguments", MySQL: "SELECT TABLE_NAME FROM information_schema.TABLES LIMIT ? OFFSET ?", Want: NotForwarded, Params: 2},
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
