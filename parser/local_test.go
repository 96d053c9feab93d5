package parser

import (
	"reflect"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

func TestLocalSelect(t *testing.T) {
	fn := func(name, out string) ir.LocalItem { return ir.LocalItem{Kind: ir.LocalFunc, Name: name, Output: out} }
	lit := func(v ir.Value, out string) ir.LocalItem {
		return ir.LocalItem{Kind: ir.LocalLiteral, Value: v, Output: out}
	}
	tests := []struct {
		d    Dialect
		sql  string
		want []ir.LocalItem // nil: not local
	}{
		{Postgres, "SELECT version()", []ir.LocalItem{fn("version", "version")}},
		{Postgres, `select /* x */ pg_catalog.current_database() "DB", current_user, 1`,
			[]ir.LocalItem{fn("current_database", "DB"), fn("current_user", "current_user"), lit(ir.Int(1), "?column?")}},
		{Postgres, "SELECT other.version()", nil},
		{Postgres, "SELECT version(1)", nil},
		{Postgres, "SELECT count(*)", nil},
		{Postgres, "SELECT version() FROM people", nil},
		{Postgres, "SELECT version() LIMIT 1", nil},
		{Postgres, "SELECT current_time(3)", nil},
		{MySQL, "SELECT @@session.Autocommit, @@global.x g, @Eps, DATABASE(), -1.5, 'a' AS `b` FROM DUAL LIMIT 1", []ir.LocalItem{
			{Kind: ir.LocalSysVar, Name: "autocommit", Output: "@@session.Autocommit"},
			{Kind: ir.LocalSysVar, Name: "x", Global: true, Output: "g"},
			{Kind: ir.LocalUserVar, Name: "eps", Output: "@Eps"},
			fn("database", "DATABASE()"),
			lit(ir.Float(-1.5), "-1.5"),
			lit(ir.String("a"), "b"),
		}},
		{MySQL, "SELECT TRUE", []ir.LocalItem{lit(ir.Int(1), "TRUE")}},
		{MySQL, "SELECT @a := 1", nil},
		{MySQL, "SELECT 1 + 1", nil},
		{MySQL, "SELECT @@version LIMIT 0", nil},
		{MySQL, "SELECT @@version WHERE 1", nil},
		{MySQL, "SELECT @@version, (SELECT 1)", nil},
		{MySQL, "SELECT db.f()", nil},
		{MySQL, "SELECT COUNT(*) FROM people", nil},
	}
	for _, tc := range tests {
		sts, err := Parse(tc.d, tc.sql)
		if err != nil || len(sts) != 1 {
			t.Errorf("%s: %v (%d statements)", tc.sql, err, len(sts))
			continue
		}
		if got := sts[0].Local; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.sql, got, tc.want)
		}
	}
}

func TestMySQLSessionFlags(t *testing.T) {
	one := func(sql string) *ir.Session {
		t.Helper()
		sts, err := Parse(MySQL, sql)
		if err != nil || len(sts) != 1 || sts[0].Session == nil {
			t.Fatalf("%s: %v %+v", sql, err, sts)
		}
		return sts[0].Session
	}
	if !one("show /* c */ FULL tables").Full || one("SHOW TABLES").Full || !one("SHOW FULL COLUMNS FROM t").Full {
		t.Error("SHOW FULL not read")
	}
	s := one("SET autocommit=1, sql_mode = concat(@@session.sql_mode, ',A', ',B')")
	want := []ir.Setting{{Name: "autocommit", Value: "1"}, {Name: "sql_mode", Value: ",A,B", Append: true}}
	if !reflect.DeepEqual(s.Settings, want) {
		t.Errorf("concat: %+v", s.Settings)
	}
	s = one("SET @@global.sql_mode = concat(@@sql_mode, ',A')")
	if !reflect.DeepEqual(s.Settings, []ir.Setting{{Name: "sql_mode", Value: ",A", Append: true, Scope: "global"}}) {
		t.Errorf("global concat: %+v", s.Settings)
	}
	if k := one("KILL /* c */ query 12"); k.Verb != ir.SessionKill || !reflect.DeepEqual(k.Settings, []ir.Setting{{Name: "query", Value: "12"}}) {
		t.Errorf("KILL QUERY: %+v", k)
	}
	if k := one("kill connection 7"); k.Verb != ir.SessionKill || !reflect.DeepEqual(k.Settings, []ir.Setting{{Name: "connection", Value: "7"}}) {
		t.Errorf("KILL CONNECTION: %+v", k)
	}
	for _, sql := range []string{"SET sql_mode = concat(@@time_zone, ',A')", "SET sql_mode = concat(@@sql_mode, x)", "SET @m = concat(@@sql_mode, ',A')"} {
		sts, err := Parse(MySQL, sql)
		if err != nil || sts[0].Kind != ir.StmtRefused {
			t.Errorf("%s: %v %+v", sql, err, sts)
		}
	}
}

func TestPsqlList(t *testing.T) {
	const head = `SELECT n.nspname as "Schema", c.relname as "Name", 'table' as "Type", pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace `
	tests := []struct {
		sql  string
		want *ir.PsqlList
	}{
		{head + `WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1,2`,
			&ir.PsqlList{Relkinds: []string{"r", "p", ""}}},
		{head + `WHERE c.relkind IN ('v','m') AND c.relname OPERATOR(pg_catalog.~) '^(peo.*)$' COLLATE pg_catalog.default`,
			&ir.PsqlList{Relkinds: []string{"v", "m"}, Pattern: "^(peo.*)$", HasPattern: true}},
		// Comments and casing the old text patterns missed.
		{head + `WHERE C.RelKind /* kinds */ In ('r') AND c.relname OPERATOR(pg_catalog.~) /* name */ '^x$'`,
			&ir.PsqlList{Relkinds: []string{"r"}, Pattern: "^x$", HasPattern: true}},
		// \dt+ shows sizes: not answered from the policy.
		{`SELECT n.nspname as "Schema", c.relname as "Name", 'table' as "Type", 'x' as "Owner", 1 as "Size"
FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r')`, nil},
		// The words inside a string literal are not the query's columns.
		{`SELECT relname FROM pg_catalog.pg_class c WHERE 'as "Schema" as "Name" as "Type" as "Owner"' <> '' AND c.relkind IN ('r')`, nil},
		{head + `WHERE c.relkind IN ('r') AND c.oid IN (SELECT 1 FROM people)`, nil},
	}
	for _, tc := range tests {
		sts, err := Parse(Postgres, tc.sql)
		if err != nil || len(sts) != 1 {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := sts[0].PsqlList; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.sql, got, tc.want)
		}
	}
}
