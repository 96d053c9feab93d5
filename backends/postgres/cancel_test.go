package postgres

import (
	"bytes"
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Protocol pieces for handshake transcripts.
func packet(code uint32, rest ...byte) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(8+len(rest)))
	p = binary.BigEndian.AppendUint32(p, code)
	return append(p, rest...)
}

func msg(t byte, body ...byte) []byte {
	m := []byte{t}
	m = binary.BigEndian.AppendUint32(m, uint32(4+len(body)))
	return append(m, body...)
}

func keyData(pid uint32, secret []byte) []byte {
	return msg('K', append(binary.BigEndian.AppendUint32(nil, pid), secret...)...)
}

// step is one packet of a transcript: written by the client, or read
// from the server.
type step struct {
	write bool
	b     []byte
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestHandshakeKey(t *testing.T) {
	startup := packet(3 << 16)
	authOK := msg('R', 0, 0, 0, 0)
	ready := msg('Z', 'I')
	key := []byte{1, 2, 3, 4}
	long := bytes.Repeat([]byte{7}, 32) // protocol 3.2 keys are longer
	server := cat(authOK, msg('S', []byte("TimeZone\x00UTC\x00")...), keyData(42, key), ready)
	tests := []struct {
		name       string
		steps      []step
		wantPID    uint32
		wantSecret []byte // nil: no key
	}{
		{"plaintext", []step{{true, startup}, {false, server}}, 42, key},
		{"byte by byte", append([]step{{true, startup}}, bytewise(server)...), 42, key},
		{"SASL exchange", []step{
			{true, startup}, {false, msg('R', 0, 0, 0, 10)}, {true, msg('p', 1, 2, 3)},
			{false, msg('R', 0, 0, 0, 11)}, {true, msg('p', 4)}, {false, server},
		}, 42, key},
		{"long key", []step{{true, packet(3<<16 | 2)}, {false, cat(authOK, keyData(7, long), ready)}}, 7, long},
		{"SSL refused, plaintext", []step{{true, packet(sslRequestCode)}, {false, []byte{'N'}}, {true, startup}, {false, server}}, 42, key},
		{"TLS", []step{{true, packet(sslRequestCode)}, {false, []byte{'S'}}, {true, []byte{0x16, 3, 1, 0, 10, 1, 2, 3}}, {false, server}}, 0, nil},
		{"GSS encryption", []step{{true, packet(gssencRequestCode)}, {false, []byte{'G'}}, {false, server}}, 0, nil},
		{"direct TLS", []step{{true, []byte{0x16, 3, 1, 0, 10, 1, 2, 3, 4}}, {false, server}}, 0, nil},
		{"refused login", []step{{true, startup}, {false, cat(msg('E', []byte("SFATAL\x00")...), keyData(42, key), ready)}}, 0, nil},
		{"no key", []step{{true, startup}, {false, cat(authOK, ready)}}, 0, nil},
		{"short key", []step{{true, startup}, {false, cat(authOK, keyData(42, []byte{1, 2, 3}), ready)}}, 0, nil},
		{"no ReadyForQuery", []step{{true, startup}, {false, cat(authOK, keyData(42, key))}}, 0, nil},
		{"bad length", []step{{true, startup}, {false, cat(authOK, []byte{'S', 0, 0, 0, 2}, keyData(42, key), ready)}}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &handshake{}
			for _, s := range tt.steps {
				if s.write {
					h.wrote(s.b)
				} else {
					h.read(s.b)
				}
			}
			c := &keyConn{network: "tcp", addr: "x", hs: h}
			got := c.canceler(backends.NewSockets(0)) != nil
			if want := tt.wantSecret != nil; got != want {
				t.Fatalf("canceler found: %v, want %v (state %d)", got, want, h.state)
			}
			if tt.wantSecret != nil && (h.pid != tt.wantPID || !bytes.Equal(h.secret, tt.wantSecret)) {
				t.Errorf("key %d %x, want %d %x", h.pid, h.secret, tt.wantPID, tt.wantSecret)
			}
			if c.hs != nil {
				t.Error("canceler left the handshake being read")
			}
		})
	}
}

func bytewise(b []byte) []step {
	s := make([]step, len(b))
	for i := range b {
		s[i] = step{false, b[i : i+1]}
	}
	return s
}

// FuzzHandshake: any transcript leaves the reader in a known state, with
// a key of the protocol's size when it found one.
func FuzzHandshake(f *testing.F) {
	f.Add(packet(3<<16), cat(msg('R', 0, 0, 0, 0), keyData(1, []byte{1, 2, 3, 4}), msg('Z', 'I')), uint8(3))
	f.Add(packet(sslRequestCode), []byte{'N'}, uint8(1))
	f.Fuzz(func(t *testing.T, first, server []byte, chunk uint8) {
		h := &handshake{}
		h.wrote(first)
		n := max(int(chunk), 1)
		for len(server) > 0 {
			k := min(n, len(server))
			h.read(server[:k])
			server = server[k:]
		}
		if h.state < hsStartup || h.state > hsLost {
			t.Fatalf("state %d", h.state)
		}
		if h.secret != nil && (len(h.secret) < 4 || len(h.secret) > 256) {
			t.Fatalf("secret of %d bytes", len(h.secret))
		}
		if len(h.buf) > handshakeMax+int(max(chunk, 1)) {
			t.Fatalf("kept %d bytes", len(h.buf))
		}
	})
}

// TestCancelerStopsTheStatement: the key read from a real handshake
// cancels the connection's statement (PostgreSQL answers 57014), so the
// engine's own CancelRequest works where lib/pq's is not used.
func TestCancelerStopsTheStatement(t *testing.T) {
	conn, cancel, err := keyConnector(t, testDSN(t)).connect(context.Background())
	if err != nil {
		t.Fatalf("%s is set but the server is unusable: %v", dsnEnv, err)
	}
	defer conn.Close()
	if cancel == nil {
		t.Fatal("no cancel key read from a plaintext handshake")
	}
	time.AfterFunc(300*time.Millisecond, func() {
		if err := cancel(context.Background()); err != nil {
			t.Errorf("cancel: %v", err)
		}
	})
	start := time.Now()
	rows, err := conn.(driver.QueryerContext).QueryContext(context.Background(), "SELECT pg_sleep(20)", nil)
	if err == nil {
		err = rows.Next(make([]driver.Value, 1))
		rows.Close()
	}
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("statement after the cancel request: %v, want 57014", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelled after %v", took)
	}
}

// TestCancelStopsTheBackendStatement: a caller's cancel ends the call with
// QueryCanceled well before the cancel grace (the CancelRequest got
// through), and the connection it was sent for is not reused: the next
// statement runs on a fresh one and is not cancelled.
func TestCancelStopsTheBackendStatement(t *testing.T) {
	b := open(t, backends.Options{StatementTimeout: time.Minute, MaxOpenConns: 1})
	pid := func(ctx context.Context) (int64, error) { return intRows(b, ctx, "SELECT pg_backend_pid()") }
	before, err := pid(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = intRows(b, ctx, "SELECT 1 FROM pg_sleep(20)")
	if !sqlerr.HasCode(err, sqlerr.QueryCanceled) {
		t.Fatalf("cancelled statement: %v, want query_canceled", err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("cancelled call returned after %v, want well within the %v grace", took, 2*time.Second)
	}
	after, err := pid(context.Background())
	if err != nil {
		t.Fatalf("statement after a cancel: %v", err)
	}
	if after == before {
		t.Errorf("the connection a CancelRequest was sent for (pid %d) was reused", before)
	}
	var rows int
	if err := b.Rows(context.Background(), "SELECT 1", []ir.Value{}, func([]string, []ir.Value) error { rows++; return nil }); err != nil || rows != 1 {
		t.Errorf("statement after a cancel: %d rows, %v", rows, err)
	}
}

// TestTLSLeavesCancelToTheDriver: over TLS the handshake cannot be read,
// so no key is found and lib/pq's own CancelRequest still stops a
// cancelled statement. Skipped when the test server has no TLS.
func TestTLSLeavesCancelToTheDriver(t *testing.T) {
	u, err := url.Parse(testDSN(t))
	if err != nil || u.Host == "" {
		t.Skipf("%s is not a postgres:// URL", dsnEnv)
	}
	q := u.Query()
	q.Set("sslmode", "require")
	u.RawQuery = q.Encode()
	conn, cancel, err := keyConnector(t, u.String()).connect(context.Background())
	if err != nil {
		t.Skipf("the test server takes no TLS connection: %v", err)
	}
	conn.Close()
	if cancel != nil {
		t.Fatal("a cancel key was read from a TLS handshake")
	}

	b, err := Open(context.Background(), u.String(), backends.Options{StatementTimeout: time.Minute, MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, stop := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, stop)
	start := time.Now()
	_, err = intRows(b, ctx, "SELECT 1 FROM pg_sleep(20)")
	if !sqlerr.HasCode(err, sqlerr.QueryCanceled) {
		t.Fatalf("cancelled statement over TLS: %v, want query_canceled", err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("cancelled call returned after %v, want well within the cancel grace", took)
	}
	if got, err := intRows(b, context.Background(), "SELECT 7"); err != nil || got != 7 {
		t.Fatalf("statement after a cancel over TLS: %d, %v", got, err)
	}
}

// keyConnector is the backend's connector for dsn, dialing through the
// handshake reader (no session setup).
func keyConnector(t *testing.T, dsn string) *sessionConnector {
	t.Helper()
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	base, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	socks := backends.NewSockets(0)
	base.Dialer(keyDialer{socks})
	return &sessionConnector{base: base, socks: socks}
}
