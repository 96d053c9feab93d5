package session

import (
	"testing"
)

func TestParseLocalSelect(t *testing.T) {
	tests := []struct {
		sql   string
		ok    bool
		exprs []string
		alias []string
	}{
		{"SELECT @@version_comment LIMIT 1", true, []string{"@@version_comment"}, []string{""}},
		{"/* mysql-connector-j */ SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client",
			true, []string{"@@session.auto_increment_increment", "@@character_set_client"}, []string{"auto_increment_increment", ""}},
		{"select 1", true, []string{"1"}, []string{""}},
		{"SELECT DATABASE(), USER() u, 'a,b' `x y`;", true, []string{"DATABASE()", "USER()", "'a,b'"}, []string{"", "u", "x y"}},
		{"SELECT @ddp_epsilon FROM DUAL", true, []string{"@ddp_epsilon"}, []string{""}},
		{"SELECT COUNT(*) FROM people", false, nil, nil},
		{"SELECT SLEEP(1)", false, nil, nil},
		{"SELECT 1 + 1", false, nil, nil},
		{"SELECT @@version, (SELECT 1)", false, nil, nil},
	}
	for _, tc := range tests {
		items, ok := parseLocalSelect(tc.sql)
		if ok != tc.ok {
			t.Errorf("%q: ok = %v", tc.sql, ok)
			continue
		}
		for i, it := range items {
			if it.expr != tc.exprs[i] || it.alias != tc.alias[i] {
				t.Errorf("%q item %d = %+v, want %q AS %q", tc.sql, i, it, tc.exprs[i], tc.alias[i])
			}
		}
	}
}

func TestLikeRegexp(t *testing.T) {
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
		if got := likeRegexp(tc.pattern).MatchString(tc.s); got != tc.want {
			t.Errorf("%q LIKE %q = %v, want %v", tc.s, tc.pattern, got, tc.want)
		}
	}
}

func TestRewriteSQLMode(t *testing.T) {
	ms := &mySession{vars: defaultMySQLVars(4<<20, false)}
	ms.vars["sql_mode"] = "A,B"
	got := ms.rewriteSQLMode("set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')")
	if got != "set autocommit=1, sql_mode = 'A,B,STRICT_TRANS_TABLES'" {
		t.Errorf("rewrite = %q", got)
	}
	if in := "SET sql_mode = concat(@@sql_mode, (SELECT x FROM t))"; ms.rewriteSQLMode(in) != in {
		t.Errorf("a non-constant concat was rewritten")
	}
}
