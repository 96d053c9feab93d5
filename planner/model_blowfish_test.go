package planner_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func loadBlowfish(t *testing.T) *planner.Planner {
	t.Helper()
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.Load("testdata/blowfish.yaml")
	if err != nil {
		t.Fatalf("loading policy: %v", err)
	}
	return planner.New(pol)
}

// TestBlowfishSensitivities: explain's numbers equal hand-derived values.
func TestBlowfishSensitivities(t *testing.T) {
	p := loadBlowfish(t)
	tests := []struct {
		name string
		sql  string
		sens []float64 // per true aggregate, output units
		eps  float64   // charged
	}{
		// induced, rows and columns of a 2×5 table: min(2r, 2c) = 4; a
		// count changes by at most min(r, c) = 2.
		{"induced histogram", "SELECT sex, region, COUNT(*) FROM persons GROUP BY sex, region", []float64{4}, 0.5},
		{"induced histogram by region, filtered", "SELECT region, COUNT(*) FROM persons WHERE age > 3 GROUP BY region", []float64{4}, 0.5},
		{"induced filtered count", "SELECT COUNT(*) FROM persons WHERE age > 30", []float64{2}, 0.5},
		{"induced sum", "SELECT SUM(age) FROM persons", []float64{200}, 0.5},
		{"induced grouped sum", "SELECT sex, SUM(age) FROM persons GROUP BY sex", []float64{400}, 0.5},
		// Published marginals: exact and free.
		{"published marginal", "SELECT sex, COUNT(*) FROM persons GROUP BY sex", []float64{0}, 0},
		{"published total", "SELECT COUNT(*) FROM persons", []float64{0}, 0},
		// Counts that are sums of published cells: exact and free.
		{"count within a published marginal", "SELECT COUNT(*) FROM persons WHERE sex = 'F'", []float64{0}, 0},
		{"histogram within a published marginal", "SELECT region, COUNT(*) FROM persons WHERE region IN ('n', 'e') GROUP BY region", []float64{0}, 0},
		// One cell of the 2×5 table: every alternating cycle moves a cell by ±1.
		{"cell of the unpublished 2-D table", "SELECT COUNT(*) FROM persons WHERE sex = 'F' AND region = 'n'", []float64{1}, 0.5},
		// Two cells of one row: a cycle enters a row once with + and once
		// with −, so their sum moves by at most 1.
		{"two cells of a row", "SELECT COUNT(*) FROM persons WHERE sex = 'F' AND region IN ('n', 'e')", []float64{1}, 0.5},
		{"value outside the domain", "SELECT COUNT(*) FROM persons WHERE sex = 'X'", []float64{2}, 0.5},
		{"published pair count", "SELECT COUNT(*) FROM rt WHERE r IN (2, 1)", []float64{0}, 0},
		// Not published: the alternating vector ±(1,−1,1,−1,1,−1) moves
		// r ∈ {1, 3} by 2; r ∈ {1, 3, 5} by 3.
		{"unpublished pair count", "SELECT COUNT(*) FROM rt WHERE r IN (1, 3)", []float64{2}, 0.5},
		{"odd values", "SELECT COUNT(*) FROM rt WHERE r IN (1, 3, 5)", []float64{3}, 0.5},
		{"one value", "SELECT COUNT(*) FROM rt WHERE r = 4", []float64{1}, 0.5},
		{"blowfish count of a published city", "SELECT COUNT(*) FROM homes WHERE city = 'p'", []float64{0}, 0},
		// kifer §4.1 chain over 6 values: k = 6.
		{"chain histogram", "SELECT r, COUNT(*) FROM rt GROUP BY r", []float64{6}, 0.5},
		// blowfish distance θ = 5 on x, no constraints.
		{"distance sum", "SELECT SUM(x) FROM visits", []float64{5}, 0.5},
		{"distance sum grouped by kind", "SELECT kind, SUM(x) FROM visits GROUP BY kind", []float64{5}, 0.5},
		{"distance histogram of x", "SELECT x, COUNT(*) FROM visits GROUP BY x", []float64{2}, 0.5},
		{"distance count filtered on x", "SELECT COUNT(*) FROM visits WHERE x < 50", []float64{1}, 0.5},
		{"distance sum filtered on x", "SELECT SUM(x) FROM visits WHERE x < 50", []float64{100}, 0.5},
		{"untouched histogram", "SELECT kind, COUNT(*) FROM visits GROUP BY kind", []float64{0}, 0},
		{"untouched sum", "SELECT SUM(y) FROM visits WHERE kind = 'a'", []float64{0}, 0},
		{"mixed: zero part takes no ε", "SELECT COUNT(*), SUM(x) FROM visits", []float64{0, 5}, 0.5},
		// blowfish literal, one marginal over 3 cities, full secrets:
		// maxT = 3 (Thm 8.4); rooms is not constrained, so it may be NULL
		// and its declared domain is not relied on: 3 × max(9 − 1, 9).
		{"marginal literal histogram", "SELECT rooms, COUNT(*) FROM homes_full GROUP BY rooms", []float64{6}, 0.5},
		{"marginal literal sum", "SELECT SUM(rooms) FROM homes_full", []float64{27}, 0.5},
		// Partition secrets on city with a marginal on city: no secret
		// pair changes a published count, so neighbours are single
		// secret changes (was 3 × 2 and 3 × 9 before this rule).
		{"marginal kept by the partition: histogram", "SELECT rooms, COUNT(*) FROM homes GROUP BY rooms", []float64{2}, 0.5},
		{"marginal kept by the partition: sum", "SELECT SUM(rooms) FROM homes", []float64{9}, 0.5},
		{"marginal kept by the partition: count", "SELECT COUNT(*) FROM homes WHERE rooms > 4", []float64{1}, 0.5},
		{"marginal literal city histogram (published)", "SELECT city, COUNT(*) FROM homes GROUP BY city", []float64{0}, 0},
		// Issue 12's example: induced chain over x ∈ {3..6}, SUM(x)
		// clamped to [4, 6]. The closed form gave MaxHalf 2 × 6 = 12; the
		// only Graver element ±(1, −1, 1, −1) changes the clamped sum by
		// 4 − 4 + 5 − 6 = −1 (constraints.TestInducedSumChainExample
		// checks 1 against the oracle).
		{"induced chain sum (issue 12)", "SELECT SUM(x) FROM ct", []float64{1}, 0.5},
		{"induced chain sum over a subset", "SELECT SUM(x) FROM ct WHERE x IN (5, 6)", []float64{1}, 0.5},
		// w may fail the filter: each row adds 0 or its value. The best
		// element removes x = 3 and 5 rows that fail (0) and adds 4 and
		// 6: 4 + 6 = 10.
		{"induced chain sum, other filter", "SELECT SUM(x) FROM ct WHERE w > 5", []float64{10}, 0.5},
		// Grouped by x: Σ |g_a| × |clamped x| = 4 + 4 + 5 + 6 (was 4 × 6).
		{"induced chain grouped sum", "SELECT x, SUM(x) FROM ct GROUP BY x", []float64{19}, 0.5},
		// x is not the summed column of w: the bounds hold, as before.
		{"induced chain sum of an unconstrained column", "SELECT SUM(w) FROM ct", []float64{20}, 0.5},
		// blowfish literal, marginal on x (4 cells), full secrets: maxT 4
		// × a change within the clamped domain [4, 6], never NULL: 2 (was
		// 4 × 6 = 24). An upper bound: the marginal publishes the
		// multiset of x, so the true sensitivity is 0.
		// The marginal on x fixes every n_v, so SUM(x) = Σ n_v·clamp(v)
		// is published (the published-query rule, which also covers a
		// summed column).
		{"blowfish literal sum over a small domain", "SELECT SUM(x) FROM cb", []float64{0}, 0},
		// x > 4 is read exactly on the domain: a row fails it (adds 0) or
		// adds 5 or 6: maxT 4 × 6.
		{"blowfish literal filtered sum over a small domain", "SELECT SUM(x) FROM cb WHERE x > 4", []float64{24}, 0.5},
		// Every domain value passes: no row enters or leaves the WHERE.
		{"blowfish literal sum, WHERE true on the domain", "SELECT SUM(x) FROM cb WHERE x >= 3", []float64{8}, 0.5},
		{"blowfish literal sum, WHERE false on the domain", "SELECT SUM(x) FROM cb WHERE x > 6", []float64{0}, 0},
		// A real column: maxT 2 × (0.5 − 0.25) on the lattice (γ divides
		// 0.25); the bounds alone gave 2 × 1.
		{"blowfish literal sum of a real column", "SELECT SUM(x) FROM rb", []float64{0}, 0},
		{"blowfish literal filtered sum of a real column", "SELECT SUM(x) FROM rb WHERE x > 0.3", []float64{1}, 0.5},
		// Bucketed partition of age: WHERE clauses that are unions of
		// buckets are untouched by secret pairs.
		{"bucket-aligned count", "SELECT COUNT(*) FROM folks WHERE age BETWEEN 18 AND 64", []float64{0}, 0},
		{"bucket-aligned union", "SELECT COUNT(*) FROM folks WHERE age < 18 OR age >= 65", []float64{0}, 0},
		{"not aligned", "SELECT COUNT(*) FROM folks WHERE age >= 21", []float64{1}, 0.5},
		{"aligned filter, other column grouped", "SELECT sex, COUNT(*) FROM folks WHERE age >= 65 GROUP BY sex", []float64{2}, 0.5},
		// A secret pair moves age within its bucket: by at most the widest
		// bucket, 120 − 65 = 55.
		{"bucket sum", "SELECT SUM(age) FROM folks WHERE age BETWEEN 0 AND 17", []float64{55}, 0.5},
		{"bucket sum, filter not aligned", "SELECT SUM(age) FROM folks WHERE age > 30", []float64{120}, 0.5},
		// secrets-only, attribute, disjoint marginals of sizes 3 and 2:
		// Thm 8.5, maxT = 3; c(q) uses G's edges.
		{"secrets-only histogram", "SELECT rooms, COUNT(*) FROM flats GROUP BY rooms", []float64{6}, 0.5},
		{"secrets-only count", "SELECT COUNT(*) FROM flats WHERE rooms > 3", []float64{3}, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := plan(t, p, tc.sql, planArgs{})
			if err != nil {
				t.Fatal(err)
			}
			if len(pl.Aggs) != len(tc.sens) {
				t.Fatalf("%d aggregates, want %d", len(pl.Aggs), len(tc.sens))
			}
			for i, a := range pl.Aggs {
				if got := float64(a.Sensitivity) * a.Quantum; got != tc.sens[i] {
					t.Errorf("%s: sensitivity %g, want %g (notes %v)", a.Label, got, tc.sens[i], pl.Notes)
				}
				if a.Sensitivity == 0 && a.Epsilon != 0 {
					t.Errorf("%s: exact aggregate takes ε %g", a.Label, a.Epsilon)
				}
			}
			if pl.Budget.Epsilon != tc.eps {
				t.Errorf("charged ε %g, want %g", pl.Budget.Epsilon, tc.eps)
			}
		})
	}
}

func TestBlowfishExplainJSON(t *testing.T) {
	p := loadBlowfish(t)
	pl, err := plan(t, p, "SELECT rooms, COUNT(*) FROM flats GROUP BY rooms", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pl.Explain(nil))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"secrets", "constraints", "max_tuple_changes", "policy_graph", "per_change_contribution", "reading", "rule"} {
		if _, ok := m[k]; !ok {
			t.Errorf("explain --json lacks %q: %s", k, b)
		}
	}
	if pg := m["policy_graph"].(map[string]any); pg["alpha"] != 3.0 || pg["xi"] != 1.0 {
		t.Errorf("policy_graph %v, want alpha 3 xi 1", pg)
	}
	if !strings.Contains(m["reading"].(string), "WEAKER") {
		t.Errorf("reading %q does not label the weaker guarantee", m["reading"])
	}
	pl, err = plan(t, p, "SELECT sex, region, COUNT(*) FROM persons GROUP BY sex, region", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(pl.Explain(nil))
	if !strings.Contains(string(b), `"graver_max_l1":4`) || !strings.Contains(string(b), "Lemma 4.1") {
		t.Errorf("induced explain: %s", b)
	}
}

func TestBlowfishRefusals(t *testing.T) {
	p := loadBlowfish(t)
	_, err := plan(t, p, "SELECT job, COUNT(*) FROM persons GROUP BY job", planArgs{})
	if err == nil || !strings.Contains(sqlerr.As(err).Message, "needs a declared domain") {
		t.Fatalf("threshold selection under induced: %v", err)
	}
}

// TestBlowfishExprOverJoinedColumn: a public column joined on the private
// zip is a function of zip, so an expression reading it reads zip. Hand
// values: z.w ∈ [0, 5], so 2·w ∈ [0, 10].
func TestBlowfishExprOverJoinedColumn(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	for _, tc := range []struct {
		secrets string
		sql     string
		want    float64
	}{
		// zip never changes along a distance edge on x: the join, its
		// filter and w are fixed.
		{"{distance: {column: x, theta: 1}}", "SELECT SUM(z.w * 2) FROM t JOIN zips z ON t.zip = z.zip", 0},
		{"{partition: {columns: [zip]}}", "SELECT SUM(z.w * 2) FROM t JOIN zips z ON t.zip = z.zip", 0},
		// Any change: the row leaves the join (10) or w moves (10).
		{"full", "SELECT SUM(z.w * 2) FROM t JOIN zips z ON t.zip = z.zip", 10},
		// x + w ∈ [0, 8]: the joined column is not analysed for a
		// Lipschitz bound, so x's move costs the arbitrary change 8.
		{"{distance: {column: x, theta: 1}}", "SELECT SUM(t.x + z.w) FROM t JOIN zips z ON t.zip = z.zip", 8},
		{"{distance: {column: x, theta: 1}}", "SELECT z.w + 0 AS k, COUNT(*) FROM t JOIN zips z ON t.zip = z.zip GROUP BY z.w + 0", 0},
	} {
		t.Run(tc.secrets+" "+tc.sql, func(t *testing.T) {
			y := `version: 1
backend: {driver: sqlite, dsn: unused.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    default_epsilon: 1
    max_epsilon: 2
    budgets:
      d: {epsilon: 100}
datasets:
  d:
    model: blowfish
    secrets: ` + tc.secrets + `
    tables:
      t:
        unit: id
        columns:
          x: {type: integer, bounds: [0, 3], domain: {range: [0, 3]}}
          zip: {type: text, domain: {values: [a, b]}}
      zips:
        public: true
        key: zip
        columns:
          zip: {type: text}
          w: {type: integer, bounds: [0, 5], domain: {range: [0, 5]}}
`
			pol, err := policies.LoadBytes("join.yaml", []byte(y))
			if err != nil {
				t.Fatal(err)
			}
			pl, err := plan(t, planner.New(pol), tc.sql, planArgs{eps: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := float64(pl.Aggs[0].Sensitivity) * pl.Aggs[0].Quantum; got != tc.want {
				t.Errorf("sensitivity %g, want %g (notes %v)", got, tc.want, pl.Notes)
			}
		})
	}
}

// TestBlowfishNotesNameTheRule: explain says which rule gave each bound.
func TestBlowfishNotesNameTheRule(t *testing.T) {
	p := loadBlowfish(t)
	tests := []struct{ sql, want string }{
		{"SELECT SUM(x) FROM ct", "sensitivity 1 = the largest change of this aggregate over the Graver basis of the published constraints, each row adding its value of the declared domain clamped to the bounds"},
		{"SELECT SUM(x) FROM ct", "exact for enough rows (closed form: 12;"},
		{"SELECT x, SUM(x) FROM ct GROUP BY x", "an upper bound"},
		{"SELECT SUM(w) FROM ct", "sensitivity 20 from the Graver basis"},
		{"SELECT SUM(x) FROM cb WHERE x >= 3", "a passing row adds a value of the declared domain of x clamped to the bounds, in [4, 6]"},
		{"SELECT SUM(rooms) FROM homes", "no secret pair changes a published count, so neighbours are single secret changes (maxT = 1"},
		{"SELECT SUM(rooms) FROM homes_full", "maxT 3 × per-change contribution 9"},
	}
	for _, tc := range tests {
		pl, err := plan(t, p, tc.sql, planArgs{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(pl.Notes, "\n"), tc.want) {
			t.Errorf("%s: notes lack %q:\n%s", tc.sql, tc.want, strings.Join(pl.Notes, "\n"))
		}
	}
	pl, err := plan(t, p, "SELECT rooms, COUNT(*) FROM homes GROUP BY rooms", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(pl.Explain(nil))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if r, _ := m["reading"].(string); !strings.Contains(r, "no secret pair can change") || m["max_tuple_changes"] != 1.0 {
		t.Errorf("explain --json reading %q, max_tuple_changes %v: %s", m["reading"], m["max_tuple_changes"], b)
	}
	if r, _ := m["rule"].(string); !strings.Contains(r, "no edge of the secret graph changes any published count") {
		t.Errorf("rule %q", r)
	}
}
