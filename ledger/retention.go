package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
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

// migrateReleases moves the releases of a file from before format
// version 7 into the release log at Open, oldest first: in the order of
// their stored times from the old index where that entry is sound, else
// as stored now (a file from before the index, or a damaged entry), and
// recounts their bytes. The old buckets are dropped; a file already in
// the log's layout is left as it is.
func migrateReleases(tx *bolt.Tx, now time.Time) error {
	if _, err := tx.CreateBucketIfNotExists(bucketEvicted); err != nil {
		return err
	}
	old := tx.Bucket(bucketReleases)
	if old == nil {
		_, err := tx.CreateBucketIfNotExists(bucketReleaseLog)
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
	}
	if ab := tx.Bucket(bucketReleaseAge); ab != nil {
		_ = ab.ForEach(func(k, _ []byte) error {
			if len(k) > 8 {
				stored[string(k[8:])] = int64(binary.BigEndian.Uint64(k[:8]))
			}
			return nil
		})
	}
	type rel struct {
		key, val []byte
		at       int64
	}
	var rels []rel
	_ = old.ForEach(func(k, v []byte) error {
		at := now.UnixNano()
		if t, ok := stored[string(k)]; ok && t > 0 && t <= at {
			at = t
		}
		rels = append(rels, rel{bytes.Clone(k), bytes.Clone(v), at})
		return nil
	})
	sort.SliceStable(rels, func(i, j int) bool { return rels[i].at < rels[j].at })
	for _, name := range [][]byte{bucketReleases, bucketReleaseAge, bucketReleaseMeta, bucketReleaseLog} {
		if tx.Bucket(name) == nil {
			continue
		}
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
	}
	lb, err := tx.CreateBucket(bucketReleaseLog)
	if err != nil {
		return err
	}
	lb.FillPercent = appendFill
	var total int64
	for i, r := range rels {
		if err := lb.Put(seqKey(uint64(i+1)), encodeStored(r.at, r.key, r.val)); err != nil {
			return err
		}
		total += int64(len(r.key) + len(r.val))
	}
	return setReleaseBytes(tx, total)
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
	// The next number after the last record, not the bucket's sequence:
	// a copy of the file (compact) need not keep the latter.
	seq := uint64(1)
	if k, _ := lb.Cursor().Last(); len(k) == 8 {
		seq = binary.BigEndian.Uint64(k) + 1
	}
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
