package planner

import (
	"math"
	"strings"
	"testing"
)

// The text form writes its figures as the cost notices do: scales and
// half-widths to four digits without an exponent, sensitivities and rank
// errors (bounds) with every digit. %g wrote 1e+06, ±2.99573e+06 and a
// rank error of 1234567 as 1.23457e+06, less than the bound.
func TestExplainTextFigures(t *testing.T) {
	x := Explanation{StatementClass: "private_aggregate", Dataset: "d", Model: "dp", Neighbors: "unbounded", Epsilon: 0.1,
		Columns: []ExplainCol{
			{Name: "s", Aggregate: "sum", Sensitivity: 1e6, Mechanism: "discrete_laplace", Scale: 1e7, Epsilon: 0.1, CI95: 1e7 * math.Log(20)},
			{Name: "a", Aggregate: "avg", Mechanism: "ratio", Epsilon: 0.1, CI95: 0.00012345,
				Parts: []ExplainPart{{Label: "sum(x)", Sensitivity: 2500000, Mechanism: "discrete_laplace", Scale: 5e7, Epsilon: 0.05}}},
			{Name: "m", Aggregate: "median", Sensitivity: 1, Mechanism: "exponential", Epsilon: 0.1, RankError: 1234567},
		}}
	var b strings.Builder
	x.WriteText(&b)
	got := b.String()
	for _, want := range []string{
		"sensitivity 1000000, ε 0.1, discrete_laplace scale 10000000, 95% of answers within ±29960000",
		"95% of answers within ±0.0001234",
		"part sum(x): sensitivity 2500000, ε 0.05, discrete_laplace scale 50000000",
		"rank error ≤ 1234567 rows (95%)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("explain text lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "e+") {
		t.Errorf("explain text has an exponent:\n%s", got)
	}
}
