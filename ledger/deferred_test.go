package ledger

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// newSlowSettleHarness returns a ledger whose deferred commits never
// settle by timer during a test: only durable writes carry them.
func newSlowSettleHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, settle: time.Hour}
	h.path = t.TempDir() + "/ledger.db"
	h.open()
	t.Cleanup(h.checkAndClose)
	return h
}

// storedRaw returns a release if it is durable — in the log on disk or
// in the bbolt file — bypassing Lookup's wait for deferred commits.
func (h *harness) storedRaw(key string) []byte {
	h.t.Helper()
	h.l.state.mu.Lock()
	r, ok := h.l.state.releases[key]
	h.l.state.mu.Unlock()
	if ok {
		h.l.wal.mu.Lock()
		durable := r.lsn <= h.l.wal.written
		h.l.wal.mu.Unlock()
		if !durable {
			return nil
		}
		return r.data
	}
	var out []byte
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		if v := h.l.getRelease(tx, []byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	}); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// TestDeferredCommitRidesOnNextReserve: a sequence of fresh answers
// (reserve, deferred commit) costs one write transaction — one fsync —
// per answer, not two; the commit of answer i is made durable by the
// reservation of answer i+1.
func TestDeferredCommitRidesOnNextReserve(t *testing.T) {
	h := newSlowSettleHarness(t)
	ctx := context.Background()
	limit := policies.Budget{Epsilon: 10}
	const n = 10
	before := h.l.wal.syncs.Load()
	for i := range n {
		r, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), limit)
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.CommitDeferred(fmt.Sprintf("q%d", i), []byte(fmt.Sprintf("release %d", i)))
		if err != nil || string(out) != fmt.Sprintf("release %d", i) {
			t.Fatalf("CommitDeferred %d = %q, %v", i, out, err)
		}
		if i > 0 && h.storedRaw(fmt.Sprintf("q%d", i-1)) == nil {
			t.Fatalf("release %d not in the file after the next reservation", i-1)
		}
	}
	if txs := h.l.wal.syncs.Load() - before; txs != n {
		t.Fatalf("%d log writes for %d fresh answers, want %d (one fsync each)", txs, n, n)
	}
	// The last commit has nothing to ride on yet: not durable (a crash
	// now leaves it pending, charged).
	if h.storedRaw(fmt.Sprintf("q%d", n-1)) != nil {
		t.Fatal("the last release is durable without a write to carry it")
	}
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "1")) != 0 {
		t.Fatalf("spent %v, want every answer charged (1)", got.eps)
	}
	// Lookup serves only durable releases: it settles the record first.
	rel, ok, err := h.l.Lookup(fmt.Sprintf("q%d", n-1))
	if err != nil || !ok || string(rel) != fmt.Sprintf("release %d", n-1) {
		t.Fatalf("Lookup = %q, %v, %v", rel, ok, err)
	}
	if h.storedRaw(fmt.Sprintf("q%d", n-1)) == nil {
		t.Fatal("Lookup returned a release that is not in the file")
	}
	if p, _ := h.l.Pending(); len(p) != 0 {
		t.Fatalf("%d pending reservations after the lookup, want 0", len(p))
	}
}

// TestDeferredCommitSettlesByTimer: with no further write, the record is
// committed by itself after the settle delay.
func TestDeferredCommitSettlesByTimer(t *testing.T) {
	h := &harness{t: t, settle: 5 * time.Millisecond, path: t.TempDir() + "/ledger.db"}
	h.open()
	t.Cleanup(h.checkAndClose)
	r, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitDeferred("q", []byte("x")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.storedRaw("q") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the deferred commit was not settled by the timer within 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if p, _ := h.l.Pending(); len(p) != 0 {
		t.Fatalf("%d pending after settling, want 0", len(p))
	}
}

// TestDeferredCommitSettlesAfterTimerWasArmed: the settle timer armed by
// one deferred commit stays armed when a group carries that commit; a
// later deferred commit finds it armed and must still be written when
// the timer fires early for it (re-armed for its own remaining time).
func TestDeferredCommitSettlesAfterTimerWasArmed(t *testing.T) {
	// No checkpoint may write q2 instead of the timer.
	h := &harness{t: t, settle: 50 * time.Millisecond, checkpointEvery: time.Hour, path: t.TempDir() + "/ledger.db"}
	h.open()
	t.Cleanup(h.checkAndClose)
	ctx := context.Background()
	r1, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.CommitDeferred("q1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	// This reservation's write carries q1's commit.
	r2, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if h.storedRaw("q1") == nil {
		t.Fatal("q1's commit did not ride on the next reservation's write")
	}
	if _, err := r2.CommitDeferred("q2", []byte("y")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.storedRaw("q2") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the second deferred commit was not settled by the timer within 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if p, _ := h.l.Pending(); len(p) != 0 {
		t.Fatalf("%d pending after settling, want 0", len(p))
	}
}

// TestCloseSettlesDeferredCommits: a graceful shutdown loses nothing.
func TestCloseSettlesDeferredCommits(t *testing.T) {
	h := newSlowSettleHarness(t)
	r, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitDeferred("q", []byte("x")); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if h.storedRaw("q") == nil {
		t.Fatal("release lost by a graceful close")
	}
	if p, _ := h.l.Pending(); len(p) != 0 {
		t.Fatalf("%d pending after close, want 0", len(p))
	}
	// After Close, a deferred commit is refused (nothing could carry it).
	r2, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.l.closeLog(); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.CommitDeferred("q2", []byte("y")); err == nil {
		t.Fatal("CommitDeferred after close succeeded")
	}
}

// TestDeferredCommitsOfOneKeyAgree: identical queries committed
// concurrently all answer with the first release, never two different
// noisy answers, and each is charged.
func TestDeferredCommitsOfOneKeyAgree(t *testing.T) {
	h := newSlowSettleHarness(t)
	const n = 16
	var wg sync.WaitGroup
	outs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.01), eps(1))
			if err != nil {
				t.Error(err)
				return
			}
			out, err := r.CommitDeferred("same", []byte(fmt.Sprintf("release %d", i)))
			if err != nil {
				t.Error(err)
				return
			}
			outs[i] = string(out)
		}()
	}
	wg.Wait()
	for i := range outs {
		if outs[i] != outs[0] {
			t.Fatalf("answers differ: %q vs %q", outs[i], outs[0])
		}
	}
	rel, ok, err := h.l.Lookup("same")
	if err != nil || !ok || string(rel) != outs[0] {
		t.Fatalf("Lookup = %q, %v, %v; want %q", rel, ok, err, outs[0])
	}
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "16/100")) != 0 {
		t.Fatalf("spent %v, want 16/100", got.eps)
	}
}

func (h *harness) storedRawOK(key string) bool { return h.storedRaw(key) != nil }
