package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// state is what decides charges: the accounts charged since Open (each
// loaded from the bbolt file when first touched, then kept here, where
// every change is made first, in log order), the last reservation id, and
// the releases committed since the last checkpoint (not in the bbolt file
// yet). The log makes each change durable; checkpoints copy them into the
// bbolt file.
type state struct {
	mu       sync.Mutex
	accounts map[string]*account
	seq      uint64
	releases map[string]logged // cache key → release, until a checkpoint applies it
	// leases: the budget leases this process holds, by account key
	// (lease.go); noLeases: Close returned them, take no more.
	leases   map[string]*liveLease
	noLeases bool
}

type logged struct {
	data []byte
	lsn  uint64
}

// loadAccount returns the account of key, reading it from the bbolt file
// the first time (l.state.mu held). An account not in the map has had no
// change since Open, so the file's record is current.
func (l *Ledger) loadAccount(key []byte) (*account, error) {
	if a, ok := l.state.accounts[string(key)]; ok {
		return a, nil
	}
	var a account
	err := l.db.View(func(tx *bolt.Tx) error {
		var err error
		a, err = l.memo.getAccount(tx.Bucket(bucketAccounts), key)
		return err
	})
	if err != nil {
		return nil, err
	}
	l.state.accounts[string(key)] = &a
	return &a, nil
}

// storedRelease returns the release stored under key, in the log or the
// file, and the LSN of its log record (0: in the file). l.state.mu held.
func (l *Ledger) storedRelease(key string) ([]byte, uint64, error) {
	if r, ok := l.state.releases[key]; ok {
		return r.data, r.lsn, nil
	}
	out, err := l.fileRelease(key)
	return out, 0, err
}

// fileRelease returns the release stored under key in the bbolt file.
func (l *Ledger) fileRelease(key string) ([]byte, error) {
	if !l.releaseKeys.may(key) {
		return nil, nil
	}
	var out []byte
	err := l.db.View(func(tx *bolt.Tx) error {
		if v := l.getRelease(tx, []byte(key)); v != nil {
			out = bytes.Clone(v) // v lives in the mmap only for the transaction
		}
		return nil
	})
	return out, err
}

// applyLogged writes recs (LSNs consecutive, up to last) into the bbolt
// file in one durable transaction that also records last as applied: the
// same arithmetic the in-memory state did when each change was decided
// (no budget check: the decision was made, and logged, before). Each
// account is written once per batch, and a reservation charged and
// settled within the batch never enters the pending bucket.
func (l *Ledger) applyLogged(recs []*logRecord, last uint64) error {
	if len(recs) == 0 {
		return nil
	}
	return l.writes.update(func(tx *bolt.Tx) error {
		// The audit history and the release log only grow at their end
		// (ids and sequence numbers ascend): full pages, where bbolt's default
		// splits appended pages half full and writes twice as many.
		for _, name := range [][]byte{bucketAudit, bucketReleaseLog} {
			if bk := tx.Bucket(name); bk != nil {
				bk.FillPercent = appendFill
			}
		}
		b := batch{l: l, tx: tx, accounts: map[string]*account{}, fresh: map[uint64]pending{}, stored: map[uint64]bool{}}
		for _, r := range recs {
			if err := b.apply(r); err != nil {
				return fmt.Errorf("change %d: %w", r.lsn, err)
			}
		}
		return b.finish(last)
	})
}

// appendFill is the FillPercent of buckets written in key order.
const appendFill = 1.0

// batch is one checkpoint's transaction.
type batch struct {
	l        *Ledger
	tx       *bolt.Tx
	accounts map[string]*account // loaded from tx, written by finish
	keys     [][]byte            // of accounts, in first-touch order
	fresh    map[uint64]pending  // reserved in this batch, not settled yet
	// stored: of fresh, the leases read from the pending bucket to be
	// carved (rewritten by finish, deleted when settled).
	stored map[uint64]bool
	seq    uint64
	// releaseBytes: of the releases stored, not yet added to the total
	// (putRelease).
	releaseBytes int64
}

func (b *batch) account(key []byte) (*account, error) {
	if a, ok := b.accounts[string(key)]; ok {
		return a, nil
	}
	a, err := b.l.memo.getAccount(b.tx.Bucket(bucketAccounts), key)
	if err != nil {
		return nil, err
	}
	b.accounts[string(key)] = &a
	b.keys = append(b.keys, key)
	return &a, nil
}

func (b *batch) apply(r *logRecord) error {
	tx := b.tx
	if r.kind == logReserve || r.kind == logCarve {
		var p pending
		if r.decoded != nil {
			p = *r.decoded
		} else {
			var err error
			if p, err = decodePending(r.pending); err != nil {
				return err
			}
		}
		a, err := b.account(p.accountKey)
		if err != nil {
			return err
		}
		switch {
		case r.kind == logCarve:
			// The lease charged it: its cost moves to this reservation.
			if err := b.carve(r.lease, p); err != nil {
				return err
			}
		default:
			a.spent = a.spent.add(p.cost)
		}
		if !p.lease {
			a.queries++
			a.lastCharge = r.time
		}
		p.raw = r.pending
		b.fresh[r.id] = p
		b.seq = max(b.seq, r.id)
		if len(r.audit) == 0 && p.lease {
			return nil // a lease is not a query: no audit entry
		}
		ab := tx.Bucket(bucketAudit)
		if ab == nil {
			return errors.New("the audit bucket is missing")
		}
		return ab.Put(idKey(r.id), r.audit)
	}
	p, ok := b.fresh[r.id]
	if ok {
		delete(b.fresh, r.id)
		if b.stored[r.id] {
			delete(b.stored, r.id)
			if err := budgetDelete(tx, bucketPending, idKey(r.id)); err != nil {
				return err
			}
		}
	} else {
		v := tx.Bucket(bucketPending).Get(idKey(r.id))
		if v == nil {
			return fmt.Errorf("reservation %d is not pending", r.id)
		}
		var err error
		if p, err = decodePending(v); err != nil {
			return err
		}
		if err := budgetDelete(tx, bucketPending, idKey(r.id)); err != nil {
			return err
		}
	}
	a, err := b.account(p.accountKey)
	if err != nil {
		return err
	}
	switch r.kind {
	case logCommit:
		a.committed = a.committed.add(p.cost)
		if len(r.key) > 0 && b.l.getRelease(tx, r.key) == nil {
			n, err := b.l.putRelease(tx, r.key, r.release, r.time)
			b.releaseBytes += n
			return err
		}
		return nil
	case logRefund:
		a.spent = a.spent.sub(p.cost)
		if !p.lease {
			a.queries--
		}
		if a.spent.negative() {
			return errors.New("refund would make the spent budget negative")
		}
		return markRefunded(tx, r.id, r.time)
	}
	return fmt.Errorf("unknown kind %d", r.kind)
}

// carve moves the cost of p, a charge taken out of the lease with id
// lease, out of the lease's pending record.
func (b *batch) carve(lease uint64, p pending) error {
	ls, ok := b.fresh[lease]
	if !ok {
		v := b.tx.Bucket(bucketPending).Get(idKey(lease))
		if v == nil {
			return fmt.Errorf("lease %d is not pending", lease)
		}
		var err error
		if ls, err = decodePending(v); err != nil {
			return err
		}
		b.stored[lease] = true
	}
	if !ls.lease || !bytes.Equal(ls.accountKey, p.accountKey) {
		return fmt.Errorf("reservation %d is not a lease of the same account", lease)
	}
	ls.cost = ls.cost.sub(p.cost)
	if ls.cost.negative() {
		return fmt.Errorf("lease %d is overdrawn", lease)
	}
	ls.raw = nil // rewritten by finish
	b.fresh[lease] = ls
	return nil
}

// finish writes the batch's accounts and still-pending reservations.
func (b *batch) finish(last uint64) error {
	for id, p := range b.fresh {
		if p.raw == nil {
			var err error
			if p.raw, err = p.encode(); err != nil {
				return err
			}
		}
		if err := budgetPut(b.tx, bucketPending, idKey(id), p.raw); err != nil {
			return err
		}
	}
	for _, k := range b.keys {
		if err := b.l.memo.putAccount(b.tx, k, *b.accounts[string(k)]); err != nil {
			return err
		}
	}
	if b.releaseBytes != 0 {
		if err := setReleaseBytes(b.tx, releaseBytes(b.tx)+b.releaseBytes); err != nil {
			return err
		}
	}
	if pb := b.tx.Bucket(bucketPending); b.seq > pb.Sequence() {
		if err := pb.SetSequence(b.seq); err != nil {
			return err
		}
	}
	return setApplied(b.tx, last)
}

// checkpoint makes every change so far durable and copies it into the
// bbolt file. It rotates the log (w.rotate, an instant under w.io) and
// applies the retired segment's changes with no lock of the log held:
// log writes go on into the other segment meanwhile, and never wait for a
// bbolt commit.
func (l *Ledger) checkpoint() error {
	l.ckMu.Lock()
	defer l.ckMu.Unlock()
	if l.logClosed {
		return nil // Close checkpointed everything
	}
	w := l.wal
	if err := w.sync(); err != nil {
		return err
	}
	for {
		// A retired segment is left from a checkpoint that failed: apply
		// it before the rotation below may start it over, then go on
		// with what came since.
		again := w.retired != 0
		if !again {
			w.io.Lock()
			var err error
			if len(w.through(w.written)) > 0 {
				w.retired, err = w.rotate()
			}
			w.io.Unlock()
			if err != nil {
				return fmt.Errorf("ledger checkpoint: %w", err)
			}
			if w.retired == 0 {
				return nil // nothing logged since the last checkpoint
			}
			if err := l.hook("rotated"); err != nil {
				return fmt.Errorf("ledger checkpoint: %w", err)
			}
		}
		last := w.retired
		if err := l.hook("apply"); err != nil {
			return fmt.Errorf("ledger checkpoint: %w", err)
		}
		if err := l.applyLogged(w.through(last), last); err != nil {
			return fmt.Errorf("ledger checkpoint: %w", err)
		}
		l.forget(last)
		if err := l.hook("applied"); err != nil {
			return fmt.Errorf("ledger checkpoint: %w", err)
		}
		// Only now may the next rotation start that segment over.
		w.retired = 0
		if !again {
			return nil
		}
	}
}

// hook calls l.ckHook (tests) at a checkpoint's crash point (l.ckMu held).
func (l *Ledger) hook(stage string) error {
	if l.ckHook == nil {
		return nil
	}
	return l.ckHook(stage)
}

// forget drops what the bbolt file now holds from memory.
func (l *Ledger) forget(last uint64) {
	l.wal.applied(last)
	l.state.mu.Lock()
	for k, r := range l.state.releases {
		if r.lsn <= last {
			delete(l.state.releases, k)
		}
	}
	l.state.mu.Unlock()
}

// checkpointLoop checkpoints when the log grew large (the writer kicks)
// or every l.checkpointEvery after changes, until the log is closed.
func (l *Ledger) checkpointLoop(done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(l.checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-l.wal.stopped:
			return
		case <-l.wal.kick:
			// A kick sent while the last checkpoint ran may be stale:
			// run only if the log is still large.
			if !l.wal.big() {
				continue
			}
		case <-t.C:
			l.wal.mu.Lock()
			idle := len(l.wal.recs) == 0
			l.wal.mu.Unlock()
			if idle {
				continue
			}
		}
		if err := l.checkpoint(); err != nil && !errors.Is(err, errClosed) {
			l.log.Error("ledger checkpoint failed; the changes stay in the log", "err", err)
		}
	}
}

// upgradeLog marks a version 3 ledger (no change log) or a version 4
// one (one log segment: the first of version 5's two) version 5, and
// returns the log id and the last change applied.
func upgradeLog(tx *bolt.Tx) ([]byte, uint64, error) {
	meta := tx.Bucket(bucketMeta)
	if v := string(meta.Get(keyVersion)); v == formatVersion3 || v == formatVersion4 || v == formatVersion5 {
		if err := meta.Put(keyVersion, []byte(formatVersion)); err != nil {
			return nil, 0, err
		}
	}
	return logMeta(tx)
}

// openLog opens the change log, replays into the bbolt file what a crash
// left only in the log, and starts the checkpointer.
func (l *Ledger) openLog(path string, id []byte, applied uint64, delay time.Duration, observe func(int, time.Duration)) error {
	files, todo, err := openLog(path, id, applied)
	if err != nil {
		return err
	}
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	last := applied
	if len(todo) > 0 {
		last = todo[len(todo)-1].lsn
		if err := l.applyLogged(todo, last); err != nil {
			closeAll()
			return fmt.Errorf("replay the ledger log: %w", err)
		}
		l.log.Info("replayed ledger changes from the log", "path", logPath(path), "changes", len(todo))
	}
	// Both segments hold only changes the bbolt file has now: appends
	// start over in the first. What lies past the replayed records is
	// cut off first: after a power loss it may hold records that reached
	// the disk although one before them did not, and a later run's
	// records could end just where one of them begins, with the LSN that
	// follows — replayed then, though it was never part of that run.
	var sizes [2]int64
	for i, f := range files {
		err := f.Truncate(logHeaderSize)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			closeAll()
			return fmt.Errorf("open the ledger log: %w", err)
		}
		sizes[i] = logHeaderSize
	}
	l.wal = &wal{f: files[0], lazy: l.leaseFrac != nil, delay: delay, observe: observe, off: logHeaderSize, size: sizes[0],
		idle: segment{f: files[1], size: sizes[1]},
		next: last + 1, written: last, durable: last, lastTaken: last, cur: newFlush(), kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	err = l.db.View(func(tx *bolt.Tx) error {
		l.state.seq = tx.Bucket(bucketPending).Sequence()
		return nil
	})
	if err != nil {
		closeAll()
		return err
	}
	l.ckDone = make(chan struct{})
	go l.checkpointLoop(l.ckDone)
	return nil
}

// closeLog stops the checkpointer, checkpoints what is left and closes
// the log file.
func (l *Ledger) closeLog() error {
	l.ckMu.Lock()
	closed := l.wal == nil || l.logClosed
	l.ckMu.Unlock()
	if closed {
		return nil
	}
	// No change may be logged after the last checkpoint: the log is
	// emptied below.
	l.wal.mu.Lock()
	l.wal.closing = true
	l.wal.mu.Unlock()
	close(l.wal.stopped)
	<-l.ckDone
	err := l.checkpoint()
	l.ckMu.Lock()
	l.logClosed = true
	l.ckMu.Unlock()
	w := l.wal
	w.mu.Lock()
	if w.err == nil {
		w.err = errClosed
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
		w.armed = false
	}
	w.mu.Unlock()
	if err == nil {
		// Everything is in the bbolt file: leave an empty log, which
		// Open may replace when the ledger file was replaced meanwhile
		// (ledger compact, a restore) and the log is another's.
		for _, f := range []*os.File{w.f, w.idle.f} {
			if err = f.Truncate(logHeaderSize); err == nil {
				err = f.Sync()
			}
			if err != nil {
				break
			}
		}
	}
	return errors.Join(err, w.f.Close(), w.idle.f.Close())
}
