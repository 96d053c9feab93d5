package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestIdentifierCase: names compare as the client's dialect defines them.
// PostgreSQL folds unquoted names to lower case and keeps quoted ones, so
// "PEOPLE" and "Age" name nothing the policy declares (people, age);
// MySQL's column names are case-insensitive, and its table names too
// unless the backend's lower_case_table_names is 0. Refusals say what
// exists, quoted in the client's dialect.
func TestIdentifierCase(t *testing.T) {
	pol := loadPolicy(t)
	p := planner.New(pol)
	for _, tt := range []struct {
		d     parser.Dialect
		exact bool // ExactTableNames
		sql   string
		code  sqlerr.Code // zero: planned
		want  string      // in the message or hint
	}{
		{parser.Postgres, false, `SELECT COUNT(*) FROM PEOPLE WHERE AGE > 30`, sqlerr.Code{}, ""},
		{parser.Postgres, false, `SELECT COUNT(*) FROM "people" WHERE "age" > 30`, sqlerr.Code{}, ""},
		{parser.Postgres, false, `SELECT COUNT(*) FROM "PEOPLE"`, sqlerr.UndefinedTable, `did you mean "people"?`},
		{parser.Postgres, false, `SELECT COUNT(*) FROM "People"`, sqlerr.UndefinedTable, "folds unquoted names"},
		{parser.Postgres, false, `SELECT COUNT(*) FROM peple`, sqlerr.UndefinedTable, `did you mean "people"?`},
		{parser.Postgres, false, `SELECT COUNT(*) FROM people WHERE "Age" > 30`, sqlerr.UndefinedColumn, `did you mean "age"?`},
		{parser.Postgres, false, `SELECT "Sex", COUNT(*) FROM people GROUP BY "Sex"`, sqlerr.UndefinedColumn, `"sex"`},
		{parser.Postgres, false, `SELECT SUM("AGE") FROM people`, sqlerr.UndefinedColumn, `did you mean "age"?`},
		{parser.Postgres, false, `SELECT COUNT(*) FROM people WHERE agee > 30`, sqlerr.UndefinedColumn, `did you mean "age"?`},
		{parser.Postgres, false, `SELECT COUNT(*) FROM people p WHERE "P".age > 30`, sqlerr.UndefinedTable, `did you mean "p"?`},
		{parser.Postgres, false, `SELECT COUNT(*) FROM people "P" WHERE "P".age > 30`, sqlerr.Code{}, ""},
		{parser.Postgres, false, `SELECT sex, COUNT(*) AS "N" FROM people GROUP BY sex ORDER BY "N"`, sqlerr.Code{}, ""},
		{parser.MySQL, false, "SELECT COUNT(*) FROM PEOPLE WHERE `AGE` > 30", sqlerr.Code{}, ""},
		{parser.MySQL, false, "SELECT SEX, COUNT(*) FROM People GROUP BY sex", sqlerr.Code{}, ""},
		{parser.MySQL, true, "SELECT COUNT(*) FROM People", sqlerr.UndefinedTable, "did you mean `people`?"},
		{parser.MySQL, true, "SELECT COUNT(*) FROM people WHERE AGE > 30", sqlerr.Code{}, ""},
		{parser.MySQL, false, "SELECT COUNT(*) FROM people WHERE agee > 30", sqlerr.UndefinedColumn, "did you mean `age`?"},
		// Messages quote names as the client's dialect does.
		{parser.MySQL, false, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY age", sqlerr.GroupingError, "column `age` must appear in the GROUP BY"},
		{parser.Postgres, false, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY age", sqlerr.GroupingError, `column "age" must appear in the GROUP BY`},
	} {
		stmts, err := parser.Parse(tt.d, tt.sql)
		if err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		req := planner.Request{User: pol.User("alice"), Epsilon: 1, Dialect: tt.d.String(), ExactTableNames: tt.exact, Statement: &stmts[0], Catalog: planner.SmallCatalog()}
		_, err = p.Plan(req)
		if tt.code == (sqlerr.Code{}) {
			if err != nil {
				t.Errorf("%v %s: %v", tt.d, tt.sql, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%v %s: planned, want %s", tt.d, tt.sql, tt.code.Name)
			continue
		}
		e := sqlerr.As(err)
		if e.Code != tt.code || !strings.Contains(e.Message+" (hint: "+e.Hint+")", tt.want) {
			t.Errorf("%v %s: %v (code %s), want %s mentioning %q", tt.d, tt.sql, err, e.Code.Name, tt.code.Name, tt.want)
		}
	}
}
