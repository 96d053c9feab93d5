package release_test

import (
	"context"
	"math"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestExpressionAggregatesRelease runs aggregates over expressions through
// the whole release path on SQLite and (with DDP_TEST_POSTGRES_DSN)
// PostgreSQL at ε = 10, where the noise is far below the tolerance, and
// compares with the values computed from the fixture's rows; an argument
// that could overflow is refused with 22003 before anything is charged.
func TestExpressionAggregatesRelease(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testExpressionAggregatesRelease(t, newFixture(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { testExpressionAggregatesRelease(t, newPostgresFixture(t)) })
}

func testExpressionAggregatesRelease(t *testing.T, f *fixture) {
	e := release.New(f.be, f.ledger, release.Options{Source: noise.SeededSource(7)})
	var over50, doubled, females float64
	var avgIncomeK float64
	for i := 0; i < nPeople; i++ {
		if trueAge(i) > 50 {
			over50++
		}
		doubled += float64(2 * trueAge(i))
		if i%2 == 0 {
			females++
		}
		avgIncomeK += trueIncome(i) / 1000
	}
	avgIncomeK /= nPeople
	tests := []struct {
		sql       string
		want, tol float64
	}{
		{"SELECT SUM(CASE WHEN age > 50 THEN 1 ELSE 0 END) FROM people", over50, 5},
		{"SELECT SUM(age * 2) FROM people", doubled, 200},
		{"SELECT COUNT(CASE WHEN sex = 'Female' THEN 1 END) FROM people", females, 5},
		{"SELECT AVG(income / 1000) FROM people", avgIncomeK, 0.01},
	}
	for _, tc := range tests {
		res, err := f.run(t, e, "alice", tc.sql, 10)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		v, _ := res.Rows[0][0].AsFloat()
		if math.Abs(v-tc.want) > tc.tol {
			t.Errorf("%s = %g, want %g ± %g", tc.sql, v, tc.want, tc.tol)
		}
	}
	before, err := f.ledger.Spent("alice", "census")
	if err != nil {
		t.Fatal(err)
	}
	sqlText := "SELECT SUM(age * 9223372036854775807) FROM people"
	if f.schema != "" {
		sqlText = "SELECT SUM(age * 9223372036854775807) FROM " + f.schema + ".people"
	}
	stmts, err := parser.Parse(parser.Postgres, sqlText)
	if err != nil {
		t.Fatal(err)
	}
	u := f.pol.User("alice")
	pl, err := f.p.Plan(planner.Request{User: u, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]})
	if err == nil {
		_, err = e.Run(context.Background(), u, pl)
	}
	if !sqlerr.HasCode(err, sqlerr.NumericValueOutOfRange) {
		t.Fatalf("%s: got %v, want 22003", sqlText, err)
	}
	after, err := f.ledger.Spent("alice", "census")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the refused query was charged: spent %+v, then %+v", before, after)
	}
}
