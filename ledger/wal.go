package ledger

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The change log (format version 4; two segments since version 5) is
// what makes a charge durable: one append and one fdatasync per group of
// concurrent changes, where a bbolt commit costs two (pages, then the meta
// page) and writes every bucket it touches. It is two files next to the
// bbolt file (logPaths: segments 0 and 1), written only under the bbolt
// file's lock.
//
// Every change — a reservation (with its pending record and audit entry),
// a commit (with the release) or a refund — gets the next log sequence
// number (LSN), is decided in memory (Ledger.state: the budget check is
// exact there, under one mutex, in LSN order) and appended to the active
// segment; the caller waits for the group's fdatasync where durability
// matters. The bbolt file is brought up to date at checkpoints, which
// rotate the log: with the log's writes held off for an instant, appends
// move to the other segment, which starts over from its header; then,
// with no lock held, the old segment's changes are applied in one bbolt
// transaction (fsynced as always) that also stores the last LSN applied
// (meta log_applied). Only then may the old segment be started over, at
// the next checkpoint: a segment is reused only once the bbolt file
// holds every change in it, so a log write never waits for a bbolt
// commit. Open replays the changes with an LSN above log_applied from
// both segments, in LSN order — idempotent, so a crash at any point
// between a log append and the end of a checkpoint loses nothing the log
// made durable.
//
// Layout of a segment: a 32-byte header (logMagic, then the ledger's
// 16-byte log id, meta log_id, so a log never replays into another
// ledger), then records framed as
//
//	u32 length ‖ u32 CRC-32C(payload) ‖ payload (little endian)
//
// whose payloads begin with their LSN. The file is extended with zeros
// ahead of the records (logChunk at a time), so an fdatasync normally
// flushes data only. Starting a segment over rewrites it from the header
// on: the records left behind have smaller LSNs (all in the bbolt file),
// so replay, which follows LSNs one by one from a segment's first record,
// stops at the first record that is not the successor of the one before
// (or has a bad length or CRC: a write torn by a crash, never
// acknowledged). The changes above log_applied must form one unbroken
// run of LSNs across the two segments, from log_applied+1 on; anything
// else is damage.
const (
	logMagic      = "ddp-proxy log v1"
	logHeaderSize = 32
	logChunk      = 1 << 20
	maxLogRecord  = 1 << 31
	// A checkpoint runs when the log holds this many bytes or records,
	// and at the latest defaultCheckpointEvery after a change. Log
	// writes do not wait for checkpoints, so these bound memory and the
	// replay after a crash; larger batches cost bbolt fewer page writes
	// per change (when releases were stored at random keys,
	// BenchmarkCheckpoint gave 8192 → 32768 records per checkpoint:
	// 2.2 → 1.5 pages and 26 → 19 CPU µs per answer in a ledger of 200k
	// releases; appended to the release log since format version 7:
	// 0.14 pages and 7–9 µs at 32768).
	checkpointBytes   = 32 << 20
	checkpointRecords = 32768
)

// maxSpare bounds the write buffer kept for reuse (a burst's is not).
const maxSpare = 1 << 20

// defaultCheckpointEvery is how often changes are checkpointed at the
// latest (Options.checkpointEvery, set by tests that must tell a write by
// the settle timer from one by a checkpoint).
const defaultCheckpointEvery = time.Second

var (
	keyLogID      = []byte("log_id")      // 16 random bytes, in the log's header too
	keyLogApplied = []byte("log_applied") // 8-byte big-endian LSN of the last change in bbolt
	crcTable      = crc32.MakeTable(crc32.Castagnoli)
)

// DefaultSettleDelay bounds how long a record nobody waits for (the
// commit of CommitDeferred) waits for a log write to ride on before it is
// written by itself.
const DefaultSettleDelay = 20 * time.Millisecond

// logPath is where the first segment of the change log of the ledger at
// path lives (the only one before format version 5).
func logPath(path string) string { return path + ".log" }

// logPaths are the change log's two segments.
func logPaths(path string) [2]string { return [2]string{logPath(path), logPath(path) + "2"} }

type logKind byte

const (
	logReserve logKind = 1
	logCommit  logKind = 2
	logRefund  logKind = 3
	// logCarve (format version 6) is a charge taken out of a lease
	// (lease.go).
	logCarve logKind = 4
)

// logRecord is one change. Reserve: id, time (of the charge), pending and
// audit (the records as bbolt stores them; a lease has no audit entry).
// Commit: id, time (the release's storage time), key and release (key
// empty: nothing stored). Refund: id, time. Carve: a reserve whose cost
// moves out of the pending lease lease.
type logRecord struct {
	lsn     uint64
	kind    logKind
	id      uint64
	lease   uint64
	time    time.Time
	pending []byte
	audit   []byte
	key     []byte
	release []byte
	// decoded is pending as reserve built it (not logged: a checkpoint
	// need not decode what the process encoded; replay decodes).
	decoded *pending
}

func (r *logRecord) appendFrame(b []byte) ([]byte, error) {
	// Encoded in place after a header filled in last: no payload buffer
	// of its own, copied into b (two per fresh answer).
	start := len(b)
	e := &enc{b: append(b, 0, 0, 0, 0, 0, 0, 0, 0, recordBinary)}
	e.b = binary.BigEndian.AppendUint64(e.b, r.lsn)
	e.b = append(e.b, byte(r.kind))
	e.uvarint(r.id)
	if err := e.time(r.time); err != nil {
		return b, fmt.Errorf("encode log record: %w", err)
	}
	switch r.kind {
	case logCarve:
		e.uvarint(r.lease)
		fallthrough
	case logReserve:
		e.bytes(r.pending)
		e.bytes(r.audit)
	case logCommit:
		e.bytes(r.key)
		e.bytes(r.release)
	}
	payload := e.b[start+8:]
	if len(payload) >= maxLogRecord {
		return b, fmt.Errorf("log record of %d bytes is too large", len(payload))
	}
	binary.LittleEndian.PutUint32(e.b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(e.b[start+4:], crc32.Checksum(payload, crcTable))
	return e.b, nil
}

// decodeLogRecord reads a payload whose CRC matched.
func decodeLogRecord(p []byte) (*logRecord, error) {
	if len(p) < 1+8+1 || p[0] != recordBinary {
		return nil, errors.New("short or untagged log record")
	}
	r := &logRecord{lsn: binary.BigEndian.Uint64(p[1:9]), kind: logKind(p[9])}
	d := &dec{b: p[10:]}
	r.id = d.uvarint()
	r.time = d.time()
	switch r.kind {
	case logCarve:
		r.lease = d.uvarint()
		fallthrough
	case logReserve:
		r.pending = d.bytes()
		r.audit = d.bytes()
	case logCommit:
		r.key = d.bytes()
		r.release = d.bytes()
	case logRefund:
	default:
		return nil, fmt.Errorf("log record of unknown kind %d", r.kind)
	}
	if err := d.end(); err != nil {
		return nil, fmt.Errorf("log record %d: %w", r.lsn, err)
	}
	return r, nil
}

// readLog returns the chain of records of the log file's contents b: from
// the first record on, while each frame is whole and its CRC matches and
// its LSN follows the one before.
func readLog(b []byte) []*logRecord {
	var out []*logRecord
	off := logHeaderSize
	for off+8 <= len(b) {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		sum := binary.LittleEndian.Uint32(b[off+4:])
		if n == 0 || n > len(b)-off-8 {
			break
		}
		p := b[off+8 : off+8+n]
		if crc32.Checksum(p, crcTable) != sum {
			break
		}
		r, err := decodeLogRecord(p)
		if err != nil || len(out) > 0 && r.lsn != out[len(out)-1].lsn+1 {
			break
		}
		out = append(out, r)
		off += 8 + n
	}
	return out
}

// flush is one group of log records written by one pwrite, and made
// durable by one fdatasync unless the log is lazy and nothing in the
// group asked for it.
type flush struct {
	done chan struct{} // closed when the group is written (synced if sync) or failed
	err  error
	sync bool // fdatasync after the write (set under wal.mu before the write starts)
}

func newFlush() *flush { return &flush{done: make(chan struct{})} }

func (f *flush) wait() error {
	<-f.done
	return f.err
}

// wal is the open change log: group commit in front of the file.
//
// Records are appended to buf in LSN order; a writer goroutine, started
// when a caller needs durability, takes the whole buf, writes it with one
// pwrite and one fdatasync, and wakes the group's callers. A lazy log
// (budget leases on, lease.go) fdatasyncs a group only when one of its
// records needs it (syncNow: a lease, a refund) or sync asks: the other
// groups reach the kernel before their callers go on, which a killed
// process cannot undo, and only a power loss can cut them off — a cut
// the leases cover. What is lost then is always a suffix of the log: an
// fdatasync flushes everything written before it, and a checkpoint
// syncs the segment it retires (rotate). Callers that
// arrive meanwhile form the next group. Records nobody waits for (a
// deferred commit) ride with the next group, or are written delay after
// the first of them was appended.
//
// The settle timer is armed at most once per delay, not once per deferred
// record: a group taking the buffer leaves it armed, and when it fires
// with newer deferred records waiting it is re-armed for the oldest one's
// remaining time. Arming a timer wakes the runtime's network poller (a
// write to its eventfd and a thread wakeup); per fresh answer at one
// client that was a measurable share of the proxy's CPU.
type wal struct {
	f       *os.File // the active segment (see io)
	lazy    bool     // fdatasync only groups that need it (set before use)
	delay   time.Duration
	observe func(writes int, took time.Duration)

	// io is held while writing and syncing, and by a checkpoint while it
	// switches segments. f is the active segment; off and size are its
	// write offset and zero-extended size. idle is the other segment.
	io        sync.Mutex
	off, size int64
	idle      segment
	dirty     bool  // the active segment has writes no fdatasync covered yet
	syncedOff int64 // where the last fdatasync of a lazy write ended (tests)

	// retired is the LSN of the last change in the idle segment that the
	// bbolt file may not hold yet (0: none; the segment may be started
	// over). Set and cleared by checkpoints, under Ledger.ckMu.
	retired uint64

	mu      sync.Mutex
	next    uint64 // LSN of the next record
	buf     []byte
	spare   []byte // the buffer of the last write, reused by the next group
	bufN    int
	urgent  bool   // a caller waits for buf
	cur     *flush // the group buf is for
	flying  *flush // the group being written
	running bool
	timer   *time.Timer // the settle timer, created once
	armed   bool        // timer is pending
	since   time.Time   // when the oldest deferred record in buf was appended (zero: none)
	err     error       // sticky: after a failed write nothing more is acknowledged
	closing bool        // Close began: no more records
	closed  bool        // Close ended: the settle timer stays stopped
	written uint64      // LSN of the last record written (durable unless lazy; updated under io and mu)
	durable uint64      // LSN of the last record an fdatasync covered (lazy log; under mu)
	// lastTaken is the LSN of the last record a write took from buf.
	lastTaken uint64
	recs      []*logRecord // durable or buffered, not yet in bbolt, in LSN order
	logged    int64        // bytes of recs

	syncs   atomic.Int64  // fdatasyncs of the log (tests and metrics)
	kick    chan struct{} // asks the checkpointer to run
	stopped chan struct{} // closed by close: the checkpointer stops
}

// segment is a log file not being appended to, and its zero-extended size.
type segment struct {
	f    *os.File
	size int64
}

// rotate makes the idle segment the active one, written from its header
// on, and returns the LSN of the last change written to the segment it
// replaces (w.io held: no write is in flight, so that segment holds
// exactly the changes up to it). Writes of a lazy log that no fdatasync
// covered are synced first: a power loss may then cut only the tail of
// the new segment, never a run of changes before it.
func (w *wal) rotate() (uint64, error) {
	if err := w.syncDirty(); err != nil {
		return 0, err
	}
	w.mu.Lock()
	last := w.written
	w.mu.Unlock()
	old := segment{f: w.f, size: w.size}
	w.f, w.size, w.off, w.syncedOff = w.idle.f, w.idle.size, logHeaderSize, logHeaderSize
	w.idle = old
	return last, nil
}

// syncDirty fdatasyncs the active segment if a write is not covered
// (w.io held). A failure is sticky: after a failed fdatasync the kernel
// may have dropped the pages, so nothing more is acknowledged.
func (w *wal) syncDirty() error {
	if !w.dirty {
		return nil
	}
	if err := fdatasync(w.f); err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = fmt.Errorf("ledger log: %w", err)
		}
		w.mu.Unlock()
		return err
	}
	w.dirty = false
	w.syncedOff = w.off
	w.syncs.Add(1)
	w.mu.Lock()
	w.durable = max(w.durable, w.written) // write raises it to its last itself
	w.mu.Unlock()
	return nil
}

// need says what the caller of append will wait for.
type need int

const (
	// deferred: nothing; the record rides with the next write or is
	// written delay after it was appended.
	deferred need = iota
	// written: the record's group reached the file (on a log that is not
	// lazy, every write is fdatasynced).
	written
	// syncNow: the record's group is written and fdatasynced.
	syncNow
)

// append assigns rec the next LSN and queues it. Unless n is deferred, a
// write is started at once (the caller will wait for the returned
// group); otherwise the record waits for the next write or delay.
func (w *wal) append(rec *logRecord, n need) (*flush, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	if w.closing {
		return nil, errClosed
	}
	rec.lsn = w.next
	b, err := rec.appendFrame(w.buf)
	if err != nil {
		return nil, err
	}
	w.buf = b
	w.bufN++
	w.next++
	w.recs = append(w.recs, rec)
	w.logged += int64(len(rec.release) + len(rec.audit) + len(rec.pending) + 64)
	g := w.cur
	if n == syncNow {
		g.sync = true
	}
	if n != deferred {
		w.urgent = true
		w.start(false)
	} else {
		if w.since.IsZero() {
			w.since = time.Now()
		}
		if !w.running {
			w.arm()
		}
	}
	return g, nil
}

// arm makes sure the settle timer will fire by the time the oldest
// deferred record in buf is due (w.mu held, w.since set).
func (w *wal) arm() {
	if w.armed {
		return // it fires before (or when) this record is due
	}
	d := w.delay - time.Since(w.since)
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.settle)
	} else {
		w.timer.Reset(d)
	}
	w.armed = true
}

// start runs the writer if it is not running (w.mu held).
func (w *wal) start(force bool) {
	if w.running {
		return
	}
	w.running = true
	go w.loop(force)
}

// settle is the timer: write the records nobody waited for once the
// oldest is due; until then wait again.
func (w *wal) settle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if len(w.buf) == 0 || w.since.IsZero() || w.running || w.closed {
		// Nothing deferred waits, or the running writer takes it (and
		// re-arms if it leaves deferred records behind).
		return
	}
	if time.Since(w.since) < w.delay {
		w.arm()
		return
	}
	w.start(true)
}

func (w *wal) loop(force bool) {
	for {
		w.mu.Lock()
		if len(w.buf) == 0 || !w.urgent && !force {
			w.running = false
			if len(w.buf) > 0 && !w.closed {
				w.arm()
			}
			w.mu.Unlock()
			return
		}
		buf, n, g, last := w.buf, w.bufN, w.cur, w.next-1
		w.lastTaken = last
		// The next group fills the buffer the last write used (only one
		// write is in flight): appends do not grow a new one each time.
		w.buf, w.spare = w.spare[:0], nil
		w.bufN, w.urgent, w.cur, w.flying, w.since = 0, false, newFlush(), g, time.Time{}
		w.mu.Unlock()

		start := time.Now()
		err := w.write(buf, last, g.sync || !w.lazy)
		if w.observe != nil {
			w.observe(n, time.Since(start))
		}
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("ledger log: %w", err)
		}
		g.err = w.err
		w.flying = nil
		if cap(buf) <= maxSpare {
			w.spare = buf // written: the kernel has its bytes
		}
		big := w.bigLocked()
		w.mu.Unlock()
		close(g.done)
		if big {
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
		force = false
	}
}

// write appends buf at the end of the log, and makes it durable if sync;
// last is the LSN of its last record.
func (w *wal) write(buf []byte, last uint64, sync bool) error {
	w.io.Lock()
	defer w.io.Unlock()
	if end := w.off + int64(len(buf)); end > w.size {
		// Zeros first, in the same fdatasync: the file's size changes
		// once per logChunk, not per write.
		grow := (end - w.size + logChunk - 1) / logChunk * logChunk
		if _, err := w.f.WriteAt(make([]byte, grow), w.size); err != nil {
			return err
		}
		w.size += grow
	}
	if _, err := w.f.WriteAt(buf, w.off); err != nil {
		return err
	}
	w.off += int64(len(buf))
	w.dirty = true
	if sync {
		if err := w.syncDirty(); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.written = last
	if sync {
		w.durable = last
	}
	w.mu.Unlock()
	return nil
}

// sync makes every record appended so far durable.
func (w *wal) sync() error {
	w.mu.Lock()
	if w.err != nil {
		defer w.mu.Unlock()
		return w.err
	}
	var g *flush
	switch {
	case len(w.buf) > 0:
		g = w.cur
		g.sync = true
		w.urgent = true
		w.start(false)
	case w.flying != nil:
		g = w.flying // a lazy log may not sync it: see below
	}
	w.mu.Unlock()
	if g != nil {
		if err := g.wait(); err != nil {
			return err
		}
	}
	if !w.lazy {
		return nil
	}
	w.io.Lock()
	defer w.io.Unlock()
	return w.syncDirty()
}

// syncThrough waits until the record lsn is written: durable on a log
// that is not lazy; on a lazy one, in the kernel, where only a power
// loss can take it (and the leases cover what a power loss takes).
func (w *wal) syncThrough(lsn uint64) error {
	w.mu.Lock()
	if w.err != nil || w.written >= lsn {
		defer w.mu.Unlock()
		return w.err
	}
	var g *flush
	switch {
	case lsn > w.lastTaken:
		g = w.cur // still in buf
		w.urgent = true
		w.start(false)
	default:
		g = w.flying
	}
	w.mu.Unlock()
	if g == nil {
		return nil // written meanwhile (flying is cleared after written is set)
	}
	return g.wait()
}

// syncDurable makes the record lsn durable even on a lazy log: for what
// is served to others than the charged caller (a stored release), which
// a power loss must not take back once it left.
func (w *wal) syncDurable(lsn uint64) error {
	if err := w.syncThrough(lsn); err != nil || !w.lazy {
		return err
	}
	w.mu.Lock()
	done := w.durable >= lsn
	w.mu.Unlock()
	if done {
		return nil
	}
	w.io.Lock()
	defer w.io.Unlock()
	return w.syncDirty()
}

// big says whether the changes not yet in bbolt call for a checkpoint.
func (w *wal) big() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bigLocked()
}

func (w *wal) bigLocked() bool {
	return w.logged > checkpointBytes || len(w.recs) > checkpointRecords
}

// through returns the records not yet in bbolt up to lsn, which must
// be durable.
func (w *wal) through(lsn uint64) []*logRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for n < len(w.recs) && w.recs[n].lsn <= lsn {
		n++
	}
	return w.recs[:n:n]
}

// applied forgets the records up to lsn, which bbolt holds now.
func (w *wal) applied(lsn uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for n < len(w.recs) && w.recs[n].lsn <= lsn {
		w.logged -= int64(len(w.recs[n].release) + len(w.recs[n].audit) + len(w.recs[n].pending) + 64)
		n++
	}
	w.recs = append([]*logRecord(nil), w.recs[n:]...)
}

// fdatasync flushes f's data (and the metadata needed to read it back).
func fdatasync(f *os.File) error { return fdatasyncFile(f) }

// openLog opens (or creates) the two segments of the change log of the
// ledger at path, whose meta names it id, and returns them with the
// records a checkpoint has not applied (LSN > applied), in LSN order. A
// segment of another ledger, or records that skip LSNs after applied,
// are refused: replaying them would apply the wrong changes or miss some.
func openLog(path string, id []byte, applied uint64) ([2]*os.File, []*logRecord, error) {
	var files [2]*os.File
	var runs [][]*logRecord // each segment's records above applied
	fail := func(err error) ([2]*os.File, []*logRecord, error) {
		for _, f := range files {
			if f != nil {
				_ = f.Close()
			}
		}
		return [2]*os.File{}, nil, err
	}
	for i, name := range logPaths(path) {
		recs, err := readSegment(name, id)
		if err != nil {
			return fail(err)
		}
		var run []*logRecord
		for _, r := range recs {
			if r.lsn > applied {
				run = append(run, r)
			}
		}
		if len(run) > 0 {
			runs = append(runs, run)
		}
		if files[i], err = os.OpenFile(name, os.O_RDWR, 0o600); err != nil {
			return fail(fmt.Errorf("open the ledger log: %w", err))
		}
	}
	// The older segment's run first; both must follow applied without a
	// gap or an overlap.
	if len(runs) == 2 && runs[1][0].lsn < runs[0][0].lsn {
		runs[0], runs[1] = runs[1], runs[0]
	}
	var todo []*logRecord
	next := applied + 1
	for _, run := range runs {
		if run[0].lsn != next {
			return fail(damaged("its log %s holds change %d next, where change %d was due (the file holds changes up to %d)", logPath(path), run[0].lsn, next, applied))
		}
		todo = append(todo, run...)
		next = run[len(run)-1].lsn + 1
	}
	return files, todo, nil
}

// readSegment reads the log segment name (creating it when missing) and
// returns its chain of records.
func readSegment(name string, id []byte) ([]*logRecord, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		if err := createLog(name, id); err != nil {
			return nil, err
		}
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read the ledger log: %w", err)
	}
	if len(b) < logHeaderSize || string(b[:len(logMagic)]) != logMagic {
		return nil, damaged("its log %s is not a ddp-proxy ledger log", name)
	}
	recs := readLog(b)
	if !bytes.Equal(b[len(logMagic):logHeaderSize], id) {
		if len(recs) > 0 {
			return nil, damaged("its log %s belongs to another ledger (a ledger file was replaced or moved without its log)", name)
		}
		// Another ledger's log, left empty by its Close: this file
		// replaced that ledger's (compact, restore). Start a new one.
		if err := createLog(name, id); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// createLog writes a new, empty log (header and one chunk of zeros) in a
// temporary file and links it into place, so a log at its path always has
// a whole header.
func createLog(name string, id []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".new-*")
	if err != nil {
		return fmt.Errorf("create the ledger log: %w", err)
	}
	defer os.Remove(tmp.Name())
	hdr := make([]byte, logChunk)
	copy(hdr, logMagic)
	copy(hdr[len(logMagic):], id)
	_, err = tmp.Write(hdr)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		return fmt.Errorf("create the ledger log: %w", err)
	}
	return syncDir(filepath.Dir(name))
}

// logMeta returns the ledger's log id and the LSN of the last change
// applied to the bbolt file, giving a file without them (before format
// version 4) a new id.
func logMeta(tx *bolt.Tx) (id []byte, applied uint64, err error) {
	meta := tx.Bucket(bucketMeta)
	if v := meta.Get(keyLogID); len(v) == 16 {
		id = bytes.Clone(v)
	} else {
		id = make([]byte, 16)
		if _, err := io.ReadFull(rand.Reader, id); err != nil {
			return nil, 0, err
		}
		if err := meta.Put(keyLogID, id); err != nil {
			return nil, 0, err
		}
	}
	if v := meta.Get(keyLogApplied); len(v) == 8 {
		applied = binary.BigEndian.Uint64(v)
	} else if err := setApplied(tx, 0); err != nil {
		return nil, 0, err
	}
	return id, applied, nil
}

func setApplied(tx *bolt.Tx, lsn uint64) error {
	return tx.Bucket(bucketMeta).Put(keyLogApplied, binary.BigEndian.AppendUint64(nil, lsn))
}
