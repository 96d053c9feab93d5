package release_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The engine charges through release.Ledger with the statement's text and
// fingerprint: one audit entry per charge, none for a cached answer, and a
// refund marks its entry.
func TestAuditEntriesFromEngine(t *testing.T) {
	f := newFixture(t, t.TempDir())
	ctx := context.Background()
	e := release.New(f.be, f.ledger, release.Options{})
	fingerprints := 0
	query := func(text string) release.Query {
		return release.Query{Text: text, Fingerprint: func() string { fingerprints++; return "fp:" + text }}
	}
	const q = "SELECT COUNT(*) FROM people"
	u, pl := f.plan(t, "alice", q, 1)
	if _, err := e.RunQuery(ctx, u, pl, query(q)); err != nil {
		t.Fatal(err)
	}
	res, err := e.RunQuery(ctx, u, pl, query(q))
	if err != nil || !res.Cached {
		t.Fatalf("repeat: %v, cached %v", err, res != nil && res.Cached)
	}
	if fingerprints != 1 {
		t.Errorf("fingerprint computed %d times, want once (for the one charge)", fingerprints)
	}
	down := release.New(failingBackend{f.be, sqlerr.New(sqlerr.BackendUnavailable, "down")}, f.ledger, release.Options{})
	const q2 = "SELECT COUNT(*) FROM people WHERE age > 50"
	u2, pl2 := f.plan(t, "alice", q2, 1)
	if _, err := down.RunQuery(ctx, u2, pl2, query(q2)); !sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("got %v", err)
	}

	var got []budget.AuditEntry
	if err := f.ledger.Audit(ctx, budget.AuditFilter{User: "alice"}, func(e budget.AuditEntry) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("audit = %+v, want the charge and the refunded charge", got)
	}
	if g := got[0]; g.Query != q || g.Fingerprint != "fp:"+q || g.Release != pl.CacheKey || g.Cost != pl.Budget || !g.Refunded.IsZero() {
		t.Errorf("charge entry = %+v", g)
	}
	if g := got[1]; g.Query != q2 || g.Refunded.IsZero() {
		t.Errorf("refunded entry = %+v", g)
	}
}

// A release evicted by the ledger's retention bound is charged again when
// its query is repeated, drawn afresh, and the result says why.
func TestEvictedReleaseIsChargedAgain(t *testing.T) {
	f := newFixture(t, t.TempDir())
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := ledger.Open(filepath.Join(t.TempDir(), "retained.db"), ledger.Options{
		Now: func() time.Time { return clock }, Retention: ledger.Retention{MaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Check(); err != nil {
			t.Error(err)
		}
		l.Close()
	})
	e := release.New(f.be, l, release.Options{})
	const q = "SELECT COUNT(*) FROM people"
	u, pl := f.plan(t, "alice", q, 1)
	run := func() *release.Result {
		t.Helper()
		r, err := e.RunQuery(ctx, u, pl, release.Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(); r.Cached || !r.Evicted.IsZero() {
		t.Fatalf("first answer: cached %v, evicted %v", r.Cached, r.Evicted)
	}
	clock = clock.Add(30 * time.Minute)
	if r := run(); !r.Cached {
		t.Fatal("a repeat within the retention was charged")
	}
	clock = clock.Add(time.Hour)
	if n, err := l.Evict(ctx); err != nil || n != 1 {
		t.Fatalf("Evict = %d, %v", n, err)
	}
	r := run()
	if r.Cached || r.Charged != pl.Budget || !r.Evicted.Equal(clock) {
		t.Fatalf("repeat after eviction: cached %v, charged %+v, evicted %v; want charged %+v, evicted at %v",
			r.Cached, r.Charged, r.Evicted, pl.Budget, clock)
	}
	if a, _ := l.Account(ctx, "alice", "census"); a.Spent.Epsilon != 2*pl.Budget.Epsilon {
		t.Errorf("spent %v after a charge, a free repeat and a charge after eviction; want %v", a.Spent.Epsilon, 2*pl.Budget.Epsilon)
	}
	if r := run(); !r.Cached || !r.Evicted.IsZero() {
		t.Errorf("the new release is not served: cached %v, evicted %v", r.Cached, r.Evicted)
	}
}
