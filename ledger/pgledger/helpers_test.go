package pgledger

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
)

// testDSN returns DDP_TEST_POSTGRES_DSN or skips.
func testDSN(t *testing.T) string {
	t.Helper()
	return pgtest.DSN(t, "the PostgreSQL ledger tests")
}

// testSchema returns a fresh schema name for one test (dropped at the
// end), prefixed pgledger_.
func testSchema(t *testing.T, dsn string) string {
	t.Helper()
	return pgtest.Schema(t, dsn, "pgledger_t_")
}

// openTest opens a ledger on schema as replica, closed and checked at the
// end of the test.
func openTest(t *testing.T, dsn, schema, replica string) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), dsn, Options{Schema: schema, Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Check(context.Background()); err != nil {
			t.Errorf("after the test: %v", err)
		}
		l.Close()
	})
	return l
}

// newTest opens a fresh ledger on its own schema.
func newTest(t *testing.T) (*Ledger, string, string) {
	t.Helper()
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	return openTest(t, dsn, schema, "r1"), dsn, schema
}

// tcpRelay forwards a local port to the PostgreSQL server of dsn until
// stop, which also cuts every open connection: a ledger database that
// becomes unreachable.
type tcpRelay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startRelay(t *testing.T, dsn string) (*tcpRelay, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, itoa(int(cfg.Port)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &tcpRelay{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, s)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(r.stop)
	relayed := strings.Replace(dsn, net.JoinHostPort(cfg.Host, itoa(int(cfg.Port))), ln.Addr().String(), 1)
	if relayed == dsn {
		t.Skip("cannot rewrite the host:port of DDP_TEST_POSTGRES_DSN for the relay")
	}
	return r, relayed
}

func (r *tcpRelay) stop() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
