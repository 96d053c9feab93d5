package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// charge is one Charge of ε cost by ann on census, limit ε lim, committed
// with a deferred record under key (none when key is empty).
func leaseCharge(t *testing.T, l *Ledger, cost, lim float64, key string) error {
	t.Helper()
	r, err := l.Charge(context.Background(), budget.Charge{User: "ann", Dataset: "census", Cost: eps(cost), Query: "SELECT " + key}, eps(lim))
	if err != nil {
		return err
	}
	if key == "" {
		return nil
	}
	_, err = r.CommitDeferred(key, []byte("release "+key))
	return err
}

// TestLeaseFewerSyncsSameLimit: with leases, a hundred charges of 0.01
// against a limit of 1 take a handful of fdatasyncs instead of a hundred,
// the limit is still met exactly (the hundred-and-first is refused), and
// what the budget views show is what was used, not what is leased.
func TestLeaseFewerSyncsSameLimit(t *testing.T) {
	for _, lease := range []float64{0, 0.25} {
		t.Run(fmt.Sprint("lease=", lease), func(t *testing.T) {
			h := newHarnessLease(t, lease)
			before := h.l.wal.syncs.Load()
			for i := range 100 {
				if err := leaseCharge(t, h.l, 0.01, 1, fmt.Sprint("q", i)); err != nil {
					t.Fatalf("charge %d: %v", i, err)
				}
				if got, want := h.spentExact("ann", "census").eps, big.NewRat(int64(i+1), 100); got.Cmp(want) != 0 {
					t.Fatalf("after %d charges the account shows %s spent, want %s", i+1, got.RatString(), want.RatString())
				}
			}
			syncs := h.l.wal.syncs.Load() - before
			err := leaseCharge(t, h.l, 0.01, 1, "over")
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code != sqlerr.BudgetExhausted {
				t.Fatalf("charge 101: %v, want budget exhausted", err)
			}
			if lease == 0 && syncs < 100 {
				t.Errorf("%d fdatasyncs for 100 charges without leases, want one each", syncs)
			}
			// 0.01 + 0.25 per lease: 26 charges each, 4 leases.
			if lease > 0 && syncs > 5 {
				t.Errorf("%d fdatasyncs for 100 charges with leases of 0.25, want at most 5", syncs)
			}
			left, err := h.l.Left("ann", "census", eps(1))
			if err != nil || left.Epsilon != 0 {
				t.Errorf("left %v (%v), want 0", left, err)
			}
			h.reopen()
			if got := h.spentExact("ann", "census").eps; got.Cmp(big.NewRat(1, 1)) != 0 {
				t.Errorf("after a clean reopen %s spent, want 1", got.RatString())
			}
			if p, err := h.l.Pending(); err != nil || len(p) != 0 {
				t.Errorf("pending after a clean reopen: %+v (%v), want none", p, err)
			}
		})
	}
}

// TestLeaseReturnedAtClose: a clean Close refunds the unused rest of the
// lease (carved across checkpoints: Check checkpoints); the reopened
// ledger holds exactly what was charged, every charge has its audit entry
// and its release, and Check passes.
func TestLeaseReturnedAtClose(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	for i := range 7 {
		if err := leaseCharge(t, h.l, 0.3, 10, fmt.Sprint("q", i)); err != nil {
			t.Fatal(err)
		}
		// The lease's pending record reaches the file, is carved there
		// by the next checkpoint, and still checks out.
		if i < 6 {
			if err := h.l.Check(); err != nil {
				t.Fatalf("after charge %d: %v", i, err)
			}
		}
	}
	// The last carve and the lease's return are in one checkpoint (no
	// Check before Close), the lease's record in the file from before.
	if err := h.l.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if got, want := h.spentExact("ann", "census").eps, big.NewRat(21, 10); got.Cmp(want) != 0 {
		t.Errorf("spent %s, want 21/10", got.RatString())
	}
	if n := len(auditAll(t, h.l, budget.AuditFilter{})); n != 7 {
		t.Fatalf("audit: %d entries, want 7", n)
	}
	for i := range 7 {
		if _, ok, err := h.l.Lookup(fmt.Sprint("q", i)); !ok || err != nil {
			t.Errorf("release q%d: %v %v", i, ok, err)
		}
	}
	all, err := h.l.All()
	if err != nil || len(all) != 1 || all[0].Queries != 7 {
		t.Errorf("accounts %+v (%v), want one with 7 queries", all, err)
	}
}

// snapshot copies the ledger's files as they are now (the bbolt file and
// the log's two segments) to dir under name, cutting the active segment at
// cut bytes (-1: whole) and leaving zeros after it, as a power loss leaves
// the part of a file no fdatasync covered.
func snapshot(t *testing.T, h *harness, dir, name string, cut int64) string {
	t.Helper()
	path := filepath.Join(dir, name+".db")
	copyFile := func(from, to string, cut int64) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if cut >= 0 {
			b = append(b[:cut:cut], make([]byte, int64(len(b))-cut)...)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(h.path, path, -1)
	segs, to := logPaths(h.path), logPaths(path)
	active := h.l.wal.f.Name()
	for i := range segs {
		c := int64(-1)
		if segs[i] == active {
			c = cut
		}
		copyFile(segs[i], to[i], c)
	}
	return path
}

// TestLeaseKillKeepsRestCharged: a process killed while holding a lease
// (its files as they are, every write in them) recovers exactly every
// charge, its audit entry and its release; the lease's unused rest stays
// charged, as a committed charge with an audit entry naming the replica,
// so that the audit history adds up to the spent total.
func TestLeaseKillKeepsRestCharged(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	h.l.ckMu.Lock() // no checkpoint: everything is in the log
	for i := range 5 {
		if err := leaseCharge(t, h.l, 0.2, 10, fmt.Sprint("q", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The deferred commits were not written yet; a written charge is
	// enough for the budget.
	if err := h.l.wal.syncThrough(h.l.wal.next - 1); err != nil {
		t.Fatal(err)
	}
	path := snapshot(t, h, t.TempDir(), "kill", -1)
	h.l.ckMu.Unlock()

	l, err := Open(path, Options{Now: func() time.Time { return testClock }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Replayed, the log is cut to its headers: nothing left past the
	// replayed records can join a later run's chain.
	for _, seg := range logPaths(path) {
		if fi, err := os.Stat(seg); err != nil || fi.Size() != logHeaderSize {
			t.Errorf("%s after Open: %v, %v; want %d bytes", seg, fi.Size(), err, logHeaderSize)
		}
	}
	// 5 × 0.2 used; the lease was 0.2 + 1 (0.1 × 10), so 0.2 + 1 − 0.2 =
	// 1 is left of it after the first charge, 0.2 after all five.
	a, err := l.account("ann", "census")
	if err != nil {
		t.Fatal(err)
	}
	if want := big.NewRat(12, 10); a.spent.eps.Cmp(want) != 0 {
		t.Errorf("spent %s after the kill, want 6/5 (1 used + 1/5 of the lease unused)", a.spent.eps.RatString())
	}
	if !a.committed.equal(a.spent) {
		t.Errorf("committed %s of %s spent: the lease's rest should be settled", a.committed.eps.RatString(), a.spent.eps.RatString())
	}
	if p, err := l.Pending(); err != nil || len(p) != 0 {
		t.Errorf("pending %+v (%v), want none", p, err)
	}
	var leases []budget.AuditEntry
	entries := auditAll(t, l, budget.AuditFilter{})
	for _, e := range entries {
		if strings.HasPrefix(e.Query, LeaseAuditQuery) {
			leases = append(leases, e)
		}
	}
	if len(entries) != 6 {
		t.Errorf("audit: %d entries, want 5 charges and the lease", len(entries))
	}
	if len(leases) != 1 || leases[0].Cost.Epsilon != 0.2 || leases[0].Replica != testReplica || leases[0].User != "ann" {
		t.Errorf("lease audit entries %+v, want ann's 0.2 left by %s", leases, testReplica)
	}
	for i := range 5 {
		if _, ok, err := l.Lookup(fmt.Sprint("q", i)); !ok || err != nil {
			t.Errorf("release q%d: %v %v", i, ok, err)
		}
	}
	if err := l.Check(); err != nil {
		t.Error(err)
	}
}

// TestLeasePowerLossCutAtEveryByte: a power loss keeps what an fdatasync
// covered and may cut the log anywhere after it. For every such cut, the
// recovered ledger charges at least every answer that could have left
// (each charge that returned, less those refunded), at most what the
// process held (used + leased), and passes Check.
func TestLeasePowerLossCutAtEveryByte(t *testing.T) {
	h := newHarnessLease(t, 0.05)
	h.l.ckMu.Lock()
	ctx := context.Background()
	answered := new(big.Rat)
	for i := range 23 {
		r, err := h.l.Charge(ctx, budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.1), Query: fmt.Sprint("SELECT ", i)}, eps(10))
		if err != nil {
			t.Fatal(err)
		}
		// Refunds (fdatasynced) only in the first half: the second
		// spans three leases written with no fdatasync after the last.
		switch k := i % 4; {
		case k == 0 || k == 1 || k == 2 && i >= 12:
			if _, err := r.CommitDeferred(fmt.Sprint("q", i), []byte("x")); err != nil {
				t.Fatal(err)
			}
			answered.Add(answered, big.NewRat(1, 10))
		case k == 2:
			if err := r.Refund(); err != nil {
				t.Fatal(err)
			}
		default:
			answered.Add(answered, big.NewRat(1, 10)) // its query ran: charged, pending
		}
	}
	if err := h.l.wal.syncThrough(h.l.wal.next - 1); err != nil {
		t.Fatal(err)
	}
	held := h.l.state.accounts[string(accountKey("ann", "census"))].spent
	h.l.wal.io.Lock()
	synced, end := h.l.wal.syncedOff, h.l.wal.off
	h.l.wal.io.Unlock()
	if end-synced < 100 {
		t.Fatalf("only %d bytes after the last fdatasync: the test cuts nothing", end-synced)
	}
	dir := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "ledger-lease-"); err == nil {
		dir = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	// Every third byte (each open takes milliseconds), and the end.
	var cuts []int64
	for cut := synced; cut < end; cut += 3 {
		cuts = append(cuts, cut)
	}
	cuts = append(cuts, end)
	var snaps []string
	for _, cut := range cuts {
		snaps = append(snaps, snapshot(t, h, dir, fmt.Sprint("cut", cut), cut))
	}
	h.l.ckMu.Unlock()
	t.Logf("%d cuts between the last fdatasync (%d) and the end (%d); answered %s, held %s",
		len(snaps), synced, end, answered.RatString(), held.eps.RatString())
	for i, path := range snaps {
		cut := cuts[i]
		l, err := Open(path, Options{Now: func() time.Time { return testClock }})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got := fileSpent(t, l)
		if got.Cmp(answered) < 0 || got.Cmp(held.eps) > 0 {
			t.Errorf("cut at %d: %s spent, want between %s (answered) and %s (held)", cut, got.RatString(), answered.RatString(), held.eps.RatString())
		}
		if err := l.Check(); err != nil {
			t.Errorf("cut at %d: %v", cut, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		segs := logPaths(path)
		for _, p := range append([]string{path}, segs[:]...) {
			_ = os.Remove(p)
		}
		if t.Failed() {
			return
		}
	}
}

// TestLeaseConcurrentNeverOverspends: 32 goroutines charging 0.01 against
// a limit of 1 with leases of a tenth get exactly 100 charges through,
// whatever the interleaving, and the ledger holds exactly 1 after Close.
func TestLeaseConcurrentNeverOverspends(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				err := leaseCharge(t, h.l, 0.01, 1, fmt.Sprint("g", g, "-", i))
				var se *sqlerr.Error
				if errors.As(err, &se) && se.Code == sqlerr.BudgetExhausted {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 100 {
		t.Errorf("%d charges of 0.01 passed a limit of 1, want 100", ok.Load())
	}
	h.reopen()
	if got := h.spentExact("ann", "census").eps; got.Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("spent %s, want 1", got.RatString())
	}
}

// TestLeaseRefundAndLargeCharges: a refund returns the charge, not the
// lease; a charge larger than the lease's rest takes a new lease and
// returns the old one's rest; a charge that only fits without the lease
// still fits (the lease never takes room from the limit).
func TestLeaseRefundAndLargeCharges(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	ctx := context.Background()
	r, err := h.l.Reserve(ctx, "ann", "census", eps(0.5), eps(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refund(); err != nil {
		t.Fatal(err)
	}
	if got := h.spentExact("ann", "census").eps; got.Sign() != 0 {
		t.Errorf("spent %s after a refund, want 0", got.RatString())
	}
	// 1.9 of 2: the lease can add only 0.1 more.
	if err := leaseCharge(t, h.l, 1.9, 2, "big"); err != nil {
		t.Fatal(err)
	}
	if err := leaseCharge(t, h.l, 0.1, 2, "last"); err != nil {
		t.Fatalf("the charge that exactly fills the limit: %v", err)
	}
	if err := leaseCharge(t, h.l, 0.01, 2, "over"); err == nil {
		t.Fatal("a charge past the limit passed")
	}
	h.reopen()
	if got := h.spentExact("ann", "census").eps; got.Cmp(big.NewRat(2, 1)) != 0 {
		t.Errorf("spent %s, want 2", got.RatString())
	}
}

// TestLeaseDumpVersion: a dump taken while a lease is held says so in its
// version, which binaries older than leases refuse (they would count the
// lease as a query's reservation); a dump without one keeps version 1,
// and a version 1 dump that claims a lease is refused.
func TestLeaseDumpVersion(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	if err := leaseCharge(t, h.l, 0.3, 10, "q"); err != nil {
		t.Fatal(err)
	}
	d, err := h.l.Export()
	if err != nil {
		t.Fatal(err)
	}
	leases := 0
	for _, p := range d.Pending {
		if p.Lease {
			leases++
		}
	}
	if leases != 1 || d.Version != DumpLeaseVersion {
		t.Fatalf("export with a live lease: %d leases, version %d; want 1 lease, version %d", leases, d.Version, DumpLeaseVersion)
	}
	if err := d.Check(); err != nil {
		t.Errorf("Check of the export: %v", err)
	}
	d.Version = DumpVersion
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), "budget lease") {
		t.Errorf("Check of a version 1 dump holding a lease = %v, want a refusal naming the lease", err)
	}

	// Returned at Close: the next export has no lease and version 1.
	if err := h.l.Close(); err != nil {
		t.Fatal(err)
	}
	h.open()
	if d, err = h.l.Export(); err != nil {
		t.Fatal(err)
	}
	if d.Version != DumpVersion || len(d.Pending) != 0 {
		t.Errorf("export after the lease was returned: version %d, %d pending; want version %d, none", d.Version, len(d.Pending), DumpVersion)
	}
}
