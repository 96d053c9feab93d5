package backends

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// cancelingConn is a connection whose engine sends its CancelRequests
// itself (SetCanceler): its prepare ends the caller's context, as a
// client's cancel arriving during the prepare's round trip would, and
// its statement records whether it was run.
type cancelingConn struct {
	fakeConn
	cancelCaller context.CancelFunc
	ran          *atomic.Bool
}

func (c *cancelingConn) PrepareContext(context.Context, string) (driver.Stmt, error) {
	if _, err := c.Write([]byte("parse")); err != nil {
		return nil, err
	}
	c.cancelCaller()
	return (*cancelingStmt)(c), nil
}

type cancelingStmt cancelingConn

func (*cancelingStmt) Close() error                               { return nil }
func (*cancelingStmt) NumInput() int                              { return -1 }
func (*cancelingStmt) Exec([]driver.Value) (driver.Result, error) { return nil, errors.New("fake") }
func (*cancelingStmt) Query([]driver.Value) (driver.Rows, error)  { return nil, errors.New("fake") }
func (s *cancelingStmt) QueryContext(context.Context, []driver.NamedValue) (driver.Rows, error) {
	s.ran.Store(true)
	return nil, errors.New("fake driver failure")
}

type cancelingConnector struct {
	s    *Sockets
	addr string
	conn cancelingConn
}

func (c cancelingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.s.Connect(ctx, func(ctx context.Context) (driver.Conn, error) {
		nc, err := c.s.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		cc := c.conn
		cc.fakeConn = fakeConn{nc}
		pc := &cc
		SetCanceler(ctx, func(context.Context) error { return nil })
		MarkDedicated(ctx)
		return pc, nil
	})
}

func (cancelingConnector) Driver() driver.Driver { return nil }

// TestPreparedStatementNotRunAfterCancel: a caller's cancel that comes
// while a statement is being prepared stops it before its run, also
// when the engine sends the CancelRequests itself and the driver's
// context is never cancelled: the server is idle between the prepare
// and the run, and a CancelRequest arriving then would be lost.
func TestPreparedStatementNotRunAfterCancel(t *testing.T) {
	addr := silentServer(t)
	s := NewSockets(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Bool
	db := sql.OpenDB(cancelingConnector{s: s, addr: addr, conn: cancelingConn{cancelCaller: cancel, ran: &ran}})
	e := NewEngine(db, sqlrender.Postgres(), Options{MaxOpenConns: 1}, func(error) (bool, string) { return false, "" }, s)
	e.CacheStatements(4, nil)
	defer e.Close()
	q := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
	err := e.Aggregate(ctx, q, func(ir.BackendRow) error { return nil })
	if !sqlerr.HasCode(err, sqlerr.QueryCanceled) {
		t.Fatalf("got %v, want code %s", err, sqlerr.QueryCanceled.Name)
	}
	if ran.Load() {
		t.Fatal("the statement ran after the caller's cancel during its prepare")
	}
}
