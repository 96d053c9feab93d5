// Package blackhole is a test helper: a TCP forwarder on 127.0.0.1 that
// can go silent. Frozen, it keeps every connection open and accepts new
// ones, but no byte passes in either direction — what a client sees when a
// firewall starts dropping packets or a middlebox hangs: no error, no
// reset, no answer. Thawed, the bytes held back flow again.
//
// Test-only: production code must not import it.
package blackhole

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Forwarder relays connections from Addr to a target address.
type Forwarder struct {
	// Addr is the listening address (127.0.0.1:port).
	Addr   string
	target string
	ln     net.Listener

	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// Start listens on a free 127.0.0.1 port and relays to target; the
// forwarder is closed when the test ends.
func Start(t testing.TB, target string) *Forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Forwarder{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	f.cond = sync.NewCond(&f.mu)
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.Close)
	return f
}

// Freeze stops every byte, on open and new connections alike.
func (f *Forwarder) Freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

// Thaw lets bytes flow again, those held back first.
func (f *Forwarder) Thaw() {
	f.mu.Lock()
	f.frozen = false
	f.cond.Broadcast()
	f.mu.Unlock()
}

// Close stops listening and closes every connection.
func (f *Forwarder) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.ln.Close()
	for c := range f.conns {
		c.Close()
	}
	f.cond.Broadcast()
	f.mu.Unlock()
	f.wg.Wait()
}

// Conns is the number of open relayed connections (each counts its two
// sockets once).
func (f *Forwarder) Conns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns) / 2
}

func (f *Forwarder) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", f.target)
		if err != nil {
			c.Close()
			continue
		}
		if !f.track(c, up) {
			return
		}
		f.wg.Add(2)
		go f.pipe(up, c)
		go f.pipe(c, up)
	}
}

func (f *Forwarder) track(a, b net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		a.Close()
		b.Close()
		return false
	}
	f.conns[a], f.conns[b] = struct{}{}, struct{}{}
	return true
}

// pipe copies src to dst, holding each chunk while frozen. When either side
// ends, both sockets are closed.
func (f *Forwarder) pipe(dst, src net.Conn) {
	defer f.wg.Done()
	defer func() {
		f.mu.Lock()
		delete(f.conns, src)
		delete(f.conns, dst)
		f.mu.Unlock()
		src.Close()
		dst.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !f.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while frozen; false when the forwarder closed.
func (f *Forwarder) wait() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.frozen && !f.closed {
		f.cond.Wait()
	}
	return !f.closed
}

// Timed runs call in the background and fails the test when it has not
// returned within limit (a hang must fail the test, not stall it). It
// returns call's error and how long it took.
func Timed(t testing.TB, limit time.Duration, call func() error) (error, time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("the call did not return within %v", limit)
		return nil, 0
	}
}
