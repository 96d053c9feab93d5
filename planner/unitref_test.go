package planner_test

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// unitMsg is the refusal of people's unit column (planner.yaml: unit
// person_id, not among the declared columns), written out by hand.
const unitMsg = "column people.person_id is the privacy unit: it cannot be used in queries"

// TestUnitRefusedFirst: a reference to the unit column is refused as
// such, wherever it is, before the checks that would otherwise answer
// first and send the analyst elsewhere: the parser's "not in GROUP BY"
// (whose advice leads to this same refusal), the window's input rule,
// a type error in another clause, a missing budget.
func TestUnitRefusedFirst(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tc := range []struct {
		name, sql string
		user      string // "": alice
		msg, unit string // "": unitMsg and person_id
	}{
		// The DBA's report, and following its advice.
		{name: "row read of the unit", sql: "SELECT person_id FROM people"},
		{name: "grouped by the unit", sql: "SELECT person_id FROM people GROUP BY person_id"},
		{name: "grouped by the unit with a count", sql: "SELECT person_id, COUNT(*) FROM people GROUP BY person_id"},
		{name: "qualified, ungrouped", sql: "SELECT p.person_id, COUNT(*) FROM people p"},
		{name: "in an expression, ungrouped", sql: "SELECT person_id + 1 FROM people"},
		// Another column is ungrouped; the unit is elsewhere.
		{name: "WHERE of an ungrouped read", sql: "SELECT name FROM people WHERE person_id = 3"},
		{name: "ORDER BY of an ungrouped read", sql: "SELECT age, COUNT(*) FROM people GROUP BY sex ORDER BY person_id"},
		{name: "window partition", sql: "SELECT sex, COUNT(*), SUM(COUNT(*)) OVER (PARTITION BY person_id) FROM people GROUP BY sex"},
		{name: "through a subquery", sql: "SELECT s.pid FROM (SELECT person_id AS pid FROM people) s"},
		{name: "in an aggregate subquery", sql: "SELECT COUNT(*) FROM (SELECT person_id, COUNT(*) FROM people) s"},
		// The query is otherwise in the subset.
		{name: "GROUP BY expression", sql: "SELECT COUNT(*) FROM people GROUP BY person_id % 10"},
		{name: "HAVING aggregate", sql: "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING SUM(person_id) > 3"},
		{name: "join", sql: "SELECT COUNT(*) FROM people p JOIN zips z ON z.zip = p.person_id"},
		// Bound after a clause the planner refuses for another reason.
		{name: "ORDER BY after a type error in the select list", sql: "SELECT SUM(name) FROM people ORDER BY person_id"},
		{name: "select list after a type error in WHERE", sql: "SELECT COUNT(person_id) FROM people WHERE age > 'x'"},
		// bob has no budget for social.
		{name: "before the budget check", sql: "SELECT COUNT(*) FROM checkins WHERE user_id = 3", user: "bob",
			msg: "column checkins.user_id is the privacy unit: it cannot be used in queries", unit: "user_id"},
	} {
		if tc.msg == "" {
			tc.msg, tc.unit = unitMsg, "person_id"
		}
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			t.Run(tc.name+"/"+d.String(), func(t *testing.T) {
				pl, err := plan(t, p, tc.sql, planArgs{dialect: d, user: tc.user})
				if err == nil {
					t.Fatalf("planned %+v, want the unit's refusal", pl)
				}
				e := sqlerr.As(err)
				if e.Code != sqlerr.InsufficientPrivilege || e.Message != tc.msg {
					t.Fatalf("%s %q, want %s %q", e.Code.Name, e.Message, sqlerr.InsufficientPrivilege.Name, tc.msg)
				}
				if !strings.Contains(e.Hint, "COUNT(DISTINCT "+tc.unit+")") {
					t.Errorf("hint %q does not name the use that is allowed", e.Hint)
				}
			})
		}
	}
}

// TestUnitOtherRefusalsKept: a query that does not read the unit keeps
// its refusal, and a refusal in a later clause still loses to the
// grouping refusal, as before.
func TestUnitOtherRefusalsKept(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tc := range []struct{ sql, want string }{
		{"SELECT name FROM people", "column name is selected but not in GROUP BY"},
		{"SELECT name FROM people WHERE age > 3 ORDER BY 7", "column name is selected but not in GROUP BY"},
		{"SELECT name, COUNT(*) FROM people GROUP BY name", "datasets.census.tables.people.columns.name.domain"},
	} {
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			_, err := plan(t, p, tc.sql, planArgs{dialect: d})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "privacy unit") {
				t.Errorf("%s (%v): %v, want a refusal mentioning %q", tc.sql, d, err, tc.want)
			}
		}
	}
}

// TestUnitSupportedUses: what read the unit column, or a name spelt like
// it, before still plans: COUNT(DISTINCT unit) (the number of people),
// an output named like the unit in ORDER BY, HAVING and GROUP BY, and a
// query that reads no row, whose WHERE is never bound.
func TestUnitSupportedUses(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, tc := range []struct {
		name, sql string
		check     func(t *testing.T, pl *planner.Plan)
	}{
		{"count distinct units", "SELECT COUNT(DISTINCT person_id) FROM people", func(t *testing.T, pl *planner.Plan) {
			ba := pl.Backend.Aggs[0]
			if ba.Kind != ir.CountDistinct || ba.Column == nil || *ba.Column != pl.Backend.Unit {
				t.Errorf("backend aggregate %+v, want a distinct count of the bare unit %+v", ba, pl.Backend.Unit)
			}
		}},
		{"qualified, grouped, ordered by its alias", "SELECT sex, COUNT(DISTINCT p.person_id) AS n FROM people p GROUP BY sex ORDER BY n", func(t *testing.T, pl *planner.Plan) {
			if len(pl.Groups) != 1 || len(pl.OrderBy) != 1 || pl.OrderBy[0].Output != 1 {
				t.Errorf("groups %+v, order %+v: want one key and the order on output 1", pl.Groups, pl.OrderBy)
			}
		}},
		{"ORDER BY an alias spelt like the unit", "SELECT COUNT(DISTINCT person_id) AS person_id FROM people ORDER BY person_id", func(t *testing.T, pl *planner.Plan) {
			if len(pl.OrderBy) != 1 || pl.OrderBy[0].Output != 0 {
				t.Errorf("order %+v, want output 0", pl.OrderBy)
			}
		}},
		{"HAVING an alias spelt like the unit", "SELECT sex, COUNT(*) AS person_id FROM people GROUP BY sex HAVING person_id > 3", func(t *testing.T, pl *planner.Plan) {
			if pl.Having == nil {
				t.Error("no HAVING")
			}
		}},
		{"GROUP BY an alias spelt like the unit", "SELECT floor(age / 10) AS person_id, COUNT(*) FROM people GROUP BY person_id", func(t *testing.T, pl *planner.Plan) {
			if len(pl.Backend.GroupBy) != 1 || strings.Contains(ir.FormatExpr(pl.Backend.GroupBy[0]), "person_id") {
				t.Errorf("backend keys %v, want floor(age / 10) only", pl.Backend.GroupBy)
			}
		}},
		{"reads no row", "SELECT COUNT(*) FROM people WHERE person_id = 1 LIMIT 0", func(t *testing.T, pl *planner.Plan) {
			if !pl.NoRows {
				t.Error("the plan reads rows")
			}
		}},
	} {
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			t.Run(tc.name+"/"+d.String(), func(t *testing.T) {
				pl, err := plan(t, p, tc.sql, planArgs{eps: 1, dialect: d})
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, pl)
			})
		}
	}
}

// TestDeclaredUnitIsAColumn: a policy that declares the unit among the
// columns exposes it (the DBA's choice, unchanged); only an undeclared
// unit is refused.
func TestDeclaredUnitIsAColumn(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.LoadBytes("unit.yaml", []byte(`version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    budgets: {d: {epsilon: 10}}
datasets:
  d:
    tables:
      people:
        unit: person_id
        columns:
          person_id: {type: integer, bounds: [0, 1000]}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		if _, err := plan(t, p, "SELECT COUNT(*) FROM people WHERE person_id > 3", planArgs{eps: 1, dialect: d}); err != nil {
			t.Errorf("%v: %v", d, err)
		}
	}
}
