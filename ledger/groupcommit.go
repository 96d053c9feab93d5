package ledger

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultSettleDelay bounds how long a deferred write (CommitDeferred)
// waits for a durable write to ride on before it is committed by itself.
const DefaultSettleDelay = 20 * time.Millisecond

// errClosed is returned for deferred writes queued after Close began.
var errClosed = errors.New("ledger: closed")

// groupCommit merges write transactions into one fsync ("group commit").
//
// Durable writes (update) wait for their commit. A lone writer commits at
// once (no added delay); writers that arrive while a commit is running
// queue up and are all committed by the next transaction, so under load
// several charges share one fsync.
//
// Deferred writes (later) do not wait and do not start a transaction of
// their own: they are committed by the transaction of the next durable
// write, or, when none comes within delay, by a transaction the timer
// starts. They are for bookkeeping whose loss in a crash is safe (the
// commit of a reservation whose charge is already durable: it stays
// charged).
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
	delay   time.Duration
	mu      sync.Mutex
	queue   []groupCall
	running bool
	timer   *time.Timer // armed while deferred calls wait and no loop runs
	closed  bool
	txs     atomic.Int64 // write transactions run (for tests and metrics)
	observe func(writes int, took time.Duration)
}

type groupCall struct {
	fn func(*bolt.Tx) error
	// done receives the outcome of a durable call; after is called with
	// the outcome of a deferred one (done is nil then).
	done  chan error
	after func(error)
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
		go g.loop(false)
	}
	g.mu.Unlock()
	return <-c.done
}

// later queues fn to be committed with the next durable write or within
// g.delay, and returns at once. after is called with the outcome once the
// transaction that ran fn has committed (or failed). It returns errClosed
// (and never calls after) once close has begun.
func (g *groupCommit) later(fn func(*bolt.Tx) error, after func(error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errClosed
	}
	g.queue = append(g.queue, groupCall{fn: fn, after: after})
	if !g.running && g.timer == nil {
		g.timer = time.AfterFunc(g.delay, g.settle)
	}
	return nil
}

// settle is the timer: commit the deferred calls nobody took along.
func (g *groupCommit) settle() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer = nil
	if !g.running && len(g.queue) > 0 {
		g.running = true
		go g.loop(true)
	}
}

// sync makes every call queued so far durable: one transaction carries all
// deferred calls still waiting.
func (g *groupCommit) sync() error {
	return g.update(func(*bolt.Tx) error { return nil })
}

// close refuses further deferred calls and commits those still queued.
func (g *groupCommit) close() error {
	g.mu.Lock()
	g.closed = true
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	idle := !g.running && len(g.queue) == 0
	g.mu.Unlock()
	if idle {
		// Nothing deferred: no transaction (and no fsync) to close a
		// ledger that was only read.
		return nil
	}
	return g.sync()
}

// loop commits queued groups while a durable call waits (or once, when
// force is set by the timer). Deferred calls left alone wait for the next
// durable write or the timer.
func (g *groupCommit) loop(force bool) {
	for {
		g.mu.Lock()
		calls := g.queue
		durable := force
		for _, c := range calls {
			if c.done != nil {
				durable = true
				break
			}
		}
		if len(calls) == 0 || !durable {
			g.running = false
			if len(calls) > 0 && g.timer == nil {
				g.timer = time.AfterFunc(g.delay, g.settle)
			}
			g.mu.Unlock()
			return
		}
		g.queue = nil
		g.mu.Unlock()
		g.commit(calls)
		force = false
	}
}

// timedUpdate is db.Update, reported to the observer.
func (g *groupCommit) timedUpdate(writes int, fn func(*bolt.Tx) error) error {
	start := time.Now()
	err := g.db.Update(fn)
	if g.observe != nil {
		g.observe(writes, time.Since(start))
	}
	return err
}

func (g *groupCommit) commit(calls []groupCall) {
	g.txs.Add(1)
	if len(calls) == 1 {
		calls[0].report(g.timedUpdate(1, calls[0].fn))
		return
	}
	err := g.timedUpdate(len(calls), func(tx *bolt.Tx) error {
		for _, c := range calls {
			if err := c.fn(tx); err != nil {
				return errGroupFailed
			}
		}
		return nil
	})
	if err == nil {
		for _, c := range calls {
			c.report(nil)
		}
		return
	}
	// Something failed (a budget check, a cancelled context, or the
	// transaction itself): run each alone so each gets its own outcome.
	for _, c := range calls {
		g.txs.Add(1)
		c.report(g.timedUpdate(1, c.fn))
	}
}

func (c groupCall) report(err error) {
	if c.done != nil {
		c.done <- err
		return
	}
	c.after(err)
}
