package pgledger

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestDumpRoundTrip moves a bbolt ledger with committed charges, a
// release and a pending reservation to PostgreSQL and back: budgets,
// pending charges and releases survive exactly, and the moved budget
// refuses what the original refused.
func TestDumpRoundTrip(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	bl, err := ledger.Open(filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Close()
	limit := budget.Budget{Epsilon: 1, Delta: 1e-6}
	for i := range 3 {
		r, err := bl.Reserve(ctx, "alice", "census", budget.Budget{Epsilon: 0.1, Delta: 1e-7}, limit)
		if err != nil {
			t.Fatal(err)
		}
		key := ""
		if i == 0 {
			key = "release-key"
		}
		if _, err := r.Commit(key, []byte(`{"rows":[1]}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bl.Charge(ctx, budget.Charge{User: "bob", Dataset: "census", Cost: eps(0.25), Query: "SELECT 1 -- bob", Fingerprint: "fpb"}, limit); err != nil { // left pending: a crash
		t.Fatal(err)
	}
	d, err := bl.Export()
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as the command line moves it.
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back ledger.Dump
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	pl := openTest(t, dsn, schema, "r1")
	if err := pl.Import(ctx, &back); err != nil {
		t.Fatal(err)
	}
	if err := pl.Import(ctx, &back); err == nil {
		t.Error("a second import into a filled ledger succeeded")
	}
	if s, _ := pl.Spent("alice", "census"); s.Epsilon != 0.3 || s.Delta != 3e-7 {
		t.Errorf("alice spent %+v after the move", s)
	}
	if got, ok, _ := pl.Lookup("release-key"); !ok || string(got) != `{"rows":[1]}` {
		t.Errorf("release after the move: %q %v", got, ok)
	}
	p, _ := pl.Pending()
	if len(p) != 1 || p[0].User != "bob" || p[0].Replica != importedReplica {
		t.Errorf("pending after the move: %+v", p)
	}
	var moved []budget.AuditEntry
	_ = pl.Audit(ctx, budget.AuditFilter{}, func(e budget.AuditEntry) error { moved = append(moved, e); return nil })
	if len(moved) != 4 || moved[3].Query != "SELECT 1 -- bob" || moved[3].Fingerprint != "fpb" || moved[3].Cost.Epsilon != 0.25 {
		t.Errorf("audit after the move: %+v", moved)
	}
	// 0.7 is left exactly: 0.7 fits, then nothing more.
	r, err := pl.Reserve(ctx, "alice", "census", eps(0.7), limit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Reserve(ctx, "alice", "census", eps(1e-9), limit); !sqlerr.HasCode(err, sqlerr.BudgetExhausted) {
		t.Errorf("past the moved budget: %v", err)
	}
	if p2, _ := pl.Pending(); len(p2) != 2 || p2[1].ID <= p2[0].ID {
		t.Errorf("new reservation ids must follow the imported ones: %+v", p2)
	}
	if err := r.Refund(); err != nil {
		t.Fatal(err)
	}
	// And back to a new bbolt file.
	d2, err := pl.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bl2, err := ledger.Open(filepath.Join(t.TempDir(), "l2.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bl2.Close()
	if err := bl2.Import(d2); err != nil {
		t.Fatal(err)
	}
	a1, _ := bl.All()
	a2, _ := bl2.All()
	for i := range a1 {
		a1[i].LastCharge, a2[i].LastCharge = a1[i].LastCharge.UTC().Round(0), a2[i].LastCharge.UTC().Round(0)
	}
	if len(a1) != len(a2) {
		t.Fatalf("accounts %+v, then %+v", a1, a2)
	}
	for i := range a1 {
		if a1[i].User != a2[i].User || a1[i].Spent != a2[i].Spent || a1[i].Queries != a2[i].Queries {
			t.Errorf("account %d: %+v then %+v", i, a1[i], a2[i])
		}
	}
	if p1, _ := bl2.Pending(); len(p1) != 1 || p1[0].Cost.Epsilon != 0.25 {
		t.Errorf("pending back in bbolt: %+v", p1)
	}
	if got, ok, _ := bl2.Lookup("release-key"); !ok || string(got) != `{"rows":[1]}` {
		t.Errorf("release back in bbolt: %q", got)
	}
	var back2 []budget.AuditEntry
	_ = bl2.Audit(ctx, budget.AuditFilter{}, func(e budget.AuditEntry) error { back2 = append(back2, e); return nil })
	// The four moved entries and the refunded 0.7 charged in PostgreSQL.
	if len(back2) != 5 || back2[3].Query != "SELECT 1 -- bob" || back2[4].Refunded.IsZero() || back2[4].Replica != "r1" {
		t.Errorf("audit back in bbolt: %+v", back2)
	}
	if err := bl2.Check(); err != nil {
		t.Error(err)
	}
}

func TestDumpCheckRefusesLostCharges(t *testing.T) {
	d := &ledger.Dump{Format: ledger.DumpFormat, Version: ledger.DumpVersion,
		Accounts: []ledger.DumpAccount{{User: "u", Dataset: "d", SpentEpsilon: "1/2", SpentDelta: "0", CommittedEpsilon: "1/4", CommittedDelta: "0"}}}
	if err := d.Check(); err == nil {
		t.Error("a dump whose spent exceeds committed with nothing pending passed")
	}
	d.Pending = []ledger.DumpPending{{ID: 1, User: "u", Dataset: "d", Epsilon: "0.25", Delta: "0"}}
	if err := d.Check(); err != nil {
		t.Errorf("a consistent dump: %v", err)
	}
	d.Pending = append(d.Pending, ledger.DumpPending{ID: 2, User: "x", Dataset: "d", Epsilon: "0", Delta: "0"})
	if err := d.Check(); err == nil {
		t.Error("pending of a missing account passed")
	}
}
