package session

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// The cost notice says what the answer cost and where it came from: a
// fresh release, a repeat of one, or a range synopsis released earlier.
func TestCostNotice(t *testing.T) {
	ds := &policies.Dataset{Name: "payroll"}
	syn := &planner.SynopsisPlan{Spec: &policies.Synopsis{Table: "salaries", Column: "salary", Mechanism: "ordered_hierarchical"}, Epsilon: 0.5}
	cols := []release.Column{{Name: "count", Aggregate: "count", Scale: 42.08369619795086, CI95: 189}}
	cases := []struct {
		name string
		pl   *planner.Plan
		res  *release.Result
		want []string
		not  []string
	}{
		{"fresh", &planner.Plan{Dataset: ds}, &release.Result{Columns: cols, Charged: policies.Budget{Epsilon: 0.5}, Remaining: policies.Budget{Epsilon: 9.5}},
			[]string{"spent ε = 0.5 on payroll; ε left: 9.5", "count: noise scale 42.08, 95% within ±189"}, []string{"synopsis", "no cost"}},
		{"fresh with delta, whole text", &planner.Plan{Dataset: ds}, &release.Result{Columns: cols, Charged: policies.Budget{Epsilon: 0.25, Delta: 1e-6}, Remaining: policies.Budget{Epsilon: 9.75}},
			[]string{"ddp: spent ε = 0.25, δ = 1e-06 on payroll; ε left: 9.75; count: noise scale 42.08, 95% within ±189"}, nil},
		{"expression columns", &planner.Plan{Dataset: ds}, &release.Result{Columns: []release.Column{
			{Name: "a", Aggregate: "expr", Uses: []release.Column{{Name: "avg(age)", Aggregate: "avg"}}},
			{Name: "share", Aggregate: "expr", Uses: []release.Column{{Name: "count(*)", Aggregate: "count", Scale: 2, CI95: 6}, {Name: "sum(age)", Aggregate: "sum", Scale: 90, CI95: 270}}},
			{Name: "k"},
		}, Charged: policies.Budget{Epsilon: 0.5}, Remaining: policies.Budget{Epsilon: 9.5}},
			[]string{"a: computed from avg(age) (noisy sum / noisy count, clamped to the column bounds)",
				"share: computed from count(*) (noise scale 2, 95% within ±6), sum(age) (noise scale 90, 95% within ±270)"}, []string{"k:"}},
		{"average", &planner.Plan{Dataset: ds}, &release.Result{Columns: []release.Column{
			{Name: "avg", Aggregate: "avg", Parts: []release.Column{{Name: "sum(age)", Aggregate: "part", Scale: 900, CI95: 2696}, {Name: "count(*)", Aggregate: "part", Scale: 10, CI95: 30}}},
		}, Charged: policies.Budget{Epsilon: 0.2}, Remaining: policies.Budget{Epsilon: 9.8}},
			[]string{"avg: noisy sum / noisy count, clamped to the column bounds — sum(age) with noise scale 900 (95% within ±2696), count(*) with noise scale 10 (95% within ±30)"}, nil},
		{"quantiles", &planner.Plan{Dataset: ds}, &release.Result{Columns: []release.Column{
			{Name: "min", Aggregate: "min", RankError: 16},
			{Name: "median", Aggregate: "median", RankError: 9},
		}, Charged: policies.Budget{Epsilon: 1}, Remaining: policies.Budget{Epsilon: 9}},
			[]string{"min: a noisy quantile near the low end (exponential mechanism at p = 0), not the extreme value, rank error ≤ 16 rows (95%)",
				"median: a noisy median (exponential mechanism over the column's bins), rank error ≤ 9 rows (95%)"}, []string{"noise scale"}},
		// Large and small figures are written out, not in e-notation
		// (ln 20 = 2.9957: a discrete Laplace's 95% half-width is about
		// scale × ln 20; the values are only inputs here).
		{"large figures", &planner.Plan{Dataset: ds}, &release.Result{Columns: []release.Column{
			{Name: "sum", Aggregate: "sum", Scale: 1e6, CI95: 1e6 * math.Log(20)},
			{Name: "count", Aggregate: "count", Scale: 1e6 / 3, CI95: 1e6 / 3 * math.Log(20)},
			{Name: "tiny", Aggregate: "sum", Scale: 0.0001234, CI95: 0.0001234 * math.Log(20)},
		}, Charged: policies.Budget{Epsilon: 0.1}, Remaining: policies.Budget{Epsilon: 9.9}},
			[]string{"sum: noise scale 1000000, 95% within ±2996000", "count: noise scale 333300, 95% within ±998600",
				"tiny: noise scale 0.0001234, 95% within ±0.0003697"}, []string{"e+", "e-0"}},
		{"large parts and rank error", &planner.Plan{Dataset: ds}, &release.Result{Columns: []release.Column{
			{Name: "avg", Aggregate: "avg", Parts: []release.Column{{Name: "sum(income)", Aggregate: "part", Scale: 2.5e6, CI95: 2.5e6 * math.Log(20)}, {Name: "count(*)", Aggregate: "part", Scale: 10, CI95: 30}}},
			{Name: "median", Aggregate: "median", RankError: 1234567},
			{Name: "e", Aggregate: "expr", Uses: []release.Column{{Name: "sum(x)", Aggregate: "sum", Scale: 12346, CI95: 36986}}},
		}, Charged: policies.Budget{Epsilon: 1}, Remaining: policies.Budget{Epsilon: 9}},
			[]string{"sum(income) with noise scale 2500000 (95% within ±7489000), count(*) with noise scale 10 (95% within ±30)",
				"rank error ≤ 1234567 rows (95%)", "e: computed from sum(x) (noise scale 12350, 95% within ±36990)"}, []string{"e+"}},
		{"repeat", &planner.Plan{Dataset: ds}, &release.Result{Columns: cols, Cached: true, Remaining: policies.Budget{Epsilon: 9.5}},
			[]string{"repeated query answered from the earlier release at no cost; ε left on payroll: 9.5"}, []string{"spent"}},
		{"synopsis released", &planner.Plan{Dataset: ds, Synopsis: syn}, &release.Result{Columns: cols, Charged: policies.Budget{Epsilon: 0.5}, Remaining: policies.Budget{Epsilon: 9.5}},
			[]string{"spent ε = 0.5 on payroll", "released the ordered_hierarchical synopsis of salaries.salary: later range counts on it at ε = 0.5 are free"}, []string{"no cost"}},
		{"synopsis reused", &planner.Plan{Dataset: ds, Synopsis: syn}, &release.Result{Columns: cols, Cached: true, Remaining: policies.Budget{Epsilon: 9.5}},
			[]string{"answered from the ordered_hierarchical synopsis of salaries.salary released earlier at ε = 0.5, at no cost; ε left on payroll: 9.5"}, []string{"spent", "repeated query"}},
	}
	for _, c := range cases {
		got := costNotice(c.pl, c.res)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: notice %q lacks %q", c.name, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: notice %q contains %q", c.name, got, n)
			}
		}
	}
}

// writeG writes what fmt's %g writes, and writeNoise what noiseText
// writes, for every kind of float64 (the cost notice must not change
// with the faster path).
func TestWriteGMatchesFmt(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 0.1, 1.5e-7, 1e21, 123456789, 99999.5, 2.0 / 3, math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, math.MaxFloat64} {
		var b strings.Builder
		writeG(&b, v)
		if want := fmt.Sprintf("%g", v); b.String() != want {
			t.Errorf("writeG(%v) = %q, want %q", v, b.String(), want)
		}
		for _, c := range []release.Column{{Aggregate: "count", Scale: v, CI95: v * 3}, {Aggregate: "sum", Scale: 0}, {Aggregate: "avg", Scale: v, CI95: v}} {
			var b strings.Builder
			writeNoise(&b, c)
			if want := noiseText(c); b.String() != want {
				t.Errorf("writeNoise(%+v) = %q, want %q", c, b.String(), want)
			}
		}
	}
}

// TestAverageNoticeNamesItsParts: an AVG's notice says the noise of the
// sum and the count it is computed from (it has no single scale), as
// EXPLAIN does, through the whole path (plan, release, notice).
func TestAverageNoticeNamesItsParts(t *testing.T) {
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, "SET ddp.epsilon = 1; SELECT AVG(age) FROM people")
	n := rs[1].Notices
	if len(n) != 1 {
		t.Fatalf("notices %q", n)
	}
	for _, want := range []string{"noisy sum / noisy count, clamped to the column bounds — ", "sum(age) with noise scale ", "count", "95% within ±"} {
		if !strings.Contains(n[0], want) {
			t.Errorf("notice %q lacks %q", n[0], want)
		}
	}
	if c := strings.Count(n[0], " with noise scale "); c != 2 {
		t.Errorf("notice %q names %d parts, want 2", n[0], c)
	}
}

// TestNoticeFiguresPlainOnBothFrontEnds: the DBA's report, through the
// whole path. SUM(k) over k in [0, 99999] at the default ε = 0.1 has
// noise scale 99999 / 0.1 = 999990, which four significant digits make
// 1000000 (it was 1e+06). The PostgreSQL NOTICE and the MySQL warnings
// are the same text: both say it so, and neither has an exponent.
func TestNoticeFiguresPlainOnBothFrontEnds(t *testing.T) {
	p, s, _ := groupsFixture(t)
	const want = "noise scale 1000000, 95% within ±"
	rs := mustQuery(t, s, "SELECT SUM(k) FROM visits")
	if n := rs[0].Notices; len(n) != 1 || !strings.Contains(n[0], "sum: "+want) || strings.Contains(n[0], "e+") {
		t.Errorf("PostgreSQL notice %q, want %q and no exponent", n, "sum: "+want)
	}
	ws, err := p.MySQLHandler().NewSession(context.Background(), 1, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.Query(context.Background(), "SELECT SUM(k) FROM visits", &recorder{t: t}); err != nil {
		t.Fatal(err)
	}
	var c Collector
	if err := ws.Query(context.Background(), "SHOW WARNINGS", &c); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range c.Results[0].Rows {
		msg := row[2].Str
		found = found || strings.Contains(msg, want)
		if strings.Contains(msg, "e+") {
			t.Errorf("MySQL warning %q has an exponent", msg)
		}
	}
	if !found {
		t.Errorf("MySQL warnings %+v: none says %q", c.Results[0].Rows, want)
	}
}
