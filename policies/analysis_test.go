package policies

import (
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

const analysisHead = `version: 1
backend: {driver: sqlite, dsn: x.db}
datasets:
  d:
`

const analysisTable = `    tables:
      people:
        unit: id
        columns:
          sex: {type: text, domain: {values: [F, M]}}
          region: {type: text, domain: {values: [n, e, s, w]}}
          age: {type: integer, domain: {range: [0, 9]}}
`

// TestAnalysisValues checks load-time numbers derived by hand from the
// papers (and checked against the oracle in package constraints).
func TestAnalysisValues(t *testing.T) {
	cases := []struct {
		name, model string
		want        string
	}{
		{"rows and columns 2x4", "    model: induced\n    constraints: [{rows_and_columns: [sex, region]}]\n", "induced neighbours: largest Graver L1 4 "},
		{"one marginal", "    model: induced\n    constraints: [{marginal: [region]}]\n", "induced neighbours: largest Graver L1 2 "},
		{"total", "    model: induced\n    constraints: [total]\n", "induced neighbours: largest Graver L1 2 "},
		{"no constraints", "    model: induced\n", "induced neighbours: largest Graver L1 1 "},
		{"chain", "    model: induced\n    constraints: [{count: {age: [0, 1]}}, {count: {age: [1, 2]}}, {count: {age: [2, 3]}}]\n", "induced neighbours: largest Graver L1 4 "},
		{"blowfish full marginal", "    model: blowfish\n    secrets: full\n    constraints: [{marginal: [region]}]\n", "blowfish: maxT 4 "},
		{"blowfish disjoint ranges", "    model: blowfish\n    secrets: {distance: {column: age, theta: 1}}\n    constraints: [{count: {age: {range: [0, 2]}}}, {count: {age: {range: [5, 6]}}}]\n", "blowfish: maxT 3 "},
		{"blowfish total only", "    model: blowfish\n    secrets: attribute\n    constraints: [total]\n", "blowfish: maxT 1 "},
		{"secrets-only disjoint marginals (Thm 8.5)", "    model: blowfish\n    secrets: attribute\n    compensation: secrets-only\n    constraints: [{marginal: [sex]}, {marginal: [region]}]\n", "blowfish: maxT 4 "},
		// Thm 8.6: components of the range graph {[1,2],[3,4]} have 2 nodes: 2·(2+1).
		{"secrets-only distance ranges (Thm 8.6)", "    model: blowfish\n    secrets: {distance: {column: age, theta: 1}}\n    compensation: secrets-only\n    constraints: [{count: {age: {range: [1, 2]}}}, {count: {age: {range: [3, 4]}}}, {count: {age: {range: [7, 9]}}}]\n", "blowfish: maxT 3 "},
		// [0,2] touches the domain's edge: no v⁺ edge into it, so Thm 8.2
		// gives max(α, ξ) = 2, tighter than Thm 8.6's 3.
		{"secrets-only ranges at the domain edge", "    model: blowfish\n    secrets: {distance: {column: age, theta: 1}}\n    compensation: secrets-only\n    constraints: [{count: {age: {range: [0, 2]}}}, {count: {age: {range: [3, 4]}}}, {count: {age: {range: [7, 9]}}}]\n", "blowfish: maxT 2 "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := LoadBytes("t.yaml", []byte(analysisHead+c.model+analysisTable))
			if err != nil {
				t.Fatal(err)
			}
			an := p.Datasets["d"].Analysis
			if an == nil || !strings.HasPrefix(an.String(), c.want) {
				t.Fatalf("analysis %v, want prefix %q", an, c.want)
			}
		})
	}
}

// TestAnalysisRefusals: combinations without a proven bound do not load,
// and the problem names the constraints.
func TestAnalysisRefusals(t *testing.T) {
	cases := []struct{ name, model, want string }{
		{"overlapping marginals, literal", "    model: blowfish\n    secrets: attribute\n    constraints: [{marginal: [sex]}, {marginal: [region]}]\n",
			"constraints marginal: [sex]; marginal: [region] overlap"},
		{"not sparse, secrets-only", "    model: blowfish\n    secrets: full\n    compensation: secrets-only\n    constraints: [{marginal: [sex]}, {marginal: [region]}]\n",
			"are not sparse"},
		{"too many atoms", "    model: induced\n    constraints: [{marginal: [sex, age]}, {marginal: [region, age]}, {marginal: [sex, region]}]\n",
			"atoms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(analysisHead+c.model+analysisTable))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "t.yaml:") {
				t.Errorf("error %v has no file:line", err)
			}
		})
	}
}

// TestPublishedQuery: only queries whose cells are published cells (or
// unions of them over listed values) count as published; summing over a
// free marginal column would add rows whose value there is NULL.
func TestPublishedQuery(t *testing.T) {
	p, err := LoadBytes("t.yaml", []byte(analysisHead+"    model: induced\n    constraints: [{marginal: [sex, region]}, {count: {age: [1, 2]}}]\n"+analysisTable))
	if err != nil {
		t.Fatal(err)
	}
	an := p.Datasets["d"].Analysis
	F, n := ir.String("F"), ir.String("n")
	cases := []struct {
		name  string
		group []string
		where map[string][]ir.Value
		want  bool
	}{
		{"full marginal", []string{"sex", "region"}, nil, true},
		{"one cell", nil, map[string][]ir.Value{"sex": {F}, "region": {n}}, true},
		{"group within, filter the rest", []string{"region"}, map[string][]ir.Value{"sex": {F}}, true},
		{"coarser marginal (NULL regions)", []string{"sex"}, nil, false},
		{"COUNT(*) without total", nil, nil, false},
		{"value outside the domain", nil, map[string][]ir.Value{"sex": {ir.String("X")}, "region": {n}}, false},
		{"the published count", nil, map[string][]ir.Value{"age": {ir.Int(2), ir.Int(1)}}, true},
		{"a different count", nil, map[string][]ir.Value{"age": {ir.Int(1)}}, false},
	}
	for _, c := range cases {
		if got := an.PublishedQuery(c.group, c.where); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
