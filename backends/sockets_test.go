package backends

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// silentServer accepts connections and never sends a byte.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

type fakeConn struct{ net.Conn }

func (fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("fake") }
func (f fakeConn) Close() error                      { return f.Conn.Close() }
func (fakeConn) Begin() (driver.Tx, error)           { return nil, errors.New("fake") }

// TestConnectTimeoutCutsTheHandshake: a driver waiting for a greeting that
// never comes (lib/pq does not watch ctx during its handshake) is freed at
// the connect timeout, and nothing stays registered.
func TestConnectTimeoutCutsTheHandshake(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(300 * time.Millisecond)
	start := time.Now()
	_, err := s.Connect(context.Background(), func(ctx context.Context) (driver.Conn, error) {
		c, err := s.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		var b [1]byte
		_, err = c.Read(b[:]) // blocks until the cut or the deadline
		return nil, err
	})
	if err == nil {
		t.Fatal("a handshake into silence succeeded")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("connect gave up after %v, want about 300ms", took)
	}
	if n := s.tracked(); n != 0 {
		t.Fatalf("%d sockets registered after a failed attempt", n)
	}
}

// TestRegistry: a successful attempt registers its socket under the
// driver connection with no deadline left; closing it (as the driver does)
// forgets it; an abort closes it under the driver.
func TestRegistry(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(200 * time.Millisecond)
	dc, err := s.Connect(context.Background(), func(ctx context.Context) (driver.Conn, error) {
		c, err := s.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return fakeConn{c}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sk := s.lookup(dc)
	if sk == nil || s.tracked() != 1 {
		t.Fatalf("connection not registered (%d tracked)", s.tracked())
	}
	// The connect deadline is lifted: a read outlives it.
	read := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := dc.(fakeConn).Read(b[:])
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("read ended after the connect deadline although the attempt succeeded: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	sk.abort()
	select {
	case err := <-read:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read after abort: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("abort did not unblock the read")
	}
	if !sk.cut.Load() || s.tracked() != 0 {
		t.Fatalf("after abort: cut=%v tracked=%d", sk.cut.Load(), s.tracked())
	}
	if err := dc.Close(); err != nil {
		t.Fatalf("the driver's close after a cut: %v", err)
	}
}

// TestOrphanSocketsExpire: a socket dialed outside Connect (lib/pq's
// CancelRequest connection, read until EOF) ends at the connect timeout.
func TestOrphanSocketsExpire(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(200 * time.Millisecond)
	c, err := s.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = io.Copy(io.Discard, c)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("orphan socket read: %v after %v", err, time.Since(start))
	}
}

// TestCallDeadline: one timer serves the calls of a connection. A call
// disarmed before its deadline leaves the socket whole and the connection
// usable for the next call; one that outlives it has its socket cut (the
// blocked read returns), the server asked to cancel (SetCanceler), and
// disarm reports it. A canceler set during the attempt reaches the socket.
func TestCallDeadline(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(time.Second)
	cancels := make(chan struct{}, 4)
	dc, err := s.Connect(context.Background(), func(ctx context.Context) (driver.Conn, error) {
		c, err := s.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		SetCanceler(ctx, func(context.Context) error {
			cancels <- struct{}{}
			return nil
		})
		return fakeConn{c}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sk := s.lookup(dc)
	if sk == nil || sk.cancel == nil {
		t.Fatal("connection registered without its canceler")
	}
	for range 3 {
		sk.arm(200 * time.Millisecond)
		time.Sleep(20 * time.Millisecond)
		if sk.disarm() {
			t.Fatal("a call that ended before its deadline was reported expired")
		}
	}
	time.Sleep(300 * time.Millisecond) // past the deadline of every call
	if sk.cut.Load() || len(cancels) != 0 {
		t.Fatalf("a disarmed deadline fired: cut=%v cancels=%d", sk.cut.Load(), len(cancels))
	}

	sk.arm(100 * time.Millisecond)
	start := time.Now()
	var b [1]byte
	_, err = dc.(fakeConn).Read(b[:])
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read past the deadline: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("cut after %v, want about 100ms", took)
	}
	if !sk.disarm() {
		t.Error("disarm after the deadline did not report it")
	}
	select {
	case <-cancels:
	case <-time.After(time.Second):
		t.Error("no cancel request at the deadline")
	}
}
