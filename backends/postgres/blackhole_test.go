package postgres

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// viaForwarder returns a forwarder to the test server and the DSN that
// connects through it.
func viaForwarder(t *testing.T) (*blackhole.Forwarder, string) {
	t.Helper()
	u, err := url.Parse(testDSN(t))
	if err != nil || u.Host == "" {
		t.Fatalf("%s must be a postgres:// URL for the blackhole tests: %v", dsnEnv, err)
	}
	f := blackhole.Start(t, u.Host)
	u.Host = f.Addr
	return f, u.String()
}

func intRows(b *Backend, ctx context.Context, q string) (int64, error) {
	var got int64
	err := b.Rows(ctx, q, nil, func(_ []string, row []ir.Value) error {
		got = row[0].Int
		return nil
	})
	return got, err
}

// TestSilentNetworkMidQuery: the network to PostgreSQL goes silent after
// the statement was sent. The call ends at the client-side deadline
// (statement timeout + margin) with 57014 — although lib/pq's own
// CancelRequest can never get through — and the stuck connection is
// discarded: after the network comes back, the reply held back in the
// network must not be read as the answer to the next statement.
func TestSilentNetworkMidQuery(t *testing.T) {
	f, dsn := viaForwarder(t)
	const timeout = time.Second
	b, err := Open(context.Background(), dsn, backends.Options{StatementTimeout: timeout, MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", dsnEnv, err)
	}
	t.Cleanup(func() { b.Close() })
	if got, err := intRows(b, context.Background(), "SELECT 40"); err != nil || got != 40 {
		t.Fatalf("warm-up: %d, %v", got, err)
	}

	time.AfterFunc(300*time.Millisecond, f.Freeze)
	limit := backends.ClientTimeout(timeout)
	err, took := blackhole.Timed(t, limit+5*time.Second, func() error {
		_, err := intRows(b, context.Background(), "SELECT 41 FROM pg_sleep(0.6)")
		return err
	})
	if !sqlerr.HasCode(err, sqlerr.StatementTimeout) || sqlerr.As(err).Code.SQLState != "57014" {
		t.Fatalf("silent network mid-query: %v, want 57014", err)
	}
	if took > limit+time.Second {
		t.Errorf("answered after %v, want within the client deadline %v", took, limit)
	}
	t.Logf("abandoned after %v (deadline %v): %v", took, limit, err)

	f.Thaw()
	got, err := intRows(b, context.Background(), "SELECT 42")
	if err != nil || got != 42 {
		t.Fatalf("after the network came back: %d, %v; want 42 on a fresh connection", got, err)
	}
}

// TestSilentNetworkBeforeQuery: the network is silent before the call
// starts. A pooled connection is not pinged (that would cost a round trip
// per query), so the statement is written into the silence: the server
// may have received and run it, so the call ends at the client deadline
// as abandoned (57014, kept charged by the release step), like a silence
// mid-query. A brand-new connection into the silence ends at the connect
// timeout with BackendUnavailable (nothing was sent: refundable).
func TestSilentNetworkBeforeQuery(t *testing.T) {
	f, dsn := viaForwarder(t)
	const timeout = time.Second
	b, err := Open(context.Background(), dsn, backends.Options{StatementTimeout: timeout, MaxOpenConns: 2})
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", dsnEnv, err)
	}
	t.Cleanup(func() { b.Close() })
	f.Freeze()
	limit := backends.ClientTimeout(timeout)
	err, took := blackhole.Timed(t, limit+5*time.Second, func() error {
		_, err := intRows(b, context.Background(), "SELECT 1")
		return err
	})
	if !sqlerr.HasCode(err, sqlerr.StatementTimeout) || sqlerr.As(err).Code.SQLState != "57014" {
		t.Fatalf("silent network before the query: %v, want 57014 (sent, so not refundable)", err)
	}
	if took > limit+time.Second {
		t.Errorf("answered after %v, want within %v", took, limit)
	}

	// A new pool: every connection is new and its handshake hangs.
	fresh, err := New(dsn, backends.Options{StatementTimeout: 30 * time.Second, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fresh.Close() })
	err, took = blackhole.Timed(t, 10*time.Second, func() error { return fresh.Ping(context.Background()) })
	if !sqlerr.HasCode(err, sqlerr.BackendUnavailable) {
		t.Fatalf("connecting into silence: %v, want backend_unavailable", err)
	}
	if took > 2*time.Second {
		t.Errorf("connecting into silence took %v, want about the 1 s connect timeout", took)
	}

	f.Thaw()
	if got, err := intRows(b, context.Background(), "SELECT 43"); err != nil || got != 43 {
		t.Fatalf("after the network came back: %d, %v", got, err)
	}
}

// TestCancelDuringSilence: the caller cancels while the network is silent.
// lib/pq's CancelRequest cannot get through either; the call still ends
// shortly after the cancel (the driver's grace), with QueryCanceled.
func TestCancelDuringSilence(t *testing.T) {
	f, dsn := viaForwarder(t)
	b, err := Open(context.Background(), dsn, backends.Options{StatementTimeout: time.Minute})
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", dsnEnv, err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { f.Freeze(); cancel() })
	err, took := blackhole.Timed(t, 15*time.Second, func() error {
		_, err := intRows(b, ctx, "SELECT 1 FROM pg_sleep(1)")
		return err
	})
	if !sqlerr.HasCode(err, sqlerr.QueryCanceled) {
		t.Fatalf("cancelled during silence: %v, want query_canceled", err)
	}
	if took > 5*time.Second {
		t.Errorf("cancelled call returned after %v", took)
	}
}
