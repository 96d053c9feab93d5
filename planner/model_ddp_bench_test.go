package planner_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// BenchmarkPlanDPvsDDP plans the same query shape (a GROUP BY with a count
// and a sum) on a dp dataset and on ddp datasets: the per-query cost of
// ddp is one multiplier lookup (declared ρ: a constant; model ρ: a per-ε
// cache hit after the first query) and the explain record.
func BenchmarkPlanDPvsDDP(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol := loadDDP(b)
	p := planner.New(pol)
	user := pol.User("alice")
	for _, c := range []struct{ name, sql string }{
		{"dp", "SELECT g, COUNT(*), SUM(v) FROM p GROUP BY g"},
		{"ddp-groups", "SELECT sex, COUNT(*), SUM(age) FROM people GROUP BY sex"},
		{"ddp-edges", "SELECT topic, COUNT(*), SUM(likes) FROM posts GROUP BY topic"},
		{"ddp-model", "SELECT x, COUNT(*) FROM cells GROUP BY x"},
	} {
		stmts, err := parser.Parse(parser.Postgres, c.sql)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Plan(planner.Request{User: user, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
