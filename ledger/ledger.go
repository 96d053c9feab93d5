package ledger

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/ddp-proxy/ddp-proxy/budget"
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
	// checkpointEvery replaces defaultCheckpointEvery (tests).
	checkpointEvery time.Duration
	// OnCommit, when set, is called after every write of the change log
	// with the number of changes it carried (group commit) and how long
	// it took, fdatasync included (metrics). It must not block.
	OnCommit func(writes int, took time.Duration)
	// Retention bounds the stored releases (zero: kept forever).
	Retention Retention
	// Replica names this process in the audit history and in its pending
	// reservations ("" = DefaultReplica()).
	Replica string
	// Lease, between 0 and 1, turns on budget leases (lease.go): a
	// charge takes Lease × the dataset's limit ahead with one fdatasync,
	// and the charges that fit in it are logged without one. An unclean
	// stop keeps up to that much per (user, dataset) charged though
	// unused. 0: every charge waits for an fdatasync of its own group.
	Lease float64
}

// DefaultReplica names a serving process by host and process id.
func DefaultReplica() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// Ledger is an open budget ledger. It is safe for concurrent use: every
// change is decided under one mutex, in the order of the change log.
type Ledger struct {
	db      *bolt.DB
	writes  *groupCommit // every charge, commit and refund goes through it
	log     *slog.Logger
	now     func() time.Time
	replica string

	retention Retention
	stopEvict chan struct{} // closed by Close; nil without an age bound
	evictDone chan struct{}
	// evictedAny: the file may hold eviction records (Evicted reads
	// them). Set at Open when it does and by every eviction, before its
	// transaction commits; never cleared.
	evictedAny atomic.Bool

	// wal is the change log that makes charges durable (wal.go); state
	// decides them (state.go); ckMu runs one checkpoint at a time.
	wal    *wal
	state  state
	ckMu   sync.Mutex
	ckDone chan struct{} // closed when the checkpointer has stopped
	// checkpointEvery: the checkpointer's period (Options.checkpointEvery).
	checkpointEvery time.Duration

	logClosed bool // by Close (closeLog)
	// ckHook, when set (by tests, under ckMu), is called by checkpoint
	// at its crash points: "rotated" (appends go to the other segment,
	// the old one's changes are not in bbolt yet) and "applied" (they
	// are, the old segment is not free yet), and "apply" just before the
	// bbolt transaction. An error fails the checkpoint there, as a
	// failed bbolt commit would.
	ckHook func(stage string) error

	memo *memo // exact decimals and decoded accounts (memo.go)

	// leaseFrac is Options.Lease, exactly (nil: no leases).
	leaseFrac *big.Rat

	// releaseKeys: which cache keys may have a release in the bbolt
	// file (releasekeys.go).
	releaseKeys *releaseKeys
}

// ErrLocked is matched (errors.Is) by Open's error when another process
// (a running ddp-proxy serve) holds the file lock past Options.LockTimeout.
var ErrLocked = berrors.ErrTimeout

// ErrDamaged is matched (errors.Is) by Open's error when the file at the
// ledger path exists but is not a sound ledger: empty, cut short, corrupt,
// or another file altogether.
var ErrDamaged = errors.New("the ledger file is damaged")

// Is makes every damagedError match ErrDamaged.
func (e *damagedError) Is(target error) bool { return target == ErrDamaged }

// Open opens the ledger at path. Only a missing file is created (see
// create); an existing file must be a sound ledger of this format version:
// an empty file, a file cut short, a corrupt page or a file that is not a
// ledger is refused with ErrDamaged, never adopted as a new ledger, because
// a ledger that starts afresh forgets every charge.
func Open(path string, opts Options) (*Ledger, error) {
	l := &Ledger{log: opts.Logger, now: opts.Now, replica: opts.Replica, retention: opts.Retention, memo: newMemo(),
		checkpointEvery: cmp.Or(opts.checkpointEvery, defaultCheckpointEvery),
		state:           state{accounts: map[string]*account{}, releases: map[string]logged{}, leases: map[string]*liveLease{}},
		releaseKeys:     newReleaseKeys()}
	if opts.Lease != 0 {
		if !(opts.Lease > 0 && opts.Lease <= 1) {
			return nil, fmt.Errorf("open ledger %s: lease %v is not a fraction between 0 and 1", path, opts.Lease)
		}
		frac, err := budget.ExactDecimal(opts.Lease)
		if err != nil {
			return nil, fmt.Errorf("open ledger %s: lease: %w", path, err)
		}
		l.leaseFrac = frac
	}
	if l.replica == "" {
		l.replica = DefaultReplica()
	}
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
	if err := create(path, l.now()); err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	db, err := openBolt(path, timeout)
	if err != nil {
		return nil, openError(path, timeout, err)
	}
	l.db = db
	delay := opts.SettleDelay
	if delay <= 0 {
		delay = DefaultSettleDelay
	}
	l.writes = &groupCommit{db: db}
	if err := guard(l.verify); err != nil {
		_ = db.Close()
		return nil, openError(path, timeout, err)
	}
	// Before the other upgrades, in transactions of their own: releases
	// from before format version 7 are moved into the release log.
	if err := moveReleases(db, l.now(), moveBatchBytes); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open ledger %s: upgrade to format version %s: %w", path, formatVersion, err)
	}
	var logID []byte
	var applied uint64
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := upgradeV1(tx); err != nil {
			return err
		}
		if err := upgradeV2(tx); err != nil {
			return err
		}
		// The audit history came after format version 2; an older
		// binary leaves it alone.
		if _, err := tx.CreateBucketIfNotExists(bucketAudit); err != nil {
			return err
		}
		var err error
		if logID, applied, err = upgradeLog(tx); err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bucketEvicted); err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bucketReleaseLog); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put(keyVersion, []byte(formatVersion)); err != nil {
			return err
		}
		if k, _ := tx.Bucket(bucketEvicted).Cursor().First(); k != nil {
			l.evictedAny.Store(true)
		}
		total, err := l.releaseKeys.load(tx)
		if err != nil {
			return err
		}
		// Recounted at every Open, so the total always matches the
		// releases, whatever wrote the file.
		return setReleaseBytes(tx, total)
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open ledger %s: upgrade to format version %s: %w", path, formatVersion, err)
	}
	if err := l.openLog(path, logID, applied, delay, opts.OnCommit); err != nil {
		_ = db.Close()
		return nil, openError(path, timeout, err)
	}
	if err := l.settleLeases(); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if p, err := l.Pending(); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	} else if len(p) > 0 {
		// Left by a crash between reserve and commit. They stay charged:
		// the backend may have run, so refunding could leak.
		l.log.Warn("ledger has reservations left by an earlier crash; they stay charged",
			"path", path, "count", len(p))
	}
	if l.retention.bounded() {
		if _, err := l.Evict(context.Background()); err != nil {
			_ = l.Close()
			return nil, fmt.Errorf("open ledger %s: %w", path, err)
		}
	}
	if l.retention.MaxAge > 0 {
		l.stopEvict, l.evictDone = make(chan struct{}), make(chan struct{})
		go l.evictLoop(evictInterval(l.retention.MaxAge), l.stopEvict, l.evictDone)
	}
	return l, nil
}

// openBolt opens an existing ledger file with bbolt, after verifyFile has
// checked, under the file lock, that bbolt can map and walk it without
// reading outside the file.
func openBolt(path string, timeout time.Duration) (*bolt.DB, error) {
	for range 3 {
		db, err := openBoltOnce(path, timeout)
		if !errors.Is(err, errReplaced) {
			return db, err
		}
	}
	return nil, fmt.Errorf("the file was replaced three times while waiting for its lock: %w", errReplaced)
}

// errReplaced: the file at the path changed while Open waited for the lock
// (ledger compact renamed a new file into place); the lock held is on the
// old file, which nothing will read again.
var errReplaced = errors.New("the ledger file was replaced while waiting for its lock")

func openBoltOnce(path string, timeout time.Duration) (*bolt.DB, error) {
	var db *bolt.DB
	err := guard(func() error {
		var err error
		// 0600: the ledger reveals who queried what and holds released
		// answers. NoSync stays false: every Update fsyncs before it
		// returns, which is the whole point of reserving before running a
		// query.
		db, err = bolt.Open(path, 0o600, &bolt.Options{
			Timeout: timeout,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				// Never O_CREATE here: a file that vanished since create
				// looked is an error, not an empty new ledger.
				f, err := os.OpenFile(name, flag&^os.O_CREATE, perm)
				if err != nil {
					return nil, err
				}
				if err := lockFile(f, timeout); err != nil {
					_ = f.Close()
					return nil, err
				}
				if fi, err := f.Stat(); err == nil {
					if now, err := os.Stat(name); err == nil && !os.SameFile(fi, now) {
						_ = f.Close()
						return nil, errReplaced
					}
				}
				if err := verifyFile(f); err != nil {
					_ = f.Close() // also releases the lock
					return nil, err
				}
				return f, nil
			},
		})
		return err
	})
	return db, err
}

// guard runs fn, turning a panic — and a memory fault on the mapped file,
// which the runtime otherwise reports as a fatal error — into ErrDamaged.
// verifyFile should leave nothing for it to catch; it is the second line.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged("bbolt failed reading it: %v", r)
		}
	}()
	return fn()
}

// openError words a failure to open the ledger for the DBA: what is wrong
// with which file, and what to do about it.
func openError(path string, timeout time.Duration, err error) error {
	if abs, aerr := filepath.Abs(path); aerr == nil {
		path = abs // the DBA acts on the message from another directory
	}
	var de *damagedError
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("open ledger %s: the file is locked by another process (is another ddp-proxy using it?); waited %v: %w", path, timeout, err)
	case errors.As(err, &de) && de.notBolt:
		return fmt.Errorf("open ledger %s: not a ddp-proxy ledger (not a readable bbolt file: %w). If this file was the ledger, it was overwritten: restore it from a backup; otherwise point ledger.path at the ledger file", path, err)
	case errors.As(err, &de) && de.foreign:
		return fmt.Errorf("open ledger %s: not a ddp-proxy ledger: %w. If this file was the ledger, it was overwritten: restore it from a backup; otherwise point ledger.path at the ledger file", path, err)
	case errors.As(err, &de):
		return fmt.Errorf("open ledger %s: %w: %w. ddp-proxy will not use it: a damaged ledger can forget charges, and a forgotten charge is budget spent twice. "+
			"Restore the file from a backup taken while ddp-proxy was stopped. Only if you mean to reset every budget to zero, move the file away yourself: "+
			"ddp-proxy creates a new ledger only where no file exists", path, ErrDamaged, err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return fmt.Errorf("open ledger %s: not a ddp-proxy ledger (not a readable bbolt file): %w", path, err)
	}
	return fmt.Errorf("open ledger %s: %w", path, err)
}

// create makes a new ledger at path if no file exists there. The ledger is
// built in a temporary file next to path — bbolt meta pages, buckets and the
// format marker, fsynced — and then linked into place, so a file at path
// is always a complete ledger: a crash during creation leaves only the
// temporary file, and an empty or half-written file at path is damage,
// never a new ledger. If another process creates the ledger first, its
// file wins.
func create(path string, now time.Time) error {
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil // exists (or cannot be inspected: Open reports why)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("create a new ledger: %w", err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	defer os.Remove(name)
	db, err := bolt.Open(name, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("create a new ledger: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return initBuckets(tx, now) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create a new ledger: %w", err)
	}
	switch err := os.Link(name, path); {
	case err == nil, errors.Is(err, fs.ErrExist):
	default:
		// A file system without hard links: rename, which replaces a file
		// that appeared since the Lstat above; only a concurrent first
		// start of two proxies on one new ledger can get there.
		if _, serr := os.Lstat(path); !errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
		if err := os.Rename(name, path); err != nil {
			return fmt.Errorf("create a new ledger: %w", err)
		}
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a new directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync ledger directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync ledger directory: %w", err)
	}
	return nil
}

// dataBuckets are the buckets every ledger has. Its releases are in
// bucketReleaseLog (format version 7) or bucketReleases (before), which
// checkMeta checks by version.
var dataBuckets = [][]byte{bucketAccounts, bucketPending}

// initBuckets writes the buckets and the format marker of a new ledger.
func initBuckets(tx *bolt.Tx, now time.Time) error {
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
	if err := m.Put(keyCreated, []byte(now.UTC().Format(time.RFC3339Nano))); err != nil {
		return err
	}
	var empty digest // of no records
	if err := m.Put(keyDigest, empty[:]); err != nil {
		return err
	}
	for _, name := range append(dataBuckets, bucketAudit, bucketReleaseLog) {
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// verify runs Check's tests on a ledger being opened: bbolt's own check of
// the file (keys in order, every page accounted for), the format marker,
// and the budget invariants. Any failure refuses the file as damaged.
func (l *Ledger) verify() error {
	var errs []error
	err := l.db.View(func(tx *bolt.Tx) error {
		if err := checkMeta(tx); err != nil {
			return err // not a ledger, or another version: nothing more to check
		}
		errs = check(tx)
		return nil
	})
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return &damagedError{what: err.Error()}
	}
	return nil
}

// checkMeta verifies the format marker and that every bucket exists.
func checkMeta(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var foreign []byte
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			foreign = name
			return errors.New("stop")
		})
		if foreign != nil {
			return &damagedError{foreign: true, what: fmt.Sprintf("it has bucket %q but no format marker", foreign)}
		}
		return &damagedError{foreign: true, what: "it is a bbolt file without buckets, so without the format marker every ledger is created with"}
	}
	if f := meta.Get(keyFormat); !bytes.Equal(f, []byte(formatName)) {
		return &damagedError{foreign: true, what: fmt.Sprintf("its format marker is %q, want %q", f, formatName)}
	}
	switch v := string(meta.Get(keyVersion)); v {
	case formatVersion:
		if tx.Bucket(bucketReleaseLog) == nil {
			return damaged("bucket %q is missing", bucketReleaseLog)
		}
	case formatVersion6, formatVersion5, formatVersion4, formatVersion3, formatVersion2, formatVersion1:
		// Open moves the releases into the log (moveReleases); a move
		// cut short by a crash leaves both buckets.
		if tx.Bucket(bucketReleases) == nil && tx.Bucket(bucketReleaseLog) == nil {
			return damaged("bucket %q is missing", bucketReleases)
		}
	default:
		return fmt.Errorf("ledger format version %q is not supported: this ddp-proxy reads versions %s to %s (use the ddp-proxy that wrote it, or another ledger.path)", v, formatVersion1, formatVersion)
	}
	for _, name := range dataBuckets {
		if tx.Bucket(name) == nil {
			return damaged("bucket %q is missing", name)
		}
	}
	return nil
}

// Close makes deferred commits durable and releases the file.
// Reservations not yet committed stay charged.
func (l *Ledger) Close() error {
	if l.stopEvict != nil {
		close(l.stopEvict)
		<-l.evictDone
		l.stopEvict = nil
	}
	var lerr error
	if l.wal != nil {
		lerr = l.returnLeases()
	}
	serr := errors.Join(lerr, l.closeLog())
	if err := errors.Join(serr, l.writes.close(), l.db.Close()); err != nil {
		return fmt.Errorf("close ledger: %w", err)
	}
	return nil
}

// Sync makes every commit deferred so far durable (one fsync shared with
// any concurrent writer).
func (l *Ledger) Sync() error {
	if err := l.wal.sync(); err != nil {
		return fmt.Errorf("ledger sync: %w", err)
	}
	return nil
}
