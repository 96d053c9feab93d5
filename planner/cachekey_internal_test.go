package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"sync"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// cacheKeyFmt is cacheKey as it was written with fmt.Fprintf: the key
// stored releases are found by, which the faster cacheKey must reproduce
// byte for byte.
func cacheKeyFmt(pl *Plan) string {
	h := sha256.New()
	fmt.Fprintf(h, "ddp-release-v1\x00%s\x00%s\x00", pl.Dataset.Fingerprint, pl.Backend.Canonical())
	for _, a := range pl.Aggs {
		fmt.Fprintf(h, "%d/%x/%s/%x\x00", a.Sensitivity, math.Float64bits(a.Quantum), a.Scale.Rat().RatString(), math.Float64bits(a.Epsilon))
		if a.Quantile != nil {
			fmt.Fprintf(h, "quantile:%s/%s/%s\x00", a.Quantile.Spec.Key(), a.Quantile.Rate.String(), a.Quantile.Query.Canonical())
		}
	}
	fmt.Fprintf(h, "keys:%d/%d/%d/%x/%x\x00", pl.Keys.Mode, pl.Keys.Threshold, pl.Keys.CountAgg,
		math.Float64bits(pl.Budget.Epsilon), math.Float64bits(pl.Budget.Delta))
	for _, g := range pl.Groups {
		for _, v := range g.Domain {
			fmt.Fprintf(h, "%s,", v.SQL())
		}
		if g.DomainFrom != nil {
			fmt.Fprintf(h, "from:%s", g.DomainFrom.Canonical())
		}
		fmt.Fprintf(h, "sql:%s/null:%t\x00", g.DomainSQL, g.NullKey)
	}
	hashGroupingSets(h, pl.GroupingSets)
	return hex.EncodeToString(h.Sum(nil))
}

// TestCacheKeyBytes: the release key of plans of every shape (domains,
// thresholds, sums, quantiles, grouping sets, odd ε) is the one the fmt
// version computes, so releases stored before the change are still found.
func TestCacheKeyBytes(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.Load("testdata/planner.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := New(pol)
	queries := []string{
		"SELECT COUNT(*) FROM people",
		"SELECT sex, COUNT(*), AVG(age) FROM people WHERE age BETWEEN 30 AND 50 GROUP BY sex",
		"SELECT age, COUNT(age) FROM people GROUP BY age",
		"SELECT cell, COUNT(*), SUM(duration) FROM checkins GROUP BY cell",
		"SELECT SUM(age), MIN(age), MAX(age), STDDEV(age) FROM people WHERE sex = 'Male'",
		"SELECT median(age) FROM people",
		"SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY age) FROM people",
		"SELECT venue, MAX(duration) FROM checkins GROUP BY venue",
		"SELECT ward, COUNT(DISTINCT patient), COUNT(DISTINCT cost) FROM visits GROUP BY ROLLUP(ward)",
		"SELECT sex, age / 10, COUNT(*) FROM people GROUP BY sex, age / 10",
	}
	planned := 0
	for _, q := range queries {
		for _, eps := range []float64{1, 0.1, 1.0 / 3, 2.5e-7} {
			stmts, err := parser.Parse(parser.Postgres, q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			pl, err := p.Plan(Request{User: pol.User("alice"), Epsilon: eps, Dialect: "postgres", Statement: &stmts[0], Catalog: SmallCatalog()})
			if err != nil {
				t.Logf("%s (ε %v): %v", q, eps, err)
				continue
			}
			plans := []*Plan{pl}
			if pl.GroupingSets != nil {
				plans = append(plans, pl.GroupingSets.Release...)
			}
			for _, sp := range plans {
				if want := cacheKeyFmt(sp); sp.CacheKey != want || cacheKey(sp) != want {
					t.Fatalf("%s (ε %v): key %s, fmt version %s", q, eps, sp.CacheKey, want)
				}
				for _, user := range []string{"alice", "", "b\x00ob"} {
					h := sha256.New()
					fmt.Fprintf(h, "ddp-release-user-v1\x00%s\x00%s", sp.CacheKey, user)
					if got, want := userKey(sp.CacheKey, user), hex.EncodeToString(h.Sum(nil)); got != want {
						t.Fatalf("userKey %s, fmt version %s", got, want)
					}
				}
				planned++
			}
		}
	}
	if planned < 30 {
		t.Fatalf("only %d plans compared", planned)
	}
}

// TestQuantileBinCache: quantiles planned by one planner (the bin
// expressions cached after the first) get the same backend queries and
// release keys as on a fresh planner, for columns of every grid kind,
// qualified, aliased and under different WHEREs, in any order.
func TestQuantileBinCache(t *testing.T) {
	t.Setenv("DDP_TEST_PLANNER_PASSWORD", "pw")
	pol, err := policies.Load("testdata/planner.yaml")
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"SELECT median(age) FROM people",
		"SELECT median(p.age) FROM people p WHERE sex = 'Male'",
		"SELECT median(people.age) FROM people",
		"SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY income) FROM people",
		"SELECT MIN(income), MAX(temp) FROM people",
		"SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY cost) FROM visits",
		"SELECT MAX(duration) FROM checkins",
	}
	shared := New(pol)
	plan := func(p *Planner, q string) *Plan {
		stmts, err := parser.Parse(parser.Postgres, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		pl, err := p.Plan(Request{User: pol.User("alice"), Epsilon: 1, Dialect: "postgres", Statement: &stmts[0], Catalog: SmallCatalog()})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return pl
	}
	compared := 0
	for round := range 3 {
		for i := range queries {
			q := queries[(i+round)%len(queries)]
			got, want := plan(shared, q), plan(New(pol), q)
			if got.CacheKey != want.CacheKey || len(got.Aggs) != len(want.Aggs) {
				t.Fatalf("%s (round %d): key %s, fresh planner %s", q, round, got.CacheKey, want.CacheKey)
			}
			for j := range got.Aggs {
				g, w := got.Aggs[j].Quantile, want.Aggs[j].Quantile
				if (g == nil) != (w == nil) || g != nil && g.Query.Canonical() != w.Query.Canonical() {
					t.Fatalf("%s (round %d): part %d's bin query differs from a fresh planner's", q, round, j)
				}
				if g != nil {
					compared++
				}
			}
		}
	}
	// Concurrent plans share the cached expressions read-only (go test
	// -race checks that nothing writes into them).
	want := plan(New(pol), queries[0]).CacheKey
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				stmts, _ := parser.Parse(parser.Postgres, queries[0])
				pl, err := shared.Plan(Request{User: pol.User("alice"), Epsilon: 1, Dialect: "postgres", Statement: &stmts[0], Catalog: SmallCatalog()})
				if err != nil {
					t.Errorf("concurrent plan: %v", err)
					return
				}
				if pl.CacheKey != want {
					t.Errorf("concurrent plan: key %s, want %s", pl.CacheKey, want)
					return
				}
				_ = pl.Aggs[0].Quantile.Query.Canonical()
			}
		}()
	}
	wg.Wait()
	if compared < 20 || len(shared.bins.m) == 0 {
		t.Fatalf("%d quantile parts compared, %d bin expressions cached", compared, len(shared.bins.m))
	}
}

// hashGroupingSets is appendGroupingSets as it was written with fmt.
func hashGroupingSets(h hash.Hash, gs *GroupingSetsPlan) {
	if !gs.Separate() {
		return
	}
	fmt.Fprintf(h, "sets:%d\x00", len(gs.Release))
	for _, r := range gs.Release {
		fmt.Fprintf(h, "%s\x00", r.CacheKey)
	}
}
