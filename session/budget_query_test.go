package session

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// A SELECT over ddp.budget is evaluated as written: a script reading one
// figure (SELECT epsilon_left FROM ddp.budget WHERE dataset = 'census')
// gets one row of one column, not the whole view. The figures are checked
// against the ledger after a charge.
func TestBudgetViewQueries(t *testing.T) {
	f := sqliteFixture(t)
	mustQuery(t, f.s, "SET ddp.epsilon = 0.25; SELECT COUNT(*) FROM people")
	all := mustQuery(t, f.s, "SELECT * FROM ddp.budget")[0]
	if len(all.Columns) != len(budgetColumns) || len(all.Rows) == 0 {
		t.Fatalf("SELECT *: %d columns, %d rows", len(all.Columns), len(all.Rows))
	}
	r := mustQuery(t, f.s, "SELECT epsilon_left FROM ddp.budget WHERE dataset = 'census'")[0]
	if len(r.Columns) != 1 || r.Columns[0].Name != "epsilon_left" || r.Columns[0].Type != TypeFloat8 || len(r.Rows) != 1 {
		t.Fatalf("one figure: columns %+v, rows %v", r.Columns, r.Rows)
	}
	if got := r.Rows[0][0]; got.Kind != ir.KindFloat || got.Float != 4.75 {
		t.Errorf("epsilon_left = %v, want 4.75 (5 - 0.25)", got)
	}
	// Expressions, aliases, qualified names, ORDER BY an output, LIMIT.
	r = mustQuery(t, f.s, `SELECT b.dataset, b.epsilon_spent * 4 AS quarters FROM ddp.budget AS b
		WHERE b.epsilon_spent > 0 OR dataset <> 'census' ORDER BY quarters DESC, 1 LIMIT 1`)[0]
	if len(r.Rows) != 1 || r.Rows[0][0].Str != "census" || r.Rows[0][1].Float != 1 || r.Columns[1].Name != "quarters" {
		t.Fatalf("expression query: %+v %v", r.Columns, r.Rows)
	}
	if r := mustQuery(t, f.s, "SELECT dataset FROM ddp.budget WHERE epsilon_left > 1000")[0]; len(r.Rows) != 0 || r.Tag != "SELECT 0" {
		t.Errorf("a WHERE no row meets: %v, %q", r.Rows, r.Tag)
	}
	if r := mustQuery(t, f.s, "SELECT dataset FROM ddp.budget ORDER BY dataset DESC OFFSET 100")[0]; len(r.Rows) != 0 {
		t.Errorf("OFFSET past the end: %v", r.Rows)
	}
	for _, c := range []struct {
		sql  string
		code sqlerr.Code
	}{
		{"SELECT epsilon FROM ddp.budget", sqlerr.UndefinedColumn},
		{"SELECT x.dataset FROM ddp.budget", sqlerr.UndefinedTable},
		{"SELECT dataset FROM ddp.budget WHERE epsilon_left", sqlerr.DatatypeMismatch},
		{"SELECT dataset FROM ddp.budget WHERE dataset > 3", sqlerr.DatatypeMismatch},
	} {
		if _, err := query(f.s, context.Background(), c.sql); !sqlerr.HasCode(err, c.code) {
			t.Errorf("%s: %v, want %s", c.sql, err, c.code.SQLState)
		}
	}
	// With a table: refused for what it is (it used to say the view was
	// not exposed), nothing charged.
	before, _ := f.led.Spent("alice", "census")
	for _, sql := range []string{
		"SELECT * FROM ddp.budget, people",
		"SELECT COUNT(*) FROM people JOIN ddp.budget ON true",
		"SELECT COUNT(*) FROM people WHERE age < (SELECT MAX(epsilon_left) FROM ddp.budget)",
	} {
		_, err := query(f.s, context.Background(), sql)
		if e := sqlerr.As(err); e.Code != sqlerr.FeatureNotSupported || e.Message != "ddp.budget cannot be read together with other tables in one statement" {
			t.Errorf("%s: %v, want the budget view refused with a table", sql, err)
		}
	}
	if after, _ := f.led.Spent("alice", "census"); after != before {
		t.Errorf("refused statements charged: %+v then %+v", before, after)
	}

	// Prepared: the described columns are the select list's, and a bound
	// argument filters.
	ps := &pgSession{s: f.s}
	ctx := context.Background()
	prep, err := ps.Prepare(ctx, "SELECT dataset, epsilon_left FROM ddp.budget WHERE dataset = $1", []ir.ColType{ir.TypeUnknown})
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.Columns) != 2 || prep.Columns[1].Name != "epsilon_left" {
		t.Fatalf("described columns %+v", prep.Columns)
	}
	w := &recorder{t: t}
	if err := ps.Execute(ctx, prep, []ir.Value{ir.String("census")}, w); err != nil || len(w.rows) != 1 || w.rows[0][1].Float != 4.75 {
		t.Fatalf("execute: %v, rows %v", err, w.rows)
	}

	// MySQL names columns case-insensitively.
	my := &Session{p: f.s.p, user: f.s.user, dialect: parser.MySQL, settings: map[string]string{}}
	if r := mustQuery(t, my, "SELECT EPSILON_LEFT FROM ddp.budget WHERE Dataset = 'census'")[0]; len(r.Rows) != 1 || r.Rows[0][0].Float != 4.75 {
		t.Errorf("MySQL: %v", r.Rows)
	}
}
