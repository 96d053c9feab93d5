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
		})
	}
}
