package backends

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// oneRowConn answers every statement with one row holding 1.
type oneRowConn struct{ fakeConn }

func (oneRowConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &oneRow{}, nil
}

type oneRow struct{ done bool }

func (*oneRow) Columns() []string { return []string{"x"} }
func (*oneRow) Close() error      { return nil }
func (r *oneRow) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	dest[0], r.done = int64(1), true
	return nil
}

type oneRowConnector struct {
	s    *Sockets
	addr string
}

func (c oneRowConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.s.Connect(ctx, func(ctx context.Context) (driver.Conn, error) {
		nc, err := c.s.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		return oneRowConn{fakeConn{nc}}, nil
	})
}

func (oneRowConnector) Driver() driver.Driver { return nil }

// TestBusyPoolWait: with every connection of the pool held, a call waits
// for one at most the client deadline, then fails as BackendUnavailable
// (nothing was sent: refundable); a cancelled caller stops waiting at
// once. Each call gives its connection back however it ends, so the pool
// of one serves call after call.
func TestBusyPoolWait(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(0)
	const timeout = 10 * time.Millisecond
	e := NewEngine(sql.OpenDB(oneRowConnector{s: s, addr: addr}), sqlrender.Postgres(),
		Options{MaxOpenConns: 1, StatementTimeout: timeout}, func(error) (bool, string) { return false, "" }, s)
	defer e.Close()
	one := func(ctx context.Context, hold <-chan struct{}, held chan<- struct{}) error {
		return e.Rows(ctx, "SELECT 1", nil, func([]string, []ir.Value) error {
			if held != nil {
				held <- struct{}{}
				<-hold
			}
			return nil
		})
	}
	for i := range 3 {
		if err := one(context.Background(), nil, nil); err != nil {
			t.Fatalf("call %d on a free pool: %v", i, err)
		}
	}

	hold, held := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() { holder <- one(context.Background(), hold, held) }()
	<-held

	start := time.Now()
	err := one(context.Background(), nil, nil)
	took := time.Since(start)
	if !sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("waiting on a busy pool: %v, want backend_unavailable", err)
	}
	if limit := ClientTimeout(timeout); took < limit-50*time.Millisecond || took > limit+time.Second {
		t.Errorf("gave up after %v, want the client deadline %v", took, limit)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	if err := one(ctx, nil, nil); !sqlerr.HasCode(err, sqlerr.QueryCanceled) || time.Since(start) > time.Second {
		t.Fatalf("cancelled wait: %v after %v, want query_canceled at once", err, time.Since(start))
	}

	close(hold)
	if err := <-holder; err != nil {
		t.Fatalf("holder: %v", err)
	}
	for i := range 3 {
		if err := one(context.Background(), nil, nil); err != nil {
			t.Fatalf("call %d after the waits: %v", i, err)
		}
	}
}

// TestWatcherGivesUpRacedConnections: a connection's watcher serves call
// after call; a call whose cancel hook ran (here: its caller was
// cancelled before it began) gives its connection up, so that no hook
// of an earlier call can act on a later one.
func TestWatcherGivesUpRacedConnections(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(0)
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
	defer dc.Close()
	sk := s.lookup(dc)
	e := NewEngine(sql.OpenDB(oneRowConnector{s: s, addr: addr}), sqlrender.Postgres(),
		Options{StatementTimeout: time.Minute}, func(error) (bool, string) { return false, "" }, s)
	defer e.Close()
	for range 3 {
		if w := e.watch(context.Background(), sk); w.stop() {
			t.Fatal("a call that ended normally lost its connection")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w := e.watch(ctx, sk); !w.stop() {
		t.Fatal("a call whose cancel hook ran kept its connection")
	}
}
