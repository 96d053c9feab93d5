package planner_test

import (
	"math/big"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
)

// quantilePart returns the plan's one quantile part.
func quantilePart(t *testing.T, pl *planner.Plan) planner.AggPlan {
	t.Helper()
	var found []planner.AggPlan
	for _, a := range pl.Aggs {
		if a.Quantile != nil {
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d quantile parts, want 1: %+v", len(found), pl.Aggs)
	}
	return found[0]
}

// TestQuantileSensitivityIsTheHistograms: under every model the quantile's
// part has the sensitivity of the histogram GROUP BY (keys…, x) — checked
// against that histogram's own plan where x has a domain to group by, and
// against the hand-derived values of the model tests otherwise — and its
// rate is ε_share/(2·max(r, q−r)·S·m) (m: the ddp multiplier, which for a
// quantile is L, not the Laplace solver's smaller one).
func TestQuantileSensitivityIsTheHistograms(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	dp := planner.New(loadPolicy(t))
	bf := loadBlowfish(t)
	ddp := planner.New(loadDDP(t))
	tests := []struct {
		name      string
		p         *planner.Planner
		sql       string
		histogram string  // the histogram with x as a key ("" when x has no domain)
		sens      float64 // hand-derived histogram sensitivity (× multiplier)
		lip, q    int64   // max(r, q−r) and q of the fraction
		eps       float64 // the part's ε share
	}{
		{"dp unbounded k=1", dp, "SELECT median(age) FROM people", "SELECT age, COUNT(age) FROM people GROUP BY age", 1, 1, 2, 1},
		{"dp k=5 grouped max", dp, "SELECT venue, MAX(duration) FROM checkins GROUP BY venue", "", 5, 1, 1, 1},
		{"dp bounded k=3", dp, "SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY cost) FROM visits", "", 6, 7, 10, 1},
		{"blowfish distance on x", bf, "SELECT median(x) FROM visits", "SELECT x, COUNT(x) FROM visits GROUP BY x", 2, 1, 2, 1},
		// A published city marginal no secret pair (within a city) can
		// change: maxT = 1.
		{"blowfish marginal kept by the secrets", bf, "SELECT MIN(rooms) FROM homes", "SELECT rooms, COUNT(rooms) FROM homes GROUP BY rooms", 2, 1, 1, 1},
		{"blowfish secrets-only", bf, "SELECT MAX(rooms) FROM flats", "SELECT rooms, COUNT(rooms) FROM flats GROUP BY rooms", 6, 1, 1, 1},
		{"induced chain", bf, "SELECT median(r) FROM rt", "SELECT r, COUNT(r) FROM rt GROUP BY r", 6, 1, 2, 1},
		{"induced rows and columns", bf, "SELECT sex, median(age) FROM persons GROUP BY sex", "", 4, 1, 2, 1},
		// households: bounded ΔQ of a histogram 2, L = 3 (the Laplace
		// multiplier would be 2).
		{"ddp groups", ddp, "SELECT median(age) FROM people", "", 6, 1, 2, 1},
		// directed: k = 2 bounded histogram 4, L = 4.
		{"ddp directed", ddp, "SELECT topic, MAX(likes) FROM posts GROUP BY topic", "", 16, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := plan(t, tc.p, tc.sql, planArgs{eps: 1, dialect: parser.Postgres})
			if err != nil {
				t.Fatal(err)
			}
			a := quantilePart(t, pl)
			if got := a.SensitivityValue(); got != tc.sens {
				t.Errorf("histogram sensitivity %g, want %g (notes %v)", got, tc.sens, pl.Notes)
			}
			if tc.histogram != "" {
				h, err := plan(t, tc.p, tc.histogram, planArgs{eps: 1, dialect: parser.Postgres})
				if err != nil {
					t.Fatal(err)
				}
				if hs := h.Aggs[0].SensitivityValue(); hs != a.SensitivityValue() {
					t.Errorf("quantile sensitivity %g, the histogram by x has %g", a.SensitivityValue(), hs)
				}
			}
			if a.Epsilon != tc.eps {
				t.Errorf("ε share %g, want %g", a.Epsilon, tc.eps)
			}
			// rate = ε/(2·lip·S), exactly (every value here is small).
			want := new(big.Rat).SetFrac64(1, 1)
			want.Quo(want, new(big.Rat).SetFloat64(2*float64(tc.lip)*tc.sens))
			if got := a.Quantile.Rate.Rat(); got.Cmp(want) != 0 {
				t.Errorf("rate %v, want %v", got, want)
			}
			if a.Mechanism() != "exponential" || a.RankError() <= 0 {
				t.Errorf("mechanism %q, rank error %v", a.Mechanism(), a.RankError())
			}
		})
	}
}

// TestQuantileExactUnderBlowfish: when no secret pair can change the
// column, the WHERE clause or the keys (y under distance secrets on x),
// the histogram has sensitivity 0: the best candidate is released exactly
// and nothing is charged.
func TestQuantileExactUnderBlowfish(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pl, err := plan(t, loadBlowfish(t), "SELECT kind, median(y) FROM visits GROUP BY kind", planArgs{eps: 1, dialect: parser.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	a := quantilePart(t, pl)
	if a.Sensitivity != 0 || a.Epsilon != 0 || pl.Budget.Epsilon != 0 || a.RankError() != 0 {
		t.Errorf("sensitivity %d, ε %g, charged %g, rank error %g: want an exact, free answer", a.Sensitivity, a.Epsilon, pl.Budget.Epsilon, a.RankError())
	}
	// The exact selection is the first best candidate, whatever the source.
	counts := make([]int64, a.Quantile.Spec.Grid.Len())
	counts[3], counts[7] = 5, 5
	if j := a.Select(nil, counts); j != 3 {
		t.Errorf("exact median of rows in bins 3 and 7 is bin %d, want 3", j)
	}
}

// TestQuantileParts: outputs that read one selection share it (median and
// percentile_cont(0.5) of a column; MAX in HAVING and in the select list),
// different fractions are different parts, and the cache key differs with
// the fraction.
func TestQuantileParts(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	p := planner.New(loadPolicy(t))
	pl, err := plan(t, p, "SELECT median(age), percentile_cont(0.5) WITHIN GROUP (ORDER BY age), percentile_disc(0.9) WITHIN GROUP (ORDER BY age), COUNT(age) FROM people", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Aggs) != 3 {
		t.Fatalf("%d parts, want 3 (one median selection, one at 0.9, the count): %+v", len(pl.Aggs), pl.Aggs)
	}
	a, err := plan(t, p, "SELECT median(age) FROM people", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := plan(t, p, "SELECT percentile_cont(0.6) WITHIN GROUP (ORDER BY age) FROM people", planArgs{eps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.CacheKey == b.CacheKey {
		t.Error("median and the 0.6 percentile share a release key")
	}
	my, err := plan(t, p, "SELECT MEDIAN(age) FROM people", planArgs{eps: 1, dialect: parser.MySQL})
	if err != nil {
		t.Fatalf("MySQL MEDIAN: %v", err)
	}
	if quantilePart(t, my).Quantile.Spec.Key() != quantilePart(t, a).Quantile.Spec.Key() {
		t.Error("MySQL MEDIAN(age) is not PostgreSQL's median(age)")
	}
	for _, q := range []struct {
		d   parser.Dialect
		sql string
	}{
		{parser.Postgres, "SELECT age, COUNT(*) FROM people GROUP BY age HAVING MAX(income) > 10"},
		{parser.Postgres, "SELECT sex, median(age) AS m FROM people GROUP BY sex ORDER BY median(age) DESC"},
		{parser.MySQL, "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING MEDIAN(age) > 30 ORDER BY MEDIAN(age)"},
		{parser.MySQL, "SELECT sex, MIN(age), MAX(age) FROM people GROUP BY sex"},
	} {
		if _, err := plan(t, p, q.sql, planArgs{eps: 1, dialect: q.d}); err != nil {
			t.Errorf("%s: %v", q.sql, err)
		}
	}
	for _, q := range []struct {
		d   parser.Dialect
		sql string
	}{
		{parser.Postgres, "SELECT median(age) OVER () FROM people"},
		{parser.Postgres, "SELECT percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY age) FROM people"},
		{parser.Postgres, "SELECT sex, median(age) FROM people GROUP BY ROLLUP (sex)"},
		{parser.MySQL, "SELECT PERCENTILE_CONT(age) FROM people"},
	} {
		if _, err := plan(t, p, q.sql, planArgs{eps: 1, dialect: q.d}); err == nil {
			t.Errorf("%s: planned, want a refusal", q.sql)
		}
	}
}
