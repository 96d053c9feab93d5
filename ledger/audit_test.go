package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

func auditAll(t *testing.T, l *Ledger, f budget.AuditFilter) []budget.AuditEntry {
	t.Helper()
	var out []budget.AuditEntry
	if err := l.Audit(context.Background(), f, func(e budget.AuditEntry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return out
}

// Each charge leaves one entry, written by the charging transaction; a
// commit adds none; a refund marks its entry.
func TestAuditEntryPerCharge(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	before := h.l.wal.syncs.Load()
	c := budget.Charge{User: "ann", Dataset: "census", Cost: budget.Budget{Epsilon: 0.1, Delta: 1e-6},
		Release: "key1", Fingerprint: "fp1", Query: "SELECT COUNT(*) FROM people WHERE age > 40"}
	r, err := h.l.Charge(ctx, c, budget.Budget{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.l.wal.syncs.Load() - before; n != 1 {
		t.Errorf("Charge ran %d log writes, want 1 (the audit entry rides on the charge)", n)
	}
	if _, err := r.Commit("key1", []byte("rows")); err != nil {
		t.Fatal(err)
	}
	r2, err := h.l.Charge(ctx, budget.Charge{User: "bob", Dataset: "census", Cost: eps(0.2), Query: "SELECT 2"}, eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Refund(); err != nil {
		t.Fatal(err)
	}
	// Over the limit: nothing charged, no entry.
	if _, err := h.l.Charge(ctx, budget.Charge{User: "bob", Dataset: "census", Cost: eps(2)}, eps(1)); err == nil {
		t.Fatal("a charge over the limit succeeded")
	}
	got := auditAll(t, h.l, budget.AuditFilter{})
	if len(got) != 2 {
		t.Fatalf("Audit = %+v, want 2 entries", got)
	}
	want := budget.AuditEntry{Reservation: got[0].Reservation, Time: testClock, User: "ann", Dataset: "census",
		Cost: budget.Budget{Epsilon: 0.1, Delta: 1e-6}, Fingerprint: "fp1", Query: c.Query, Release: "key1", Replica: testReplica}
	if got[0] != want || !got[0].Time.Equal(testClock) {
		t.Errorf("entry = %+v\nwant    %+v", got[0], want)
	}
	if got[1].User != "bob" || got[1].Refunded.IsZero() || got[1].Query != "SELECT 2" {
		t.Errorf("refunded entry = %+v, want bob's, marked refunded", got[1])
	}
	if !got[0].Refunded.IsZero() {
		t.Errorf("committed entry marked refunded: %+v", got[0])
	}
}

func TestAuditFilter(t *testing.T) {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "ledger.db")}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := Open(h.path, Options{Now: func() time.Time { return clock }, Replica: testReplica})
	if err != nil {
		t.Fatal(err)
	}
	h.l = l
	t.Cleanup(h.checkAndClose)
	ctx := context.Background()
	for i, u := range []string{"ann", "bob", "ann", "bob"} {
		clock = time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)
		r, err := l.Charge(ctx, budget.Charge{User: u, Dataset: "census", Cost: eps(0.1)}, eps(1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit("", nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    budget.AuditFilter
		want []string // user@day
	}{
		{"all", budget.AuditFilter{}, []string{"ann@1", "bob@2", "ann@3", "bob@4"}},
		{"user", budget.AuditFilter{User: "ann"}, []string{"ann@1", "ann@3"}},
		{"since inclusive", budget.AuditFilter{Since: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)}, []string{"ann@3", "bob@4"}},
		{"user since", budget.AuditFilter{User: "bob", Since: time.Date(2026, 1, 2, 1, 0, 0, 0, time.UTC)}, []string{"bob@4"}},
		{"other dataset", budget.AuditFilter{Dataset: "other"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range auditAll(t, l, tt.f) {
				got = append(got, e.User+"@"+e.Time.Format("2"))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// Audit reads in pages, each in its own read transaction, and stops when
// fn fails.
func TestAuditPages(t *testing.T) {
	h := newHarness(t)
	const n = 2*auditPage + 7
	err := h.l.db.Update(func(tx *bolt.Tx) error {
		for i := 1; i <= n; i++ {
			rec := auditOf(budget.Charge{User: "ann", Dataset: "census", Query: "q"}, accountKey("ann", "census"),
				mustExact(t, eps(0.1)), testClock, testReplica)
			if err := putAudit(tx, uint64(i), rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := auditAll(t, h.l, budget.AuditFilter{})
	if len(got) != n {
		t.Fatalf("%d entries, want %d", len(got), n)
	}
	for i, e := range got {
		if e.Reservation != uint64(i+1) {
			t.Fatalf("entry %d is reservation %d: pages overlap or skip", i, e.Reservation)
		}
	}
	stop := errors.New("stop")
	seen := 0
	err = h.l.Audit(context.Background(), budget.AuditFilter{}, func(budget.AuditEntry) error {
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 3 {
		t.Errorf("Audit returned %v after %d entries, want stop after 3", err, seen)
	}
}

// A long statement is cut, on a rune boundary, and says so.
func TestAuditQueryCut(t *testing.T) {
	h := newHarness(t)
	q := "SELECT " + strings.Repeat("é", maxAuditQuery)
	r, err := h.l.Charge(context.Background(), budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.1), Query: q}, eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("", nil); err != nil {
		t.Fatal(err)
	}
	got := auditAll(t, h.l, budget.AuditFilter{})[0].Query
	if len(got) > maxAuditQuery+40 || !strings.HasPrefix(got, "SELECT é") || !strings.Contains(got, "bytes cut]") {
		t.Errorf("stored query of %d bytes: ...%q", len(got), got[len(got)-30:])
	}
	if !strings.HasPrefix(q, strings.Split(got, "…")[0]) || !utf8.ValidString(got) {
		t.Errorf("cut query is not a valid prefix")
	}
}

// A file written before the audit history existed (no audit bucket) opens
// and gains one.
func TestAuditOldFile(t *testing.T) {
	h := newHarness(t)
	if _, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1)); err != nil {
		t.Fatal(err)
	}
	if err := h.l.checkpoint(); err != nil { // the charge into the bbolt file
		t.Fatal(err)
	}
	if err := h.l.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketAudit) }); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if got := auditAll(t, h.l, budget.AuditFilter{}); len(got) != 0 {
		t.Errorf("Audit = %+v, want none", got)
	}
	if _, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1)); err != nil {
		t.Fatal(err)
	}
	if got := auditAll(t, h.l, budget.AuditFilter{}); len(got) != 1 {
		t.Errorf("Audit = %+v, want the new charge", got)
	}
}

func mustExact(t *testing.T, b budget.Budget) exact {
	t.Helper()
	x, err := newMemo().exactOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
