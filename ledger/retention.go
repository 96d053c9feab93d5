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
// Since format version 7 the releases are one log, in the order they were
// stored:
//
//	release_log   8-byte big-endian sequence number → stored time (8 bytes,
//	              Unix ns) ‖ uvarint(len(cache key)) ‖ cache key ‖ release
//
// so a checkpoint appends its releases at the end of one bucket (full
// pages, written once) instead of inserting each at its random cache key,
// which dirtied a 4 KB page per release once the ledger held more releases
// than a checkpoint (BenchmarkCheckpoint, 200k releases: 1.02 → 0.27
// pages and 18 → 8 CPU µs per answer). Lookups by cache key go through an
// index kept in memory (releaseKeys: a 64-bit hash of the key → sequence
// number; the record's own key is compared), built at Open; eviction,
// oldest first, deletes from the start of the log. Up to version 6 the
// releases were keyed by cache key ("releases") with an age index
// ("release_age", before that also "release_meta"); Open moves them into
// the log in the order of their stored times.
//
//	meta          release_bytes → Σ (len(key) + len(release)), 8 bytes
//	release_evicted  cache key → eviction time (8 bytes, Unix ns), so the
//	              notice of a repeat can say why it was charged again
//	              (a cache key and a time per evicted release: kept)
var (
	bucketReleaseLog  = []byte("release_log")
	bucketReleaseMeta = []byte("release_meta") // format version 5 and before
	bucketReleaseAge  = []byte("release_age")  // format version 6 and before
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

// moveBatchBytes bounds the release bytes one transaction of
// moveReleases moves: bbolt holds a transaction's writes in memory until
// it commits, and a ledger's releases can take gigabytes.
const moveBatchBytes = 32 << 20

// moveReleases moves the releases of a file from before format version 7
// into the release log at Open, oldest first (by the age index of
// versions 5 and 6; releases it does not name, as stored now), in
// transactions of about batch bytes each. Every transaction moves its
// releases whole (appended to the log, deleted from the old buckets), so
// a crash between them leaves every release in exactly one place, and the
// next Open goes on where it stopped. Last, the old buckets are dropped.
func moveReleases(db *bolt.DB, now time.Time, batch int64) error {
	for {
		var done bool
		err := db.Update(func(tx *bolt.Tx) error {
			var err error
			done, err = moveBatch(tx, now, batch)
			return err
		})
		if err != nil {
			return fmt.Errorf("move the releases into the release log: %w", err)
		}
		if done {
			return nil
		}
	}
}

// moveBatch is one transaction of moveReleases; done: nothing is left.
func moveBatch(tx *bolt.Tx, now time.Time, batch int64) (done bool, err error) {
	old := tx.Bucket(bucketReleases)
	if old == nil {
		return true, nil
	}
	lb, err := tx.CreateBucketIfNotExists(bucketReleaseLog)
	if err != nil {
		return false, err
	}
	lb.FillPercent = appendFill
	seq := nextSeq(lb)
	move := func(key []byte, at int64) error {
		v := old.Get(key)
		if v == nil {
			return nil // an index entry for nothing (or a key indexed twice)
		}
		if at <= 0 || at > now.UnixNano() {
			at = now.UnixNano()
		}
		// encodeStored copies v: nothing of the old bucket's pages is
		// kept once the key is deleted.
		if err := lb.Put(seqKey(seq), encodeStored(at, key, v)); err != nil {
			return err
		}
		seq++
		return old.Delete(key)
	}
	if ab := tx.Bucket(bucketReleaseAge); ab != nil {
		var taken [][]byte
		var n int64
		c := ab.Cursor()
		for k, _ := c.First(); k != nil && n < batch; k, _ = c.Next() {
			taken = append(taken, bytes.Clone(k))
			if len(k) > 8 {
				n += int64(len(k) - 8 + len(old.Get(k[8:])))
			}
		}
		for _, k := range taken {
			if len(k) > 8 {
				if err := move(bytes.Clone(k[8:]), int64(binary.BigEndian.Uint64(k[:8]))); err != nil {
					return false, err
				}
			}
			if err := ab.Delete(k); err != nil {
				return false, err
			}
		}
		if len(taken) > 0 {
			return false, nil
		}
		if err := tx.DeleteBucket(bucketReleaseAge); err != nil {
			return false, err
		}
	}
	var keys [][]byte
	var n int64
	c := old.Cursor()
	for k, v := c.First(); k != nil && n < batch; k, v = c.Next() {
		keys = append(keys, bytes.Clone(k))
		n += int64(len(k) + len(v))
	}
	for _, k := range keys {
		if err := move(k, 0); err != nil {
			return false, err
		}
	}
	if len(keys) > 0 {
		return false, nil
	}
	for _, name := range [][]byte{bucketReleases, bucketReleaseMeta} {
		if tx.Bucket(name) == nil {
			continue
		}
		if err := tx.DeleteBucket(name); err != nil {
			return false, err
		}
	}
	return true, nil
}

// nextSeq is the sequence number of the next release appended to lb: the
// one after its last record, not the bucket's own sequence, which a copy
// of the file need not keep.
func nextSeq(lb *bolt.Bucket) uint64 {
	if k, _ := lb.Cursor().Last(); len(k) == 8 {
		return binary.BigEndian.Uint64(k) + 1
	}
	return 1
}

// seqKey is a release log key.
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// encodeStored is a release log value.
func encodeStored(at int64, key, val []byte) []byte {
	out := make([]byte, 0, 8+binary.MaxVarintLen64+len(key)+len(val))
	out = binary.BigEndian.AppendUint64(out, uint64(at))
	out = binary.AppendUvarint(out, uint64(len(key)))
	out = append(out, key...)
	return append(out, val...)
}

// decodeStored reads a release log value; key and val alias v.
func decodeStored(v []byte) (at int64, key, val []byte, err error) {
	if len(v) < 9 {
		return 0, nil, nil, fmt.Errorf("release record of %d bytes", len(v))
	}
	n, w := binary.Uvarint(v[8:])
	if w <= 0 || n == 0 || n > uint64(len(v)-8-w) {
		return 0, nil, nil, errors.New("release record with a malformed key length")
	}
	k := v[8+w : 8+w+int(n)]
	return int64(binary.BigEndian.Uint64(v[:8])), k, v[8+w+int(n):], nil
}

// getRelease returns the release stored under key in tx (aliasing the
// transaction's memory), or nil.
func (l *Ledger) getRelease(tx *bolt.Tx, key []byte) []byte {
	seq, ok := l.releaseKeys.seq(key)
	if !ok {
		return nil
	}
	v := tx.Bucket(bucketReleaseLog).Get(seqKey(seq))
	if v == nil {
		return nil
	}
	_, k, val, err := decodeStored(v)
	if err != nil || !bytes.Equal(k, key) {
		// Another key under the same hash (or a stale entry): not this
		// key's release. Treating it as absent charges a repeat again,
		// which is safe.
		return nil
	}
	return val
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

// putRelease appends a new release to the release log, then evicts the
// oldest releases while the bytes bound is exceeded (in the same
// transaction: no write of its own). It returns the bytes the release
// adds to the total that it left for the caller to add: without a bytes
// bound nothing reads the total before the transaction ends, so a
// checkpoint adds its releases' bytes once (a read and a write of the
// meta bucket per release were a measurable share of its CPU).
func (l *Ledger) putRelease(tx *bolt.Tx, key, val []byte, now time.Time) (int64, error) {
	lb := tx.Bucket(bucketReleaseLog)
	seq := nextSeq(lb)
	if err := lb.Put(seqKey(seq), encodeStored(now.UnixNano(), key, val)); err != nil {
		return 0, err
	}
	l.releaseKeys.add(key, seq)
	// The key's eviction record, if any, is dropped (no record can
	// exist while evictedAny is unset: every eviction sets it first).
	if l.evictedAny.Load() {
		if err := tx.Bucket(bucketEvicted).Delete(key); err != nil {
			return 0, err
		}
	}
	size := int64(len(key) + len(val))
	if l.retention.MaxBytes <= 0 {
		return size, nil
	}
	if err := setReleaseBytes(tx, releaseBytes(tx)+size); err != nil {
		return 0, err
	}
	n, err := l.evictOldest(tx, now, func(int64) bool { return releaseBytes(tx) > l.retention.MaxBytes })
	if n > 0 {
		l.evictedAny.Store(true) // before the transaction makes the entries visible
	}
	return 0, err
}

// evictOldest deletes releases from the start of the log (oldest first)
// while more(stored time).
func (l *Ledger) evictOldest(tx *bolt.Tx, now time.Time, more func(storedAt int64) bool) (int, error) {
	type victim struct {
		seq []byte
		key []byte
	}
	var victims []victim
	lb := tx.Bucket(bucketReleaseLog)
	c := lb.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t, key, val, err := decodeStored(v)
		if err != nil {
			return n, fmt.Errorf("release %x: %w", k, err)
		}
		if !more(t) {
			break
		}
		victims = append(victims, victim{bytes.Clone(k), bytes.Clone(key)})
		if err := tx.Bucket(bucketEvicted).Put(bytes.Clone(key), binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano()))); err != nil {
			return n, err
		}
		// Count what would be freed so that more sees it: deletion
		// happens after the scan (a cursor must not see its bucket
		// change under it).
		if err := setReleaseBytes(tx, releaseBytes(tx)-int64(len(key)+len(val))); err != nil {
			return n, err
		}
		n++
	}
	for _, v := range victims {
		if err := lb.Delete(v.seq); err != nil {
			return n, err
		}
		l.releaseKeys.remove(v.key, binary.BigEndian.Uint64(v.seq))
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
		n, err = l.evictOldest(tx, now, more)
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

// checkReleases verifies the release log: every record readable, no
// cache key twice, and the byte total.
func checkReleases(tx *bolt.Tx) []error {
	lb := tx.Bucket(bucketReleaseLog)
	if lb == nil || tx.Bucket(bucketMeta) == nil {
		return nil // a file from before the log (Open moves it), or check's to report
	}
	var errs []error
	seen := map[string]bool{}
	var total int64
	_ = lb.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			errs = append(errs, fmt.Errorf("malformed release log key %x", k))
			return nil
		}
		_, key, val, err := decodeStored(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("release %d: %w", binary.BigEndian.Uint64(k), err))
			return nil
		}
		if seen[string(key)] {
			errs = append(errs, fmt.Errorf("release %x is stored twice", key))
		}
		seen[string(key)] = true
		total += int64(len(key) + len(val))
		return nil
	})
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
