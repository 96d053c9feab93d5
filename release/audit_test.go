package release_test

import (
	"context"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
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
