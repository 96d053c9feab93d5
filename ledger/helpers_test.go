package ledger

import (
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// testClock is the fixed time every test ledger records as charge time.
var testClock = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// testReplica names the test process in pending reservations and the audit.
const testReplica = "replica-a"

// harness owns the ledger of one test. Like bbolt's btesting, it checks the
// ledger's invariants when the test ends, and before every reopen.
type harness struct {
	t    *testing.T
	path string
	l    *Ledger
	// settle is Options.SettleDelay (0: the default).
	settle time.Duration
	// checkpointEvery is Options.checkpointEvery (0: the default).
	checkpointEvery time.Duration
	// lease is Options.Lease (0: no leases).
	lease float64
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessLease(t, 0)
}

// newHarnessLease is newHarness with budget leases of lease (lease.go).
func newHarnessLease(t *testing.T, lease float64) *harness {
	t.Helper()
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "ledger.db"), lease: lease}
	h.open()
	t.Cleanup(h.checkAndClose)
	return h
}

// harnessAt opens an existing file (written by a crashed child process).
func harnessAt(t *testing.T, path string) *harness {
	t.Helper()
	h := &harness{t: t, path: path}
	h.open()
	t.Cleanup(h.checkAndClose)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	l, err := Open(h.path, Options{LockTimeout: time.Second, Now: func() time.Time { return testClock }, SettleDelay: h.settle, Replica: testReplica, checkpointEvery: h.checkpointEvery, Lease: h.lease})
	if err != nil {
		h.t.Fatalf("Open: %v", err)
	}
	h.l = l
}

func (h *harness) checkAndClose() {
	h.t.Helper()
	if h.l == nil {
		return
	}
	if err := h.l.Check(); err != nil {
		h.t.Errorf("Check: %v", err)
	}
	if err := h.l.Close(); err != nil {
		h.t.Errorf("Close: %v", err)
	}
	h.l = nil
}

// reopen closes and reopens the file: what a restart sees.
func (h *harness) reopen() {
	h.t.Helper()
	h.checkAndClose()
	h.open()
}

// spentExact reads an account's spent total without going through float64.
func (h *harness) spentExact(user, dataset string) exact {
	h.t.Helper()
	a, err := h.l.account(user, dataset)
	if err != nil {
		h.t.Fatalf("account: %v", err)
	}
	return a.spent
}

// rat parses a rational written by hand in a test ("3/10").
func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad rational %q", s)
	}
	return r
}

func eps(e float64) policies.Budget { return policies.Budget{Epsilon: e} }
