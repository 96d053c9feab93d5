package planner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/dependence"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// extentModels are the dataset headers the domain-extent tests plan
// under: every privacy model, with the secret kinds, constraint
// semantics and dependence forms whose sensitivity reads the clamp.
var extentModels = []struct{ name, yaml string }{
	{"dp unbounded", ""},
	{"dp unbounded k=3", "    # k\n"},
	{"dp bounded", "    neighbors: bounded\n"},
	{"blowfish full", "    model: blowfish\n    secrets: full\n"},
	{"blowfish attribute", "    model: blowfish\n    secrets: attribute\n"},
	{"blowfish partition", "    model: blowfish\n    secrets: {partition: {columns: [g]}}\n"},
	{"blowfish distance cell", "    model: blowfish\n    secrets: {distance: {column: cell, theta: 2}}\n"},
	{"blowfish distance r", "    model: blowfish\n    secrets: {distance: {column: r, theta: 0.5}}\n"},
	{"blowfish full, marginal g", "    model: blowfish\n    secrets: full\n    constraints: [{marginal: [g]}]\n"},
	{"blowfish full, marginal cell", "    model: blowfish\n    secrets: full\n    constraints: [{marginal: [cell]}]\n"},
	{"blowfish attribute secrets-only, marginal g", "    model: blowfish\n    secrets: attribute\n    compensation: secrets-only\n    constraints: [{marginal: [g]}]\n"},
	{"blowfish distance cell secrets-only, marginal g", "    model: blowfish\n    secrets: {distance: {column: cell, theta: 2}}\n    compensation: secrets-only\n    constraints: [{marginal: [g]}]\n"},
	{"blowfish distance r secrets-only, marginal g", "    model: blowfish\n    secrets: {distance: {column: r, theta: 0.5}}\n    compensation: secrets-only\n    constraints: [{marginal: [g]}]\n"},
	{"blowfish distance r secrets-only, marginal r", "    model: blowfish\n    secrets: {distance: {column: r, theta: 0.5}}\n    compensation: secrets-only\n    constraints: [{marginal: [r]}]\n"},
	{"induced total", "    model: induced\n    constraints: [total]\n"},
	{"induced marginal g", "    model: induced\n    constraints: [{marginal: [g]}]\n"},
	{"induced marginal cell", "    model: induced\n    constraints: [{marginal: [cell]}]\n"},
	{"induced count cell", "    model: induced\n    constraints: [{count: {cell: [0, 1]}}]\n"},
	{"ddp size", "    model: ddp\n    dependence: {size: 3}\n"},
	{"ddp groups", "    model: ddp\n    dependence: {groups: {column: hh, rho: 0.5}}\n"},
}

// extentPolicy is a policy of one dataset d, model header m, whose
// numeric columns declare a static domain and, when bounds is set, bounds
// equal to its extent (on the same line, so that every position the
// plans name is the same).
func extentPolicy(t *testing.T, m string, bounds bool) *planner.Planner {
	t.Helper()
	b := func(lo, hi string) string {
		if !bounds {
			return ""
		}
		return ", bounds: [" + lo + ", " + hi + "]"
	}
	k := ""
	if strings.Contains(m, "# k") {
		k = "        max_rows_per_unit: 3\n"
	}
	y := `version: 1
backend: {driver: sqlite, dsn: unused.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    default_epsilon: 1
    max_epsilon: 2
    delta_per_query: 0.000001
    budgets:
      d: {epsilon: 100, delta: 0.01}
datasets:
  d:
` + m + `    tables:
      t:
        unit: id
` + k + `        columns:
          cell: {type: integer, domain: {range: [-2, 7]}` + b("-2", "7") + `}
          r: {type: real, domain: {values: [-1.5, 0.25, 3.75]}` + b("-1.5", "3.75") + `}
          big: {type: integer, domain: {values: [-9007199254740992, 5]}` + b("-9007199254740992", "5") + `}
          g: {type: text, domain: {values: [a, b]}}
          hh: {type: integer}
`
	pol, err := policies.LoadBytes("extent.yaml", []byte(y))
	if err != nil {
		t.Fatalf("%s (bounds %v): %v", m, bounds, err)
	}
	rel := fakeRelations{"t": {iv(1, 1), iv(1, 2), iv(1, 3), iv(2, 4), iv(3, 5)}}
	if err := dependence.Load(context.Background(), pol, rel, nil); err != nil {
		t.Fatal(err)
	}
	return planner.New(pol)
}

// extentQueries aggregate the bare numeric columns (the forms that read
// columnArg's clamp), alone, grouped, filtered and together.
var extentQueries = []string{
	"SELECT SUM(cell) FROM t",
	"SELECT AVG(cell) FROM t",
	"SELECT VARIANCE(cell) FROM t",
	"SELECT var_pop(cell) FROM t",
	"SELECT STDDEV(cell) FROM t",
	"SELECT stddev_pop(cell) FROM t",
	"SELECT g, SUM(cell), AVG(cell) FROM t GROUP BY g",
	"SELECT g, VARIANCE(cell), STDDEV(cell) FROM t GROUP BY g",
	"SELECT cell, SUM(r) FROM t GROUP BY cell",
	"SELECT SUM(cell) FROM t WHERE g = 'a'",
	"SELECT SUM(cell), COUNT(*) FROM t WHERE cell IN (0, 1)",
	"SELECT SUM(r) FROM t",
	"SELECT AVG(r) FROM t",
	"SELECT VARIANCE(r), STDDEV(r) FROM t",
	"SELECT g, SUM(r), AVG(r), var_samp(r), stddev_samp(r) FROM t GROUP BY g",
	"SELECT SUM(r) FROM t WHERE r > 0",
	"SELECT SUM(big), AVG(big) FROM t",
	"SELECT g, SUM(big) FROM t GROUP BY g",
}

// TestDomainExtentServesAsBounds: under every model, SUM, AVG, VARIANCE
// and STDDEV of a column declared with only a static numeric domain plan
// exactly as with bounds equal to the domain's extent: the same clamps,
// sensitivities, lattices, noise scales, ε shares, notes and backend SQL.
func TestDomainExtentServesAsBounds(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	sq := sqlrender.SQLite()
	planned := map[string]int{}
	for _, m := range extentModels {
		dom, bnd := extentPolicy(t, m.yaml, false), extentPolicy(t, m.yaml, true)
		for _, q := range extentQueries {
			pd, errD := plan(t, dom, q, planArgs{eps: 1, dialect: parser.Postgres})
			pb, errB := plan(t, bnd, q, planArgs{eps: 1, dialect: parser.Postgres})
			if errB != nil {
				if errD == nil || errD.Error() != errB.Error() {
					t.Errorf("%s: %s: with bounds %v; with the domain only %v", m.name, q, errB, errD)
				}
				continue
			}
			if errD != nil {
				t.Errorf("%s: %s: refused with the domain only: %v", m.name, q, errD)
				continue
			}
			planned[m.name]++
			for _, f := range []struct {
				what string
				d, b any
			}{
				{"backend query", pd.Backend, pb.Backend},
				{"aggregates", pd.Aggs, pb.Aggs},
				{"outputs", outputsOf(pd), outputsOf(pb)},
				{"output noise", summariesOf(pd), summariesOf(pb)},
				{"groups", pd.Groups, pb.Groups},
				{"budget", pd.Budget, pb.Budget},
				{"notes", pd.Notes, pb.Notes},
			} {
				if !reflect.DeepEqual(f.d, f.b) {
					t.Errorf("%s: %s: %s differ:\ndomain %+v\nbounds %+v", m.name, q, f.what, f.d, f.b)
				}
			}
			sd, errD := sq.Render(pd.Backend)
			sb, errB := sq.Render(pb.Backend)
			if errD != nil || errB != nil || sd.SQL != sb.SQL || fmt.Sprint(sd.Args) != fmt.Sprint(sb.Args) {
				t.Errorf("%s: %s: backend SQL differs:\ndomain %s %v (%v)\nbounds %s %v (%v)", m.name, q, sd.SQL, sd.Args, errD, sb.SQL, sb.Args, errB)
			}
			xd, _ := json.Marshal(pd.Explain(sq.Preview))
			xb, _ := json.Marshal(pb.Explain(sq.Preview))
			if string(xd) != string(xb) {
				t.Errorf("%s: %s: explain differs:\ndomain %s\nbounds %s", m.name, q, xd, xb)
			}
		}
	}
	t.Logf("planned per model: %v", planned)
	// Not vacuous: every model answers most of the queries.
	for _, m := range extentModels {
		if planned[m.name] < len(extentQueries)/2 {
			t.Errorf("%s: only %d of %d queries planned", m.name, planned[m.name], len(extentQueries))
		}
	}
}

// outputsOf are pl's outputs without their noise summaries (an AVG's CI95
// is NaN, never deeply equal; summariesOf prints them).
func outputsOf(pl *planner.Plan) []planner.Output {
	out := slices.Clone(pl.Outputs)
	for i := range out {
		out[i].Summary = nil
	}
	return out
}

func summariesOf(pl *planner.Plan) string {
	var b strings.Builder
	for _, o := range pl.Outputs {
		if o.Summary != nil {
			fmt.Fprintf(&b, "%+v\n", *o.Summary)
		}
	}
	return b.String()
}

// TestDomainExtentRefusals: what cannot serve as bounds still refuses a
// bare numeric aggregate, with the message naming the bounds to declare:
// no domain, a query domain (not known at plan time), an integer extent
// beyond 2^53 (not exact in float64; declared bounds are refused there by
// validation), and a text column.
func TestDomainExtentRefusals(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.LoadBytes("refuse.yaml", []byte(`version: 1
backend: {driver: sqlite, dsn: unused.db}
users:
  - name: alice
    password_env: DDP_TEST_PLANNER_PASSWORD
    budgets: {d: {epsilon: 100}}
datasets:
  d:
    tables:
      codes:
        public: true
        columns:
          v: {type: integer}
      t:
        unit: id
        columns:
          raw: {type: integer}
          rawr: {type: real}
          q: {type: integer, domain: {query: SELECT v FROM codes}}
          over: {type: integer, domain: {values: [0, 9007199254740993]}}
          under: {type: integer, domain: {values: [-9007199254740993, 0]}}
          overlo: {type: integer, domain: {values: [9007199254740993]}}
          underhi: {type: integer, domain: {values: [-9007199254740993]}}
          atmax: {type: integer, domain: {values: [9007199254740992]}}
          atmin: {type: integer, domain: {values: [-9007199254740992]}}
          name: {type: text, domain: {values: [a, b]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := planner.New(pol)
	for _, col := range []string{"raw", "rawr", "q", "over", "under", "overlo", "underhi", "name"} {
		for _, f := range []string{"SUM", "AVG", "VARIANCE", "STDDEV", "var_pop", "stddev_samp"} {
			q := fmt.Sprintf("SELECT %s(%s) FROM t", f, col)
			_, err := plan(t, p, q, planArgs{eps: 1, dialect: parser.Postgres})
			want, msg := &sqlerr.FeatureNotSupported, "needs declared bounds: datasets.d.tables.t.columns."+col+".bounds"
			if col == "name" {
				want, msg = &sqlerr.DatatypeMismatch, "the column is text, not a number"
			}
			if !sqlerr.HasCode(err, *want) || !strings.Contains(sqlerr.As(err).Message, msg) {
				t.Errorf("%s: got %v; want %v %q", q, err, *want, msg)
			}
		}
	}
	// At ±2^53 exactly the extent serves, as bounds would.
	for _, col := range []string{"atmax", "atmin"} {
		if _, err := plan(t, p, "SELECT SUM("+col+") FROM t", planArgs{eps: 1, dialect: parser.Postgres}); err != nil {
			t.Errorf("SUM(%s), extent at 2^53 in magnitude: %v", col, err)
		}
	}
	// The query domain still groups (its values are read then), and its
	// column is still compared; only computing with it is refused.
	if _, err := plan(t, p, "SELECT COUNT(*) FROM t WHERE q > 3", planArgs{eps: 1, dialect: parser.Postgres}); err != nil {
		t.Errorf("comparison with a query-domain column: %v", err)
	}
	if _, err := plan(t, p, "SELECT SUM(q + 0) FROM t", planArgs{eps: 1, dialect: parser.Postgres}); !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) {
		t.Errorf("SUM(q + 0) over a query domain: %v", err)
	}
}

// TestBareAggregatesOfDomainOnlyColumnsAgainstOracle: SUM and AVG of a
// bare column declared with a domain and no bounds (x ∈ {0..3}, y ∈
// {0, 1}) are ≥ the brute-force oracle under every blowfish secret kind,
// with and without published counts, both readings, and induced (16
// queries drawn per policy, fixed seed); the plan's clamp is the domain's
// extent.
func TestBareAggregatesOfDomainOnlyColumnsAgainstOracle(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	var pols []exprPolicy
	for cons := range constraintCases {
		if cons > 0 {
			pols = append(pols, exprTestPolicy(-1, cons, false))
		}
		for secret := range secretCases {
			pols = append(pols, exprTestPolicy(secret, cons, false))
			if cons > 0 {
				pols = append(pols, exprTestPolicy(secret, cons, true))
			}
		}
	}
	yArg := exprCase{"y", func(x, y int) (float64, bool) { return val(float64(y)) }}
	r := rand.New(rand.NewPCG(53, 17))
	loaded, checked, tight := 0, 0, 0
	for _, pc := range pols {
		pc.domainOnly = true
		p := loadExprPolicy(t, pc)
		if p == nil {
			continue // the policy itself is refused at load (e.g. unbounded maxT)
		}
		loaded++
		for range 16 {
			q := exprQuery{fn: []string{"sum", "avg"}[r.IntN(2)], arg: []exprCase{exprArgs[0], yArg}[r.IntN(2)],
				where: whereCases[r.IntN(len(whereCases))], group: groupCases[r.IntN(5)]}
			pl, err := plan(t, p, q.sql(), planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				t.Fatalf("%s: %s: %v", pc.name, q.sql(), err)
			}
			for i, a := range pl.Aggs {
				if ba := pl.Backend.Aggs[i]; ba.Kind == ir.SumClamped && (ba.Lo != 0 || ba.Hi != map[string]float64{"x": 3, "y": 1}[q.arg.sql]) {
					t.Fatalf("%s: %s: %s clamped to [%g, %g], not the domain's extent", pc.name, q.sql(), a.Label, ba.Lo, ba.Hi)
				}
				l1, wit := oracleL1(t, pc, oracleAgg(t, q, pl, i).Query())
				checked++
				if l1 > a.Sensitivity {
					t.Fatalf("%s: %s: %s sensitivity %d (lattice %g) < oracle %d; witness %s; notes %v", pc.name, q.sql(), a.Label, a.Sensitivity, a.Quantum, l1, wit, pl.Notes)
				}
				if l1 == a.Sensitivity {
					tight++
				}
			}
		}
	}
	t.Logf("%d policies loaded of %d; %d aggregates checked, %d tight", loaded, len(pols), checked, tight)
	if loaded < 60 || checked < 1500 || tight < 400 {
		t.Errorf("too few cases: %d policies, %d checked, %d tight", loaded, checked, tight)
	}
}
