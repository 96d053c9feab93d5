package planner_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func loadPolicy(t *testing.T) *policies.Policy {
	t.Helper()
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	return loadPolicyB(t)
}

func loadPolicyB(t testing.TB) *policies.Policy {
	t.Helper()
	pol, err := policies.Load("testdata/planner.yaml")
	if err != nil {
		t.Fatalf("loading policy: %v", err)
	}
	return pol
}

type planArgs struct {
	user    string
	eps     float64
	dialect parser.Dialect
	// noCatalog plans without the backend's catalog description
	// (planner.SmallCatalog otherwise).
	noCatalog bool
}

func plan(t *testing.T, p *planner.Planner, sql string, a planArgs) (*planner.Plan, error) {
	t.Helper()
	stmts, err := parser.Parse(a.dialect, sql)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		t.Fatalf("%q: %d statements", sql, len(stmts))
	}
	user := a.user
	if user == "" {
		user = "alice"
	}
	u := p.Policy().User(user)
	if u == nil {
		t.Fatalf("no user %s", user)
	}
	req := planner.Request{User: u, Epsilon: a.eps, Dialect: a.dialect.String(), Statement: &stmts[0]}
	if !a.noCatalog {
		req.Catalog = planner.SmallCatalog()
	}
	return p.Plan(req)
}

// want is one expected noise step, derived by hand from the textbook
// formulas (README table): sensitivity in output units and ε share.
type want struct {
	label string
	sens  float64
	eps   float64
}

func TestSensitivities(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name string
		sql  string
		eps  float64
		want []want
	}{
		// census: unbounded, k = 1, default ε 0.5.
		{"count", "SELECT COUNT(*) FROM people", 0, []want{{"count(*)", 1, 0.5}}},
		{"count col", "SELECT COUNT(age) FROM people WHERE sex = 'Male'", 0, []want{{"count(age)", 1, 0.5}}},
		{"histogram", "SELECT sex, COUNT(*) FROM people GROUP BY sex", 0, []want{{"count(*)", 1, 0.5}}},
		{"sum", "SELECT SUM(age) FROM people", 1, []want{{"sum(age)", 120, 1}}},
		{"sum negative lo", "SELECT SUM(temp) FROM people", 1, []want{{"sum(temp)", 50, 1}}},
		{"avg splits", "SELECT AVG(age) FROM people", 1, []want{{"sum(age)", 120, 0.5}, {"count(age)", 1, 0.5}}},
		{"shared aggregates", "SELECT COUNT(*), SUM(age), AVG(age) FROM people", 1.5,
			[]want{{"count(*)", 1, 0.5}, {"sum(age)", 120, 0.5}, {"count(age)", 1, 0.5}}},
		{"grouped sum", "SELECT sex, SUM(age) FROM people GROUP BY sex", 1, []want{{"sum(age)", 120, 1}}},
		// social: unbounded, k = 5.
		{"k count", "SELECT COUNT(*) FROM checkins", 1, []want{{"count(*)", 5, 1}}},
		{"k histogram", "SELECT venue, COUNT(*) FROM checkins GROUP BY venue", 1, []want{{"count(*)", 5, 1}}},
		{"k sum", "SELECT SUM(duration) FROM checkins", 1, []want{{"sum(duration)", 3000, 1}}},
		{"k grouped sum", "SELECT venue, SUM(duration) FROM checkins GROUP BY venue", 1, []want{{"sum(duration)", 3000, 1}}},
		// bounded, k = 3, cost in [-10, 50].
		{"bounded count", "SELECT COUNT(*) FROM visits", 1, []want{{"count(*)", 3, 1}}},
		{"bounded histogram", "SELECT ward, COUNT(*) FROM visits GROUP BY ward", 1, []want{{"count(*)", 6, 1}}},
		{"bounded sum", "SELECT SUM(cost) FROM visits", 1, []want{{"sum(cost)", 180, 1}}},
		{"bounded grouped sum", "SELECT ward, SUM(cost) FROM visits GROUP BY ward", 1, []want{{"sum(cost)", 300, 1}}},
	}
	for _, tt := range tests {
		for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
			t.Run(tt.name+"/"+d.String(), func(t *testing.T) {
				pl, err := plan(t, p, tt.sql, planArgs{eps: tt.eps, dialect: d})
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				if len(pl.Aggs) != len(tt.want) {
					t.Fatalf("got %d aggregates %+v, want %d", len(pl.Aggs), pl.Aggs, len(tt.want))
				}
				total := 0.0
				for i, w := range tt.want {
					a := pl.Aggs[i]
					if a.Label != w.label {
						t.Errorf("agg %d label %q, want %q", i, a.Label, w.label)
					}
					if got := float64(a.Sensitivity) * a.Quantum; got != w.sens {
						t.Errorf("%s sensitivity %g, want %g", w.label, got, w.sens)
					}
					if math.Abs(a.Epsilon-w.eps) > 1e-12 {
						t.Errorf("%s ε %g, want %g", w.label, a.Epsilon, w.eps)
					}
					// The scale is sensitivity / ε share (exact for these values).
					if got, exp := a.ScaleValue(), w.sens/w.eps; math.Abs(got-exp) > 1e-9*exp {
						t.Errorf("%s scale %g, want %g", w.label, got, exp)
					}
					total += a.Epsilon
				}
				if math.Abs(total-pl.Budget.Epsilon) > 1e-12 {
					t.Errorf("ε shares add up to %g, charged %g", total, pl.Budget.Epsilon)
				}
			})
		}
	}
}

func TestRealSumLattice(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT SUM(income) FROM people", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := pl.Aggs[0]
	g := a.Quantum
	if frac, _ := math.Frexp(g); frac != 0.5 {
		t.Fatalf("γ = %g is not a power of two", g)
	}
	if pl.Backend.Aggs[0].Quantum != g {
		t.Fatalf("backend quantum %g, plan %g", pl.Backend.Aggs[0].Quantum, g)
	}
	// Every row's lattice value is FLOOR(x/γ+0.5) with x in [0, 250000.5]:
	// the sum's sensitivity is the largest such value (k = 1, unbounded).
	wantUnits := math.Floor(250000.5/g + 0.5)
	if float64(a.Sensitivity) != wantUnits {
		t.Fatalf("sensitivity %d units of γ=%g, want %g", a.Sensitivity, g, wantUnits)
	}
	if s := float64(a.Sensitivity) * g; math.Abs(s-250000.5) > g/2 {
		t.Fatalf("sensitivity %g is not within γ/2 of the bound", s)
	}
}

func TestThresholdSelection(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT cell, COUNT(*) FROM checkins GROUP BY cell", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Keys.Mode != planner.KeysThreshold || pl.Budget.Delta != 1e-6 {
		t.Fatalf("keys %+v budget %+v, want threshold selection with δ = 1e-6", pl.Keys, pl.Budget)
	}
	// One unit adds at most k = 5 rows: a new key must be released with
	// probability ≤ δ whatever the split of its rows. With p = exp(-1/t),
	// P(c + X ≥ τ) = p^(τ-c)/(1+p) for τ > c.
	tScale := pl.Aggs[pl.Keys.CountAgg].Scale.Float64()
	if tScale != 5 {
		t.Fatalf("count scale %g, want 5", tScale)
	}
	pp := math.Exp(-1 / tScale)
	tail := func(c int64) float64 { return math.Pow(pp, float64(pl.Keys.Threshold-c)) / (1 + pp) }
	for c := int64(1); c <= 5; c++ {
		groups := float64(5 / c) // at most 5/c keys can have c rows each
		if worst := groups * tail(c); worst > 1e-6 {
			t.Errorf("τ = %d: %g keys with %d rows are released with probability %g > δ", pl.Keys.Threshold, groups, c, worst)
		}
	}
	// Without δ the same query is refused, naming the policy field.
	_, err = plan(t, p, "SELECT zip, COUNT(*) FROM people GROUP BY zip", planArgs{user: "bob"})
	if !sqlerr.HasCode(err, sqlerr.FeatureNotSupported) ||
		!strings.Contains(err.Error(), "datasets.census.tables.people.columns.zip.domain") {
		t.Fatalf("got %v, want a refusal naming the domain field", err)
	}
}

func TestRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name, sql string
		args      planArgs
		code      sqlerr.Code
		msg       string
	}{
		{"select star", "SELECT * FROM people", planArgs{}, sqlerr.InsufficientPrivilege, "private"},
		{"row read", "SELECT age FROM people", planArgs{}, sqlerr.InsufficientPrivilege, "private"},
		{"group without agg over an undeclared domain", "SELECT zip FROM people GROUP BY zip", planArgs{}, sqlerr.InsufficientPrivilege, "aggregate"},
		{"distinct sum", "SELECT SUM(DISTINCT age) FROM people", planArgs{}, sqlerr.FeatureNotSupported, "DISTINCT"},
		{"sum text", "SELECT SUM(name) FROM people", planArgs{}, sqlerr.DatatypeMismatch, "not a number"},
		{"sum without bounds", "SELECT SUM(cell) FROM checkins", planArgs{}, sqlerr.FeatureNotSupported, "datasets.social.tables.checkins.columns.cell.bounds"},
		{"undeclared column", "SELECT COUNT(ssn) FROM people", planArgs{}, sqlerr.UndefinedColumn, "not exposed"},
		{"unit column", "SELECT COUNT(*) FROM people WHERE person_id = 7", planArgs{}, sqlerr.InsufficientPrivilege, "privacy unit"},
		{"unknown table", "SELECT COUNT(*) FROM salaries", planArgs{}, sqlerr.UndefinedTable, "not exposed"},
		{"unknown table in subquery", "SELECT COUNT(*) FROM zips WHERE zip IN (SELECT zip FROM salaries)", planArgs{}, sqlerr.UndefinedTable, "salaries"},
		{"private in subquery of public", "SELECT COUNT(*) FROM zips WHERE zip IN (SELECT zip FROM people)", planArgs{}, sqlerr.InsufficientPrivilege, "private"},
		{"remainder of a real", "SELECT COUNT(*) FROM people WHERE age % 2.5 > 3", planArgs{}, sqlerr.UndefinedFunction, "%"},
		{"sleep", "SELECT COUNT(*) FROM people WHERE pg_sleep(1) IS NULL", planArgs{}, sqlerr.InsufficientPrivilege, "sleep"},
		{"private join", "SELECT COUNT(*) FROM people p JOIN checkins c ON p.zip = c.venue", planArgs{}, sqlerr.FeatureNotSupported, "private"},
		{"public first", "SELECT COUNT(*) FROM zips z JOIN people p ON p.zip = z.zip", planArgs{}, sqlerr.FeatureNotSupported, "private table first"},
		{"join not on key", "SELECT COUNT(*) FROM people p JOIN zips z ON p.name = z.state", planArgs{}, sqlerr.FeatureNotSupported, "unique key"},
		{"left join from public", "SELECT COUNT(*) FROM zips z LEFT JOIN people p ON p.zip = z.zip", planArgs{}, sqlerr.FeatureNotSupported, "private table first"},
		{"left join not on key", "SELECT COUNT(*) FROM people p LEFT JOIN zips z ON p.name = z.state", planArgs{}, sqlerr.FeatureNotSupported, "unique key"},
		{"left join private", "SELECT COUNT(*) FROM people p LEFT JOIN checkins c ON p.zip = c.venue", planArgs{}, sqlerr.FeatureNotSupported, "private"},
		{"right join", "SELECT COUNT(*) FROM people p RIGHT JOIN zips z ON p.zip = z.zip", planArgs{}, sqlerr.InsufficientPrivilege, "RIGHT and FULL"},
		{"stats", "SELECT * FROM pg_catalog.pg_stats", planArgs{}, sqlerr.InsufficientPrivilege, "statistics"},
		{"password hashes", "SELECT rolname, rolpassword FROM pg_catalog.pg_authid", planArgs{}, sqlerr.InsufficientPrivilege, "secrets"},
		{"large objects", "SELECT data FROM pg_largeobject", planArgs{}, sqlerr.InsufficientPrivilege, "secrets"},
		{"stat counters", "SELECT n_live_tup FROM pg_stat_user_tables", planArgs{}, sqlerr.InsufficientPrivilege, "statistics"},
		{"sleep passthrough", "SELECT pg_sleep(10)", planArgs{}, sqlerr.InsufficientPrivilege, "pg_sleep"},
		{"epsilon too big", "SELECT COUNT(*) FROM people", planArgs{eps: 5}, sqlerr.InvalidParameterValue, "above"},
		{"no budget", "SELECT COUNT(*) FROM checkins", planArgs{user: "bob"}, sqlerr.InsufficientPrivilege, "no privacy budget"},
		// A row read of public tables from the other dialect is translated
		// (rows_test.go); what cannot be translated is refused.
		{"mysql public aggregate to postgres", "SELECT state, COUNT(*) FROM zips GROUP BY state", planArgs{dialect: parser.MySQL}, sqlerr.FeatureNotSupported, "row-level SELECT"},
		{"grouping column not grouped", "SELECT sex, COUNT(*) FROM people", planArgs{}, sqlerr.InsufficientPrivilege, "GROUP BY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, tt.args)
			if err == nil {
				t.Fatalf("planned %+v, want refusal", pl)
			}
			if !sqlerr.HasCode(err, tt.code) {
				t.Fatalf("code %v (%v), want %s", sqlerr.As(err).Code.Name, err, tt.code.Name)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("message %q does not mention %q", err.Error(), tt.msg)
			}
		})
	}
}

func TestPassthrough(t *testing.T) {
	p := planner.New(loadPolicy(t))
	// zips lists its columns: a row read of it is rendered with the
	// declared columns only, never forwarded as written.
	if pl, err := plan(t, p, "SELECT * FROM zips", planArgs{}); err != nil || !pl.Rendered ||
		pl.SQL != `SELECT "zips"."zip" AS "zip", "zips"."state" AS "state" FROM "zips" AS "zips"` {
		t.Errorf("SELECT * FROM zips: %+v, %v; want the declared columns, rendered", pl, err)
	}
	for _, sql := range []string{
		"SELECT state, count(*) FROM zips GROUP BY state",
		"SELECT version()",
		"SELECT n.nspname FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_type t ON t.typnamespace = n.oid WHERE pg_catalog.pg_type_is_visible(t.oid)",
		"SELECT table_name FROM information_schema.tables",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		if pl.Class != planner.ClassPassthrough || pl.SQL != sql {
			t.Errorf("%s: class %v sql %q", sql, pl.Class, pl.SQL)
		}
	}
}

func TestPublicJoinDomain(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT z.state, COUNT(*) AS n FROM people p JOIN zips z ON p.zip = z.zip GROUP BY z.state ORDER BY n DESC", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Keys.Mode != planner.KeysDomain || pl.Groups[0].DomainFrom == nil {
		t.Fatalf("keys %+v groups %+v: want the domain read from the public table", pl.Keys, pl.Groups)
	}
	if got := pl.Groups[0].DomainFrom.From.Name; got != "zips" {
		t.Fatalf("domain read from %q", got)
	}
	if len(pl.Backend.Joins) != 1 || pl.Backend.Joins[0].Right.Name != "zip" {
		t.Fatalf("joins %+v", pl.Backend.Joins)
	}
	if pl.Outputs[1].Name != "n" || len(pl.OrderBy) != 1 || pl.OrderBy[0].Output != 1 || !pl.OrderBy[0].Desc {
		t.Fatalf("outputs %+v order %+v", pl.Outputs, pl.OrderBy)
	}
}

// TestPublicLeftJoinPlan: a LEFT JOIN on the public key is planned like the
// inner join (same sensitivities: every private row is kept once), marked
// outer for the renderer, with NULL added to the domain of the public
// column; a private grouping column gets no NULL key from the join.
func TestPublicLeftJoinPlan(t *testing.T) {
	p := planner.New(loadPolicy(t))
	const rest = " zips z ON p.zip = z.zip GROUP BY z.state"
	const sel = "SELECT z.state, COUNT(*), SUM(age), AVG(age) FROM people p"
	inner, err := plan(t, p, sel+" JOIN"+rest, planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{sel + " LEFT JOIN" + rest, sel + " LEFT OUTER JOIN" + rest,
		"SELECT z.state, COUNT(*), SUM(age), AVG(age) FROM people p LEFT JOIN zips z ON p.zip IS NOT DISTINCT FROM z.zip GROUP BY z.state"} {
		left, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if len(left.Backend.Joins) != 1 || !left.Backend.Joins[0].Outer {
			t.Fatalf("%s: joins %+v, want one LEFT join", sql, left.Backend.Joins)
		}
		if ns := strings.Contains(sql, "DISTINCT"); left.Backend.Joins[0].NullSafe != ns {
			t.Errorf("%s: NullSafe %v", sql, left.Backend.Joins[0].NullSafe)
		}
		if left.Keys.Mode != planner.KeysDomain || left.Groups[0].DomainFrom == nil || !left.Groups[0].NullKey {
			t.Fatalf("%s: keys %+v groups %+v: want the public keys and NULL", sql, left.Keys, left.Groups)
		}
		if len(left.Aggs) != len(inner.Aggs) {
			t.Fatalf("%s: %d aggregates, inner join %d", sql, len(left.Aggs), len(inner.Aggs))
		}
		for i := range left.Aggs {
			if left.Aggs[i].Sensitivity != inner.Aggs[i].Sensitivity || left.Aggs[i].Scale.String() != inner.Aggs[i].Scale.String() {
				t.Errorf("%s: aggregate %d sensitivity %v scale %s, inner join %v %s", sql, i,
					left.Aggs[i].Sensitivity, left.Aggs[i].Scale.String(), inner.Aggs[i].Sensitivity, inner.Aggs[i].Scale.String())
			}
		}
		if left.CacheKey == inner.CacheKey {
			t.Errorf("%s: same cache key as the inner join", sql)
		}
	}
	if inner.Groups[0].NullKey || inner.Backend.Joins[0].Outer {
		t.Errorf("inner join: groups %+v joins %+v", inner.Groups, inner.Backend.Joins)
	}
	priv, err := plan(t, p, "SELECT sex, COUNT(*) FROM people p LEFT JOIN zips z ON p.zip = z.zip GROUP BY sex", planArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if priv.Groups[0].NullKey {
		t.Errorf("private grouping column got a NULL key: %+v", priv.Groups)
	}
}

func TestCacheKey(t *testing.T) {
	p := planner.New(loadPolicy(t))
	key := func(sql string, eps float64) string {
		t.Helper()
		pl, err := plan(t, p, sql, planArgs{eps: eps})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return pl.CacheKey
	}
	base := key("SELECT sex, COUNT(*) FROM people WHERE age > 30 GROUP BY sex", 1)
	same := []string{
		"select sex, count(*) from people where age > 30 group by sex",
		"SELECT p.sex, COUNT(*) AS n FROM people AS p WHERE p.age > 30 GROUP BY p.sex",
		"SELECT sex, COUNT(*) FROM people WHERE age > 30 GROUP BY sex ORDER BY 2 DESC LIMIT 1",
		"SELECT sex, COUNT(*) FROM people WHERE age > 30 GROUP BY sex HAVING COUNT(*) > 10",
	}
	for _, s := range same {
		if k := key(s, 1); k != base {
			t.Errorf("%s: a different release key for the same true aggregates", s)
		}
	}
	different := map[string]float64{
		"SELECT sex, COUNT(*) FROM people WHERE age > 31 GROUP BY sex":           1,
		"SELECT sex, COUNT(*) FROM people WHERE age > 30 GROUP BY sex":           0.9,
		"SELECT sex, COUNT(*) FROM people WHERE age > 30.0 GROUP BY sex":         1,
		"SELECT sex, COUNT(age) FROM people WHERE age > 30 GROUP BY sex":         1,
		"SELECT sex, COUNT(*), SUM(age) FROM people WHERE age > 30 GROUP BY sex": 1,
	}
	for s, eps := range different {
		if k := key(s, eps); k == base {
			t.Errorf("%s (ε %g): same release key as a different query", s, eps)
		}
	}
}

func TestHavingHiddenAggregate(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT sex, AVG(age) FROM people GROUP BY sex HAVING COUNT(*) > 100", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if pl.NumVisible != 2 || len(pl.Outputs) != 3 || !pl.Outputs[2].Hidden {
		t.Fatalf("outputs %+v: want a hidden count(*)", pl.Outputs)
	}
	// AVG needs sum(age) and count(age); HAVING adds count(*): three shares.
	if len(pl.Aggs) != 3 || math.Abs(pl.Aggs[0].Epsilon-1.0/3) > 1e-12 {
		t.Fatalf("aggs %+v", pl.Aggs)
	}
}

// TestCatalogStatisticsBlanked: statistics columns named in a catalog
// query to PostgreSQL are replaced by NULL on the parse tree (keeping the
// output name), so pgAdmin-style probes get blanks, not row counts.
func TestCatalogStatisticsBlanked(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for sql, want := range map[string]string{
		"SELECT relname, reltuples FROM pg_catalog.pg_class":                   "SELECT relname, NULL::real AS reltuples FROM " + smallPgClass + " pg_class",
		`SELECT c."relpages" FROM pg_class c`:                                  "SELECT NULL::int AS relpages FROM " + smallPgClass + " c",
		"SELECT RELTUPLES::bigint AS n FROM pg_class WHERE relname = 'people'": "SELECT NULL::real::bigint AS n FROM " + smallPgClass + " pg_class WHERE relname = 'people'",
		"SELECT c.relname FROM pg_class c WHERE c.reltuples > 100":             "SELECT c.relname FROM " + smallPgClass + " c WHERE NULL::real > 100",
		"SELECT schemaname, last_value FROM pg_catalog.pg_sequences": "SELECT schemaname, NULL::bigint AS last_value FROM " +
			"(SELECT schemaname, sequencename, NULL::bigint AS last_value FROM pg_catalog.pg_sequences) pg_sequences",
		// pg_proc.prorows is a planner estimate the function's author
		// declared, not a statistic: not blanked.
		"SELECT proname, prorows FROM pg_proc": "SELECT proname, prorows FROM pg_proc",
	} {
		pl, err := plan(t, p, sql, planArgs{})
		if err != nil {
			t.Errorf("%s: %v", sql, err)
		} else if pl.SQL != want {
			t.Errorf("%s: forwarded %q, want %q", sql, pl.SQL, want)
		}
	}
	// A column position over a star may be a statistics column: sorting
	// (or grouping, DISTINCT ON) by it ranks tables by their size even
	// though the values come back blank. pg_class's 10th column is
	// relpages.
	for _, sql := range []string{
		"SELECT * FROM pg_class ORDER BY 10",
		"SELECT * FROM (SELECT * FROM pg_class) c ORDER BY 10 DESC",
		"SELECT c.* FROM pg_class c ORDER BY 11, 2",
		"SELECT DISTINCT ON (10) * FROM pg_class",
		"SELECT * FROM pg_class UNION SELECT * FROM pg_class ORDER BY 10",
		"SELECT relname FROM pg_class WHERE oid IN (SELECT oid FROM (SELECT * FROM pg_class ORDER BY 10 LIMIT 1) x)",
	} {
		_, err := plan(t, p, sql, planArgs{})
		if se := sqlerr.As(err); err == nil || se.Code.SQLState != "42501" || !strings.Contains(se.Message, "position") {
			t.Errorf("%s: %v, want a 42501 refusal naming the position", sql, err)
		}
	}
	// Positions over named columns, and names over a star, are fine.
	for _, sql := range []string{
		"SELECT relname, relkind FROM pg_class ORDER BY 2, 1",
		"SELECT * FROM pg_class ORDER BY relname",
	} {
		if _, err := plan(t, p, sql, planArgs{}); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// Names that merely contain a statistics column name are fine.
	if _, err := plan(t, p, "SELECT relname AS my_reltuples_x FROM pg_class", planArgs{}); err != nil {
		t.Errorf("identifier containing reltuples: %v", err)
	}
}

func TestUniqueUnitSkipsBounding(t *testing.T) {
	pol := loadPolicy(t)
	p := planner.New(pol)
	pl, err := plan(t, p, "SELECT COUNT(*) FROM people", planArgs{eps: 1})
	if err != nil || pl.Backend.MaxRowsPerUnit != 1 {
		t.Fatalf("bound %d (%v), want 1 without a unique unit", pl.Backend.MaxRowsPerUnit, err)
	}
	_, tbl := pol.LookupTable("", "people")
	tbl.UnitUnique = true
	pl2, err := plan(t, p, "SELECT COUNT(*) FROM people", planArgs{eps: 1})
	if err != nil || pl2.Backend.MaxRowsPerUnit != 0 {
		t.Fatalf("bound %d (%v), want none for a unique unit", pl2.Backend.MaxRowsPerUnit, err)
	}
	if pl2.Aggs[0].Sensitivity != 1 || pl2.CacheKey == pl.CacheKey {
		t.Fatalf("sensitivity %d, keys equal %v", pl2.Aggs[0].Sensitivity, pl2.CacheKey == pl.CacheKey)
	}
}
