package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/connect"
	"github.com/ddp-proxy/ddp-proxy/demo"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/session"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestDemoOverflowProbe replays the probe that read one bit per query
// from the shipped demo: abs(age - 90 - 2^63) overflows (an error) exactly
// when someone aged 90 exists. It is refused at plan time, naming the
// expression and the limit, and nothing is charged; the legitimate
// arithmetic next to it is answered.
func TestDemoOverflowProbe(t *testing.T) {
	f := buildDemo(t)
	pol := loadDemoPolicy(t, f)
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
	p := session.New(session.Config{Policy: pol, Backend: be, Ledger: l, Engine: release.New(be, l, release.Options{})})
	s := p.Open(pol.User(demo.DemoUser), parser.Postgres, nil)

	err = s.Query(ctx, "SELECT COUNT(*) FROM people WHERE abs(age - 90 - 9223372036854775807 - 1) > 0", &session.Collector{})
	if !sqlerr.HasCode(err, sqlerr.NumericValueOutOfRange) || !strings.Contains(err.Error(), `"age"`) || !strings.Contains(err.Error(), "-9223372036854775808") {
		t.Fatalf("the probe: %v, want 22003 naming the expression and the int64 limit", err)
	}
	if spent, _ := l.Spent(demo.DemoUser, "census"); spent.Epsilon != 0 {
		t.Fatalf("the refused probe was charged %+v", spent)
	}
	if err := s.Query(ctx, "SELECT COUNT(*) FROM people WHERE age + 1 > 30 AND abs(capital_gain - 5000) < 1000", &session.Collector{}); err != nil {
		t.Fatalf("legitimate arithmetic: %v", err)
	}
}
