package ledger

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// TestLeaseMixedKillAndPowerLoss: leases carved across checkpoints
// (lease stored in bbolt, carved/refunded in later batches), refunds,
// Overlap charges, then a kill (whole files) and a power loss (active
// segment cut at its last fdatasync) after a rotation.
func TestLeaseMixedKillAndPowerLoss(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	ctx := context.Background()
	answered := new(big.Rat)
	for i := range 40 {
		cost := 0.3
		if i%7 == 6 {
			cost = 1.5 // does not fit: ends the lease, takes a new one
		}
		r, err := h.l.Charge(ctx, budget.Charge{User: "ann", Dataset: "census", Cost: eps(cost), Query: fmt.Sprint("SELECT ", i), Overlap: i%3 == 0}, eps(100))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := budget.ExactDecimal(cost)
		switch i % 5 {
		case 0:
			if err := r.Refund(); err != nil {
				t.Fatal(err)
			}
		case 1:
			answered.Add(answered, c) // pending
		default:
			if _, err := r.CommitDeferred(fmt.Sprint("q", i), []byte("x")); err != nil {
				t.Fatal(err)
			}
			answered.Add(answered, c)
		}
		if i%4 == 3 {
			if err := h.l.Check(); err != nil {
				t.Fatalf("after %d: %v", i, err)
			}
		}
	}
	h.l.ckMu.Lock()
	if err := h.l.wal.syncThrough(h.l.wal.next - 1); err != nil {
		t.Fatal(err)
	}
	h.l.wal.io.Lock()
	synced := h.l.wal.syncedOff
	h.l.wal.io.Unlock()
	dir := t.TempDir()
	kill := snapshot(t, h, dir, "kill", -1)
	power := snapshot(t, h, dir, "power", synced)
	h.l.ckMu.Unlock()
	used := h.spentExact("ann", "census").eps
	if used.Cmp(answered) != 0 {
		t.Errorf("used %s, answered %s", used.RatString(), answered.RatString())
	}
	for _, p := range []string{kill, power} {
		l, err := Open(p, Options{Now: func() time.Time { return testClock }})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got := fileSpent(t, l)
		if got.Cmp(answered) < 0 {
			t.Errorf("%s: spent %s < answered %s", p, got.RatString(), answered.RatString())
		}
		if err := l.Check(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		pend, _ := l.Pending()
		t.Logf("%s: spent %s answered %s pending %d", filepath.Base(p), got.RatString(), answered.RatString(), len(pend))
		d, err := l.Export()
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		l2, err := Open(filepath.Join(dir, filepath.Base(p)+"-imp.db"), Options{Now: func() time.Time { return testClock }, Lease: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		if err := l2.Import(d); err != nil {
			t.Errorf("import: %v", err)
		}
		if err := l2.Check(); err != nil {
			t.Errorf("import check: %v", err)
		}
		l2.Close()
	}
}

// TestLeaseCloseRace: charges race Close; after reopening, spent
// is exactly what was charged and not refunded (no lease rest left), and
// Check passes.
func TestLeaseCloseRace(t *testing.T) {
	for round := range 20 {
		h := newHarnessLease(t, 0.05)
		ctx := context.Background()
		done := make(chan *big.Rat, 8)
		for g := range 8 {
			go func() {
				sum := new(big.Rat)
				for i := 0; ; i++ {
					r, err := h.l.Charge(ctx, budget.Charge{User: "ann", Dataset: fmt.Sprint("d", g%3), Cost: eps(0.01), Query: "q", Overlap: i%2 == 0}, eps(1000))
					if err != nil {
						break
					}
					sum.Add(sum, big.NewRat(1, 100))
					if i%3 == 0 {
						if r.Refund() == nil {
							sum.Sub(sum, big.NewRat(1, 100))
						}
					} else {
						_, _ = r.CommitDeferred(fmt.Sprint(g, "-", i), []byte("x"))
					}
				}
				done <- sum
			}()
		}
		time.Sleep(time.Duration(1+round%5) * time.Millisecond)
		if err := h.l.Close(); err != nil {
			t.Fatal(err)
		}
		total := new(big.Rat)
		for range 8 {
			total.Add(total, <-done)
		}
		h.open()
		got := new(big.Rat)
		for d := range 3 {
			got.Add(got, h.spentExact("ann", fmt.Sprint("d", d)).eps)
		}
		if got.Cmp(total) != 0 {
			t.Errorf("round %d: spent %s, charged %s", round, got.RatString(), total.RatString())
		}
		for _, e := range auditAll(t, h.l, budget.AuditFilter{}) {
			if strings.HasPrefix(e.Query, LeaseAuditQuery) {
				t.Errorf("round %d: lease left after clean Close: %+v", round, e)
			}
		}
	}
}

// TestLeaseLookupWaitsForSync: with leases, Lookup serves a release only
// once an fdatasync covered its commit record (query.go: "Only durable
// releases are served"): a release shown to another client must not be
// taken back by a power loss.
func TestLeaseLookupWaitsForSync(t *testing.T) {
	h := newHarnessLease(t, 0.1)
	if err := leaseCharge(t, h.l, 0.1, 10, "warm"); err != nil { // takes the lease (synced)
		t.Fatal(err)
	}
	if err := h.l.Sync(); err != nil {
		t.Fatal(err)
	}
	h.l.ckMu.Lock()
	defer h.l.ckMu.Unlock()
	before := h.l.wal.syncs.Load()
	if err := leaseCharge(t, h.l, 0.1, 10, "k"); err != nil {
		t.Fatal(err)
	}
	out, ok, err := h.l.Lookup("k")
	if err != nil || !ok {
		t.Fatalf("lookup: %v %v", ok, err)
	}
	h.l.wal.io.Lock()
	synced, end := h.l.wal.syncedOff, h.l.wal.off
	h.l.wal.io.Unlock()
	t.Logf("served %q with %d fdatasyncs since, log synced to %d of %d", out, h.l.wal.syncs.Load()-before, synced, end)
	if synced < end {
		t.Errorf("Lookup served a release whose commit is not fdatasynced (synced %d < written %d): a power loss forgets it and redraws", synced, end)
	}
}
