package policies

import (
	"strings"
	"testing"
)

const ddpAliasPolicy = `version: 1
backend: {driver: sqlite, dsn: x.db}
datasets:
  s:
    model: ddp
    dependence:
      edges:
        table: friendships
        columns: [a, b]
        rho_method: eq18
        model: {MODEL}
    tables:
      t:
        unit: u
        columns:
          x: {type: integer, domain: {range: [0, 9]}}
`

// edges.rho_method next to model means the same as inside it; giving two
// different ones, or one without a model, is a problem at its line.
func TestEdgesRhoMethodAlias(t *testing.T) {
	model := "{a: 1, b: 0.5, c: 2, columns: [x], grid: {x: {range: [0, 9]}}}"
	pol, err := LoadBytes("t.yaml", []byte(strings.Replace(ddpAliasPolicy, "{MODEL}", model, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := pol.Datasets["s"].Dependence.Edges.Model.RhoMethod; got != RhoMethodEq18 {
		t.Errorf("rho_method %q, want eq18", got)
	}
	conflict := strings.Replace(ddpAliasPolicy, "{MODEL}", "{rho_method: exact, a: 1, b: 0.5, c: 2, columns: [x], grid: {x: {range: [0, 9]}}}", 1)
	if _, err := LoadBytes("t.yaml", []byte(conflict)); err == nil || !strings.Contains(err.Error(), "t.yaml:10") || !strings.Contains(err.Error(), "give it once") {
		t.Errorf("conflicting rho_method: %v", err)
	}
	noModel := strings.Replace(ddpAliasPolicy, "        model: {MODEL}\n", "", 1)
	if _, err := LoadBytes("t.yaml", []byte(noModel)); err == nil || !strings.Contains(err.Error(), "give model") {
		t.Errorf("rho_method without a model: %v", err)
	}
}
