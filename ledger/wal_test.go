package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// logOp is one durable change of TestLogCutAtEveryByte and where the log
// ended once it was durable.
type logOp struct {
	kind logKind
	id   uint64
	key  string
	end  int64
}

// expectedState replays acknowledged changes (each charge 0.1 of ann's
// census budget): the spent total, the pending reservations and the
// stored releases a recovered ledger must hold.
func expectedState(ops []logOp) (spent *big.Rat, pending map[uint64]bool, releases map[string]bool) {
	spent, pending, releases = new(big.Rat), map[uint64]bool{}, map[string]bool{}
	for _, op := range ops {
		switch op.kind {
		case logReserve:
			spent.Add(spent, big.NewRat(1, 10))
			pending[op.id] = true
		case logCommit:
			delete(pending, op.id)
			releases[op.key] = true
		case logRefund:
			spent.Sub(spent, big.NewRat(1, 10))
			delete(pending, op.id)
		}
	}
	return spent, pending, releases
}

// fileSpent reads ann's spent ε on census from the bbolt file.
func fileSpent(t *testing.T, l *Ledger) *big.Rat {
	t.Helper()
	var got *big.Rat
	if err := l.db.View(func(tx *bolt.Tx) error {
		a, err := l.memo.getAccount(tx.Bucket(bucketAccounts), accountKey("ann", "census"))
		got = a.spent.eps
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLogCutAtEveryByte: a crash can leave the log cut anywhere after the
// last acknowledged write (a torn append). For every cut of a log holding
// charges, commits and refunds, reopening the ledger (the bbolt file as
// the last checkpoint left it, plus the cut log) recovers exactly the
// changes whose records lie whole before the cut — every acknowledged
// change, nothing half-applied — and the ledger's invariants hold.
func TestLogCutAtEveryByte(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	// No checkpoint may start the log over while the changes are made.
	h.l.ckMu.Lock()
	var ops []logOp
	end := func() int64 {
		h.l.wal.io.Lock()
		defer h.l.wal.io.Unlock()
		return h.l.wal.off
	}
	for i := range 6 {
		r, err := h.l.Charge(ctx, budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.1), Query: fmt.Sprint("SELECT ", i)}, eps(10))
		if err != nil {
			t.Fatal(err)
		}
		res := r.(*Reservation)
		ops = append(ops, logOp{kind: logReserve, id: res.ID, end: end()})
		switch i % 3 {
		case 0:
			key := fmt.Sprint("k", i)
			if _, err := r.Commit(key, []byte(fmt.Sprint("release ", i))); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, logOp{kind: logCommit, id: res.ID, key: key, end: end()})
		case 1:
			if err := r.Refund(); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, logOp{kind: logRefund, id: res.ID, end: end()})
		} // case 2: left pending, as by a crash
	}
	boltFile, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.ReadFile(logPath(h.path))
	if err != nil {
		t.Fatal(err)
	}
	h.l.ckMu.Unlock()
	last := ops[len(ops)-1].end
	t.Logf("%d changes in %d log bytes", len(ops), last-logHeaderSize)

	// Some thousand opens: on a tmpfs when there is one (fsync is free
	// there; what is tested is what Open reads, not the disk).
	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "ledger-cut-"); err == nil {
		dir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	for cut := int64(logHeaderSize); cut <= last; cut++ {
		path := filepath.Join(dir, fmt.Sprint(cut, ".db"))
		if err := os.WriteFile(path, boltFile, 0o600); err != nil {
			t.Fatal(err)
		}
		// The rest of the file keeps its zeros, as a torn append leaves it.
		cutLog := make([]byte, len(logFile))
		copy(cutLog, logFile[:cut])
		if err := os.WriteFile(logPath(path), cutLog, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(path, Options{Now: func() time.Time { return testClock }, Replica: testReplica})
		if err != nil {
			t.Fatalf("cut at %d: Open: %v", cut, err)
		}
		n := 0
		for n < len(ops) && ops[n].end <= cut {
			n++
		}
		spent, pending, releases := expectedState(ops[:n])
		if got := fileSpent(t, l); got.Cmp(spent) != 0 {
			t.Errorf("cut at %d: spent %s in the file, want %s", cut, got.RatString(), spent.RatString())
		}
		p, err := l.Pending()
		if err != nil || len(p) != len(pending) {
			t.Errorf("cut at %d: %d pending (%v), want %d", cut, len(p), err, len(pending))
		}
		for _, op := range ops {
			if op.kind != logCommit {
				continue
			}
			_, ok, err := l.Lookup(op.key)
			if err != nil || ok != releases[op.key] {
				t.Errorf("cut at %d: release %s stored %v (%v), want %v", cut, op.key, ok, err, releases[op.key])
			}
		}
		if err := l.Check(); err != nil {
			t.Errorf("cut at %d: %v", cut, err)
		}
		// New changes after recovery continue the log and survive a
		// reopen.
		if _, err := l.Reserve(ctx, "ann", "census", eps(0.1), eps(10)); err != nil {
			t.Fatalf("cut at %d: charge after recovery: %v", cut, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(path)
		_ = os.Remove(logPath(path))
		if t.Failed() {
			return
		}
	}
}

// TestLogReplaysAfterCrash: changes only the log holds (no checkpoint
// ran) are in the bbolt file after a reopen, exactly once, and a second
// replay of the same log (a crash during the first) changes nothing.
func TestLogReplaysAfterCrash(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.l.ckMu.Lock()
	for i := range 5 {
		r, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.CommitDeferred(fmt.Sprint("k", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.l.Sync(); err != nil {
		t.Fatal(err)
	}
	boltFile, _ := os.ReadFile(h.path)
	logFile, _ := os.ReadFile(logPath(h.path))
	h.l.ckMu.Unlock()

	path := filepath.Join(t.TempDir(), "copy.db")
	for round := range 2 {
		if err := os.WriteFile(path, boltFile, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(logPath(path), logFile, 0o600); err != nil {
			t.Fatal(err)
		}
		if round == 1 {
			// The first replay's bbolt file (changes applied), with the
			// log as the crash left it: replaying again must skip them.
			c := harnessAt(t, path)
			c.l.ckMu.Lock()
			boltFile, _ = os.ReadFile(path)
			c.l.ckMu.Unlock()
			c.checkAndClose()
			c.l = nil
			if err := os.WriteFile(path, boltFile, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(logPath(path), logFile, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c := harnessAt(t, path)
		if got := c.spentExact("ann", "census"); got.eps.Cmp(big.NewRat(1, 2)) != 0 {
			t.Fatalf("round %d: spent %s after replay, want 1/2", round, got.eps.RatString())
		}
		if p, _ := c.l.Pending(); len(p) != 0 {
			t.Fatalf("round %d: %d pending after replay, want 0", round, len(p))
		}
		var n int
		if err := c.l.Audit(ctx, budget.AuditFilter{}, func(budget.AuditEntry) error { n++; return nil }); err != nil || n != 5 {
			t.Fatalf("round %d: %d audit entries (%v), want 5", round, n, err)
		}
		c.checkAndClose()
		c.l = nil
	}
}

// TestLogOfAnotherLedgerRefused: a log with changes the ledger file does
// not know about, from another ledger, is never replayed into it.
func TestLogOfAnotherLedgerRefused(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	la := harnessAt(t, a)
	la.l.ckMu.Lock()
	if _, err := la.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1)); err != nil {
		t.Fatal(err)
	}
	logA, _ := os.ReadFile(logPath(a))
	la.l.ckMu.Unlock()
	lb := harnessAt(t, b)
	lb.checkAndClose()
	lb.l = nil
	// In either segment.
	for i, seg := range logPaths(b) {
		empty, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(seg, logA, 0o600); err != nil {
			t.Fatal(err)
		}
		if l, err := Open(b, Options{}); err == nil {
			_ = l.Close()
			t.Fatalf("opened a ledger with another ledger's log as segment %d", i)
		} else if !errors.Is(err, ErrDamaged) {
			t.Errorf("segment %d of another ledger: %v, want ErrDamaged", i, err)
		}
		if err := os.WriteFile(seg, empty, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Another ledger's empty segments (left by its Close) are replaced.
	for _, seg := range logPaths(b) {
		if err := os.WriteFile(seg, logA[:logHeaderSize], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Open(b, Options{})
	if err != nil {
		t.Fatalf("a ledger with another ledger's empty log: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOverlapWaitsForTheCharge: a charge made with Overlap returns before
// its log write, but settling it waits for that write, so when the write
// fails no answer can be sent: CommitDeferred and Commit fail, the charge
// stays (fail closed) and nothing is released. Without Overlap, Charge
// itself fails.
func TestOverlapWaitsForTheCharge(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ro, err := os.Open(logPath(h.path)) // read-only: every log write fails
	if err != nil {
		t.Fatal(err)
	}
	h.l.wal.io.Lock()
	rw := h.l.wal.f
	h.l.wal.f = ro
	h.l.wal.io.Unlock()
	t.Cleanup(func() { rw.Close() })

	c := budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.25), Overlap: true}
	r, err := h.l.Charge(ctx, c, eps(1))
	if err != nil {
		t.Fatalf("Charge with Overlap = %v, want it to return before the write", err)
	}
	if out, err := r.CommitDeferred("k", []byte("noisy")); err == nil {
		t.Fatalf("CommitDeferred = %q after the charge's write failed, want an error", out)
	}
	if s, _ := h.l.Spent("ann", "census"); s.Epsilon != 0.25 {
		t.Errorf("spent %v after the failed write, want 0.25 (fail closed)", s.Epsilon)
	}
	if _, ok, _ := h.l.Lookup("k"); ok {
		t.Error("the release is served though its charge never became durable")
	}
	c.Overlap = false
	if _, err := h.l.Charge(ctx, c, eps(1)); err == nil {
		t.Error("Charge without Overlap succeeded though the log cannot be written")
	}
	_ = h.l.Close() // fails: the log cannot be written
	h.l = nil
}

// TestChargesDuringCloseSurvive: charges acknowledged while Close runs
// are in the file after it (Close empties the log, so none may be logged
// after its last checkpoint).
func TestChargesDuringCloseSurvive(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := h.l.Reserve(ctx, "ann", "census", eps(0.001), eps(1e6)); err != nil {
					return
				}
				ok.Add(1)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := h.l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	h.open()
	want := new(big.Rat).Mul(big.NewRat(ok.Load(), 1), big.NewRat(1, 1000))
	if got := h.spentExact("ann", "census"); got.eps.Cmp(want) != 0 {
		t.Fatalf("spent %s after close and reopen, want %s (%d acknowledged charges)", got.eps.RatString(), want.RatString(), ok.Load())
	}
}

// TestOpenUpgradesVersion3: a version 3 file (no change log) is marked 4
// at Open, gets a log, and keeps every charge.
func TestOpenUpgradesVersion3(t *testing.T) {
	h := newHarness(t)
	if _, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.25), eps(1)); err != nil {
		t.Fatal(err)
	}
	h.checkAndClose()
	h.l = nil
	boltUpdate(t, h.path, func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if err := m.Delete(keyLogID); err != nil {
			return err
		}
		if err := m.Delete(keyLogApplied); err != nil {
			return err
		}
		return m.Put(keyVersion, []byte(formatVersion3))
	})
	if err := os.Remove(logPath(h.path)); err != nil {
		t.Fatal(err)
	}
	h.open()
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != formatVersion {
			t.Errorf("version %q after opening a version 3 file, want %q", v, formatVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.5), eps(1)); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if got := h.spentExact("ann", "census"); got.eps.Cmp(big.NewRat(3, 4)) != 0 {
		t.Fatalf("spent %s after the upgrade, want 3/4", got.eps.RatString())
	}
}

// TestLogFrameLayout: a frame appended after other bytes is the
// documented layout (u32 length ‖ u32 CRC-32C ‖ payload, little endian;
// the payload tagged, then the LSN big endian, the kind, the id) built
// here by hand, leaves the bytes before it alone, and reads back.
func TestLogFrameLayout(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	rec := &logRecord{lsn: 0x0102030405060708, kind: logCommit, id: 300, time: at, key: []byte("k"), release: []byte("rel")}
	prefix := []byte("earlier frames")
	got, err := rec.appendFrame(append([]byte(nil), prefix...))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := at.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte{recordBinary, 1, 2, 3, 4, 5, 6, 7, 8, byte(logCommit), 0xac, 0x02, byte(len(tb))}
	payload = append(payload, tb...)
	payload = append(payload, 1, 'k', 3, 'r', 'e', 'l')
	want := append([]byte(nil), prefix...)
	want = binary.LittleEndian.AppendUint32(want, uint32(len(payload)))
	want = binary.LittleEndian.AppendUint32(want, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
	want = append(want, payload...)
	if !bytes.Equal(got, want) {
		t.Fatalf("frame\n got %x\nwant %x", got, want)
	}
	back, err := decodeLogRecord(got[len(prefix)+8:])
	if err != nil || back.lsn != rec.lsn || back.id != rec.id || !back.time.Equal(at) || string(back.key) != "k" || string(back.release) != "rel" {
		t.Fatalf("decoded %+v, %v", back, err)
	}
}
