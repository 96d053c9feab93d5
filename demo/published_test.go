package demo_test

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/noise"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/release"
)

// TestCensusRelease: the induced dataset of the demo loads with the Lemma
// 4.1 bound, a published marginal is answered exactly for free, and the
// full sex × race table costs ε with sensitivity 4.
func TestCensusRelease(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
	ds := pol.Datasets["census_release"]
	if ds == nil || ds.Model != policies.ModelInduced || ds.Analysis == nil || ds.Analysis.Induced.MaxL1 != 4 {
		t.Fatalf("census_release: %+v", ds)
	}
	ctx := context.Background()
	be, err := connect.Open(ctx, pol.Backend, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); be.Close() })
	eng := release.New(be, l, release.Options{Source: noise.SeededSource(7)})
	p := planner.New(pol)
	user := pol.User(demo.DemoUser)
	db := openRO(t, f.Database)
	run := func(q string) (*planner.Plan, *release.Result) {
		stmts, err := parser.Parse(parser.Postgres, q)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Plan(planner.Request{User: user, Dialect: "postgres", Statement: &stmts[0]})
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Run(ctx, user, pl)
		if err != nil {
			t.Fatal(err)
		}
		return pl, res
	}
	_, res := run("SELECT sex, COUNT(*) FROM census_published GROUP BY sex")
	if res.Charged.Epsilon != 0 {
		t.Errorf("published marginal charged %v", res.Charged)
	}
	for _, row := range res.Rows {
		var want int64
		if err := db.QueryRow("SELECT COUNT(*) FROM census_published WHERE sex = ?", row[0].Text()).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got, _ := row[1].AsFloat(); int64(got) != want {
			t.Errorf("%s: %v, want the exact %d", row[0].Text(), got, want)
		}
	}
	pl, res := run("SELECT sex, race, COUNT(*) FROM census_published GROUP BY sex, race")
	if pl.Aggs[0].Sensitivity != 4 || res.Charged.Epsilon != user.DefaultEpsilon {
		t.Errorf("sex × race: sensitivity %d, charged %v", pl.Aggs[0].Sensitivity, res.Charged)
	}
}
