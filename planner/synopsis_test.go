package planner_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

func synopsisPlanner(t *testing.T) *planner.Planner {
	t.Helper()
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.Load("testdata/synopsis.yaml")
	if err != nil {
		t.Fatalf("loading policy: %v", err)
	}
	return planner.New(pol)
}

func TestSynopsisRanges(t *testing.T) {
	p := synopsisPlanner(t)
	const lo, hi = math.MinInt64, math.MaxInt64
	tests := []struct {
		sql    string
		lo, hi int64
	}{
		{"SELECT COUNT(*) FROM staff WHERE salary BETWEEN 100 AND 200", 100, 200},
		{"SELECT COUNT(*) FROM staff WHERE salary < 10", lo, 9},
		{"SELECT COUNT(*) FROM staff WHERE salary <= 10", lo, 10},
		{"SELECT COUNT(*) FROM staff WHERE salary > 10", 11, hi},
		{"SELECT COUNT(*) FROM staff WHERE salary >= 10", 10, hi},
		{"SELECT COUNT(*) FROM staff WHERE 10 <= salary", 10, hi},
		{"SELECT COUNT(*) FROM staff WHERE 10 > salary", lo, 9},
		{"SELECT COUNT(*) FROM staff WHERE salary = 7", 7, 7},
		{"SELECT COUNT(*) FROM staff WHERE salary < 10.5", lo, 10},
		{"SELECT COUNT(*) FROM staff WHERE salary > 10.5", 11, hi},
		{"SELECT COUNT(*) FROM staff WHERE salary >= 10.5 AND salary <= 20.5", 11, 20},
		{"SELECT COUNT(*) FROM staff WHERE salary >= 5 AND salary < 9 AND salary > 6", 7, 8},
		{"SELECT COUNT(*) FROM staff WHERE salary = 7.5", 1, 0},
		{"SELECT COUNT(salary) AS n FROM staff WHERE staff.salary BETWEEN 1 AND 2", 1, 2},
		{"SELECT COUNT(*) FROM staff s WHERE s.salary > 3 AND s.salary < 3", 4, 2},
		// A quoted number compared with an integer column is that number
		// (PostgreSQL's untyped literal; exprtype converts it at plan time).
		{"SELECT COUNT(*) FROM staff WHERE salary < '10'", lo, 9},
	}
	var keys []string
	for _, tc := range tests {
		pl, err := plan(t, p, tc.sql, planArgs{})
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		s := pl.Synopsis
		if s == nil {
			t.Errorf("%s: not answered from the synopsis", tc.sql)
			continue
		}
		empty := tc.lo > tc.hi
		if empty != (s.Lo > s.Hi) || !empty && (s.Lo != tc.lo || s.Hi != tc.hi) {
			t.Errorf("%s: range [%d, %d], want [%d, %d]", tc.sql, s.Lo, s.Hi, tc.lo, tc.hi)
		}
		if s.Spec.Mechanism != policies.SynopsisOrderedHierarchical || s.Spec.Theta != 100 || s.Spec.Fanout != 4 || s.Epsilon != 0.5 {
			t.Errorf("%s: synopsis %+v ε %g", tc.sql, *s.Spec, s.Epsilon)
		}
		if pl.Budget.Epsilon != 0.5 || pl.Budget.Delta != 0 {
			t.Errorf("%s: budget %+v", tc.sql, pl.Budget)
		}
		keys = append(keys, s.Key)
	}
	for _, k := range keys {
		if k != keys[0] {
			t.Fatal("range counts at the same ε must share one synopsis release key")
		}
	}
	pl, err := plan(t, p, "SELECT COUNT(*) FROM staff WHERE salary < 10", planArgs{eps: 1})
	if err != nil || pl.Synopsis == nil {
		t.Fatalf("ε = 1: %v", err)
	}
	if pl.Synopsis.Key == keys[0] {
		t.Error("a different ε must release a different synopsis")
	}
}

// TestSynopsisNotUsed: anything but a pure range count on the synopsis
// column is planned as usual (under model blowfish, by the blowfish
// calculus; it may refuse).
func TestSynopsisNotUsed(t *testing.T) {
	p := synopsisPlanner(t)
	for _, sql := range []string{
		"SELECT COUNT(*) FROM staff",
		"SELECT COUNT(*) FROM staff WHERE age < 10",
		"SELECT COUNT(*) FROM staff WHERE salary < 10 OR salary > 20",
		"SELECT COUNT(*) FROM staff WHERE salary NOT BETWEEN 1 AND 5",
		"SELECT COUNT(*) FROM staff WHERE salary <> 5",
		"SELECT COUNT(*) FROM staff WHERE salary < 10 AND age < 10",
		"SELECT COUNT(*) FROM staff WHERE salary < age",
		"SELECT COUNT(*) FROM staff WHERE salary < 10 AND dept = 'a'",
		"SELECT dept, COUNT(*) FROM staff WHERE salary < 10 GROUP BY dept",
		"SELECT COUNT(age) FROM staff WHERE salary < 10",
		"SELECT SUM(salary) FROM staff WHERE salary < 10",
		"SELECT COUNT(*), SUM(salary) FROM staff WHERE salary < 10",
		"SELECT COUNT(*) FROM staff WHERE salary + 1 < 10",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err == nil && pl.Synopsis != nil {
			t.Errorf("%s: answered from the synopsis", sql)
		}
	}
}

func TestSynopsisExplain(t *testing.T) {
	p := synopsisPlanner(t)
	pl, err := plan(t, p, "SELECT COUNT(*) FROM staff WHERE salary BETWEEN 100 AND 2000", planArgs{eps: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(pl.Explain(nil))
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Synopsis struct {
			Mechanism    string  `json:"mechanism"`
			Epsilon      float64 `json:"epsilon"`
			Fanout       int     `json:"fanout"`
			Theta        int64   `json:"theta"`
			SensitivityS int64   `json:"sensitivity_s"`
			SensitivityH int64   `json:"sensitivity_h"`
			EpsilonS     float64 `json:"epsilon_s"`
			EpsilonH     float64 `json:"epsilon_h"`
		} `json:"synopsis"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(data, &x); err != nil {
		t.Fatal(err)
	}
	s := x.Synopsis
	// θ = 100 over 10000 values, f = 4: 100 blocks, trees of height
	// ⌈log_4 100⌉ = 4 below the block root: ΔS = 1, ΔH = 2·4 = 8.
	if s.Mechanism != "ordered_hierarchical" || s.Epsilon != 0.5 || s.Fanout != 4 || s.Theta != 100 || s.SensitivityS != 1 || s.SensitivityH != 8 {
		t.Errorf("explain synopsis %+v (json %s)", s, data)
	}
	if math.Abs(s.EpsilonS+s.EpsilonH-0.5) > 1e-12 || s.EpsilonS <= 0 || s.EpsilonH <= 0 {
		t.Errorf("ε split %g + %g", s.EpsilonS, s.EpsilonH)
	}
	if !strings.Contains(strings.Join(x.Notes, "\n"), "released and charged once") {
		t.Errorf("notes do not explain the synopsis: %q", x.Notes)
	}
}
