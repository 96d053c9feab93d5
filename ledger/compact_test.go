package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// Compact keeps budgets, pending reservations, the audit history, the
// reservation sequence and the releases the retention keeps, and gives
// back the space of evicted ones.
func TestCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	clock := testClock
	opts := Options{Now: func() time.Time { return clock }, Replica: testReplica}
	l, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := make([]byte, 1<<20)
	for i := range 8 {
		clock = testClock.Add(time.Duration(i) * time.Hour)
		r, err := l.Charge(ctx, budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.1), Query: fmt.Sprint("q", i)}, eps(10))
		if err != nil {
			t.Fatal(err)
		}
		big[0] = byte(i)
		if _, err := r.Commit(fmt.Sprint("k", i), big); err != nil {
			t.Fatal(err)
		}
	}
	pend, err := l.Reserve(ctx, "bob", "census", eps(0.5), eps(1)) // left pending, as by a crash
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Keep releases younger than 2h at 7h30: k6 and k7.
	clock = testClock.Add(7*time.Hour + 30*time.Minute)
	opts.Retention = Retention{MaxAge: 2 * time.Hour}
	res, err := Compact(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compact: %+v", res)
	if res.Evicted != 6 || res.BytesAfter*2 > res.BytesBefore {
		t.Errorf("compact = %+v, want 6 evicted and the file at least halved", res)
	}

	h := harnessAt(t, path)
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "4/5")) != 0 {
		t.Errorf("ann spent %v after compact, want 4/5", got.eps)
	}
	if p, _ := h.l.Pending(); len(p) != 1 || p[0].ID != pend.ID || p[0].User != "bob" {
		t.Errorf("pending after compact = %+v, want bob's reservation %d", p, pend.ID)
	}
	if got := auditAll(t, h.l, budget.AuditFilter{}); len(got) != 9 || got[3].Query != "q3" {
		t.Errorf("audit after compact: %d entries, want 9", len(got))
	}
	for i := range 8 {
		if got, want := h.has(fmt.Sprint("k", i)), i >= 6; got != want {
			t.Errorf("release k%d kept %v, want %v", i, got, want)
		}
	}
	// Reservation ids are never reused.
	r, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(10))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID <= pend.ID {
		t.Errorf("reservation id %d after compact, want > %d", r.ID, pend.ID)
	}
	if _, err := r.Commit("", nil); err != nil {
		t.Fatal(err)
	}
}

// Compact refuses a ledger in use.
func TestCompactLocked(t *testing.T) {
	h := newHarness(t)
	if _, err := Compact(h.path, Options{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Errorf("Compact of an open ledger = %v, want ErrLocked", err)
	}
}

// A proxy waiting for the lock while the file is replaced opens the new
// file, not the unlinked old one.
func TestOpenAfterReplace(t *testing.T) {
	h := newHarness(t)
	h.store("k", 10, false)
	other := filepath.Join(filepath.Dir(h.path), "other.db")
	o, err := Open(other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Reserve(context.Background(), "zed", "census", eps(0.3), eps(1)); err != nil {
		t.Fatal(err)
	}
	o.Close()
	opened := make(chan *Ledger, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := Open(h.path, Options{LockTimeout: 10 * time.Second})
		errc <- err
		opened <- l
	}()
	time.Sleep(200 * time.Millisecond) // the goroutine waits for h's lock
	if err := os.Rename(other, h.path); err != nil {
		t.Fatal(err)
	}
	h.checkAndClose()
	h.l = nil
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	l := <-opened
	defer l.Close()
	if s, _ := l.Spent("zed", "census"); s.Epsilon != 0.3 {
		t.Errorf("opened the replaced file: zed spent %v, want 0.3 from the new file", s)
	}
}
