package pgwire

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// peerPair starts two servers that are each other's peers (1 and 2),
// each listing both, as replicas sharing one policy's peers do.
func peerPair(t *testing.T) (a, b *testServer) {
	t.Helper()
	peers := map[int]string{}
	a = startServer(t, Config{PeerID: 1, Peers: peers})
	b = startServer(t, Config{PeerID: 2, Peers: peers})
	// Filled once both listen; no connection exists yet, so no cancel
	// reads the map before this.
	peers[1], peers[2] = a.addr, b.addr
	return a, b
}

// wantCanceled waits for the outcome of a statement that what (a cancel)
// should stop: 57014 within 10 s.
func wantCanceled(t *testing.T, errc <-chan error, what string) {
	t.Helper()
	select {
	case err := <-errc:
		if pe := pgErrCode(t, err); pe.Code != "57014" {
			t.Errorf("%s: code %s, want 57014", what, pe.Code)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not stop the query", what)
	}
}

// sleepOn starts the fake's sleep on conn, waits until it runs, and
// returns its outcome.
func sleepOn(t *testing.T, ts *testServer, conn *pgx.Conn) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := run(conn, "sleep")
		errc <- err
	}()
	select {
	case <-ts.h.started:
	case <-time.After(10 * time.Second):
		t.Fatal("sleep did not start")
	}
	return errc
}

// A cancel request that the load balancer gives to the other replica is
// forwarded to the replica that holds the connection, which cancels the
// query (57014); the connection stays usable.
func TestCancelForwardedToPeer(t *testing.T) {
	a, b := peerPair(t)
	conn := a.connect(t, pgx.QueryExecModeSimpleProtocol)
	if owner := conn.PgConn().PID() >> peerShift; owner != 1 {
		t.Fatalf("process id %#x carries peer %d, want 1", conn.PgConn().PID(), owner)
	}
	errc := sleepOn(t, a, conn)
	rc := b.dialRaw(t)
	rc.send(&pgproto3.CancelRequest{ProcessID: conn.PgConn().PID(), SecretKey: conn.PgConn().SecretKey()})
	wantCanceled(t, errc, "a cancel sent to the peer")
	if got := queryFakeRows(t, conn, "rows 2"); len(got) != 2 {
		t.Errorf("after the cancel: %d rows", len(got))
	}
	// The peer's own connections carry its id.
	if c := b.connect(t, pgx.QueryExecModeSimpleProtocol); c.PgConn().PID()>>peerShift != 2 {
		t.Errorf("peer 2's connection has process id %#x", c.PgConn().PID())
	}
}

// Forwarding passes the key on; the owner checks it: a wrong secret sent
// to the other replica cancels nothing, and neither does a process id of
// a peer nobody lists.
func TestForwardedCancelNeedsTheKey(t *testing.T) {
	a, b := peerPair(t)
	conn := a.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := conn.PgConn().Exec(ctx, "wait 400").ReadAll()
		errc <- err
	}()
	<-a.h.started
	bad := append([]byte(nil), conn.PgConn().SecretKey()...)
	bad[0] ^= 0xff
	b.dialRaw(t).send(&pgproto3.CancelRequest{ProcessID: conn.PgConn().PID(), SecretKey: bad})
	b.dialRaw(t).send(&pgproto3.CancelRequest{ProcessID: 9<<peerShift | conn.PgConn().PID()&(1<<peerShift-1), SecretKey: conn.PgConn().SecretKey()})
	if err := <-errc; err != nil {
		t.Errorf("the query was affected by a forwarded cancel with a wrong key or peer: %v", err)
	}
}

// A peer that cannot be reached costs the cancel only, within a bounded
// time: the replica that got the request goes on serving.
func TestCancelToUnreachablePeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	b := startServer(t, Config{PeerID: 2, Peers: map[int]string{1: dead}})
	start := time.Now()
	rc := b.dialRaw(t)
	rc.send(&pgproto3.CancelRequest{ProcessID: 1<<peerShift | 5, SecretKey: []byte{1, 2, 3, 4}})
	// The server closes the cancel connection once it is done with it.
	var one [1]byte
	_ = rc.nc.SetReadDeadline(time.Now().Add(3 * peerCancelTimeout))
	if _, err := rc.nc.Read(one[:]); err == nil {
		t.Fatal("the server answered a cancel request")
	}
	if d := time.Since(start); d > 2*peerCancelTimeout {
		t.Errorf("the cancel connection stayed open %v", d)
	}
	if got := queryFakeRows(t, b.connect(t, pgx.QueryExecModeSimpleProtocol), "rows 1"); len(got) != 1 {
		t.Errorf("after the failed forward: %d rows", len(got))
	}
}

// A peers list that names the wrong replica (here: peer 1's address is
// this server's own) must not bounce a cancel request back and forth:
// the request comes back once and is dropped, and the server goes on.
func TestCancelLoopEnds(t *testing.T) {
	peers := map[int]string{}
	b := startServer(t, Config{PeerID: 2, Peers: peers})
	peers[1] = b.addr // wrong: this is peer 2
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rc := b.dialRaw(t)
		rc.send(&pgproto3.CancelRequest{ProcessID: 1<<peerShift | 7, SecretKey: []byte{9, 9, 9, 9}})
		var one [1]byte
		_ = rc.nc.SetReadDeadline(time.Now().Add(4 * peerCancelTimeout))
		_, _ = rc.nc.Read(one[:])
	}()
	select {
	case <-done:
	case <-time.After(5 * peerCancelTimeout):
		t.Fatal("the cancel request is still bouncing")
	}
	// The client's cancel connection and the one forwarded to "peer 1",
	// which is dropped there; a loop would open one after another until
	// the forwarding time ran out.
	if n := b.connSeq.Load(); n != 2 {
		t.Errorf("%d connections for one cancel request, want 2", n)
	}
	if d := time.Since(start); d >= peerCancelTimeout {
		t.Errorf("the cancel request took %v", d)
	}
	if got := queryFakeRows(t, b.connect(t, pgx.QueryExecModeSimpleProtocol), "rows 1"); len(got) != 1 {
		t.Errorf("after the loop: %d rows", len(got))
	}
}

// Two cancel requests for the same connection, one after the other (a
// second Ctrl-C for the next query), are both forwarded: only a request
// that comes back while it is being forwarded is dropped.
func TestSecondCancelForwarded(t *testing.T) {
	a, b := peerPair(t)
	conn := a.connect(t, pgx.QueryExecModeSimpleProtocol)
	for i := range 2 {
		errc := sleepOn(t, a, conn)
		sendCancelTo(t, b, conn.PgConn().PID(), conn.PgConn().SecretKey())
		wantCanceled(t, errc, fmt.Sprintf("cancel %d", i+1))
	}
}

// sendCancelTo sends a CancelRequest to ts and waits until ts has closed
// the connection (it has handled the request).
func sendCancelTo(t *testing.T, ts *testServer, pid uint32, secret []byte) {
	t.Helper()
	rc := ts.dialRaw(t)
	rc.send(&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret})
	var one [1]byte
	_, _ = rc.nc.Read(one[:])
}

// A cancel request whose key is not one this server issues (4 bytes) goes
// to ForeignCancel — a MySQL KILL another replica forwards — and cancels
// no PostgreSQL connection, even one with that process id.
func TestForeignCancel(t *testing.T) {
	type call struct {
		pid uint32
		key []byte
	}
	got := make(chan call, 4)
	ts := startServer(t, Config{PeerID: 1, ForeignCancel: func(pid uint32, key []byte) { got <- call{pid, key} }})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := conn.PgConn().Exec(ctx, "wait 400").ReadAll()
		errc <- err
	}()
	<-ts.h.started
	key := make([]byte, 32)
	key[0] = 7
	if err := SendCancel(ts.addr, conn.PgConn().PID(), key); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c.pid != conn.PgConn().PID() || len(c.key) != 32 || c.key[0] != 7 {
			t.Errorf("ForeignCancel got %#x %x", c.pid, c.key)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ForeignCancel was not called")
	}
	if err := <-errc; err != nil {
		t.Errorf("the PostgreSQL connection with that process id was affected: %v", err)
	}
	// Its own 4-byte keys still cancel as before.
	errc2 := sleepOn(t, ts, conn)
	if err := SendCancel(ts.addr, conn.PgConn().PID(), conn.PgConn().SecretKey()); err != nil {
		t.Fatal(err)
	}
	if pe := pgErrCode(t, <-errc2); pe.Code != "57014" {
		t.Errorf("code %s, want 57014", pe.Code)
	}
	if len(got) != 0 {
		t.Errorf("ForeignCancel got the server's own key")
	}
}
