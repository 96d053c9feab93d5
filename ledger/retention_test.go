package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// retentionHarness opens a ledger with a retention bound and a clock the
// test moves.
func retentionHarness(t *testing.T, r Retention) (*harness, *time.Time) {
	t.Helper()
	clock := testClock
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "ledger.db")}
	l, err := Open(h.path, Options{Now: func() time.Time { return clock }, Retention: r, Replica: testReplica})
	if err != nil {
		t.Fatal(err)
	}
	h.l = l
	t.Cleanup(h.checkAndClose)
	return h, &clock
}

func (h *harness) store(key string, size int, deferred bool) {
	h.t.Helper()
	r, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.01), eps(100))
	if err != nil {
		h.t.Fatal(err)
	}
	val := bytes.Repeat([]byte{'x'}, size)
	if deferred {
		_, err = r.CommitDeferred(key, val)
	} else {
		_, err = r.Commit(key, val)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) has(key string) bool {
	h.t.Helper()
	// The bytes bound is applied when the log's changes reach the bbolt
	// file.
	if err := h.l.checkpoint(); err != nil {
		h.t.Fatal(err)
	}
	_, ok, err := h.l.Lookup(key)
	if err != nil {
		h.t.Fatal(err)
	}
	return ok
}

func TestRetentionMaxBytes(t *testing.T) {
	// Each release takes 2 + 1000 bytes: a bound of 3000 keeps the newest two.
	h, clock := retentionHarness(t, Retention{MaxBytes: 3000})
	for i := range 5 {
		*clock = clock.Add(time.Minute)
		h.store(fmt.Sprintf("k%d", i), 1000, i%2 == 1)
	}
	for i, want := range []bool{false, false, false, true, true} {
		if got := h.has(fmt.Sprintf("k%d", i)); got != want {
			t.Errorf("release k%d kept %v, want %v", i, got, want)
		}
	}
	// The bound's evictions (at commit, not by Evict) are reported too.
	if _, ok, err := h.l.Evicted(context.Background(), "k0"); err != nil || !ok {
		t.Errorf("Evicted(k0) = %v, %v; want evicted by the bytes bound", ok, err)
	}
	// Budgets are never evicted: five charges of 0.01.
	if got := h.spentExact("ann", "census"); got.eps.Cmp(rat(t, "1/20")) != 0 {
		t.Errorf("spent %v after eviction, want 1/20", got.eps)
	}
}

func TestRetentionMaxAge(t *testing.T) {
	h, clock := retentionHarness(t, Retention{MaxAge: 2 * time.Hour})
	start := *clock
	h.store("old", 10, false)
	*clock = start.Add(2 * time.Hour)
	h.store("new", 10, true)
	*clock = start.Add(2*time.Hour + time.Second)
	n, err := h.l.Evict(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Evict = %d, %v; want 1 release evicted", n, err)
	}
	if h.has("old") || !h.has("new") {
		t.Errorf("after eviction: old kept %v, new kept %v; want only new", h.has("old"), h.has("new"))
	}
	if at, ok, err := h.l.Evicted(context.Background(), "old"); err != nil || !ok || !at.Equal(*clock) {
		t.Errorf("Evicted(old) = %v, %v, %v; want evicted at %v", at, ok, err, *clock)
	}
	if _, ok, _ := h.l.Evicted(context.Background(), "new"); ok {
		t.Error("Evicted(new) = true for a release that is kept")
	}
	// Open finds the eviction records of an earlier run (Evicted skips
	// its read while nothing was ever evicted).
	h.reopen()
	if _, ok, err := h.l.Evicted(context.Background(), "old"); err != nil || !ok {
		t.Errorf("Evicted(old) after a restart = %v, %v; want evicted", ok, err)
	}
	// The evicted key is free again: a repeat stores a new release.
	h.store("old", 10, false)
	if !h.has("old") {
		t.Error("a release stored again after eviction is missing")
	}
	if _, ok, _ := h.l.Evicted(context.Background(), "old"); ok {
		t.Error("Evicted(old) = true after it was stored again")
	}
}

// A file whose releases predate the index gets one at Open.
func TestRetentionIndexBuiltAtOpen(t *testing.T) {
	h := newHarness(t)
	h.store("a", 100, false)
	h.store("b", 200, true)
	if err := h.l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	err := h.l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketReleaseAge); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Delete(keyReleaseBytes)
	})
	if err != nil {
		t.Fatal(err)
	}
	h.reopen() // Check before, with no index: consistent (nothing to check)
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		if got := releaseBytes(tx); got != 1+100+1+200 {
			t.Errorf("release bytes %d, want 302", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Check finds an index that disagrees with the releases.
func TestRetentionCheckFindsBadIndex(t *testing.T) {
	h := newHarness(t)
	h.store("a", 100, false)
	if err := h.l.db.Update(func(tx *bolt.Tx) error { return setReleaseBytes(tx, 5) }); err != nil {
		t.Fatal(err)
	}
	if err := h.l.Check(); err == nil {
		t.Error("Check accepted a wrong release byte total")
	}
	if err := h.l.db.Update(func(tx *bolt.Tx) error { return setReleaseBytes(tx, 101) }); err != nil {
		t.Fatal(err)
	}
}

// TestRetentionIndexFromVersion5: a file indexed the format-5 way (a
// release_meta bucket with each release's time and size, age entries
// without sizes) gets the one index at Open, each release keeping its
// stored time, and eviction by age still takes the old one first.
func TestRetentionIndexFromVersion5(t *testing.T) {
	h := newHarness(t)
	h.store("old", 100, false)
	h.store("new", 200, false)
	if err := h.l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	old := testClock.Add(-48 * time.Hour).UnixNano()
	err := h.l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketReleaseAge); err != nil {
			return err
		}
		ab, err := tx.CreateBucket(bucketReleaseAge)
		if err != nil {
			return err
		}
		mb, err := tx.CreateBucket(bucketReleaseMeta)
		if err != nil {
			return err
		}
		for key, at := range map[string]int64{"old": old, "new": testClock.UnixNano()} {
			size := uint64(len(tx.Bucket(bucketReleases).Get([]byte(key))))
			m := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(at)), size)
			if err := mb.Put([]byte(key), m); err != nil {
				return err
			}
			if err := ab.Put(ageKey(at, []byte(key)), []byte{1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.l.Close(); err != nil {
		t.Fatal(err)
	}
	h.l = nil
	h.open()
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketReleaseMeta) != nil {
			t.Error("release_meta is still there after Open")
		}
		k, v := tx.Bucket(bucketReleaseAge).Cursor().First()
		at, key, size, err := ageEntry(k, v)
		if err != nil || at != old || string(key) != "old" || size != 100 {
			t.Errorf("oldest age entry: %d %q %d (%v), want %d \"old\" 100", at, key, size, err, old)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.l.retention = Retention{MaxAge: 24 * time.Hour}
	if n, err := h.l.Evict(context.Background()); err != nil || n != 1 {
		t.Fatalf("Evict: %d, %v; want the old release", n, err)
	}
	if h.has("old") || !h.has("new") {
		t.Errorf("after evicting by age: old stored %v, new stored %v", h.has("old"), h.has("new"))
	}
}
