package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
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

// toOldLayout rewrites the file's release log as format version 6 and
// before kept releases: a "releases" bucket keyed by cache key, version 6.
// index adds what the test wants of the old indexes for each release.
func toOldLayout(t *testing.T, l *Ledger, index func(tx *bolt.Tx, key []byte, size int) error) {
	t.Helper()
	if err := l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	err := l.db.Update(func(tx *bolt.Tx) error {
		rb, err := tx.CreateBucket(bucketReleases)
		if err != nil {
			return err
		}
		err = forEachRelease(tx, func(key, val []byte) error {
			if err := rb.Put(bytes.Clone(key), bytes.Clone(val)); err != nil {
				return err
			}
			return index(tx, key, len(val))
		})
		if err != nil {
			return err
		}
		if err := tx.DeleteBucket(bucketReleaseLog); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Delete(keyReleaseBytes); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte(formatVersion6))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// oldAgeKey is a release_age key of format versions 5 and 6.
func oldAgeKey(at int64, key []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at)), key...)
}

// storedLog lists the release log: key, stored time, value size.
func storedLog(t *testing.T, l *Ledger) []string {
	t.Helper()
	var out []string
	err := l.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReleaseLog).ForEach(func(_, v []byte) error {
			at, key, val, err := decodeStored(v)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%s@%d:%d", key, at, len(val)))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A version 6 file without an age index (or from before one) gets its
// releases moved into the log at Open, as stored then, with the byte total
// recounted, and every release is still found.
func TestReleasesMovedToLogAtOpen(t *testing.T) {
	h := newHarness(t)
	h.store("a", 100, false)
	h.store("b", 200, true)
	toOldLayout(t, h.l, func(*bolt.Tx, []byte, int) error { return nil })
	h.reopen() // Check before: a version 6 file, consistent
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		if got := releaseBytes(tx); got != 1+100+1+200 {
			t.Errorf("release bytes %d, want 302", got)
		}
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != formatVersion {
			t.Errorf("format version %q after Open, want %q", v, formatVersion)
		}
		for _, b := range [][]byte{bucketReleases, bucketReleaseAge} {
			if tx.Bucket(b) != nil {
				t.Errorf("bucket %s is still there after Open", b)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !h.has("a") || !h.has("b") {
		t.Errorf("after the move: a stored %v, b stored %v", h.has("a"), h.has("b"))
	}
	// A repeat gets the stored release, and a new one is appended after.
	h.store("c", 50, false)
	if err := h.l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(storedLog(t, h.l)), fmt.Sprintf("[a@%d:100 b@%[1]d:200 c@%[1]d:50]", testClock.UnixNano()); got != want {
		t.Errorf("release log %s, want %s", got, want)
	}
}

// Check finds a byte total that disagrees with the releases, and a key
// stored twice.
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
	if err := h.l.Check(); err != nil {
		t.Fatalf("Check after the total was mended: %v", err)
	}
	if err := h.l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketReleaseLog).Put(seqKey(1000), encodeStored(0, []byte("a"), []byte("y"))); err != nil {
			return err
		}
		return setReleaseBytes(tx, 103)
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.l.Check(); err == nil || !strings.Contains(err.Error(), "stored twice") {
		t.Errorf("Check of a key stored twice: %v", err)
	}
	if err := h.l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketReleaseLog).Delete(seqKey(1000)); err != nil {
			return err
		}
		return setReleaseBytes(tx, 101)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestReleasesFromVersion5And6: files indexed the format-5 way (a
// release_meta bucket with each release's time and size, age entries
// without sizes) and the format-6 way (age entries with sizes) have their
// releases moved into the log at Open oldest first, each keeping its
// stored time, and eviction by age still takes the old one first.
func TestReleasesFromVersion5And6(t *testing.T) {
	old := testClock.Add(-48 * time.Hour).UnixNano()
	ages := map[string]int64{"new": testClock.UnixNano(), "old": old}
	for name, index := range map[string]func(tx *bolt.Tx, key []byte, size int) error{
		"version 5": func(tx *bolt.Tx, key []byte, size int) error {
			mb, err := tx.CreateBucketIfNotExists(bucketReleaseMeta)
			if err != nil {
				return err
			}
			ab, err := tx.CreateBucketIfNotExists(bucketReleaseAge)
			if err != nil {
				return err
			}
			at := ages[string(key)]
			m := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(at)), uint64(size))
			if err := mb.Put(bytes.Clone(key), m); err != nil {
				return err
			}
			return ab.Put(oldAgeKey(at, key), []byte{1})
		},
		"version 6": func(tx *bolt.Tx, key []byte, size int) error {
			ab, err := tx.CreateBucketIfNotExists(bucketReleaseAge)
			if err != nil {
				return err
			}
			return ab.Put(oldAgeKey(ages[string(key)], key), binary.BigEndian.AppendUint64(nil, uint64(size)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			// Stored new first: the move must order by stored time.
			h.store("new", 200, false)
			h.store("old", 100, false)
			toOldLayout(t, h.l, index)
			h.reopen()
			if err := h.l.db.View(func(tx *bolt.Tx) error {
				if tx.Bucket(bucketReleaseMeta) != nil {
					t.Error("release_meta is still there after Open")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(storedLog(t, h.l)), fmt.Sprintf("[old@%d:100 new@%d:200]", old, testClock.UnixNano()); got != want {
				t.Errorf("release log %s, want %s", got, want)
			}
			h.l.retention = Retention{MaxAge: 24 * time.Hour}
			if n, err := h.l.Evict(context.Background()); err != nil || n != 1 {
				t.Fatalf("Evict: %d, %v; want the old release", n, err)
			}
			if h.has("old") || !h.has("new") {
				t.Errorf("after evicting by age: old stored %v, new stored %v", h.has("old"), h.has("new"))
			}
		})
	}
}

// TestReleasesMovedInBatches: the move into the release log runs in
// transactions of bounded size; a file left between two of them (a crash)
// has every release in one place or the other, and the next Open finishes
// the move: all releases, oldest first, each found.
func TestReleasesMovedInBatches(t *testing.T) {
	h := newHarness(t)
	const n = 30
	ages := map[string]int64{}
	for i := range n {
		key := fmt.Sprintf("q%02d", i)
		h.store(key, 10+i, i%2 == 0)
		// Stored times in another order than the keys'.
		ages[key] = testClock.Add(-time.Duration((i*7)%n+1) * time.Minute).UnixNano()
	}
	toOldLayout(t, h.l, func(tx *bolt.Tx, key []byte, size int) error {
		ab, err := tx.CreateBucketIfNotExists(bucketReleaseAge)
		if err != nil {
			return err
		}
		if string(key) == "q07" {
			return nil // not indexed: moved last, as stored at the move
		}
		return ab.Put(oldAgeKey(ages[string(key)], key), binary.BigEndian.AppendUint64(nil, uint64(size)))
	})
	// Two small transactions, then a "crash".
	for range 2 {
		if err := h.l.db.Update(func(tx *bolt.Tx) error {
			done, err := moveBatch(tx, testClock, 40)
			if done {
				t.Error("the move is done after a small batch")
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	var inLog, inOld int
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		inLog = tx.Bucket(bucketReleaseLog).Stats().KeyN
		inOld = tx.Bucket(bucketReleases).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if inLog < 2 || inLog+inOld != n {
		t.Fatalf("after two batches: %d releases in the log, %d in the old bucket; want some moved and %d in all", inLog, inOld, n)
	}
	if err := h.l.Close(); err != nil {
		t.Fatal(err)
	}
	h.l = nil
	h.open()
	var want []string
	keys := make([]string, 0, n)
	for k := range ages {
		if k != "q07" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return ages[keys[i]] < ages[keys[j]] })
	for _, k := range keys {
		var i int
		fmt.Sscanf(k, "q%d", &i)
		want = append(want, fmt.Sprintf("%s@%d:%d", k, ages[k], 10+i))
	}
	want = append(want, fmt.Sprintf("q07@%d:17", testClock.UnixNano()))
	if got := storedLog(t, h.l); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("release log after the move:\n%v\nwant\n%v", got, want)
	}
	for k := range ages {
		if !h.has(k) {
			t.Errorf("release %s not found after the move", k)
		}
	}
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketReleases, bucketReleaseAge} {
			if tx.Bucket(b) != nil {
				t.Errorf("bucket %s is still there", b)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
