package demo_test

import (
	"context"
	"fmt"
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

// TestPayrollSynopsis runs the README's salary range examples on the built
// demo: the first range count releases the synopsis (charged once), the
// others are free, and the answers are close to the truth.
func TestPayrollSynopsis(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
	ds := pol.Datasets["payroll"]
	if ds == nil || ds.Model != policies.ModelBlowfish || ds.SynopsisFor("salaries", "salary") == nil {
		t.Fatal("the demo has no payroll dataset with a salary synopsis")
	}
	if b := pol.User(demo.DemoUser).Budgets["payroll"]; b.Epsilon != 10 {
		t.Errorf("payroll budget %+v, want ε 10", b)
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
	t.Cleanup(func() {
		if err := l.Check(); err != nil {
			t.Errorf("ledger check: %v", err)
		}
		l.Close()
		be.Close()
	})
	eng := release.New(be, l, release.Options{Source: noise.SeededSource(99)})
	p := planner.New(pol)
	user := pol.User(demo.DemoUser)
	db := openRO(t, f.Database)
	queries := []struct{ sql, truth string }{
		{"SELECT COUNT(*) FROM salaries WHERE salary BETWEEN 40000 AND 60000;", "salary BETWEEN 40000 AND 60000"},
		{"SELECT COUNT(*) FROM salaries WHERE salary >= 80000;", "salary >= 80000"},
		{"SELECT COUNT(*) FROM salaries WHERE salary < 30000;", "salary < 30000"},
	}
	for i, q := range queries {
		stmts, err := parser.Parse(parser.Postgres, q.sql)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Plan(planner.Request{User: user, Epsilon: 0.5, Dialect: "postgres", Statement: &stmts[0]})
		if err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		if pl.Synopsis == nil {
			t.Fatalf("%s: not answered from the synopsis", q.sql)
		}
		res, err := eng.Run(ctx, user, pl)
		if err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		if (i == 0) == res.Cached || (i == 0) != (res.Charged.Epsilon == 0.5) {
			t.Errorf("%s: cached %v charged %+v", q.sql, res.Cached, res.Charged)
		}
		want := scalar[int64](t, db, "SELECT COUNT(*) FROM salaries WHERE "+q.truth)
		got := res.Rows[0][0].Int
		// θ = $1000 over a $100,000 domain at ε = 0.5: the raw estimator's
		// standard deviation is ≈ 25 (advertised as the scale); 10 of them.
		if d := float64(got - want); d*d > 100*res.Columns[0].Scale*res.Columns[0].Scale {
			t.Errorf("%s = %d, true %d (scale %.1f)", q.sql, got, want, res.Columns[0].Scale)
		}
		t.Log(fmt.Sprintf("%s → %d (true %d, raw sd %.1f)", q.sql, got, want, res.Columns[0].Scale))
	}
	spent, _ := l.Spent(demo.DemoUser, "payroll")
	if spent.Epsilon != 0.5 {
		t.Errorf("spent %+v on payroll, want one synopsis release at ε 0.5", spent)
	}
}
