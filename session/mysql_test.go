package session

import (
	"context"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/wire/mysqlwire"
)

// mySQLSession opens a MySQL session on the SQLite fixture (database
// "test", user alice).
func mySQLSession(t *testing.T) mysqlwire.Session {
	t.Helper()
	f := sqliteFixture(t)
	my, err := f.p.MySQLHandler().NewSession(context.Background(), 7, "alice", "test")
	if err != nil {
		t.Fatal(err)
	}
	return my
}

// myResult is what a MySQL statement sent to the recorder.
type myResult struct {
	Columns []Column
	Rows    [][]ir.Value
}

func myQuery(t *testing.T, my mysqlwire.Session, sql string) myResult {
	t.Helper()
	rec := &recorder{t: t}
	if err := my.Query(context.Background(), sql, rec); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return myResult{rec.cols, rec.rows}
}

// TestMySQLLocalSelects: connectors' connect-time SELECTs are answered by
// the MySQL layer from the parser's tree, whatever the comments, casing,
// quoting or version comments around them.
func TestMySQLLocalSelects(t *testing.T) {
	my := mySQLSession(t)
	comment := "ddp-proxy privacy proxy (aggregate queries answered with differential privacy)"
	tests := []struct {
		sql  string
		cols []string
		vals []ir.Value
	}{
		{"SELECT @@version_comment LIMIT 1", []string{"@@version_comment"}, []ir.Value{ir.String(comment)}},
		{"/* mysql-connector-j */ SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client",
			[]string{"auto_increment_increment", "@@character_set_client"}, []ir.Value{ir.Int(1), ir.String("utf8mb4")}},
		{"select 1", []string{"1"}, []ir.Value{ir.Int(1)}},
		{"SELECT DATABASE(), USER() u, 'a,b' `x y`;", []string{"DATABASE()", "u", "x y"}, []ir.Value{ir.String("test"), ir.String("alice@%"), ir.String("a,b")}},
		{"SELECT @ddp_epsilon FROM DUAL", []string{"@ddp_epsilon"}, []ir.Value{ir.Float(0.1)}},
		// Comments inside the statement and odd casing: the old text
		// patterns only stripped leading comments.
		{"SELECT /* probe */ @@Version_Comment AS `c` -- trailing\n", []string{"c"}, []ir.Value{ir.String(comment)}},
		{"sElEcT @@GLOBAL.max_allowed_packet, -2, 2.5, TRUE, NULL, connection_id()",
			[]string{"@@GLOBAL.max_allowed_packet", "-2", "2.5", "TRUE", "NULL", "connection_id()"},
			[]ir.Value{ir.Int(4 << 20), ir.Int(-2), ir.Float(2.5), ir.Int(1), ir.Null(), ir.Int(7)}},
		// A version comment is read as MySQL reads it: its content runs.
		{"/*!40101 SELECT @@character_set_results */", []string{"@@character_set_results"}, []ir.Value{ir.String("utf8mb4")}},
		{"SELECT @@version_comment AS 'quoted alias'", []string{"quoted alias"}, []ir.Value{ir.String(comment)}},
		// The port of listen.mysql (the fixture's default), not MySQL's.
		{"SELECT @@port", []string{"@@port"}, []ir.Value{ir.Int(13306)}},
	}
	for _, tc := range tests {
		r := myQuery(t, my, tc.sql)
		if len(r.Columns) != len(tc.cols) || len(r.Rows) != 1 {
			t.Errorf("%q: columns %+v rows %+v", tc.sql, r.Columns, r.Rows)
			continue
		}
		for i, c := range r.Columns {
			if c.Name != tc.cols[i] {
				t.Errorf("%q: column %d is %q, want %q", tc.sql, i, c.Name, tc.cols[i])
			}
			if got := r.Rows[0][i]; got != tc.vals[i] {
				t.Errorf("%q: value %d is %+v, want %+v", tc.sql, i, got, tc.vals[i])
			}
		}
	}
	if err := my.Query(context.Background(), "SELECT @@no_such_variable", &Collector{}); !sqlerr.HasCode(err, sqlerr.UndefinedObject) {
		t.Errorf("unknown system variable: %v", err)
	}
	// Not local: a function the MySQL layer does not know goes on to the
	// planner, which refuses it (nothing answered as a session value).
	if c := (&Collector{}); my.Query(context.Background(), "SELECT SLEEP(1)", c) == nil {
		t.Errorf("SELECT SLEEP(1) answered: %+v", c)
	}
}

// TestMySQLHandshakeSets: the SET statements connectors send on connect,
// in their spellings, change what the session reports.
func TestMySQLHandshakeSets(t *testing.T) {
	my := mySQLSession(t)
	read := func(sql string) ir.Value {
		t.Helper()
		r := myQuery(t, my, sql)
		if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
			t.Fatalf("%s: %+v", sql, r)
		}
		return r.Rows[0][0]
	}
	steps := []struct {
		set, read string
		want      ir.Value
	}{
		{"SET @ddp_epsilon:=0.05", "SELECT @ddp_epsilon", ir.Float(0.05)},
		{"SET SESSION ddp_epsilon = 0.25", "SELECT @@ddp_epsilon", ir.Float(0.25)},
		{"/*!40101 SET NAMES utf8 */", "SELECT @@character_set_client", ir.String("utf8")},
		{"set /* c */ AUTOCOMMIT = off", "SELECT @@autocommit", ir.Int(0)},
		{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "SELECT @@transaction_isolation", ir.String("READ-COMMITTED")},
		{"SET @@session.tx_isolation = 'serializable'", "SELECT @@transaction_isolation", ir.String("SERIALIZABLE")},
		{"SET SESSION TRANSACTION READ ONLY", "SELECT @@transaction_read_only", ir.Int(1)},
		{"set session transaction_read_only = ON", "SELECT @@tx_read_only", ir.Int(1)},
		{"SET sql_mode = 'A'", "SELECT @@sql_mode", ir.String("A")},
		// Connector/J's and MariaDB Connector/J's sql_mode: appended to
		// the current value.
		{"set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')", "SELECT @@sql_mode", ir.String("A,STRICT_TRANS_TABLES")},
		{"SET @@session.sql_mode = CONCAT(@@SQL_MODE, ',B', ',C')", "SELECT @@sql_mode", ir.String("A,STRICT_TRANS_TABLES,B,C")},
	}
	for _, s := range steps {
		myQuery(t, my, s.set)
		if got := read(s.read); got != s.want {
			t.Errorf("after %q: %s = %+v, want %+v", s.set, s.read, got, s.want)
		}
	}
	for _, tc := range []struct {
		sql  string
		code sqlerr.Code
	}{
		{"SET sql_mode = concat(@@sql_mode, (SELECT x FROM t))", sqlerr.FeatureNotSupported},
		{"SET sql_mode = concat(@@time_zone, ',X')", sqlerr.FeatureNotSupported},
		{"SET @@global.sql_mode = concat(@@sql_mode, ',X')", sqlerr.InsufficientPrivilege},
		{"SET @ddp_epsilon = 100", sqlerr.InvalidParameterValue},
		{"SET SESSION TRANSACTION READ WRITE", sqlerr.InsufficientPrivilege},
		{"SET transaction_isolation = 'sometimes'", sqlerr.InvalidParameterValue},
	} {
		if err := my.Query(context.Background(), tc.sql, &Collector{}); !sqlerr.HasCode(err, tc.code) {
			t.Errorf("%s: %v, want %s", tc.sql, err, tc.code.Name)
		}
	}
	if got := read("SELECT @@sql_mode"); got != ir.String("A,STRICT_TRANS_TABLES,B,C") {
		t.Errorf("a refused SET changed sql_mode: %+v", got)
	}
}

// TestMySQLShowFull: FULL is read from the tree (a comment between SHOW
// and FULL used to hide it).
func TestMySQLShowFull(t *testing.T) {
	my := mySQLSession(t)
	for _, tc := range []struct {
		sql  string
		cols []string
	}{
		{"SHOW TABLES", []string{"Tables_in_test"}},
		{"SHOW FULL TABLES", []string{"Tables_in_test", "Table_type"}},
		{"show /* c */ full tables like 'peo%'", []string{"Tables_in_test", "Table_type"}},
		{"SHOW COLUMNS FROM people", []string{"Field", "Type", "Null", "Key", "Default", "Extra"}},
		{"SHOW FULL COLUMNS FROM people", []string{"Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"}},
	} {
		r := myQuery(t, my, tc.sql)
		var got []string
		for _, c := range r.Columns {
			got = append(got, c.Name)
		}
		if strings.Join(got, ",") != strings.Join(tc.cols, ",") {
			t.Errorf("%s: columns %v, want %v", tc.sql, got, tc.cols)
		}
		if strings.Contains(tc.sql, "tables") || strings.Contains(tc.sql, "TABLES") {
			if len(r.Rows) != 1 || r.Rows[0][0] != ir.String("people") {
				t.Errorf("%s: rows %+v", tc.sql, r.Rows)
			}
		}
	}
}

func TestLikeMatcher(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"max_allowed%", "max_allowed_packet", true},
		{"max_allowed%", "MAX_ALLOWED_PACKET", true},
		{"a_c", "abc", true},
		{"a_c", "abbc", false},
		{`a\_c`, "abc", false},
		{`a\_c`, "a_c", true},
		{"a.c", "abc", false},
		{"%", "", true},
	} {
		if got := likeMatcher(tc.pattern)(tc.s); got != tc.want {
			t.Errorf("%q LIKE %q = %v, want %v", tc.s, tc.pattern, got, tc.want)
		}
	}
}

// TestMySQLShowVariablesWhere: Connector/J 5.1's SHOW VARIABLES WHERE
// Variable_name = ... OR ... lists exactly the named variables; other
// WHERE clauses are refused.
func TestMySQLShowVariablesWhere(t *testing.T) {
	my := mySQLSession(t)
	r := myQuery(t, my, "SHOW VARIABLES WHERE Variable_name ='language' OR Variable_name = 'net_write_timeout' OR (VARIABLE_NAME IN ('wait_timeout', 'max_allowed_packet') OR variable_name LIKE 'character\\_set\\_c%')")
	var got []string
	for _, row := range r.Rows {
		got = append(got, row[0].Str+"="+row[1].Str)
	}
	want := "character_set_client=utf8mb4 character_set_connection=utf8mb4 language= max_allowed_packet=4194304 net_write_timeout=60 wait_timeout=28800"
	if strings.Join(got, " ") != want {
		t.Errorf("rows %v\nwant %s", got, want)
	}
	for _, sql := range []string{"SHOW VARIABLES WHERE Value = '1'", "SHOW VARIABLES WHERE Variable_name = 'a' AND Variable_name = 'b'", "SHOW TABLES WHERE Tables_in_test = 'people'"} {
		if err := my.Query(context.Background(), sql, &Collector{}); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

// listenPort: @@port is the listen address's port; MySQL's 3306 where the
// address has none or asks for any free port.
func TestListenPort(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:13306": "13306", "[::1]:3307": "3307", ":4000": "4000",
		"127.0.0.1:0": "3306", "off": "3306", "": "3306", "host:http": "3306"} {
		if got := listenPort(addr); got != want {
			t.Errorf("listenPort(%q) = %q, want %q", addr, got, want)
		}
	}
}

// MySQL reads a number as a truth value in HAVING, as in WHERE: a group
// is kept when the number is not 0. HAVING COUNT(*) - COUNT(*) is 0 for
// every group whatever the noise (one noisy count minus itself), + 1 is
// 1 for every group.
func TestMySQLHavingNumber(t *testing.T) {
	my := mySQLSession(t)
	myQuery(t, my, "SET @ddp_epsilon = 1")
	all := myQuery(t, my, "SELECT sex, COUNT(*) FROM people GROUP BY sex")
	if len(all.Rows) < 2 {
		t.Fatalf("the fixture has %d groups", len(all.Rows))
	}
	if r := myQuery(t, my, "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) - COUNT(*)"); len(r.Rows) != 0 {
		t.Errorf("HAVING 0 for every group kept %d rows", len(r.Rows))
	}
	if r := myQuery(t, my, "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) - COUNT(*) + 1"); len(r.Rows) != len(all.Rows) {
		t.Errorf("HAVING 1 for every group kept %d rows of %d", len(r.Rows), len(all.Rows))
	}
}

// PostgreSQL has no such reading: a number in HAVING is a type error,
// found at plan time (before any charge).
func TestPostgresHavingNumberRefused(t *testing.T) {
	f := sqliteFixture(t)
	err := f.s.Query(context.Background(), "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*)", &Collector{})
	if !sqlerr.HasCode(err, sqlerr.DatatypeMismatch) || !strings.Contains(err.Error(), "argument of HAVING must be boolean") {
		t.Fatalf("err = %v, want 42804 argument of HAVING must be boolean", err)
	}
}
