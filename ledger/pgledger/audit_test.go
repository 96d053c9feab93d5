package pgledger

import (
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// TestAuditHistory: each charge leaves one audit entry, in the charging
// statement, with its statement, release and replica; a refund marks
// its entry; filters select by user and time.
func TestAuditHistory(t *testing.T) {
	l1, dsn, schema := newTest(t)
	l2 := openTest(t, dsn, schema, "r2")
	c := budget.Charge{User: "alice", Dataset: "census", Cost: eps(0.25), Release: "key-1",
		Fingerprint: "fp1", Query: "SELECT COUNT(*) FROM t WHERE name = 'x\x00y'"}
	r, err := l1.Charge(ctx, c, eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitDeferred("key-1", []byte("v")); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	r2, err := l2.Charge(ctx, budget.Charge{User: "bob", Dataset: "census", Cost: eps(0.5), Query: "q2"}, eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Refund(); err != nil {
		t.Fatal(err)
	}
	var all []budget.AuditEntry
	if err := l1.Audit(ctx, budget.AuditFilter{}, func(e budget.AuditEntry) error { all = append(all, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("audit = %+v, want 2 entries", all)
	}
	a, b := all[0], all[1]
	if a.User != "alice" || a.Cost.Epsilon != 0.25 || a.Release != "key-1" || a.Fingerprint != "fp1" || a.Replica != "r1" ||
		a.Query != "SELECT COUNT(*) FROM t WHERE name = 'x\uFFFDy'" || !a.Refunded.IsZero() {
		t.Errorf("first entry %+v", a)
	}
	if b.User != "bob" || b.Replica != "r2" || b.Refunded.IsZero() || b.Reservation <= a.Reservation {
		t.Errorf("second entry %+v (refunded, by r2, later)", b)
	}
	var bobs []budget.AuditEntry
	_ = l1.Audit(ctx, budget.AuditFilter{User: "bob"}, func(e budget.AuditEntry) error { bobs = append(bobs, e); return nil })
	if len(bobs) != 1 || bobs[0].User != "bob" {
		t.Errorf("bob's entries: %+v", bobs)
	}
	var late []budget.AuditEntry
	_ = l1.Audit(ctx, budget.AuditFilter{Since: before.Add(-time.Millisecond)}, func(e budget.AuditEntry) error { late = append(late, e); return nil })
	if len(late) != 1 || late[0].User != "bob" {
		t.Errorf("entries since the second charge: %+v", late)
	}
	ps, err := l1.Reservations(ctx)
	if err != nil || len(ps) != 0 {
		t.Errorf("Reservations = %+v, %v", ps, err)
	}
}
