package ledger

import (
	"errors"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// errClosed is returned for changes made after Close began.
var errClosed = errors.New("ledger: closed")

// groupCommit merges bbolt write transactions into one ("group commit"):
// the checkpoints that copy the change log into the file (state.go), and
// the DBA's writes (eviction, import).
//
// Writes (update) wait for their commit. A lone writer commits at once;
// writers that arrive while a commit is running queue up and are all
// committed by the next transaction.
//
// Each queued function runs inside the shared transaction and sees the
// effects of those before it (in queue order), so budget checks stay exact.
// The functions must check before they write: when one returns an error
// the shared transaction is rolled back and every function of the group is
// re-run in its own transaction (as bbolt's Batch does), so a function may
// run more than once and must only set outside state from what the
// transaction reads.
type groupCommit struct {
	db      *bolt.DB
	mu      sync.Mutex
	queue   []groupCall
	running bool
	txs     atomic.Int64 // write transactions run (for tests)
}

type groupCall struct {
	fn   func(*bolt.Tx) error
	done chan error // receives the outcome
}

// errGroupFailed aborts a shared transaction; its members are retried alone.
var errGroupFailed = errors.New("ledger: a member of a group commit failed")

// update runs fn in a write transaction, possibly shared with concurrent
// callers and with deferred calls queued before it, and returns when it is
// durably committed (or failed).
func (g *groupCommit) update(fn func(*bolt.Tx) error) error {
	c := groupCall{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if !g.running {
		g.running = true
		go g.loop()
	}
	g.mu.Unlock()
	return <-c.done
}

// close waits for the writes still queued.
func (g *groupCommit) close() error {
	g.mu.Lock()
	idle := !g.running && len(g.queue) == 0
	g.mu.Unlock()
	if idle {
		return nil
	}
	return g.update(func(*bolt.Tx) error { return nil })
}

// loop commits queued groups until none is left.
func (g *groupCommit) loop() {
	for {
		g.mu.Lock()
		calls := g.queue
		if len(calls) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.queue = nil
		g.mu.Unlock()
		g.commit(calls)
	}
}

func (g *groupCommit) commit(calls []groupCall) {
	g.txs.Add(1)
	if len(calls) == 1 {
		calls[0].done <- g.db.Update(calls[0].fn)
		return
	}
	err := g.db.Update(func(tx *bolt.Tx) error {
		for _, c := range calls {
			if err := c.fn(tx); err != nil {
				return errGroupFailed
			}
		}
		return nil
	})
	if err == nil {
		for _, c := range calls {
			c.done <- nil
		}
		return
	}
	// Something failed (or the transaction itself): run each alone so
	// each gets its own outcome.
	for _, c := range calls {
		g.txs.Add(1)
		c.done <- g.db.Update(c.fn)
	}
}
