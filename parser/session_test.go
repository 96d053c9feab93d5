package parser

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func TestSession(t *testing.T) {
	set := func(name, value, scope string) ir.Setting { return ir.Setting{Name: name, Value: value, Scope: scope} }
	tests := []struct {
		name string
		d    Dialect
		sql  string
		verb ir.SessionVerb
		want []ir.Setting
	}{
		{"set =", Postgres, "SET search_path = public, \"My\"", ir.SessionSet, []ir.Setting{set("search_path", "public, My", "")}},
		{"set to dotted", Postgres, "SET ddp.epsilon TO 0.5", ir.SessionSet, []ir.Setting{set("ddp.epsilon", "0.5", "")}},
		{"set session", Postgres, "SET SESSION statement_timeout = 5", ir.SessionSet, []ir.Setting{set("statement_timeout", "5", "")}},
		{"set local", Postgres, "SET LOCAL work_mem = '4MB'", ir.SessionSet, []ir.Setting{set("work_mem", "4MB", "local")}},
		{"set default", Postgres, "SET x.y TO DEFAULT", ir.SessionSet, []ir.Setting{{Name: "x.y", Default: true}}},
		{"set time zone", Postgres, "SET TIME ZONE 'UTC'", ir.SessionSet, []ir.Setting{set("timezone", "UTC", "")}},
		{"set names", Postgres, "SET NAMES 'UTF8'", ir.SessionSet, []ir.Setting{set("client_encoding", "UTF8", "")}},
		{"reset", Postgres, "RESET search_path", ir.SessionReset, []ir.Setting{{Name: "search_path"}}},
		{"reset all", Postgres, "RESET ALL", ir.SessionReset, []ir.Setting{{Name: "all"}}},
		{"show", Postgres, "SHOW server_version", ir.SessionShow, []ir.Setting{{Name: "server_version"}}},
		{"show all", Postgres, "SHOW ALL", ir.SessionShow, []ir.Setting{{Name: "all"}}},
		{"show time zone", Postgres, "SHOW TIME ZONE", ir.SessionShow, []ir.Setting{{Name: "timezone"}}},
		{"begin", Postgres, "BEGIN", ir.SessionBegin, nil},
		{"start transaction", Postgres, "START TRANSACTION ISOLATION LEVEL SERIALIZABLE", ir.SessionBegin, nil},
		{"commit", Postgres, "COMMIT", ir.SessionCommit, nil},
		{"end", Postgres, "END", ir.SessionCommit, nil},
		{"rollback", Postgres, "ROLLBACK", ir.SessionRollback, nil},
		{"abort", Postgres, "ABORT", ir.SessionRollback, nil},
		{"savepoint", Postgres, "SAVEPOINT s1", ir.SessionOther, []ir.Setting{{Name: "savepoint", Value: "s1"}}},
		{"release", Postgres, "RELEASE SAVEPOINT s1", ir.SessionOther, []ir.Setting{{Name: "release savepoint", Value: "s1"}}},
		{"rollback to", Postgres, "ROLLBACK TO SAVEPOINT s1", ir.SessionOther, []ir.Setting{{Name: "rollback to savepoint", Value: "s1"}}},
		{"discard", Postgres, "DISCARD ALL", ir.SessionOther, []ir.Setting{{Name: "discard", Value: "all"}}},
		{"deallocate", Postgres, "DEALLOCATE ALL", ir.SessionOther, []ir.Setting{{Name: "deallocate", Value: "all"}}},
		{"deallocate one", Postgres, "DEALLOCATE s1", ir.SessionOther, []ir.Setting{{Name: "deallocate", Value: "s1"}}},
		{"set transaction", Postgres, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", ir.SessionOther, []ir.Setting{{Name: "transaction"}}},
		{"session characteristics", Postgres, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", ir.SessionOther, []ir.Setting{{Name: "session characteristics"}}},
		{"listen", Postgres, "LISTEN chan", ir.SessionOther, []ir.Setting{{Name: "listen", Value: "chan"}}},
		{"unlisten", Postgres, "UNLISTEN *", ir.SessionOther, []ir.Setting{{Name: "unlisten", Value: "*"}}},

		{"mysql several", MySQL, "SET @@session.Autocommit = ON, @ddp_epsilon = 0.5, GLOBAL sql_mode = DEFAULT, SESSION wait_timeout = 10",
			ir.SessionSet, []ir.Setting{set("autocommit", "ON", ""), set("ddp_epsilon", "0.5", "user"), {Name: "sql_mode", Default: true, Scope: "global"}, set("wait_timeout", "10", "")}},
		{"mysql @@global", MySQL, "SET @@global.max_connections = 10", ir.SessionSet, []ir.Setting{set("max_connections", "10", "global")}},
		{"mysql negative", MySQL, "SET @x = -3", ir.SessionSet, []ir.Setting{set("x", "-3", "user")}},
		{"mysql names", MySQL, "SET NAMES utf8mb4", ir.SessionSet, []ir.Setting{set("names", "utf8mb4", "")}},
		{"mysql names collate", MySQL, "SET NAMES utf8mb4 COLLATE utf8mb4_bin", ir.SessionSet, []ir.Setting{set("names", "utf8mb4", ""), set("collation_connection", "utf8mb4_bin", "")}},
		{"mysql character set", MySQL, "SET CHARACTER SET utf8", ir.SessionSet, []ir.Setting{set("charset", "utf8", "")}},
		{"mysql autocommit", MySQL, "SET autocommit = 0", ir.SessionSet, []ir.Setting{set("autocommit", "0", "")}},
		{"mysql set transaction", MySQL, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", ir.SessionOther, []ir.Setting{set("transaction_isolation", "READ-COMMITTED", "")}},
		{"mysql use", MySQL, "USE `Shop`", ir.SessionUse, []ir.Setting{{Name: "Shop"}}},
		{"mysql begin", MySQL, "BEGIN", ir.SessionBegin, nil},
		{"mysql start transaction", MySQL, "START TRANSACTION", ir.SessionBegin, nil},
		{"mysql commit", MySQL, "COMMIT", ir.SessionCommit, nil},
		{"mysql rollback", MySQL, "ROLLBACK", ir.SessionRollback, nil},
		{"mysql rollback to", MySQL, "ROLLBACK TO SAVEPOINT s", ir.SessionOther, []ir.Setting{{Name: "rollback to savepoint", Value: "s"}}},
		{"mysql show variables like", MySQL, "SHOW VARIABLES LIKE 'max%'", ir.SessionShow, []ir.Setting{{Name: "variables", Value: "max%"}}},
		{"mysql show global variables", MySQL, "SHOW GLOBAL VARIABLES", ir.SessionShow, []ir.Setting{{Name: "variables", Scope: "global"}}},
		{"mysql show status", MySQL, "SHOW STATUS", ir.SessionShow, []ir.Setting{{Name: "status"}}},
		{"mysql show warnings", MySQL, "SHOW WARNINGS", ir.SessionShow, []ir.Setting{{Name: "warnings"}}},
		{"mysql show errors", MySQL, "SHOW ERRORS", ir.SessionShow, []ir.Setting{{Name: "errors"}}},
		{"mysql show engines", MySQL, "SHOW ENGINES", ir.SessionShow, []ir.Setting{{Name: "engines"}}},
		{"mysql show collation", MySQL, "SHOW COLLATION LIKE 'utf8%'", ir.SessionShow, []ir.Setting{{Name: "collation", Value: "utf8%"}}},
		{"mysql show charset", MySQL, "SHOW CHARACTER SET", ir.SessionShow, []ir.Setting{{Name: "charset"}}},
		{"mysql show databases", MySQL, "SHOW DATABASES", ir.SessionShow, []ir.Setting{{Name: "databases"}}},
		{"mysql show schemas", MySQL, "SHOW SCHEMAS", ir.SessionShow, []ir.Setting{{Name: "databases"}}},
		{"mysql show tables", MySQL, "SHOW TABLES", ir.SessionShow, []ir.Setting{{Name: "tables"}}},
		{"mysql show full tables", MySQL, "SHOW FULL TABLES FROM shop LIKE 'p%'", ir.SessionShow, []ir.Setting{{Name: "tables", Value: "p%"}, {Name: "database", Value: "shop"}}},
		{"mysql show columns", MySQL, "SHOW COLUMNS FROM people", ir.SessionShow, []ir.Setting{{Name: "columns", Value: "people"}}},
		{"mysql show full columns from db", MySQL, "SHOW FULL COLUMNS FROM people FROM shop", ir.SessionShow, []ir.Setting{{Name: "columns", Value: "shop.people"}}},
		{"mysql show index", MySQL, "SHOW INDEX FROM shop.people", ir.SessionShow, []ir.Setting{{Name: "index", Value: "shop.people"}}},
		{"mysql show create table", MySQL, "SHOW CREATE TABLE people", ir.SessionShow, []ir.Setting{{Name: "create table", Value: "people"}}},
		{"mysql describe", MySQL, "DESCRIBE people", ir.SessionShow, []ir.Setting{{Name: "columns", Value: "people"}}},
		{"mysql desc", MySQL, "DESC shop.people", ir.SessionShow, []ir.Setting{{Name: "columns", Value: "shop.people"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind != ir.StmtSession {
				t.Fatalf("kind %v, want session (refused: %v)", st.Kind, st.Refused)
			}
			if st.Session.Verb != tt.verb {
				t.Errorf("verb %d, want %d", st.Session.Verb, tt.verb)
			}
			if !reflect.DeepEqual(st.Session.Settings, tt.want) {
				t.Errorf("Settings = %#v, want %#v", st.Session.Settings, tt.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	tests := []struct {
		name    string
		d       Dialect
		sql     string
		analyze bool
		query   bool // inner statement has a Query
	}{
		{"plain", Postgres, "EXPLAIN SELECT count(*) FROM t", false, true},
		{"analyze", Postgres, "EXPLAIN ANALYZE SELECT count(*) FROM t", true, true},
		{"analyze verbose", Postgres, "EXPLAIN ANALYZE VERBOSE SELECT count(*) FROM t", true, true},
		{"options", Postgres, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM t", true, true},
		{"analyze off", Postgres, "EXPLAIN (ANALYZE false, VERBOSE) SELECT count(*) FROM t", false, true},
		{"not aggregate", Postgres, "EXPLAIN SELECT * FROM t", false, false},
		{"mysql plain", MySQL, "EXPLAIN SELECT count(*) FROM t", false, true},
		{"mysql format", MySQL, "EXPLAIN FORMAT = JSON SELECT count(*) FROM t", false, true},
		{"mysql analyze", MySQL, "EXPLAIN ANALYZE SELECT count(*) FROM t", true, true},
		{"mysql describe select", MySQL, "DESCRIBE SELECT * FROM t", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind != ir.StmtExplain {
				t.Fatalf("kind %v, want explain (refused: %v)", st.Kind, st.Refused)
			}
			if st.Analyze != tt.analyze {
				t.Errorf("Analyze = %v, want %v", st.Analyze, tt.analyze)
			}
			in := st.Explain
			if in == nil || in.Kind != ir.StmtSelect {
				t.Fatalf("inner statement %#v, want a select", in)
			}
			if (in.Query != nil) != tt.query {
				t.Errorf("inner Query = %v, want present=%v (%s)", in.Query, tt.query, in.NotAggregate)
			}
			if !reflect.DeepEqual(in.Relations, []ir.TableRef{{Name: "t"}}) {
				t.Errorf("inner Relations = %v", in.Relations)
			}
		})
	}
}

// TestCursorStatements reads DECLARE, FETCH, MOVE and CLOSE as psycopg's
// named cursors send them.
func TestCursorStatements(t *testing.T) {
	st := parseOne(t, Postgres, `DECLARE "c_1" NO SCROLL CURSOR WITH HOLD FOR SELECT sex, count(*) FROM people WHERE age > $1 GROUP BY sex`)
	c := st.Cursor
	if st.Kind != ir.StmtCursor || c == nil || c.Verb != ir.CursorDeclare || c.Name != "c_1" || !c.Hold {
		t.Fatalf("DECLARE: %v %+v", st.Kind, c)
	}
	if c.Query.Kind != ir.StmtSelect || c.Query.Query == nil || len(c.Query.Relations) != 1 || c.Query.NumParams != 1 ||
		!strings.Contains(c.Query.Text, "FROM people") {
		t.Fatalf("DECLARE's query: %+v", c.Query)
	}
	for _, tt := range []struct {
		sql   string
		verb  ir.CursorVerb
		dir   ir.FetchDirection
		count int64
	}{
		{`FETCH FORWARD 2000 FROM "c_1"`, ir.CursorFetch, ir.FetchForward, 2000},
		{"FETCH c_1", ir.CursorFetch, ir.FetchForward, 1},
		{"FETCH ALL IN c_1", ir.CursorFetch, ir.FetchForward, ir.FetchAll},
		{"FETCH ABSOLUTE -1 FROM c_1", ir.CursorFetch, ir.FetchAbsolute, -1},
		{"MOVE BACKWARD 3 IN c_1", ir.CursorMove, ir.FetchBackward, 3},
		{"CLOSE c_1", ir.CursorClose, ir.FetchForward, 0},
	} {
		st := parseOne(t, Postgres, tt.sql)
		c := st.Cursor
		if st.Kind != ir.StmtCursor || c.Verb != tt.verb || c.Name != "c_1" || c.Direction != tt.dir || c.Count != tt.count {
			t.Errorf("%s: %v %+v", tt.sql, st.Kind, c)
		}
	}
	if st := parseOne(t, Postgres, "CLOSE ALL"); st.Kind != ir.StmtCursor || st.Cursor.Name != "" {
		t.Errorf("CLOSE ALL: %+v", st.Cursor)
	}
}

func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		sql  string
		code sqlerr.Code
		want string // substring of the message
	}{
		{"insert", Postgres, "INSERT INTO t VALUES (1)", sqlerr.ReadOnly, "INSERT"},
		{"update", Postgres, "UPDATE t SET a = 1", sqlerr.ReadOnly, "UPDATE"},
		{"delete", Postgres, "DELETE FROM t", sqlerr.ReadOnly, "DELETE"},
		{"merge", Postgres, "MERGE INTO t USING u ON t.a = u.a WHEN MATCHED THEN DELETE", sqlerr.ReadOnly, "MERGE"},
		{"truncate", Postgres, "TRUNCATE t", sqlerr.ReadOnly, "TRUNCATE"},
		{"create table", Postgres, "CREATE TABLE x (a int)", sqlerr.ReadOnly, "CREATE TABLE"},
		{"create table as", Postgres, "CREATE TABLE x AS SELECT * FROM t", sqlerr.ReadOnly, "CREATE TABLE AS"},
		{"create view", Postgres, "CREATE VIEW v AS SELECT 1", sqlerr.ReadOnly, "CREATE VIEW"},
		{"create function", Postgres, "CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql", sqlerr.ReadOnly, "CREATE FUNCTION"},
		{"alter", Postgres, "ALTER TABLE t ADD COLUMN b int", sqlerr.ReadOnly, "ALTER TABLE"},
		{"drop", Postgres, "DROP TABLE t", sqlerr.ReadOnly, "DROP"},
		{"grant", Postgres, "GRANT SELECT ON t TO bob", sqlerr.ReadOnly, "GRANT"},
		{"revoke", Postgres, "REVOKE SELECT ON t FROM bob", sqlerr.ReadOnly, "REVOKE"},
		{"comment", Postgres, "COMMENT ON TABLE t IS 'x'", sqlerr.ReadOnly, "COMMENT"},
		{"reindex", Postgres, "REINDEX TABLE t", sqlerr.ReadOnly, "REINDEX"},
		{"vacuum", Postgres, "VACUUM t", sqlerr.ReadOnly, "VACUUM"},
		{"analyze", Postgres, "ANALYZE t", sqlerr.ReadOnly, "ANALYZE"},
		{"cluster", Postgres, "CLUSTER t", sqlerr.ReadOnly, "CLUSTER"},
		{"lock", Postgres, "LOCK TABLE t", sqlerr.ReadOnly, "LOCK"},
		{"call", Postgres, "CALL p()", sqlerr.FeatureNotSupported, "CALL"},
		{"do", Postgres, "DO $$ BEGIN END $$", sqlerr.FeatureNotSupported, "DO"},
		{"prepare", Postgres, "PREPARE s AS SELECT 1", sqlerr.FeatureNotSupported, "PREPARE"},
		{"execute", Postgres, "EXECUTE s", sqlerr.FeatureNotSupported, "EXECUTE"},
		{"copy to", Postgres, "COPY t TO STDOUT", sqlerr.FeatureNotSupported, "COPY"},
		{"copy from", Postgres, "COPY t FROM STDIN", sqlerr.FeatureNotSupported, "COPY"},
		{"copy query", Postgres, "COPY (SELECT * FROM t) TO STDOUT", sqlerr.FeatureNotSupported, "COPY"},
		{"notify", Postgres, "NOTIFY chan", sqlerr.FeatureNotSupported, "NOTIFY"},
		{"declare binary cursor", Postgres, "DECLARE c BINARY CURSOR FOR SELECT count(*) FROM t", sqlerr.FeatureNotSupported, "BINARY"},
		{"declare cursor for update", Postgres, "DECLARE c CURSOR FOR SELECT count(*) FROM t FOR UPDATE", sqlerr.ReadOnly, "FOR UPDATE"},
		{"prepare transaction", Postgres, "PREPARE TRANSACTION 'x'", sqlerr.FeatureNotSupported, "two-phase"},
		{"select into", Postgres, "SELECT * INTO newt FROM t", sqlerr.ReadOnly, "INTO"},
		{"for update", Postgres, "SELECT count(*) FROM t FOR UPDATE", sqlerr.ReadOnly, "FOR UPDATE"},
		{"for share in subquery", Postgres, "SELECT count(*) FROM t WHERE a IN (SELECT a FROM u FOR SHARE)", sqlerr.ReadOnly, "FOR UPDATE/SHARE"},
		{"data-modifying with", Postgres, "WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d", sqlerr.ReadOnly, "DELETE"},
		{"insert in with", Postgres, "WITH d AS (INSERT INTO t VALUES (1) RETURNING a) SELECT 1", sqlerr.ReadOnly, "INSERT"},
		{"explain analyze insert", Postgres, "EXPLAIN ANALYZE INSERT INTO t VALUES (1)", sqlerr.ReadOnly, "INSERT"},
		{"explain create table as", Postgres, "EXPLAIN CREATE TABLE x AS SELECT 1", sqlerr.ReadOnly, "CREATE TABLE AS"},
		{"alter system", Postgres, "ALTER SYSTEM SET work_mem = '1MB'", sqlerr.ReadOnly, "ALTER SYSTEM"},
		{"checkpoint", Postgres, "CHECKPOINT", sqlerr.FeatureNotSupported, "CHECKPOINT"},

		{"mysql insert", MySQL, "INSERT INTO t VALUES (1)", sqlerr.ReadOnly, "INSERT"},
		{"mysql replace", MySQL, "REPLACE INTO t VALUES (1)", sqlerr.ReadOnly, "REPLACE"},
		{"mysql update", MySQL, "UPDATE t SET a = 1", sqlerr.ReadOnly, "UPDATE"},
		{"mysql delete", MySQL, "DELETE FROM t", sqlerr.ReadOnly, "DELETE"},
		{"mysql load data", MySQL, "LOAD DATA INFILE 'x' INTO TABLE t", sqlerr.ReadOnly, "LOAD DATA"},
		{"mysql truncate", MySQL, "TRUNCATE TABLE t", sqlerr.ReadOnly, "TRUNCATE"},
		{"mysql create", MySQL, "CREATE TABLE x (a int)", sqlerr.ReadOnly, "CREATE TABLE"},
		{"mysql alter", MySQL, "ALTER TABLE t ADD COLUMN b int", sqlerr.ReadOnly, "ALTER TABLE"},
		{"mysql drop", MySQL, "DROP TABLE t", sqlerr.ReadOnly, "DROP TABLE"},
		{"mysql grant", MySQL, "GRANT SELECT ON t TO bob", sqlerr.ReadOnly, "GRANT"},
		{"mysql revoke", MySQL, "REVOKE SELECT ON t FROM bob", sqlerr.ReadOnly, "REVOKE"},
		{"mysql lock tables", MySQL, "LOCK TABLES t READ", sqlerr.ReadOnly, "LOCK"},
		{"mysql analyze", MySQL, "ANALYZE TABLE t", sqlerr.ReadOnly, "ANALYZE"},
		{"mysql prepare", MySQL, "PREPARE s FROM 'SELECT 1'", sqlerr.FeatureNotSupported, "PREPARE"},
		{"mysql execute", MySQL, "EXECUTE s", sqlerr.FeatureNotSupported, "EXECUTE"},
		{"mysql do", MySQL, "DO SLEEP(1)", sqlerr.FeatureNotSupported, "DO"},
		{"mysql into outfile", MySQL, "SELECT * FROM t INTO OUTFILE '/tmp/x'", sqlerr.ReadOnly, "OUTFILE"},
		{"mysql for update", MySQL, "SELECT count(*) FROM t FOR UPDATE", sqlerr.ReadOnly, "FOR UPDATE"},
		{"mysql lock in share mode", MySQL, "SELECT count(*) FROM t WHERE a IN (SELECT a FROM u LOCK IN SHARE MODE)", sqlerr.ReadOnly, "FOR UPDATE/SHARE"},
		{"mysql explain insert", MySQL, "EXPLAIN INSERT INTO t VALUES (1)", sqlerr.ReadOnly, "INSERT"},
		{"mysql set from subquery", MySQL, "SET @x = (SELECT count(*) FROM secret)", sqlerr.FeatureNotSupported, "constant"},
		{"mysql set from function", MySQL, "SET @x = SLEEP(1)", sqlerr.FeatureNotSupported, "constant"},
		{"mysql set password", MySQL, "SET PASSWORD = 'x'", sqlerr.ReadOnly, "SET PWD"},
		{"mysql show table status", MySQL, "SHOW TABLE STATUS", sqlerr.FeatureNotSupported, "SHOW"},
		{"mysql show processlist", MySQL, "SHOW PROCESSLIST", sqlerr.FeatureNotSupported, "SHOW"},
		{"mysql show where", MySQL, "SHOW VARIABLES WHERE Value = 'x'", sqlerr.FeatureNotSupported, "LIKE"},
		{"mysql kill tidb", MySQL, "KILL TIDB 1", sqlerr.FeatureNotSupported, "KILL"},
		{"mysql flush", MySQL, "FLUSH TABLES", sqlerr.ReadOnly, "FLUSH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := parseOne(t, tt.d, tt.sql)
			if st.Kind != ir.StmtRefused {
				t.Fatalf("kind %v, want refused", st.Kind)
			}
			if !sqlerr.HasCode(st.Refused, tt.code) {
				t.Errorf("Refused = %#v, want code %s", st.Refused, tt.code.Name)
			}
			if msg := st.Refused.Error(); !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not mention %q", msg, tt.want)
			}
			if st.Query != nil || st.Session != nil || st.Explain != nil {
				t.Errorf("refused statement carries a Query/Session/Explain")
			}
		})
	}
}
