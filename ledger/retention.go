package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Releases are kept forever unless Options.Retention bounds them: by age,
// and by the bytes all of them take. An evicted release is gone: the next
// identical query is charged again and drawn afresh (a new release, with
// new noise, paid for in full, so no averaging comes for free). Budgets,
// pending reservations and the audit history are never evicted.
//
// Each release has an index entry (written in the transaction that stores
// it):
//
//	release_age   stored time (8 bytes, Unix ns) ‖ cache key → size (8 bytes),
//	              oldest first
//
// (Up to format version 5 a second index, release_meta, mapped each cache
// key to its time and size: a second insert at a random key per release,
// most of a checkpoint's cost per answer once the ledger is large. Open
// drops it.)
//
//	meta          release_bytes → Σ (len(key) + len(release)), 8 bytes
//	release_evicted  cache key → eviction time (8 bytes, Unix ns), so the
//	              notice of a repeat can say why it was charged again
//	              (a cache key and a time per evicted release: kept)
//
// A file from before the index gets one at Open, with the open time as
// every release's stored time.
var (
	bucketReleaseMeta = []byte("release_meta") // format version 5 and before
	bucketReleaseAge  = []byte("release_age")
	bucketEvicted     = []byte("release_evicted")
	keyReleaseBytes   = []byte("release_bytes")
)

// Retention bounds the stored releases; zero fields bound nothing.
type Retention struct {
	// MaxAge evicts releases stored longer ago than this.
	MaxAge time.Duration
	// MaxBytes evicts the oldest releases while all of them (keys and
	// values) take more than this many bytes.
	MaxBytes int64
}

func (r Retention) bounded() bool { return r.MaxAge > 0 || r.MaxBytes > 0 }

// ensureReleaseIndex rebuilds the release index at Open: from the
// releases, keeping each one's stored time from the old index where that
// entry is sound, else now (a file from before the index, releases stored
// by an older ddp-proxy — it can open this file, the format version is
// the same — or a damaged entry). So the index always matches the
// releases, whatever wrote the file, and Open need not refuse a file for
// an index that only decides what is evicted first.
func ensureReleaseIndex(tx *bolt.Tx, now time.Time) error {
	if _, err := tx.CreateBucketIfNotExists(bucketEvicted); err != nil {
		return err
	}
	stored := map[string]int64{}
	if mb := tx.Bucket(bucketReleaseMeta); mb != nil {
		_ = mb.ForEach(func(k, m []byte) error {
			if len(m) == 16 {
				stored[string(k)] = int64(binary.BigEndian.Uint64(m[:8]))
			}
			return nil
		})
		if err := tx.DeleteBucket(bucketReleaseMeta); err != nil {
			return err
		}
	}
	if ab := tx.Bucket(bucketReleaseAge); ab != nil {
		_ = ab.ForEach(func(k, _ []byte) error {
			if len(k) > 8 {
				stored[string(k[8:])] = int64(binary.BigEndian.Uint64(k[:8]))
			}
			return nil
		})
		if err := tx.DeleteBucket(bucketReleaseAge); err != nil {
			return err
		}
	}
	if _, err := tx.CreateBucket(bucketReleaseAge); err != nil {
		return err
	}
	if err := setReleaseBytes(tx, 0); err != nil {
		return err
	}
	type rel struct {
		key  []byte
		size int64
	}
	var rels []rel
	_ = tx.Bucket(bucketReleases).ForEach(func(k, v []byte) error {
		rels = append(rels, rel{bytes.Clone(k), int64(len(v))})
		return nil
	})
	for _, r := range rels {
		t, ok := stored[string(r.key)]
		at := now
		if ok && t > 0 && t <= now.UnixNano() {
			at = time.Unix(0, t)
		}
		if err := indexRelease(tx, r.key, r.size, at); err != nil {
			return err
		}
	}
	return nil
}

func releaseBytes(tx *bolt.Tx) int64 {
	v := tx.Bucket(bucketMeta).Get(keyReleaseBytes)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func setReleaseBytes(tx *bolt.Tx, n int64) error {
	return tx.Bucket(bucketMeta).Put(keyReleaseBytes, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

func ageKey(t int64, key []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(t)), key...)
}

// indexRelease adds a stored release's index entries and its bytes to
// the total.
func indexRelease(tx *bolt.Tx, key []byte, size int64, now time.Time) error {
	if err := putIndex(tx, key, size, now); err != nil {
		return err
	}
	return setReleaseBytes(tx, releaseBytes(tx)+int64(len(key))+size)
}

// putIndex adds a stored release's index entries, not its bytes.
func putIndex(tx *bolt.Tx, key []byte, size int64, now time.Time) error {
	return tx.Bucket(bucketReleaseAge).Put(ageKey(now.UnixNano(), key), binary.BigEndian.AppendUint64(nil, uint64(size)))
}

// ageEntry reads a release_age entry: the stored time, the cache key and
// the release's size.
func ageEntry(k, v []byte) (t int64, key []byte, size int64, err error) {
	if len(k) <= 8 || len(v) != 8 {
		return 0, nil, 0, fmt.Errorf("malformed release age entry %x", k)
	}
	return int64(binary.BigEndian.Uint64(k[:8])), k[8:], int64(binary.BigEndian.Uint64(v)), nil
}

// putRelease stores a new release with its index entries, then evicts
// the oldest releases while the bytes bound is exceeded (in the same
// transaction: no write of its own). It returns the bytes the release
// adds to the total that it left for the caller to add: without a bytes
// bound nothing reads the total before the transaction ends, so a
// checkpoint adds its releases' bytes once (a read and a write of the
// meta bucket per release were a measurable share of its CPU).
func (l *Ledger) putRelease(tx *bolt.Tx, key, val []byte, now time.Time) (int64, error) {
	if err := tx.Bucket(bucketReleases).Put(key, val); err != nil {
		return 0, err
	}
	l.releaseKeys.add(key)
	// The key's eviction record, if any, is dropped (no record can
	// exist while evictedAny is unset: every eviction sets it first).
	if l.evictedAny.Load() {
		if err := tx.Bucket(bucketEvicted).Delete(key); err != nil {
			return 0, err
		}
	}
	size := int64(len(val))
	if l.retention.MaxBytes <= 0 {
		return int64(len(key)) + size, putIndex(tx, key, size, now)
	}
	if err := indexRelease(tx, key, size, now); err != nil {
		return 0, err
	}
	n, err := evictOldest(tx, now, func(int64) bool { return releaseBytes(tx) > l.retention.MaxBytes })
	if n > 0 {
		l.evictedAny.Store(true) // before the transaction makes the entries visible
	}
	return 0, err
}

// evictOldest deletes releases, oldest first, while more(stored time).
func evictOldest(tx *bolt.Tx, now time.Time, more func(storedAt int64) bool) (int, error) {
	var victims [][]byte // age keys
	c := tx.Bucket(bucketReleaseAge).Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t, key, size, err := ageEntry(k, v)
		if err != nil {
			return n, err
		}
		if !more(t) {
			break
		}
		victims = append(victims, bytes.Clone(k))
		if err := tx.Bucket(bucketEvicted).Put(bytes.Clone(key), binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano()))); err != nil {
			return n, err
		}
		// Count what would be freed so that more sees it: deletion
		// happens after the scan (a cursor must not see its bucket
		// change under it).
		if err := setReleaseBytes(tx, releaseBytes(tx)-int64(len(key))-size); err != nil {
			return n, err
		}
		n++
	}
	ab, rb := tx.Bucket(bucketReleaseAge), tx.Bucket(bucketReleases)
	for _, k := range victims {
		if err := ab.Delete(k); err != nil {
			return n, err
		}
		if err := rb.Delete(k[8:]); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Evict applies the retention bounds now (one durable write, shared with
// concurrent charges) and returns how many releases it removed. Open
// starts a goroutine that calls it periodically when MaxAge is set;
// MaxBytes is also enforced by every commit that stores a release.
func (l *Ledger) Evict(ctx context.Context) (int, error) {
	if !l.retention.bounded() {
		return 0, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The releases still only in the log count too.
	if err := l.checkpoint(); err != nil {
		return 0, fmt.Errorf("ledger evict: %w", err)
	}
	now := l.now()
	cutoff := now.Add(-l.retention.MaxAge).UnixNano()
	var n int
	err := l.writes.update(func(tx *bolt.Tx) error {
		n = 0
		more := func(t int64) bool {
			return l.retention.MaxAge > 0 && t < cutoff ||
				l.retention.MaxBytes > 0 && releaseBytes(tx) > l.retention.MaxBytes
		}
		var err error
		n, err = evictOldest(tx, now, more)
		if n > 0 {
			l.evictedAny.Store(true) // before the transaction makes the entries visible
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("ledger evict: %w", err)
	}
	if n > 0 {
		l.log.Info("evicted stored releases (repeating their queries charges again)", "count", n)
	}
	return n, nil
}

// evictLoop runs Evict every interval until stop is closed.
func (l *Ledger) evictLoop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if _, err := l.Evict(context.Background()); err != nil && !errors.Is(err, errClosed) {
				l.log.Error("evicting releases", "err", err)
			}
		}
	}
}

// evictInterval is how often the age bound is applied: an eighth of it,
// between a second and a minute.
func evictInterval(maxAge time.Duration) time.Duration {
	return min(max(maxAge/8, time.Second), time.Minute)
}

// checkReleases verifies the release index: one age entry per release,
// with its size, and the byte total.
func checkReleases(tx *bolt.Tx) []error {
	ab := tx.Bucket(bucketReleaseAge)
	if ab == nil || tx.Bucket(bucketMeta) == nil || tx.Bucket(bucketReleases) == nil {
		return nil // created by Open; a missing meta or releases bucket is check's to report
	}
	var errs []error
	sizes := map[string]int64{}
	_ = ab.ForEach(func(k, v []byte) error {
		_, key, size, err := ageEntry(k, v)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if _, dup := sizes[string(key)]; dup {
			errs = append(errs, fmt.Errorf("release %x has two age entries", key))
		}
		sizes[string(key)] = size
		return nil
	})
	var total int64
	_ = tx.Bucket(bucketReleases).ForEach(func(k, v []byte) error {
		size, ok := sizes[string(k)]
		if !ok {
			errs = append(errs, fmt.Errorf("release %x has no age entry", k))
			return nil
		}
		delete(sizes, string(k))
		if size != int64(len(v)) {
			errs = append(errs, fmt.Errorf("release %x: indexed size %d, stored %d", k, size, len(v)))
		}
		total += int64(len(k)) + size
		return nil
	})
	for k := range sizes {
		errs = append(errs, fmt.Errorf("age entry for release %x, which is not stored", k))
	}
	if got := releaseBytes(tx); got != total {
		errs = append(errs, fmt.Errorf("release bytes recorded %d, stored %d", got, total))
	}
	return errs
}

// Evicted reports when the release under cacheKey was evicted, if it was
// and was not stored again since. It is for the notice only.
func (l *Ledger) Evicted(ctx context.Context, cacheKey string) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	if !l.evictedAny.Load() {
		// Nothing was ever evicted: no read transaction per fresh answer.
		return time.Time{}, false, nil
	}
	var t time.Time
	var ok bool
	err := l.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEvicted)
		if b == nil || cacheKey == "" {
			return nil
		}
		if v := b.Get([]byte(cacheKey)); len(v) == 8 {
			t, ok = time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC(), true
		}
		return nil
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("ledger evicted: %w", err)
	}
	return t, ok, nil
}
