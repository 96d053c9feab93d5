package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A release that reached the bbolt file is found through every path that
// puts one there — a checkpoint, the replay at Open, an import — and an
// identical query committed afterwards gets the stored release, not its
// own: the key filter must never say "not in the file" for a stored key.
func TestReleaseKeysCoverEveryStore(t *testing.T) {
	h := newHarness(t)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("q%d", i)
		h.store(keys[i], 10+i, i%2 == 0)
	}
	lookAll := func(l *Ledger, when string) {
		t.Helper()
		for i, k := range keys {
			got, ok, err := l.Lookup(k)
			if err != nil || !ok || len(got) != 10+i {
				t.Fatalf("%s: Lookup(%s) = %d bytes, %v, %v; want the stored release", when, k, len(got), ok, err)
			}
		}
	}
	// After a checkpoint the releases are in the file only.
	if err := h.l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := len(h.l.state.releases); n != 0 {
		t.Fatalf("%d releases still in memory after a checkpoint", n)
	}
	lookAll(h.l, "after a checkpoint")
	r, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.01), eps(100))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := r.Commit(keys[3], []byte("a second draw")); err != nil || len(out) != 13 {
		t.Fatalf("identical query's Commit = %q, %v; want the stored release (13 bytes)", out, err)
	}
	if h.l.releaseKeys.may("never stored") {
		t.Error("an unknown key may be in the file: every fresh query would read it")
	}

	// What a restart sees: built from the file.
	h.reopen()
	lookAll(h.l, "after reopening")

	// An import into another ledger.
	d, err := h.l.Export()
	if err != nil {
		t.Fatal(err)
	}
	h2 := harnessAt(t, filepath.Join(t.TempDir(), "copy.db"))
	if err := h2.l.Import(d); err != nil {
		t.Fatal(err)
	}
	lookAll(h2.l, "after an import")
}

// forEachRelease calls fn with each stored release of the file's log, in
// the order they were stored.
func forEachRelease(tx *bolt.Tx, fn func(key, val []byte) error) error {
	return tx.Bucket(bucketReleaseLog).ForEach(func(k, v []byte) error {
		_, key, val, err := decodeStored(v)
		if err != nil {
			return fmt.Errorf("release %x: %w", k, err)
		}
		return fn(key, val)
	})
}
