package backends

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// sendingConn fails every statement after writing send bytes of it.
type sendingConn struct {
	fakeConn
	send int
}

func (c sendingConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	if c.send > 0 {
		if _, err := c.Write(make([]byte, c.send)); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("fake driver failure")
}

type sendingConnector struct {
	s    *Sockets
	addr string
	send int
}

func (c sendingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.s.Connect(ctx, func(ctx context.Context) (driver.Conn, error) {
		nc, err := c.s.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		return sendingConn{fakeConn{nc}, c.send}, nil
	})
}

func (sendingConnector) Driver() driver.Driver { return nil }

// TestRefundableOnlyWhenNothingWasSent: with no ping before a statement,
// whether a failure may be refunded is decided by the socket: a statement
// that failed before one byte of it reached the network is
// BackendUnavailable (the release step refunds it: the server never saw
// it, so the failure cannot depend on the data); one that failed after
// any byte was sent is BackendFailed (kept charged), whatever the error.
func TestRefundableOnlyWhenNothingWasSent(t *testing.T) {
	addr := silentServer(t)
	tests := []struct {
		name string
		send int
		want sqlerr.Code
	}{
		{"nothing sent", 0, sqlerr.BackendUnavailable},
		{"one byte sent", 1, sqlerr.BackendFailed},
		{"a whole message sent", 64, sqlerr.BackendFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSockets(0)
			db := sql.OpenDB(sendingConnector{s: s, addr: addr, send: tt.send})
			e := NewEngine(db, sqlrender.Postgres(), Options{MaxOpenConns: 1}, func(error) (bool, string) { return false, "" }, s)
			defer e.Close()
			err := e.Rows(context.Background(), "SELECT 1", nil, func([]string, []ir.Value) error { return nil })
			if !sqlerr.HasCode(err, tt.want) {
				t.Fatalf("got %v, want code %s", err, tt.want.Name)
			}
			// Aggregate read straight from the driver: the same rule.
			e.ReadAggregatesDirectly(true)
			q := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
			err = e.Aggregate(context.Background(), q, func(ir.BackendRow) error { return nil })
			if !sqlerr.HasCode(err, tt.want) {
				t.Fatalf("direct aggregate: got %v, want code %s", err, tt.want.Name)
			}
		})
	}
}

// preparingConn prepares after writing prep bytes (failing when
// prepFails), and its statements fail after writing send bytes.
type preparingConn struct {
	fakeConn
	prep, send int
	prepFails  bool
}

func (c preparingConn) PrepareContext(context.Context, string) (driver.Stmt, error) {
	if c.prep > 0 {
		if _, err := c.Write(make([]byte, c.prep)); err != nil {
			return nil, err
		}
	}
	if c.prepFails {
		return nil, errors.New("fake prepare failure")
	}
	return sendingStmt(c), nil
}

type sendingStmt preparingConn

func (sendingStmt) Close() error                               { return nil }
func (sendingStmt) NumInput() int                              { return -1 }
func (sendingStmt) Exec([]driver.Value) (driver.Result, error) { return nil, errors.New("fake") }
func (sendingStmt) Query([]driver.Value) (driver.Rows, error)  { return nil, errors.New("fake") }
func (s sendingStmt) QueryContext(context.Context, []driver.NamedValue) (driver.Rows, error) {
	if s.send > 0 {
		if _, err := s.Write(make([]byte, s.send)); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("fake driver failure")
}

type preparingConnector struct {
	s    *Sockets
	addr string
	conn preparingConn
}

func (c preparingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.s.Connect(ctx, func(ctx context.Context) (driver.Conn, error) {
		nc, err := c.s.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		pc := c.conn
		pc.fakeConn = fakeConn{nc}
		MarkDedicated(ctx) // statements are cached only on dedicated sessions
		return pc, nil
	})
}

func (preparingConnector) Driver() driver.Driver { return nil }

// TestPreparedRefundableOnlyWhenNothingWasSent: with Aggregate's
// statements prepared per connection, a failed preparation is refundable
// whatever it sent (the server was never asked to run the statement):
// BackendRefused when the server reported it (a driver code), else
// BackendUnavailable. A failed run is refundable only when not one byte
// of it was sent.
func TestPreparedRefundableOnlyWhenNothingWasSent(t *testing.T) {
	addr := silentServer(t)
	tests := []struct {
		name string
		conn preparingConn
		code string // the driver code the classifier finds
		want sqlerr.Code
	}{
		{"prepare failed, nothing sent", preparingConn{prepFails: true}, "", sqlerr.BackendUnavailable},
		{"prepare failed after a byte", preparingConn{prep: 1, prepFails: true}, "", sqlerr.BackendUnavailable},
		{"prepare refused by the server", preparingConn{prep: 64, prepFails: true}, "42883", sqlerr.BackendRefused},
		{"run failed, nothing sent", preparingConn{}, "", sqlerr.BackendUnavailable},
		{"run failed after the prepare sent", preparingConn{prep: 64}, "", sqlerr.BackendFailed},
		{"run refused after the prepare sent", preparingConn{prep: 64}, "42883", sqlerr.BackendFailed},
		{"run failed after a byte of it", preparingConn{send: 1}, "", sqlerr.BackendFailed},
	}
	q := &ir.BackendQuery{From: ir.TableRef{Name: "t"}, Aggs: []ir.BackendAgg{{Kind: ir.CountRows}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSockets(0)
			db := sql.OpenDB(preparingConnector{s: s, addr: addr, conn: tt.conn})
			e := NewEngine(db, sqlrender.Postgres(), Options{MaxOpenConns: 1}, func(error) (bool, string) { return false, tt.code }, s)
			e.CacheStatements(4, nil)
			defer e.Close()
			err := e.Aggregate(context.Background(), q, func(ir.BackendRow) error { return nil })
			if !sqlerr.HasCode(err, tt.want) {
				t.Fatalf("got %v, want code %s", err, tt.want.Name)
			}
		})
	}
}
