package planner_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ageImage is the image of f over the declared ages of census.people
// (bounds and domain [0, 120]), computed here by brute force.
func ageImage(f func(a int64) ir.Value) []ir.Value {
	var out []ir.Value
	for a := int64(0); a <= 120; a++ {
		if v := f(a); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func sameSet(a, b []ir.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// TestGroupByExpressionKeys: a grouping expression's keys are the image
// of its columns' declared values, released like a declared domain, and
// the sensitivities are those of the same query grouped by a column (a
// key is a function of the row, so each unit's rows still land in at
// most k groups).
func TestGroupByExpressionKeys(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name   string
		d      parser.Dialect
		sql    string
		ref    string // the same aggregates grouped by a column
		keys   []ir.Value
		keyOut int // the visible output holding the key (-1: none)
		name0  string
	}{
		{"decade bins by position", parser.Postgres,
			"SELECT floor(age / 10) * 10 AS bin, COUNT(*), SUM(temp) FROM people GROUP BY 1",
			"SELECT age, COUNT(*), SUM(temp) FROM people GROUP BY age",
			ageImage(func(a int64) ir.Value { return ir.Int(a / 10 * 10) }), 0, "bin"},
		{"decade bins, MySQL's real division", parser.MySQL,
			"SELECT floor(age / 10) * 10 AS bin, COUNT(*), SUM(temp) FROM people GROUP BY 1",
			"SELECT age, COUNT(*), SUM(temp) FROM people GROUP BY age",
			ageImage(func(a int64) ir.Value { return ir.Float(math.Floor(float64(a)/10) * 10) }), 0, "bin"},
		{"bins repeated, qualified differently", parser.Postgres,
			"SELECT floor(p.age / 10) * 10, COUNT(*) FROM people p GROUP BY floor(age / 10) * 10",
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			ageImage(func(a int64) ir.Value { return ir.Int(a / 10 * 10) }), 0, "?column?"},
		{"by alias", parser.Postgres,
			"SELECT age % 3 AS r, COUNT(*) FROM people GROUP BY r",
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			[]ir.Value{ir.Int(0), ir.Int(1), ir.Int(2)}, 0, "r"},
		{"case bands", parser.Postgres,
			"SELECT CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'middle' ELSE 'old' END AS band, COUNT(*) FROM people GROUP BY 1",
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			[]ir.Value{ir.String("young"), ir.String("middle"), ir.String("old")}, 0, "band"},
		{"mysql case bands without ELSE", parser.MySQL,
			"SELECT CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'middle' END AS band, COUNT(*) FROM people GROUP BY band",
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			[]ir.Value{ir.String("young"), ir.String("middle"), ir.Null()}, 0, "band"},
		{"width_bucket", parser.Postgres,
			"SELECT width_bucket(age, 0, 100, 10) AS b, COUNT(*) FROM people GROUP BY 1 ORDER BY 1",
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			ageImage(func(a int64) ir.Value {
				if a >= 100 {
					return ir.Int(11)
				}
				return ir.Int(a*10/100 + 1)
			}), 0, "b"},
		{"key not selected", parser.Postgres,
			"SELECT COUNT(*) FROM people GROUP BY age > 65",
			"SELECT COUNT(*) FROM people GROUP BY age",
			[]ir.Value{ir.Bool(false), ir.Bool(true)}, -1, ""},
		{"Metabase's binning", parser.Postgres,
			`SELECT ((floor((("source"."age" - 10.0) / 10.0)) * 10.0) + 10.0) AS "age", count(*) AS "count" FROM "public"."people" AS "source" GROUP BY ((floor((("source"."age" - 10.0) / 10.0)) * 10.0) + 10.0) ORDER BY 1 ASC`,
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			ageImage(func(a int64) ir.Value { return ir.Float(math.Floor((float64(a)-10.0)/10.0)*10.0 + 10.0) }), 0, "age"},
		{"bins of a bounded real without a domain", parser.Postgres,
			"SELECT floor(income / 10000) AS k, COUNT(*) FROM people GROUP BY 1",
			"SELECT age, COUNT(*) FROM people GROUP BY age",
			func() []ir.Value {
				// income is declared in [0, 250000.5]: floors 0..25.
				var out []ir.Value
				for k := 0.0; k <= math.Floor(250000.5/10000); k++ {
					out = append(out, ir.Float(k))
				}
				return out
			}(), 0, "k"},
		{"text function of a declared domain", parser.Postgres,
			"SELECT upper(sex), COUNT(*) FROM people GROUP BY upper(sex)",
			"SELECT sex, COUNT(*) FROM people GROUP BY sex",
			[]ir.Value{ir.String("FEMALE"), ir.String("MALE")}, 0, "upper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sens, _, pl := sensOf(t, p, tt.sql, 1, tt.d)
			ref, _, _ := sensOf(t, p, tt.ref, 1, tt.d)
			if !slices.Equal(sens, ref) {
				t.Errorf("sensitivities %v, want the column grouping's %v", sens, ref)
			}
			if pl.Keys.Mode != planner.KeysDomain || len(pl.Groups) != 1 || !pl.Groups[0].Expr {
				t.Fatalf("keys %+v groups %+v, want one derived domain", pl.Keys, pl.Groups)
			}
			if !sameSet(pl.Groups[0].Domain, tt.keys) {
				t.Errorf("keys %v, want %v", pl.Groups[0].Domain, tt.keys)
			}
			if pl.Budget.Delta != 0 {
				t.Errorf("δ = %g, want 0 (declared-derived keys)", pl.Budget.Delta)
			}
			if _, isCol := pl.Backend.GroupBy[0].(ir.ColumnRef); isCol {
				t.Errorf("backend key %s, want the expression", ir.FormatExpr(pl.Backend.GroupBy[0]))
			}
			if tt.keyOut >= 0 {
				o := pl.Outputs[tt.keyOut]
				if o.Kind != planner.OutGroup || o.Group != 0 || o.Hidden || o.Name != tt.name0 {
					t.Errorf("output %+v, want the visible key %q", o, tt.name0)
				}
			}
		})
	}
}

// TestGroupByExpressionPostProcessing: an expression over a grouping
// expression is computed from the key.
func TestGroupByExpressionPostProcessing(t *testing.T) {
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT floor(age / 10) * 10 + 5 AS mid, COUNT(*) FROM people GROUP BY floor(age / 10) * 10", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := pl.Outputs[0]
	ref, ok := o.Expr.(ir.Arith)
	if o.Kind != planner.OutExpr || !ok {
		t.Fatalf("output %+v, want an expression over the key", o)
	}
	if k, ok := ref.L.(ir.OutputRef); !ok || pl.Outputs[k.Index].Kind != planner.OutGroup {
		t.Errorf("expression %s does not read the key", ir.FormatExpr(o.Expr))
	}
	// A column inside the key is not itself grouped.
	if _, err := plan(t, p, "SELECT floor(age / 10) * 10 + age, COUNT(*) FROM people GROUP BY floor(age / 10) * 10", planArgs{eps: 1}); !sqlerr.HasCode(err, sqlerr.GroupingError) {
		t.Errorf("ungrouped column: got %v, want 42803", err)
	}
}

// TestGroupByExpressionRefusals: what cannot be answered is refused before
// any charge, with a reason that says what to declare.
func TestGroupByExpressionRefusals(t *testing.T) {
	p := planner.New(loadPolicy(t))
	tests := []struct {
		name string
		sql  string
		code sqlerr.Code
		msg  string
	}{
		{"unbounded column computed with", "SELECT cell + 1, COUNT(*) FROM checkins GROUP BY 1", sqlerr.FeatureNotSupported, "no declared bounds"},
		{"real without a domain, no δ", "SELECT floor(income), COUNT(*) FROM people GROUP BY 1", sqlerr.FeatureNotSupported, "datasets.census.tables.people.columns.income"},
		{"too many keys, no δ", "SELECT age * 1000 + temp * 3 + age, COUNT(*) FROM people GROUP BY 1", sqlerr.FeatureNotSupported, "finite set of possible keys"},
		{"overflowing key", "SELECT age * 9223372036854775807, COUNT(*) FROM people GROUP BY 1", sqlerr.NumericValueOutOfRange, "can reach"},
		{"width_bucket of a real", "SELECT width_bucket(income, 0, 100, 10), COUNT(*) FROM people GROUP BY 1", sqlerr.UndefinedFunction, "integers"},
		{"width_bucket with low ≥ high", "SELECT width_bucket(age, 10, 10, 3), COUNT(*) FROM people GROUP BY 1", sqlerr.InvalidParameterValue, "low < high"},
		{"aggregate in GROUP BY", "SELECT COUNT(*) FROM people GROUP BY 1 + COUNT(*)", sqlerr.Code{}, "aggregate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan(t, p, tt.sql, planArgs{eps: 1})
			if err == nil {
				t.Fatal("planned, want a refusal")
			}
			if tt.code.Name != "" && !sqlerr.HasCode(err, tt.code) {
				t.Errorf("got %v, want %s", err, tt.code.Name)
			}
			if !strings.Contains(sqlerr.As(err).Error()+" "+sqlerr.As(err).Hint, tt.msg) {
				t.Errorf("got %v (hint %q), want it to mention %q", err, sqlerr.As(err).Hint, tt.msg)
			}
		})
	}
	// With δ > 0 (social) a key set too large to derive falls back to
	// threshold selection, as an undeclared column does.
	pl, err := plan(t, p, "SELECT duration * duration, COUNT(*) FROM checkins GROUP BY 1", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Keys.Mode != planner.KeysThreshold || pl.Budget.Delta <= 0 {
		t.Errorf("keys %+v δ %g, want threshold selection", pl.Keys, pl.Budget.Delta)
	}
	small, err := plan(t, p, "SELECT duration / 100, COUNT(*) FROM checkins GROUP BY 1", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if small.Keys.Mode != planner.KeysDomain || len(small.Groups[0].Domain) != 7 || small.Budget.Delta != 0 {
		t.Errorf("keys %+v domain %v, want the 7 derived keys 0..6 without δ", small.Keys, small.Groups[0].Domain)
	}
}

// TestGroupByExpressionCacheKey: different grouping expressions are
// different releases; the same expression written two ways is one.
func TestGroupByExpressionCacheKey(t *testing.T) {
	p := planner.New(loadPolicy(t))
	key := func(sql string) string {
		pl, err := plan(t, p, sql, planArgs{eps: 1})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return pl.CacheKey
	}
	a := key("SELECT floor(age / 10) * 10, COUNT(*) FROM people GROUP BY 1")
	b := key("SELECT floor(age / 5) * 5, COUNT(*) FROM people GROUP BY 1")
	c := key("SELECT COUNT(*) FROM people GROUP BY floor(people.age / 10) * 10")
	d := key("SELECT age, COUNT(*) FROM people GROUP BY age")
	if a == b || a == d {
		t.Error("different groupings share a release")
	}
	if a != c {
		t.Error("the same grouping written two ways has two releases")
	}
}

// TestWhereNarrowsKeys: a WHERE conjunct on the grouping key alone
// removes the keys it rules out; anything the fold is unsure of keeps them.
func TestWhereNarrowsKeys(t *testing.T) {
	p := planner.New(loadPolicy(t))
	ints := func(vs ...int64) []ir.Value {
		var out []ir.Value
		for _, v := range vs {
			out = append(out, ir.Int(v))
		}
		return out
	}
	all := ageImage(func(a int64) ir.Value { return ir.Int(a) })
	tests := []struct {
		name string
		d    parser.Dialect
		sql  string
		want []ir.Value
	}{
		{"between", parser.Postgres, "SELECT age, COUNT(*) FROM people WHERE age BETWEEN 30 AND 33 GROUP BY age", ints(30, 31, 32, 33)},
		{"mysql between", parser.MySQL, "SELECT age, COUNT(*) FROM people WHERE age BETWEEN 30 AND 33 GROUP BY age", ints(30, 31, 32, 33)},
		{"equality on text", parser.Postgres, "SELECT sex, COUNT(*) FROM people WHERE sex = 'Female' GROUP BY sex", []ir.Value{ir.String("Female")}},
		{"in list and another conjunct", parser.Postgres, "SELECT age, COUNT(*) FROM people WHERE temp > 3 AND age IN (20, 25, 200) AND NOT (age = 25) GROUP BY age", ints(20)},
		{"comparisons", parser.Postgres, "SELECT age, COUNT(*) FROM people WHERE age >= 118 GROUP BY age", ints(118, 119, 120)},
		{"expression key", parser.Postgres, "SELECT floor(age / 10) * 10, COUNT(*) FROM people WHERE floor(age / 10) * 10 IN (20, 40) GROUP BY 1", ints(20, 40)},
		{"column of an expression key", parser.Postgres, "SELECT age / 10, COUNT(*) FROM people WHERE age < 30 GROUP BY 1", all[:13]},
		{"mixed with another column: kept", parser.Postgres, "SELECT age, COUNT(*) FROM people WHERE age < temp GROUP BY age", all},
		{"disjunction with another column: kept", parser.Postgres, "SELECT age, COUNT(*) FROM people WHERE age = 3 OR temp = 1 GROUP BY age", all},
		{"text order (collation): kept", parser.Postgres, "SELECT sex, COUNT(*) FROM people WHERE sex < 'G' GROUP BY sex", []ir.Value{ir.String("Female"), ir.String("Male")}},
		// MySQL's default collation finds 'Female' rows for 'female':
		// that key is kept (unsure), 'Male' is ruled out.
		{"case-insensitive collation", parser.MySQL, "SELECT sex, COUNT(*) FROM people WHERE sex = 'female' GROUP BY sex", []ir.Value{ir.String("Female")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{eps: 1, dialect: tt.d})
			if err != nil {
				t.Fatal(err)
			}
			if pl.Keys.Mode != planner.KeysDomain {
				t.Fatalf("keys %+v", pl.Keys)
			}
			got := pl.Groups[0].Domain
			if tt.name == "column of an expression key" {
				// The key is age / 10 over [0, 120]: 0..12; the conjunct
				// reads age, not the key, but narrows age's range to
				// [0, 29] (whereColumnRanges), so the keys are 0, 1, 2.
				if !slices.Equal(got, []ir.Value{ir.Int(0), ir.Int(1), ir.Int(2)}) {
					t.Errorf("keys %v, want 0, 1, 2", got)
				}
				return
			}
			if !sameSet(got, tt.want) {
				t.Errorf("keys %v, want %v", got, tt.want)
			}
		})
	}
	// The policy's domain is not modified by narrowing.
	pl, err := plan(t, p, "SELECT sex, COUNT(*) FROM people GROUP BY sex", planArgs{eps: 1})
	if err != nil || len(pl.Groups[0].Domain) != 2 {
		t.Errorf("after narrowing, a plain plan has keys %v (%v), want both", pl.Groups[0].Domain, err)
	}
}

// TestGroupByWithoutAggregate: the key set is the answer, free; without a
// key set the query is refused.
func TestGroupByWithoutAggregate(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, d := range []parser.Dialect{parser.Postgres, parser.MySQL} {
		pl, err := plan(t, p, "SELECT sex FROM people WHERE sex <> 'Male' GROUP BY sex", planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		if !pl.KeysOnly || len(pl.Aggs) != 0 || pl.Budget.Epsilon != 0 || !sameSet(pl.Groups[0].Domain, []ir.Value{ir.String("Female")}) {
			t.Errorf("%s: plan keys-only %v aggs %d budget %+v keys %v, want the one key, free", d, pl.KeysOnly, len(pl.Aggs), pl.Budget, pl.Groups[0].Domain)
		}
		pl, err = plan(t, p, "SELECT CASE WHEN age < 18 THEN 'minor' ELSE 'adult' END AS g FROM people GROUP BY 1", planArgs{eps: 1, dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		if !pl.KeysOnly || len(pl.Groups[0].Domain) != 2 {
			t.Errorf("%s: derived keys-only plan %+v", d, pl.Groups)
		}
		_, err = plan(t, p, "SELECT zip FROM people GROUP BY zip", planArgs{eps: 1, dialect: d})
		if !sqlerr.HasCode(err, sqlerr.InsufficientPrivilege) || !strings.Contains(err.Error(), "key set") {
			t.Errorf("%s: GROUP BY an undeclared column without aggregate: %v, want a refusal", d, err)
		}
	}
}

// TestGroupByExpressionBruteForce: the histogram sensitivity of a GROUP BY
// expression, from the definition. Databases of up to two units, each
// with 1..k rows (k = max_rows_per_unit) of values in and out of the
// declared bounds, are enumerated; neighbours add or remove one unit
// (unbounded) or replace one unit's rows (bounded); the released
// histogram counts the rows per key of the plan's key set (the key
// computed in Go here, the column clamped where the key computes with
// it). The largest L1 change must equal the planner's sensitivity: each
// unit's rows land in at most k groups, as for a column key.
func TestGroupByExpressionBruteForce(t *testing.T) {
	p := planner.New(loadPolicy(t))
	clamp := func(v, lo, hi int64) int64 { return min(max(v, lo), hi) }
	tests := []struct {
		sql     string
		values  []int64
		k       int
		bounded bool
		key     func(v int64) ir.Value
	}{
		{"SELECT floor(age / 10) * 10, COUNT(*) FROM people GROUP BY 1", []int64{-5, 17, 25, 33, 90, 130}, 1, false,
			func(v int64) ir.Value { return ir.Int(clamp(v, 0, 120) / 10 * 10) }},
		{"SELECT duration / 100, COUNT(*) FROM checkins GROUP BY 1", []int64{0, 150, 250, 700}, 5, false,
			func(v int64) ir.Value { return ir.Int(clamp(v, 0, 600) / 100) }},
		{"SELECT CASE WHEN cost > 0 THEN 'pos' ELSE 'neg' END, COUNT(*) FROM visits GROUP BY 1", []int64{-20, 0, 5, 60}, 3, true,
			func(v int64) ir.Value {
				if v > 0 {
					return ir.String("pos")
				}
				return ir.String("neg")
			}},
		{"SELECT width_bucket(cost, 0, 40, 2), COUNT(*) FROM visits GROUP BY 1", []int64{-20, 0, 25, 60}, 3, true,
			func(v int64) ir.Value {
				c := clamp(v, -10, 50)
				switch {
				case c < 0:
					return ir.Int(0)
				case c >= 40:
					return ir.Int(3)
				}
				return ir.Int(c*2/40 + 1)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			pl, err := plan(t, p, tt.sql, planArgs{eps: 1})
			if err != nil {
				t.Fatal(err)
			}
			dom := pl.Groups[0].Domain
			if pl.Keys.Mode != planner.KeysDomain || dom == nil {
				t.Fatalf("keys %+v", pl.Keys)
			}
			// Every unit: a multiset of 1..k values.
			var units [][]int64
			var grow func(u []int64, from int)
			grow = func(u []int64, from int) {
				if len(u) > 0 {
					units = append(units, slices.Clone(u))
				}
				if len(u) == tt.k {
					return
				}
				for i := from; i < len(tt.values); i++ {
					grow(append(u, tt.values[i]), i)
				}
			}
			grow(nil, 0)
			hist := func(db ...[]int64) map[string]int64 {
				h := map[string]int64{}
				for _, u := range db {
					for _, v := range u {
						if k := tt.key(v); slices.Contains(dom, k) {
							h[k.SQL()]++
						}
					}
				}
				return h
			}
			l1 := func(a, b map[string]int64) int64 {
				var d int64
				for k, v := range a {
					d += max(v-b[k], b[k]-v)
				}
				for k, v := range b {
					if _, ok := a[k]; !ok {
						d += v
					}
				}
				return d
			}
			var worst int64
			for _, other := range append([][]int64{nil}, units...) {
				for _, u := range units {
					if tt.bounded {
						for _, w := range units {
							worst = max(worst, l1(hist(other, u), hist(other, w)))
						}
					} else {
						worst = max(worst, l1(hist(other), hist(other, u)))
					}
				}
			}
			got := float64(pl.Aggs[0].Sensitivity) * pl.Aggs[0].Quantum
			if got != float64(worst) {
				t.Errorf("sensitivity %g, brute force %d", got, worst)
			}
		})
	}
}

// TestGroupByExpressionHavingOrderBy: HAVING and ORDER BY read a grouping
// expression as its key.
func TestGroupByExpressionHavingOrderBy(t *testing.T) {
	p := planner.New(loadPolicy(t))
	for _, sql := range []string{
		"SELECT COUNT(*) FROM people GROUP BY floor(age / 10) * 10 HAVING floor(age / 10) * 10 > 30 ORDER BY floor(age / 10) * 10 DESC",
		"SELECT floor(age / 10) * 10 AS bin, COUNT(*) FROM people GROUP BY bin HAVING COUNT(*) > 3 AND floor(age / 10) * 10 < 90 ORDER BY bin",
	} {
		pl, err := plan(t, p, sql, planArgs{eps: 1})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if pl.Having == nil || len(pl.OrderBy) != 1 {
			t.Fatalf("%s: having %v order %+v", sql, pl.Having, pl.OrderBy)
		}
		o := pl.Outputs[pl.OrderBy[0].Output]
		if ref, ok := o.Expr.(ir.OutputRef); o.Kind != planner.OutGroup && (!ok || pl.Outputs[ref.Index].Kind != planner.OutGroup) {
			t.Errorf("%s: ORDER BY output %+v is not the key", sql, o)
		}
	}
}
