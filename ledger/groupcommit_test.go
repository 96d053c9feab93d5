package ledger

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestGroupCommitMergesConcurrentCharges: 64 concurrent reservations and
// commits are committed in fewer write transactions than operations, and
// the accounting stays exact. With a budget for 40 of them, exactly 40
// succeed even though failing members force their group to be re-run.
//
// Grouping depends on the goroutines meeting at the writer, which a loaded
// machine can prevent (they then trickle in one by one); so the exactness
// is required of every attempt and the grouping of one of five.
func TestGroupCommitMergesConcurrentCharges(t *testing.T) {
	const attempts = 5
	for a := 1; a <= attempts; a++ {
		txs, ops := groupCommitAttempt(t)
		t.Logf("attempt %d: %d log writes for %d operations", a, txs, ops)
		if txs < int64(ops) {
			return
		}
	}
	t.Fatalf("nothing was grouped in %d attempts", attempts)
}

// groupCommitAttempt runs the 64 charges on a fresh ledger, checks the
// accounting, and returns the write transactions it took and the number of
// operations (reserves and commits) that one-by-one would take.
func groupCommitAttempt(t *testing.T) (txs int64, ops int) {
	t.Helper()
	h := newHarness(t)
	limit := policies.Budget{Epsilon: 0.4}
	const n = 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := h.l.Reserve(context.Background(), "u", "d", policies.Budget{Epsilon: 0.01}, limit)
			if err != nil {
				return
			}
			if _, err := r.Commit(fmt.Sprintf("k%d", i), []byte("x")); err != nil {
				t.Errorf("commit: %v", err)
				return
			}
			mu.Lock()
			ok++
			mu.Unlock()
		}()
	}
	before := h.l.wal.syncs.Load()
	close(start)
	wg.Wait()
	txs = h.l.wal.syncs.Load() - before
	if ok != 40 {
		t.Fatalf("%d reservations succeeded, want exactly 40", ok)
	}
	spent, err := h.l.Spent("u", "d")
	if err != nil || spent.Epsilon != 0.4 {
		t.Fatalf("spent %+v (%v), want 0.4", spent, err)
	}
	// 64 reserves + 40 commits would be 104 transactions one by one.
	return txs, n + 40
}
