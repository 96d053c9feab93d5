package planner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestPublicRowsAcrossDialects: a row read of public tables by a client
// of another dialect than the backend's is rendered in the backend's
// dialect, free; undeclared columns of a table with a column list stay
// hidden; a statement touching a private table stays on the private
// path; what cannot be translated exactly is refused with 0A000.
func TestPublicRowsAcrossDialects(t *testing.T) {
	sqlite := namesPolicy(t, "sqlite", "/nonexistent/demo.db")
	mysql := namesPolicy(t, "mysql", "root@tcp(127.0.0.1:3306)/test")
	pg := parser.Postgres
	my := parser.MySQL
	tests := []struct {
		name    string
		mysqlBE bool
		d       parser.Dialect
		sql     string
		want    []string    // substrings of the rendered SQL
		code    sqlerr.Code // refused with this code instead
		private bool        // planned as a private aggregate
	}{
		{name: "star expands to the declared columns", d: pg, sql: `SELECT * FROM zips`,
			want: []string{`SELECT "zips"."zip" AS "zip", "zips"."state" AS "state" FROM "zips" AS "zips"`}},
		{name: "mysql client on sqlite", d: my, sql: "SELECT `zip` FROM zips WHERE state = 'NY' ORDER BY zip DESC LIMIT 2",
			want: []string{`WHERE ("zips"."state" = ?)`, `"zips"."zip" DESC LIMIT 2`}},
		{name: "postgres client on mysql", mysqlBE: true, d: pg, sql: `SELECT z.zip AS code FROM zips z ORDER BY code OFFSET 1`,
			want: []string{"SELECT `z`.`zip` AS `code` FROM `zips` AS `z` ORDER BY (`z`.`zip` IS NULL), `z`.`zip` LIMIT 18446744073709551615 OFFSET 1"}},
		{name: "hidden column", d: pg, sql: `SELECT county FROM zips`, code: sqlerr.UndefinedColumn},
		{name: "hidden column in WHERE", d: my, sql: `SELECT zip FROM zips WHERE county = 'x'`, code: sqlerr.UndefinedColumn},
		{name: "public and private rows", d: pg, sql: `SELECT * FROM people p JOIN zips z ON p.zip = z.zip`, code: sqlerr.InsufficientPrivilege},
		{name: "public and private aggregate", d: pg, sql: `SELECT COUNT(*) FROM people p JOIN zips z ON p.zip = z.zip`, private: true},
		{name: "untranslatable function", d: pg, sql: `SELECT md5(state) FROM zips`, code: sqlerr.FeatureNotSupported, want: []string{"md5"}},
		{name: "typed division on mysql", mysqlBE: true, d: pg, sql: `SELECT zip FROM zips WHERE 7 / 2 > 1`, code: sqlerr.FeatureNotSupported, want: []string{"division"}},
		{name: "subquery", d: my, sql: `SELECT * FROM (SELECT zip FROM zips) s`, code: sqlerr.FeatureNotSupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := sqlite
			if tc.mysqlBE {
				pol = mysql
			}
			pl, err := planNames(t, pol, tc.d, "", tc.sql)
			if tc.code != (sqlerr.Code{}) {
				var se *sqlerr.Error
				if !errors.As(err, &se) || se.Code != tc.code {
					t.Fatalf("err = %v, want %s", err, tc.code.SQLState)
				}
				for _, w := range tc.want {
					if !strings.Contains(se.Error(), w) {
						t.Errorf("message %q does not name %q", se.Error(), w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.private {
				if pl.Class != planner.ClassPrivate {
					t.Fatalf("class %v, want private", pl.Class)
				}
				return
			}
			if pl.Class != planner.ClassPassthrough || !pl.Rendered || pl.Budget.Epsilon != 0 {
				t.Fatalf("class %v rendered %v budget %v: want a free translated read", pl.Class, pl.Rendered, pl.Budget)
			}
			for _, w := range tc.want {
				if !strings.Contains(pl.SQL, w) {
					t.Errorf("SQL %s\ndoes not contain %s", pl.SQL, w)
				}
			}
		})
	}
}
