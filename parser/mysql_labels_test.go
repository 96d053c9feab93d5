package parser

import (
	"slices"
	"testing"
)

// TestMySQLColumnLabels: a MySQL select item without alias is named after
// its text as written (MariaDB's names for the same items: see
// TestMySQLColumnNamesMatchMariaDB in cmd/ddp-proxy), a column after
// the column, an aliased item after its alias; PostgreSQL items get no
// label (the planner names them count, ?column?, ...).
func TestMySQLColumnLabels(t *testing.T) {
	tests := []struct {
		d    Dialect
		sql  string
		want []string // per item: Alias, else Label, else the column's name
	}{
		{MySQL, "SELECT COUNT(*) FROM people", []string{"COUNT(*)"}},
		{MySQL, "select count( * ),  AVG(age) ,sex FROM people GROUP BY sex", []string{"count( * )", "AVG(age)", "sex"}},
		{MySQL, "SELECT people.sex, (sex), age DIV 10, COUNT(*) * 2, (COUNT(*)) FROM people GROUP BY sex, age DIV 10", []string{"sex", "sex", "age DIV 10", "COUNT(*) * 2", "(COUNT(*))"}},
		{MySQL, "SELECT SUM(age) AS s, STD(age), `sex` FROM people GROUP BY sex", []string{"s", "STD(age)", "sex"}},
		{MySQL, "SELECT sex, GROUPING(sex), COUNT(*) FROM people GROUP BY sex WITH ROLLUP", []string{"sex", "GROUPING(sex)", "COUNT(*)"}},
		{MySQL, "SELECT COUNT(*)\n\tFROM people", []string{"COUNT(*)"}},
		{MySQL, "SELECT n FROM (SELECT COUNT(*) AS n FROM people) s", []string{"n"}},
		{MySQL, "SELECT `COUNT(*)` FROM (SELECT COUNT(*) FROM people) s", []string{"COUNT(*)"}},
		{Postgres, "SELECT COUNT(*), avg(age) + 1, sex FROM people GROUP BY sex", []string{"", "", "sex"}},
	}
	for _, tt := range tests {
		st := parseOne(t, tt.d, tt.sql)
		if st.Query == nil {
			t.Errorf("%s: not an aggregate: %s", tt.sql, st.NotAggregate)
			continue
		}
		var got []string
		for _, it := range st.Query.Select {
			switch {
			case it.Alias != "":
				got = append(got, it.Alias)
			case it.Label != "":
				got = append(got, it.Label)
			case it.IsColumn():
				got = append(got, it.Arg.Name)
			default:
				got = append(got, "")
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s %s: names %q, want %q", tt.d, tt.sql, got, tt.want)
		}
	}
}
