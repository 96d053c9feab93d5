package pgwire

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMaxConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 2})
	a := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	b := ts.connect(t, pgx.QueryExecModeSimpleProtocol)

	_, err := pgx.Connect(context.Background(), ts.url("alice", alicePassword, ""))
	if pe := pgErrCode(t, err); pe.Code != "53300" || pe.Severity != "FATAL" {
		t.Errorf("third connection: %s %s, want FATAL 53300", pe.Severity, pe.Code)
	}

	// A full server still takes cancel requests.
	errc := make(chan error, 1)
	go func() {
		_, err := run(a, "sleep")
		errc <- err
	}()
	<-ts.h.started
	if err := a.PgConn().CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pe := pgErrCode(t, <-errc); pe.Code != "57014" {
		t.Errorf("cancel at the cap: %s", pe.Code)
	}

	// A slot frees when a client leaves (the server notices asynchronously).
	b.Close(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := pgx.Connect(context.Background(), ts.url("alice", alicePassword, ""))
		if err == nil {
			c.Close(context.Background())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot after a client left: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestShutdownGraceful: running statements (simple and extended) finish
// and are answered, idle connections are closed, new ones refused.
func TestShutdownGraceful(t *testing.T) {
	ts := startServer(t, Config{})
	simple := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	extended := ts.connect(t, pgx.QueryExecModeCacheStatement)
	idle := ts.connect(t, pgx.QueryExecModeSimpleProtocol)

	type answer struct {
		ms  int64
		err error
	}
	answers := make(chan answer, 2)
	for _, c := range []*pgx.Conn{simple, extended} {
		go func() {
			var ms int64
			err := c.QueryRow(context.Background(), "wait 300").Scan(&ms)
			answers <- answer{ms, err}
		}()
	}
	for range 2 {
		select {
		case <-ts.h.started:
		case <-time.After(10 * time.Second):
			t.Fatal("statements did not start")
		}
	}
	start := time.Now()
	ts.stop(t) // Shutdown with a 10 s deadline; checks Serve and sessions
	took := time.Since(start)
	for range 2 {
		a := <-answers
		if a.err != nil || a.ms != 300 {
			t.Errorf("in-flight statement: %d, %v; want 300, nil", a.ms, a.err)
		}
	}
	if took > 5*time.Second {
		t.Errorf("Shutdown took %v", took)
	}
	if _, err := run(idle, "rows 1"); err == nil {
		t.Error("idle connection still works after Shutdown")
	}
	if c, err := net.DialTimeout("tcp", ts.addr, time.Second); err == nil {
		c.Close()
		t.Error("server still accepts after Shutdown")
	}
}

// TestShutdownDeadline: a statement that outlives Shutdown's deadline is
// cancelled through its context and Shutdown reports the deadline.
func TestShutdownDeadline(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	errc := make(chan error, 1)
	go func() {
		_, err := run(conn, "sleep")
		errc <- err
	}()
	<-ts.h.started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ts.stopped = true
	if err := ts.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want DeadlineExceeded", err)
	}
	if err := <-errc; err == nil {
		t.Error("the sleeping statement succeeded")
	}
	if n := ts.h.openSessions(); n != 0 {
		t.Errorf("%d sessions open after Shutdown returned", n)
	}
	if err := <-ts.served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
}

// TestServeContext: cancelling Serve's context stops accepting but
// leaves established connections alone.
func TestServeContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := newFakeHandler()
	s := NewServer(Config{Handler: h})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	conn, err := pgx.Connect(context.Background(), "postgres://trusty@"+ln.Addr().String()+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if got := queryFakeRows(t, conn, "rows 1"); len(got) != 1 {
		t.Errorf("established connection: %d rows", len(got))
	}
	conn.Close(context.Background())
	if err := s.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}
