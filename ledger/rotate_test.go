package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// rotOp is one acknowledged change of TestCheckpointCrashPoints: run
// counts the rotations before it was written (its segment's turn), end is
// where that segment's records ended once it was durable.
type rotOp struct {
	logOp
	run int
}

// rotSnap is the ledger's files as a crash at one point would leave
// them: the bbolt file, both log segments (by logPaths index), how many
// changes were acknowledged, and which segment and run took the last ones.
type rotSnap struct {
	name       string
	bolt       []byte
	segs       [2][]byte
	n          int
	active     int
	run        int
	appliedRun int // the changes of this run and before are in the bbolt file
}

// TestCheckpointCrashPoints drives a ledger through checkpoints that
// rotate the log (each segment is started over twice, with older records
// left behind it), one of them failing after its rotation, and copies
// the files at every crash point of a checkpoint: before it, right after
// the rotation, after changes were written to the new segment while the
// old one was not in bbolt yet, after the apply, and after changes
// following it. Each copy must reopen with exactly the acknowledged
// changes — also with the active segment cut short (a torn append),
// with a segment that holds no needed change missing, and it must be
// refused when the segment whose changes bbolt lacks is missing while
// the newer one has changes (a gap: fail closed, never a silent loss).
func TestCheckpointCrashPoints(t *testing.T) {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "ledger.db"), checkpointEvery: time.Hour}
	h.open()
	t.Cleanup(h.checkAndClose)
	ctx := context.Background()
	segNames := logPaths(h.path)
	var ops []rotOp
	var snaps []rotSnap
	run, appliedRun := 0, -1
	segOfRun := map[int]int{} // run → the segment its changes went to
	active := func() int {
		h.l.wal.io.Lock()
		defer h.l.wal.io.Unlock()
		for i, n := range segNames {
			if h.l.wal.f.Name() == n {
				return i
			}
		}
		t.Fatalf("active segment %s is neither of %v", h.l.wal.f.Name(), segNames)
		return -1
	}
	end := func() int64 {
		h.l.wal.io.Lock()
		defer h.l.wal.io.Unlock()
		return h.l.wal.off
	}
	snapshot := func(name string) {
		s := rotSnap{name: name, n: len(ops), active: active(), run: run, appliedRun: appliedRun}
		var err error
		if s.bolt, err = os.ReadFile(h.path); err != nil {
			t.Fatal(err)
		}
		for i, n := range segNames {
			if s.segs[i], err = os.ReadFile(n); err != nil {
				t.Fatal(err)
			}
		}
		snaps = append(snaps, s)
	}
	next := 0
	// step makes one charge and commits, refunds or leaves it pending.
	step := func() {
		i := next
		next++
		r, err := h.l.Charge(ctx, budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.1), Query: fmt.Sprint("SELECT ", i)}, eps(1000))
		if err != nil {
			t.Fatal(err)
		}
		id := r.(*Reservation).ID
		segOfRun[run] = active()
		ops = append(ops, rotOp{logOp{kind: logReserve, id: id, end: end()}, run})
		switch i % 3 {
		case 0:
			key := fmt.Sprint("k", i)
			if _, err := r.Commit(key, []byte(fmt.Sprint("release ", i))); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, rotOp{logOp{kind: logCommit, id: id, key: key, end: end()}, run})
		case 1:
			if err := r.Refund(); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, rotOp{logOp{kind: logRefund, id: id, end: end()}, run})
		}
	}
	failApply := false
	h.l.ckMu.Lock()
	h.l.ckHook = func(stage string) error {
		switch stage {
		case "rotated":
			run++
			snapshot("rotated")
			for range 4 {
				step()
			}
			snapshot("rotated, then changes in the new segment")
		case "apply":
			if failApply {
				failApply = false
				return errors.New("injected failure of the apply")
			}
		case "applied":
			appliedRun = run - 1
			snapshot("applied")
			step()
			snapshot("applied, then a change")
		}
		return nil
	}
	h.l.ckMu.Unlock()

	for round := range 6 {
		for range 7 {
			step()
		}
		snapshot(fmt.Sprint("before checkpoint ", round))
		failApply = round == 2
		err := h.l.checkpoint()
		if round == 2 {
			if err == nil {
				t.Fatal("the checkpoint with an injected failure succeeded")
			}
			// The retired segment holds changes bbolt lacks: the next
			// checkpoint must apply them before it may start that
			// segment over.
			for range 3 {
				step()
			}
			snapshot("after the failed checkpoint")
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if run < 5 {
		t.Fatalf("%d rotations, want each segment started over at least twice", run)
	}
	h.l.ckMu.Lock()
	h.l.ckHook = nil
	h.l.ckMu.Unlock()

	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "ledger-rot-"); err == nil {
		dir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	opens, checked, refused := 0, 0, 0
	for si, s := range snaps {
		// A torn append can only be in the active segment, after the
		// last acknowledged change of the current run: cut there at
		// every frame end (and inside the frames around it), and at
		// every byte for one segment started over with older records
		// behind.
		cuts := []int64{-1} // -1: as written
		var runEnds []int64
		for _, op := range ops[:s.n] {
			if op.run == s.run {
				runEnds = append(runEnds, op.end)
			}
		}
		if len(runEnds) > 0 {
			hi := runEnds[len(runEnds)-1]
			if s.run >= 3 && s.name == "rotated, then changes in the new segment" && !sweptOnce(&opens) {
				for c := int64(logHeaderSize); c <= hi; c++ {
					cuts = append(cuts, c)
				}
			} else {
				cuts = append(cuts, logHeaderSize, logHeaderSize+5)
				for _, e := range runEnds {
					cuts = append(cuts, e-1, e, e+3)
				}
			}
		}
		for _, cut := range cuts {
			segs := s.segs
			want := ops[:s.n]
			if cut >= 0 {
				b := append([]byte(nil), segs[s.active]...)
				if cut < int64(len(b)) {
					clear(b[cut:]) // the zeros ahead of the records, as a torn append leaves them
				}
				segs[s.active] = b
				k := 0
				for k < len(want) && (want[k].run != s.run || want[k].end <= cut) {
					k++
				}
				want = want[:k]
			}
			name := fmt.Sprintf("snapshot %d (%s) cut %d", si, s.name, cut)
			path := filepath.Join(dir, fmt.Sprint(si, "-", cut, ".db"))
			checkRecovers(t, name, path, s.bolt, segs, want)
			checked++
			if t.Failed() {
				return
			}
		}
		// A segment without a change above log_applied may go missing
		// (a crash before it was created, or a lost unlink). Missing the
		// older of two segments that both hold such changes leaves a
		// gap, which Open must refuse.
		var needed [2]bool
		oldest := -1
		for _, op := range ops[:s.n] {
			if op.run > s.appliedRun {
				needed[segOfRun[op.run]] = true
				if oldest < 0 {
					oldest = segOfRun[op.run]
				}
			}
		}
		for i := range 2 {
			segs := s.segs
			segs[i] = nil
			name := fmt.Sprintf("snapshot %d (%s) without segment %d", si, s.name, i)
			path := filepath.Join(dir, fmt.Sprint(si, "-missing", i, ".db"))
			switch {
			case !needed[i]:
				checkRecovers(t, name, path, s.bolt, segs, ops[:s.n])
			case i == oldest && needed[1-i]:
				checkRefused(t, name, path, s.bolt, segs)
				refused++
			}
		}
	}
	t.Logf("%d snapshots, %d changes, %d crash states recovered, %d refused", len(snaps), len(ops), checked, refused)
	if refused == 0 {
		t.Error("no crash state had a gap to refuse")
	}
}

// checkRefused writes a crash's files at path (a nil segment: missing)
// and requires Open to refuse them as damaged.
func checkRefused(t *testing.T, name, path string, boltFile []byte, segs [2][]byte) {
	t.Helper()
	writeCrash(t, path, boltFile, segs)
	defer removeCrash(path)
	l, err := Open(path, Options{Now: func() time.Time { return testClock }, Replica: testReplica, checkpointEvery: time.Hour})
	if err == nil {
		_ = l.Close()
		t.Errorf("%s: Open succeeded, want ErrDamaged (changes missing)", name)
		return
	}
	if !errors.Is(err, ErrDamaged) {
		t.Errorf("%s: Open: %v, want ErrDamaged", name, err)
	}
}

func writeCrash(t *testing.T, path string, boltFile []byte, segs [2][]byte) {
	t.Helper()
	if err := os.WriteFile(path, boltFile, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, seg := range logPaths(path) {
		if segs[i] == nil {
			continue
		}
		if err := os.WriteFile(seg, segs[i], 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func removeCrash(path string) {
	os.Remove(path)
	for _, seg := range logPaths(path) {
		os.Remove(seg)
	}
}

func sweptOnce(n *int) bool { *n++; return *n > 1 }

// checkRecovers writes a crash's files at path (a nil segment: missing),
// opens the ledger and requires exactly the changes want: the spent
// total, the pending reservations and the stored releases, the
// invariants, and a new change after recovery surviving a reopen.
func checkRecovers(t *testing.T, name, path string, boltFile []byte, segs [2][]byte, want []rotOp) {
	t.Helper()
	writeCrash(t, path, boltFile, segs)
	defer removeCrash(path)
	l, err := Open(path, Options{Now: func() time.Time { return testClock }, Replica: testReplica, checkpointEvery: time.Hour})
	if err != nil {
		t.Errorf("%s: Open: %v", name, err)
		return
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}()
	base := make([]logOp, len(want))
	for i, op := range want {
		base[i] = op.logOp
	}
	spent, pending, releases := expectedState(base)
	if got := fileSpent(t, l); got.Cmp(spent) != 0 {
		t.Errorf("%s: spent %s in the file, want %s (%d changes)", name, got.RatString(), spent.RatString(), len(want))
	}
	p, err := l.Pending()
	if err != nil || len(p) != len(pending) {
		t.Errorf("%s: %d pending (%v), want %d", name, len(p), err, len(pending))
	}
	for _, e := range p {
		if !pending[e.ID] {
			t.Errorf("%s: reservation %d pending, want it settled", name, e.ID)
		}
	}
	n := 0
	if err := l.db.View(func(tx *bolt.Tx) error {
		return forEachRelease(tx, func(k, _ []byte) error {
			n++
			if !releases[string(k)] {
				t.Errorf("%s: release %s stored, want it absent", name, k)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(releases) {
		t.Errorf("%s: %d releases stored, want %d", name, n, len(releases))
	}
	if err := l.Check(); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	if _, err := l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1000)); err != nil {
		t.Errorf("%s: charge after recovery: %v", name, err)
	}
}

// TestLogWritesDuringCheckpointApply: while a checkpoint waits for its
// bbolt transaction (here: for bbolt's writer lock, held by the test),
// charges are still logged and acknowledged — the log was rotated, and
// no lock of the log is held across the bbolt commit — and all of them
// are in the file after the checkpoint and a reopen.
func TestLogWritesDuringCheckpointApply(t *testing.T) {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "ledger.db"), checkpointEvery: time.Hour}
	h.open()
	t.Cleanup(h.checkAndClose)
	ctx := context.Background()
	for range 20 {
		if _, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(100)); err != nil {
			t.Fatal(err)
		}
	}
	applying := make(chan struct{})
	h.l.ckMu.Lock()
	h.l.ckHook = func(stage string) error {
		if stage == "apply" && applying != nil {
			close(applying)
			applying = nil
		}
		return nil
	}
	wait := applying
	h.l.ckMu.Unlock()
	tx, err := h.l.db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.l.checkpoint() }()
	<-wait
	charged := make(chan error, 1)
	go func() {
		for range 20 {
			if _, err := h.l.Reserve(ctx, "ann", "census", eps(0.1), eps(100)); err != nil {
				charged <- err
				return
			}
		}
		charged <- h.l.Sync()
	}()
	select {
	case err := <-charged:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		_ = tx.Rollback() // lets the checkpoint and Close end
		t.Fatal("charges wait for the checkpoint's bbolt transaction")
	}
	select {
	case err := <-done:
		t.Fatalf("the checkpoint ended (%v) while bbolt's writer lock was held", err)
	default:
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.l.ckMu.Lock()
	h.l.ckHook = nil
	h.l.ckMu.Unlock()
	h.reopen()
	if got := h.spentExact("ann", "census"); got.eps.Cmp(big.NewRat(4, 1)) != 0 {
		t.Fatalf("spent %s after the checkpoint and a reopen, want 4", got.eps.RatString())
	}
}

// TestOpenUpgradesVersion4: a version 4 ledger (one log segment) whose
// log holds changes the bbolt file lacks — a crash before a checkpoint —
// opens: the changes are replayed, the file is marked version 5 and gets
// the second segment, and later changes and checkpoints keep them all.
func TestOpenUpgradesVersion4(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.l.ckMu.Lock() // no checkpoint: the changes stay in the first segment
	for i := range 4 {
		r, err := h.l.Reserve(ctx, "ann", "census", eps(0.25), eps(10))
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := r.Commit(fmt.Sprint("k", i), []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
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

	path := filepath.Join(t.TempDir(), "v4.db")
	if err := os.WriteFile(path, boltFile, 0o600); err != nil {
		t.Fatal(err)
	}
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte(formatVersion4))
	})
	if err := os.WriteFile(logPath(path), logFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logPaths(path)[1]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("second segment before the upgrade: %v", err)
	}
	c := harnessAt(t, path)
	if err := c.l.db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != formatVersion {
			t.Errorf("version %q after opening a version 4 file, want %q", v, formatVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logPaths(path)[1]); err != nil {
		t.Errorf("no second segment after the upgrade: %v", err)
	}
	if got := c.spentExact("ann", "census"); got.eps.Cmp(big.NewRat(1, 1)) != 0 {
		t.Fatalf("spent %s after replaying the version 4 log, want 1", got.eps.RatString())
	}
	// Two checkpoints: both segments are written and started over.
	for range 2 {
		if _, err := c.l.Reserve(ctx, "ann", "census", eps(0.25), eps(10)); err != nil {
			t.Fatal(err)
		}
		if err := c.l.checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	c.reopen()
	if got := c.spentExact("ann", "census"); got.eps.Cmp(big.NewRat(3, 2)) != 0 {
		t.Fatalf("spent %s after the upgrade, want 3/2", got.eps.RatString())
	}
	for _, k := range []string{"k0", "k2"} {
		if _, ok, err := c.l.Lookup(k); err != nil || !ok {
			t.Errorf("release %s after the upgrade: %v, %v", k, ok, err)
		}
	}
}

// TestStaleKickRunsNoCheckpoint: the log writer asks for a checkpoint
// (kick) when the log is large; one sent while the last checkpoint ran
// finds the log small again once it is read, and must not run a tiny
// checkpoint of the few changes logged since (a bbolt commit, two
// fsyncs, for a handful of changes).
func TestStaleKickRunsNoCheckpoint(t *testing.T) {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "ledger.db"), checkpointEvery: time.Hour}
	h.open()
	t.Cleanup(h.checkAndClose)
	if _, err := h.l.Reserve(context.Background(), "ann", "census", eps(0.1), eps(1)); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 10)
	h.l.ckMu.Lock()
	h.l.ckHook = func(stage string) error {
		ran <- stage
		return nil
	}
	h.l.ckMu.Unlock()
	h.l.wal.kick <- struct{}{}
	select {
	case s := <-ran:
		t.Fatalf("a kick with one change in the log ran a checkpoint (%s)", s)
	case <-time.After(200 * time.Millisecond):
	}
	h.l.ckMu.Lock()
	h.l.ckHook = nil
	h.l.ckMu.Unlock()
}
