package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultLockTimeout is how long Open waits for another process (usually a
// second ddp-proxy on the same file) to release the file lock.
const DefaultLockTimeout = 2 * time.Second

// Options configures Open.
type Options struct {
	// Logger receives reservation events and crash leftovers (nil =
	// discard). Cache keys are never logged: they may embed query literals.
	Logger *slog.Logger
	// LockTimeout bounds the wait for the file lock (0 = DefaultLockTimeout).
	LockTimeout time.Duration
	// Now is the clock for charge times (nil = time.Now).
	Now func() time.Time
	// SettleDelay bounds how long the record of a CommitDeferred waits for
	// a durable write to ride on before it is committed by itself
	// (0 = DefaultSettleDelay).
	SettleDelay time.Duration
}

// Ledger is an open budget ledger. It is safe for concurrent use: bbolt
// serialises writers, and every charge is one read-check-write transaction.
type Ledger struct {
	db     *bolt.DB
	writes *groupCommit // every charge, commit and refund goes through it
	log    *slog.Logger
	now    func() time.Time

	// unsettled counts, per cache key, deferred commits whose release is
	// not yet durable (see CommitDeferred and Lookup).
	relMu     sync.Mutex
	unsettled map[string]int
}

// Open opens the ledger at path, creating it if it does not exist. It refuses
// a file that is not a ledger of this format version instead of adding
// buckets to it.
func Open(path string, opts Options) (*Ledger, error) {
	l := &Ledger{log: opts.Logger, now: opts.Now, unsettled: map[string]int{}}
	if l.log == nil {
		l.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if l.now == nil {
		l.now = time.Now
	}
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	// 0600: the ledger reveals who queried what and holds released answers.
	// NoSync stays false: every Update fsyncs before it returns, which is the
	// whole point of reserving before running a query.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("open ledger %s: the file is locked by another process (is another ddp-proxy using it?); waited %v: %w", path, timeout, err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return nil, fmt.Errorf("open ledger %s: not a ddp-proxy ledger (not a readable bbolt file): %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	l.db = db
	delay := opts.SettleDelay
	if delay <= 0 {
		delay = DefaultSettleDelay
	}
	l.writes = &groupCommit{db: db, delay: delay}
	if err := db.Update(initBuckets); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if p, err := l.Pending(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	} else if len(p) > 0 {
		// Left by a crash between reserve and commit. They stay charged:
		// the backend may have run, so refunding could leak.
		l.log.Warn("ledger has reservations left by an earlier crash; they stay charged",
			"path", path, "count", len(p))
	}
	return l, nil
}

var dataBuckets = [][]byte{bucketAccounts, bucketPending, bucketReleases}

// initBuckets creates the buckets of a new ledger, or checks the format
// marker of an existing one.
func initBuckets(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var foreign []byte
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			foreign = name
			return errors.New("stop")
		})
		if foreign != nil {
			return fmt.Errorf("not a ddp-proxy ledger: it has bucket %q but no format marker; use another ledger.path", foreign)
		}
		m, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := m.Put(keyFormat, []byte(formatName)); err != nil {
			return err
		}
		if err := m.Put(keyVersion, []byte(formatVersion)); err != nil {
			return err
		}
		for _, name := range dataBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	}
	return checkMeta(tx)
}

// checkMeta verifies the format marker and that every bucket exists.
func checkMeta(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return errors.New("not a ddp-proxy ledger: no format marker")
	}
	if f := meta.Get(keyFormat); !bytes.Equal(f, []byte(formatName)) {
		return fmt.Errorf("not a ddp-proxy ledger: format marker is %q, want %q", f, formatName)
	}
	if v := meta.Get(keyVersion); !bytes.Equal(v, []byte(formatVersion)) {
		return fmt.Errorf("ledger format version %q is not supported: this ddp-proxy reads version %s (use the ddp-proxy that wrote it, or another ledger.path)", v, formatVersion)
	}
	for _, name := range dataBuckets {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("ledger is damaged: bucket %q is missing", name)
		}
	}
	return nil
}

// Close makes deferred commits durable and releases the file.
// Reservations not yet committed stay charged.
func (l *Ledger) Close() error {
	serr := l.writes.close()
	if err := errors.Join(serr, l.db.Close()); err != nil {
		return fmt.Errorf("close ledger: %w", err)
	}
	return nil
}

// Sync makes every commit deferred so far durable (one fsync shared with
// any concurrent writer).
func (l *Ledger) Sync() error {
	if err := l.writes.sync(); err != nil {
		return fmt.Errorf("ledger sync: %w", err)
	}
	return nil
}
