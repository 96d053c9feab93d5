package planner_test

import (
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func benchPolicyBytes(model string) []byte {
	if model == "dp" {
		return []byte(`version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    budgets: {census: {epsilon: 10}}
datasets:
  census:
    tables:
      persons:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
          age: {type: integer, bounds: [0, 9], domain: {range: [0, 9]}}
          region: {type: text, domain: {values: [n, e, s, w]}}
`)
	}
	return []byte(`version: 1
backend: {driver: sqlite, dsn: x.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    budgets: {census: {epsilon: 10}}
datasets:
  census:
    model: induced
    constraints:
      - count: {age: {range: [0, 4]}}
      - count: {age: {range: [3, 7]}}
      - count: {age: [2, 5, 8], sex: F}
      - marginal: [sex]
    tables:
      persons:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
          age: {type: integer, bounds: [0, 9], domain: {range: [0, 9]}}
          region: {type: text, domain: {values: [n, e, s, w]}}
`)
}

// BenchmarkLoadInducedPolicy is the one-time cost: parsing, validation and
// the Graver basis of the constraints.
func BenchmarkLoadInducedPolicy(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	data := benchPolicyBytes("induced")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policies.LoadBytes("bench.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanModels plans the same histogram under dp and under induced
// neighbours: planning reads the load-time analysis, so the two cost about
// the same and neither depends on the Graver computation.
func BenchmarkPlanModels(b *testing.B) {
	b.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	for _, model := range []string{"dp", "induced"} {
		b.Run(model, func(b *testing.B) {
			pol, err := policies.LoadBytes("bench.yaml", benchPolicyBytes(model))
			if err != nil {
				b.Fatal(err)
			}
			if model == "induced" && pol.Datasets["census"].Analysis.Induced == nil {
				b.Fatal("no analysis")
			}
			p := planner.New(pol)
			stmts, err := parser.Parse(parser.Postgres, "SELECT age, COUNT(*) FROM persons WHERE region = 'n' GROUP BY age")
			if err != nil {
				b.Fatal(err)
			}
			u := pol.User("alice")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Plan(planner.Request{User: u, Epsilon: 1, Dialect: "postgres", Statement: &stmts[0]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
