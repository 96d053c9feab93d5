package planner_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The planner end to end against the brute-force oracles: a table t with
// x ∈ {0..3} and y ∈ {0, 1} (bounds = domains), so a row is one of 8
// values v = 2x + y. Each query below is written twice, as SQL for the
// planner and as a Go function of (x, y) for the oracle; the planner's
// sensitivity (lattice units) must be ≥ the oracle's largest L1 change.

// exprCase is a summand or count argument: SQL text and its value (ok
// false: NULL).
type exprCase struct {
	sql string
	f   func(x, y int) (float64, bool)
}

func val(v float64) (float64, bool) { return v, true }

var exprArgs = []exprCase{
	{"x", func(x, y int) (float64, bool) { return val(float64(x)) }},
	// Variance's shapes, m = 1.5 the midpoint of x's bounds: x − m and
	// (x − m)², as reals and scaled by 2 as integers.
	{"x - 1.5", func(x, y int) (float64, bool) { return val(float64(x) - 1.5) }},
	{"(x - 1.5) * (x - 1.5)", func(x, y int) (float64, bool) { return val((float64(x) - 1.5) * (float64(x) - 1.5)) }},
	{"2 * x - 3", func(x, y int) (float64, bool) { return val(float64(2*x - 3)) }},
	{"(2 * x - 3) * (2 * x - 3)", func(x, y int) (float64, bool) { return val(float64((2*x - 3) * (2*x - 3))) }},
	{"x * y", func(x, y int) (float64, bool) { return val(float64(x * y)) }},
	{"y - 1", func(x, y int) (float64, bool) { return val(float64(y - 1)) }},
	{"CASE WHEN y = 1 THEN x ELSE 0 END", func(x, y int) (float64, bool) { return val(float64(x * y)) }},
	{"CASE WHEN y = 1 THEN x END", func(x, y int) (float64, bool) { return float64(x), y == 1 }},
	{"CASE WHEN x >= 2 THEN 1 END", func(x, y int) (float64, bool) { return 1, x >= 2 }},
}

type whereCase struct {
	sql string
	f   func(x, y int) bool
}

var whereCases = []whereCase{
	{"", func(x, y int) bool { return true }},
	{"y = 1", func(x, y int) bool { return y == 1 }},
	{"x >= 2", func(x, y int) bool { return x >= 2 }},
	{"x IN (0, 1)", func(x, y int) bool { return x <= 1 }},
	{"x = 3", func(x, y int) bool { return x == 3 }},
}

type groupCase struct {
	sql string
	f   func(x, y int) int
}

var groupCases = []groupCase{
	{"", nil},
	{"y", func(x, y int) int { return y }},
	{"x", func(x, y int) int { return x }},
	// Quantiles' shape: a bin of x (x div 2).
	{"floor(x / 2)", func(x, y int) int { return x / 2 }},
	{"x % 2", func(x, y int) int { return x % 2 }},
	{"CASE WHEN x + y >= 2 THEN 'hi' ELSE 'lo' END", func(x, y int) int { return b2i(x+y >= 2) }},
	{"y + 0", func(x, y int) int { return y }},
	{"CASE WHEN x >= 2 THEN 1 ELSE 0 END", func(x, y int) int { return b2i(x >= 2) }},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// exprQuery is one drawn query.
type exprQuery struct {
	fn    string // count, sum, avg, countstar
	arg   exprCase
	where whereCase
	group groupCase
}

func (q exprQuery) sql() string {
	var agg string
	switch q.fn {
	case "countstar":
		agg = "COUNT(*)"
	default:
		agg = strings.ToUpper(q.fn) + "(" + q.arg.sql + ")"
	}
	s := "SELECT "
	if q.group.sql != "" {
		s += q.group.sql + " AS k, "
	}
	s += agg + " FROM t"
	if q.where.sql != "" {
		s += " WHERE " + q.where.sql
	}
	if q.group.sql != "" {
		s += " GROUP BY " + q.group.sql
	}
	return s
}

func randomExprQuery(r *rand.Rand) exprQuery {
	fns := []string{"countstar", "count", "sum", "sum", "avg"}
	q := exprQuery{fn: fns[r.IntN(len(fns))], arg: exprArgs[r.IntN(len(exprArgs))], where: whereCases[r.IntN(len(whereCases))], group: groupCases[r.IntN(len(groupCases))]}
	if r.IntN(2) == 0 {
		q.group = groupCases[r.IntN(len(groupCases))]
	}
	return q
}

// oracleAgg writes true aggregate i of pl as an oracle aggregate over the
// 8 values, in pl's lattice units. Which aggregate it is (a count or the
// clamped sum of q's argument) is read from the plan's backend kinds; the
// values come from q's Go functions, never from the plan.
func oracleAgg(t *testing.T, q exprQuery, pl *planner.Plan, i int) oracle.Aggregate {
	t.Helper()
	a := oracle.Aggregate{Where: make([]bool, 8)}
	ba := pl.Backend.Aggs[i]
	sum := ba.Kind == ir.SumClamped
	if q.group.f != nil {
		a.GroupOf, a.Groups = make([]int, 8), 4
	}
	if sum {
		gamma := pl.Aggs[i].Quantum
		quant := func(v float64) int64 { return int64(math.Floor(v/gamma + 0.5)) }
		a.Value, a.Lo, a.Hi = make([]int64, 8), quant(ba.Lo), quant(ba.Hi)
		for v := range 8 {
			x, y := v/2, v%2
			f, ok := q.arg.f(x, y)
			if ok {
				a.Value[v] = quant(math.Min(math.Max(f, ba.Lo), ba.Hi))
			}
		}
	}
	for v := range 8 {
		x, y := v/2, v%2
		a.Where[v] = q.where.f(x, y)
		if q.fn != "countstar" {
			_, ok := q.arg.f(x, y)
			a.Where[v] = a.Where[v] && ok // NULL: not counted, adds nothing
		}
		if a.GroupOf != nil {
			a.GroupOf[v] = q.group.f(x, y)
		}
	}
	return a
}

// exprPolicy is one drawn policy: YAML for the dataset and the oracle's
// view of it.
type exprPolicy struct {
	yaml        string
	name        string
	edge        func(v, w int) bool // nil: induced
	counts      []func(v int) bool
	secretsOnly bool
	// columns are extra column declarations of t; rel answers the
	// dependence loader (ddp).
	columns string
	rel     fakeRelations
	// domainOnly declares x and y with their domains and no bounds (the
	// domains' extents, the same [0, 3] and [0, 1], serve as bounds).
	domainOnly bool
}

var secretCases = []struct {
	yaml string
	edge func(x1, y1, x2, y2 int) bool
}{
	{"full", func(x1, y1, x2, y2 int) bool { return true }},
	{"attribute", func(x1, y1, x2, y2 int) bool { return (x1 == x2) != (y1 == y2) }},
	{"{partition: {columns: [y]}}", func(x1, y1, x2, y2 int) bool { return y1 == y2 }},
	{"{partition: {columns: [x]}}", func(x1, y1, x2, y2 int) bool { return x1 == x2 }},
	{"{partition: {column: x, buckets: [[0, 1], [2, 3]]}}", func(x1, y1, x2, y2 int) bool { return x1/2 == x2/2 }},
	{"{distance: {column: x, theta: 1}}", func(x1, y1, x2, y2 int) bool { return y1 == y2 && abs(x1-x2) <= 1 }},
	{"{distance: {column: x, theta: 2}}", func(x1, y1, x2, y2 int) bool { return y1 == y2 && abs(x1-x2) <= 2 }},
	// Buckets beyond x's bounds [0, 3]: stored values 4..9 read as 3.
	{"{partition: {column: x, buckets: [[0, 1], [2, 9]]}}", func(x1, y1, x2, y2 int) bool { return x1/2 == x2/2 }},
	{"{partition: {column: x, buckets: [[0, 2], [3, 9]]}}", func(x1, y1, x2, y2 int) bool { return (x1 <= 2) == (x2 <= 2) }},
}

func abs(a int) int { return max(a, -a) }

var constraintCases = []struct {
	yaml   string
	counts []func(v int) bool
}{
	{"", nil},
	{"[total]", []func(int) bool{func(int) bool { return true }}},
	{"[{marginal: [x]}]", marginal(func(v int) int { return v / 2 }, 4)},
	{"[{marginal: [y]}]", marginal(func(v int) int { return v % 2 }, 2)},
	{"[{count: {x: [1, 2]}}]", []func(int) bool{func(v int) bool { return v/2 == 1 || v/2 == 2 }}},
	{"[{rows_and_columns: [x, y]}]", append(marginal(func(v int) int { return v / 2 }, 4), marginal(func(v int) int { return v % 2 }, 2)...)},
}

func marginal(col func(int) int, n int) []func(int) bool {
	var out []func(int) bool
	for c := range n {
		out = append(out, func(v int) bool { return col(v) == c })
	}
	return out
}

func loadExprPolicy(t *testing.T, p exprPolicy) *planner.Planner {
	t.Helper()
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
` + p.yaml + `    tables:
      t:
        unit: id
        columns:
          x: {type: integer, bounds: [0, 3], domain: {range: [0, 3]}}
          y: {type: integer, bounds: [0, 1], domain: {range: [0, 1]}}
` + p.columns
	if p.domainOnly {
		y = strings.NewReplacer("bounds: [0, 3], ", "", "bounds: [0, 1], ", "").Replace(y)
	}
	pol, err := policies.LoadBytes("expr.yaml", []byte(y))
	if err != nil {
		t.Logf("%s: refused at load: %v", p.name, err)
		return nil
	}
	rel := ddpRelations
	if p.rel != nil {
		rel = p.rel
	}
	if err := dependence.Load(context.Background(), pol, rel, nil); err != nil {
		t.Fatal(err)
	}
	return planner.New(pol)
}

// TestExprAggregatesAgainstOracleBlowfishInduced draws policies (every
// secret-graph kind, with and without published counts, both readings;
// induced) and expression queries (SUM/COUNT/AVG of x − m, (x − m)², a
// product, CASE with and without ELSE; GROUP BY a bin of x and other
// expressions), plans them, and checks each aggregate's sensitivity
// against the brute-force neighbours of the model (3 individuals for
// blowfish, tables of up to 3 rows for induced). Zero is claimed exact:
// the oracle must then be 0 too (implied by ≥).
func TestExprAggregatesAgainstOracleBlowfishInduced(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	r := rand.New(rand.NewPCG(41, 12))
	var pols []exprPolicy
	for _, c := range constraintCases {
		cons := ""
		if c.yaml != "" {
			cons = "    constraints: " + c.yaml + "\n"
		}
		if c.yaml != "" {
			pols = append(pols, exprPolicy{yaml: "    model: induced\n" + cons, name: "induced " + c.yaml, counts: c.counts})
		}
		for _, s := range secretCases {
			edge := func(v, w int) bool { return s.edge(v/2, v%2, w/2, w%2) }
			pols = append(pols, exprPolicy{yaml: "    model: blowfish\n    secrets: " + s.yaml + "\n" + cons, name: s.yaml + " " + c.yaml, edge: edge, counts: c.counts})
			if c.yaml != "" {
				pols = append(pols, exprPolicy{yaml: "    model: blowfish\n    secrets: " + s.yaml + "\n    compensation: secrets-only\n" + cons, name: s.yaml + " secrets-only " + c.yaml, edge: edge, counts: c.counts, secretsOnly: true})
			}
		}
	}
	loaded, checked, tight, zeros, refused := 0, 0, 0, 0, map[string]int{}
	for _, pc := range pols {
		p := loadExprPolicy(t, pc)
		if p == nil {
			continue // the policy itself is refused at load (e.g. unbounded maxT)
		}
		loaded++
		for range 12 {
			q := randomExprQuery(r)
			pl, err := plan(t, p, q.sql(), planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
					t.Fatalf("%s: %s: %v", pc.name, q.sql(), err)
				}
				refused[sqlerr.As(err).Message]++
				continue
			}
			for i, a := range pl.Aggs {
				l1, wit := oracleL1(t, pc, oracleAgg(t, q, pl, i).Query())
				checked++
				if l1 > a.Sensitivity {
					t.Fatalf("%s: %s: %s sensitivity %d (lattice %g) < oracle %d; witness %s; notes %v", pc.name, q.sql(), a.Label, a.Sensitivity, a.Quantum, l1, wit, pl.Notes)
				}
				if l1 == a.Sensitivity {
					tight++
				}
				if a.Sensitivity == 0 {
					zeros++
				}
			}
		}
	}
	t.Logf("%d policies loaded of %d; %d aggregates checked, %d tight, %d exact (sensitivity 0); refusals %v", loaded, len(pols), checked, tight, zeros, refused)
	if loaded < 60 || checked < 800 || tight < 200 || zeros < 40 {
		t.Errorf("too few cases: %d policies, %d checked, %d tight, %d zero", loaded, checked, tight, zeros)
	}
}

// oracleL1 is the brute-force sensitivity of q under pc's neighbours.
func oracleL1(t *testing.T, pc exprPolicy, q oracle.Query) (int64, string) {
	t.Helper()
	if pc.edge == nil {
		w, err := oracle.MaxL1(oracle.Space{Domain: 8, MaxUnits: 3, RowsPerUnit: 1}, oracle.Induced(pc.counts), q)
		if err != nil {
			t.Fatal(err)
		}
		return w.L1, fmt.Sprint(w.D1, " → ", w.D2)
	}
	w, err := oracle.BlowfishMaxL1(oracle.BlowfishPolicy{Domain: 8, N: 3, Edge: pc.edge, Counts: pc.counts, SecretsOnly: pc.secretsOnly}, q)
	if err != nil {
		t.Fatal(err)
	}
	return w.L1, fmt.Sprint(w.D1, " → ", w.D2)
}

// exprTestPolicy is secretCases[secret] with constraintCases[cons]
// (secret < 0: induced).
func exprTestPolicy(secret, cons int, secretsOnly bool) exprPolicy {
	c := constraintCases[cons]
	pc := exprPolicy{counts: c.counts, secretsOnly: secretsOnly}
	if secret < 0 {
		pc.yaml, pc.name = "    model: induced\n", "induced"
	} else {
		s := secretCases[secret]
		pc.yaml, pc.name = "    model: blowfish\n    secrets: "+s.yaml+"\n", s.yaml
		pc.edge = func(v, w int) bool { return s.edge(v/2, v%2, w/2, w%2) }
	}
	if secretsOnly {
		pc.yaml += "    compensation: secrets-only\n"
		pc.name += " secrets-only"
	}
	if c.yaml != "" {
		pc.yaml += "    constraints: " + c.yaml + "\n"
		pc.name += " " + c.yaml
	}
	return pc
}

// TestVarianceAndQuantileShapesAgainstOracle pins the shapes variance
// (SUM of x − m and (x − m)², m = 1.5 the midpoint of x's bounds [0, 3])
// and quantiles (a histogram GROUP BY a bin of x, x div 2) will use, under
// each secret kind: the planner's value is ≥ the oracle's, equal to a
// hand-derived value where one is given, and equal to the oracle where
// the case says tight.
func TestVarianceAndQuantileShapesAgainstOracle(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	const (
		full, partY, bucketX, dist1, dist2 = 0, 2, 4, 5, 6
		bucketWide, bucketOdd              = 7, 8
		none, margX                        = 0, 2
		bin                                = "floor(x / 2)"
	)
	cases := []struct {
		secret, cons          int
		fn, arg, where, group string
		want                  []float64 // per aggregate, output units; nil: not derived by hand
		tight                 bool
	}{
		// Full secrets (DP-like, n public): a change moves x anywhere.
		// 2x − 3 ∈ [−3, 3]: x 0 → 3 changes the sum by 6.
		{full, none, "sum", "2 * x - 3", "", "", []float64{6}, true},
		{full, none, "sum", "x - 1.5", "", "", []float64{3}, true},
		// (x − m)² over the interval product [−1.5, 1.5]²: safe, not tight
		// (the true range is [0, 2.25]).
		{full, none, "sum", "(x - 1.5) * (x - 1.5)", "", "", nil, false},
		{full, none, "sum", "(2 * x - 3) * (2 * x - 3)", "", "", nil, false},
		// A row moves from bin 0 to bin 1: 2; with the sum, −3 leaves bin
		// 0 and +3 enters bin 1: 6.
		{full, none, "countstar", "", "", bin, []float64{2}, true},
		{full, none, "sum", "2 * x - 3", "", bin, []float64{6}, true},
		// Partition by y: keys reading only y never move; x still changes.
		{partY, none, "countstar", "", "", "y + 0", []float64{0}, true},
		{partY, none, "sum", "y - 1", "", "y + 0", []float64{0}, true},
		{partY, none, "sum", "2 * x - 3", "", "y + 0", []float64{6}, true},
		{partY, none, "countstar", "", "", bin, []float64{2}, true},
		// Bucketed partition [0, 1], [2, 3] of x: the bin is constant on
		// each bucket (its derived key set per bucket has one value), so
		// no secret pair moves a row between bins; x % 2 is not. The CASE
		// is constant per bucket too, but its derived key set is both arms
		// (safe, 2 where the truth is 0). The sum still moves within a
		// bucket: the arbitrary change 6 (truth 2).
		{bucketX, none, "countstar", "", "", bin, []float64{0}, true},
		{bucketX, none, "countstar", "", "", "x % 2", []float64{2}, true},
		{bucketX, none, "countstar", "", "", "CASE WHEN x >= 2 THEN 1 ELSE 0 END", []float64{2}, false},
		{bucketX, none, "sum", "2 * x - 3", "", bin, []float64{6}, false},
		{bucketX, none, "countstar", "", "y = 1", bin, []float64{1}, true},
		{bucketWide, none, "countstar", "", "", bin, []float64{0}, true},
		{bucketOdd, none, "countstar", "", "", bin, []float64{2}, true},
		// Distance θ on x: a polynomial summand moves by at most its
		// Lipschitz constant × θ: 2x − 3 by 2θ (x 0 → 1), x·y by θ (y = 1);
		// (2x − 3)² by (2·3 + 2·3)·θ = 12 where the truth is 8 (9 → 1); a
		// real one gets one lattice unit for rounding. y − 1 never
		// changes; x 1 → 2 crosses a bin.
		{dist1, none, "sum", "2 * x - 3", "", "", []float64{2}, true},
		{dist2, none, "sum", "2 * x - 3", "", "", []float64{4}, true},
		{dist1, none, "sum", "2 * x - 3", "", "y", []float64{2}, true},
		{dist1, none, "sum", "x * y", "", "", []float64{1}, true},
		{dist1, none, "sum", "(2 * x - 3) * (2 * x - 3)", "", "", []float64{12}, false},
		{dist1, none, "sum", "x - 1.5", "", "", nil, false},
		{dist1, none, "sum", "(x - 1.5) * (x - 1.5)", "", "", nil, false},
		// Not a polynomial: the arbitrary change of the range [0, 3].
		{dist1, none, "sum", "CASE WHEN y = 1 THEN x ELSE 0 END", "", "", []float64{3}, false},
		{dist1, none, "sum", "y - 1", "", "", []float64{0}, true},
		{dist1, none, "countstar", "", "", bin, []float64{2}, true},
		{dist1, none, "countstar", "", "x >= 2", "y + 0", []float64{1}, true},
		// A published marginal on x determines every histogram over a
		// function of x: exact and free.
		{full, margX, "countstar", "", "", bin, []float64{0}, true},
		{full, margX, "countstar", "", "x IN (0, 1)", "x % 2", []float64{0}, true},
		{full, margX, "countstar", "", "", "y + 0", nil, false},
		// So does every sum and count of a function of x: Σ_x n_x·f(x)
		// over the published counts n_x.
		{full, margX, "sum", "(x - 1.5) * (x - 1.5)", "", "", []float64{0}, true},
		{full, margX, "avg", "x - 1.5", "", bin, []float64{0, 0}, true},
		{full, margX, "sum", "x * y", "", "", nil, false},
		{-1, margX, "countstar", "", "", bin, []float64{0}, true},
		{-1, margX, "sum", "x - 1.5", "", "", []float64{0}, true},
		{-1, margX, "sum", "(2 * x - 3) * (2 * x - 3)", "", bin, []float64{0}, true},
		{-1, margX, "sum", "x * y", "", bin, nil, false},
	}
	for _, tc := range cases {
		for _, so := range []bool{false, true} {
			if so && (tc.cons == none || tc.secret < 0) {
				continue
			}
			pc := exprTestPolicy(tc.secret, tc.cons, so)
			q := menuQuery(t, tc.fn, tc.arg, tc.where, tc.group)
			t.Run(pc.name+": "+q.sql(), func(t *testing.T) {
				p := loadExprPolicy(t, pc)
				if p == nil {
					t.Fatal("policy refused")
				}
				pl, err := plan(t, p, q.sql(), planArgs{eps: 1, dialect: parser.Postgres})
				if err != nil {
					t.Fatal(err)
				}
				for i, a := range pl.Aggs {
					l1, wit := oracleL1(t, pc, oracleAgg(t, q, pl, i).Query())
					if l1 > a.Sensitivity {
						t.Fatalf("%s: sensitivity %d < oracle %d (lattice %g); witness %s", a.Label, a.Sensitivity, l1, a.Quantum, wit)
					}
					if tc.want != nil && !so {
						if got := float64(a.Sensitivity) * a.Quantum; got != tc.want[i] {
							t.Errorf("%s: sensitivity %g, want %g (notes %v)", a.Label, got, tc.want[i], pl.Notes)
						}
					}
					if tc.tight && !so && l1 != a.Sensitivity {
						t.Errorf("%s: sensitivity %d, oracle %d: claimed tight", a.Label, a.Sensitivity, l1)
					}
					t.Logf("%s: clamp [%g, %g], sensitivity %g, oracle %g", a.Label, pl.Backend.Aggs[i].Lo, pl.Backend.Aggs[i].Hi, float64(a.Sensitivity)*a.Quantum, float64(l1)*a.Quantum)
				}
			})
		}
	}
}

// menuQuery builds a query from the menus above by their SQL texts.
func menuQuery(t *testing.T, fn, arg, where, group string) exprQuery {
	t.Helper()
	q := exprQuery{fn: fn}
	found := 0
	for _, a := range exprArgs {
		if a.sql == arg || (arg == "" && a.sql == "x") {
			q.arg, found = a, found+1
		}
	}
	for _, w := range whereCases {
		if w.sql == where {
			q.where, found = w, found+1
		}
	}
	for _, g := range groupCases {
		if g.sql == group {
			q.group, found = g, found+1
		}
	}
	if found != 3 {
		t.Fatalf("%s(%s) WHERE %s GROUP BY %s is not written from the menus", fn, arg, where, group)
	}
	return q
}

// TestPublishedQueryRuleAgainstOracle aims the brute-force oracle at the
// published-query rule (sensitivity 0 when the answer is a function of
// published cells): WHERE clauses that select exactly a published count's
// values, also over the column the aggregate reads (the split among the
// selected values matters to a SUM), conjunctions with a second column,
// lists of a whole domain, marginals over both columns and several
// counts, under induced and blowfish neighbours.
func TestPublishedQueryRuleAgainstOracle(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	is := func(vs ...int) func(int) bool {
		return func(x int) bool {
			for _, v := range vs {
				if x == v {
					return true
				}
			}
			return false
		}
	}
	cons := []struct {
		yaml   string
		counts []func(v int) bool
	}{
		{"[{count: {x: [1, 2]}}]", []func(int) bool{func(v int) bool { return is(1, 2)(v / 2) }}},
		{"[{count: {x: [1, 2], y: [1]}}]", []func(int) bool{func(v int) bool { return is(1, 2)(v/2) && v%2 == 1 }}},
		{"[{count: {x: [1, 2]}}, {count: {x: [0, 3]}}]", []func(int) bool{func(v int) bool { return is(1, 2)(v / 2) }, func(v int) bool { return is(0, 3)(v / 2) }}},
		{"[{marginal: [x, y]}]", marginal(func(v int) int { return v }, 8)},
		{"[{marginal: [x]}]", marginal(func(v int) int { return v / 2 }, 4)},
		{"[{count: {y: [1]}}]", []func(int) bool{func(v int) bool { return v%2 == 1 }}},
	}
	wheres := []whereCase{
		{"", func(x, y int) bool { return true }},
		{"x IN (1, 2)", func(x, y int) bool { return is(1, 2)(x) }},
		{"x IN (2, 1)", func(x, y int) bool { return is(1, 2)(x) }},
		{"x IN (1, 2) AND y = 1", func(x, y int) bool { return is(1, 2)(x) && y == 1 }},
		{"y = 1 AND x IN (1, 2)", func(x, y int) bool { return is(1, 2)(x) && y == 1 }},
		{"y IN (0, 1)", func(x, y int) bool { return true }},
		{"x IN (0, 1, 2, 3)", func(x, y int) bool { return true }},
		{"x = 1", func(x, y int) bool { return x == 1 }},
		{"y = 1", func(x, y int) bool { return y == 1 }},
		{"x IN (0, 3)", func(x, y int) bool { return is(0, 3)(x) }},
	}
	args := []exprCase{
		exprArgs[0], exprArgs[1], exprArgs[5], exprArgs[6], exprArgs[8], exprArgs[9],
		{"y", func(x, y int) (float64, bool) { return val(float64(y)) }},
		{"x * 0", func(x, y int) (float64, bool) { return val(0) }},
		{"CASE WHEN x = 1 THEN 1 END", func(x, y int) (float64, bool) { return 1, x == 1 }},
	}
	groups := []groupCase{groupCases[0], groupCases[1], groupCases[2], groupCases[4],
		{"x * 0", func(x, y int) int { return 0 }}}
	var pols []exprPolicy
	for _, c := range cons {
		cy := "    constraints: " + c.yaml + "\n"
		pols = append(pols, exprPolicy{yaml: "    model: induced\n" + cy, name: "induced " + c.yaml, counts: c.counts})
		for _, s := range []int{0, 1, 2, 3, 4, 5} {
			sc := secretCases[s]
			edge := func(v, w int) bool { return sc.edge(v/2, v%2, w/2, w%2) }
			pols = append(pols, exprPolicy{yaml: "    model: blowfish\n    secrets: " + sc.yaml + "\n" + cy, name: sc.yaml + " " + c.yaml, edge: edge, counts: c.counts})
			pols = append(pols, exprPolicy{yaml: "    model: blowfish\n    secrets: " + sc.yaml + "\n    compensation: secrets-only\n" + cy, name: sc.yaml + " secrets-only " + c.yaml, edge: edge, counts: c.counts, secretsOnly: true})
		}
	}
	r := rand.New(rand.NewPCG(7, 12))
	checked, zeros := 0, 0
	for _, pc := range pols {
		p := loadExprPolicy(t, pc)
		if p == nil {
			continue
		}
		for range 40 {
			q := exprQuery{fn: []string{"countstar", "count", "sum"}[r.IntN(3)], arg: args[r.IntN(len(args))],
				where: wheres[r.IntN(len(wheres))], group: groups[r.IntN(len(groups))]}
			pl, err := plan(t, p, q.sql(), planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
					t.Fatalf("%s: %s: %v", pc.name, q.sql(), err)
				}
				continue
			}
			for i, a := range pl.Aggs {
				l1, wit := oracleL1(t, pc, oracleAgg(t, q, pl, i).Query())
				checked++
				if a.Sensitivity == 0 {
					zeros++
				}
				if l1 > a.Sensitivity {
					t.Errorf("%s: %s: %s sensitivity %d (lattice %g) < oracle %d; witness %s; notes %v", pc.name, q.sql(), a.Label, a.Sensitivity, a.Quantum, l1, wit, pl.Notes)
				}
			}
		}
	}
	t.Logf("%d policies, %d aggregates checked, %d exact (sensitivity 0)", len(pols), checked, zeros)
	if checked < 1500 || zeros < 100 {
		t.Errorf("too few cases: %d checked, %d zero", checked, zeros)
	}
}
