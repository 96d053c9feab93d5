package mysql

import (
	"context"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// viaForwarder returns a forwarder to the test server and the DSN that
// connects through it.
func viaForwarder(t *testing.T) (*blackhole.Forwarder, string) {
	t.Helper()
	cfg, err := gomysql.ParseDSN(testDSN(t))
	if err != nil || cfg.Net != "tcp" {
		t.Fatalf("%s must be a tcp(host:port) DSN for the blackhole tests: %v", dsnEnv, err)
	}
	f := blackhole.Start(t, cfg.Addr)
	cfg.Addr = f.Addr
	return f, cfg.FormatDSN()
}

func intRows(b *Backend, q string) (int64, error) {
	var got int64
	err := b.Rows(context.Background(), q, nil, func(_ []string, row []ir.Value) error {
		n, err := backends.DecodeInt(driverValue(row[0]))
		got = n
		return err
	})
	return got, err
}

// TestSilentNetwork: the network to MySQL/MariaDB goes silent mid-query,
// then before a query. Each call ends within the client deadline with
// 57014 (both statements were written to the network), and once the network is
// back the pool answers correctly: the stuck connection was discarded, not
// reused with a stale reply in its stream.
func TestSilentNetwork(t *testing.T) {
	f, dsn := viaForwarder(t)
	const timeout = time.Second
	b, err := Open(context.Background(), dsn, backends.Options{StatementTimeout: timeout, MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", dsnEnv, err)
	}
	t.Cleanup(func() { b.Close() })
	if got, err := intRows(b, "SELECT 40"); err != nil || got != 40 {
		t.Fatalf("warm-up: %d, %v", got, err)
	}
	limit := backends.ClientTimeout(timeout)

	time.AfterFunc(300*time.Millisecond, f.Freeze)
	err, took := blackhole.Timed(t, limit+5*time.Second, func() error {
		_, err := intRows(b, "SELECT 41 + SLEEP(0.6)")
		return err
	})
	if se := sqlerr.As(err); !sqlerr.HasCode(err, sqlerr.StatementTimeout) || se.Code.SQLState != "57014" {
		t.Fatalf("silent network mid-query: %v, want statement_timeout (57014)", err)
	}
	if took > limit+time.Second {
		t.Errorf("mid-query: answered after %v, want within %v", took, limit)
	}
	f.Thaw()
	if got, err := intRows(b, "SELECT 42"); err != nil || got != 42 {
		t.Fatalf("after the network came back: %d, %v; want 42", got, err)
	}

	f.Freeze()
	err, took = blackhole.Timed(t, limit+5*time.Second, func() error {
		_, err := intRows(b, "SELECT 1")
		return err
	})
	// No ping precedes a statement any more (a round trip per query): it
	// is written into the silence and may have run, so it is abandoned
	// at the deadline and stays charged, as mid-query.
	if !sqlerr.HasCode(err, sqlerr.StatementTimeout) {
		t.Fatalf("silent network before the query: %v, want statement_timeout (sent, so not refundable)", err)
	}
	if took > limit+time.Second {
		t.Errorf("before the query: answered after %v, want within %v", took, limit)
	}
	f.Thaw()
	if got, err := intRows(b, "SELECT 43"); err != nil || got != 43 {
		t.Fatalf("after the network came back: %d, %v; want 43", got, err)
	}
}
