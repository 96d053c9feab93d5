package pgwire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// dialRawTLS connects, asks for TLS with an SSLRequest and returns a raw
// client on the TLS connection (nothing sent yet after the handshake).
func (ts *testServer) dialRawTLS(t *testing.T) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { nc.Close() })
	req := binary.BigEndian.AppendUint32(nil, 8)
	req = binary.BigEndian.AppendUint32(req, 80877103)
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := nc.Read(b); err != nil || b[0] != 'S' {
		t.Fatalf("SSLRequest answered %q, %v; want S", b, err)
	}
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return &rawConn{t: t, nc: tc, fe: pgproto3.NewFrontend(tc, tc)}
}

// startupAuth sends a StartupMessage for user and returns the first
// authentication request the server sends.
func startupAuth(t *testing.T, rc *rawConn, user string) pgproto3.BackendMessage {
	t.Helper()
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": user, "database": "db"}})
	_, m := rc.recv(t)
	return m
}

// TestCleartextOnlyOverTLS: with CleartextOverTLS, a TLS client is asked
// for its cleartext password, which is checked against a password or a
// SCRAM verifier (same error for wrong password, unknown user and a user
// without usable credentials); a client without TLS still gets SCRAM, so
// no password ever crosses the network in the clear. Without the option,
// TLS clients get SCRAM too.
func TestCleartextOnlyOverTLS(t *testing.T) {
	cfg, _ := selfSigned(t)
	ts := startServer(t, Config{TLS: cfg, CleartextOverTLS: true})

	tests := []struct {
		name, user, password string
		ok                   bool
	}{
		{"password user", "alice", alicePassword, true},
		{"verifier user", "verif", "secret", true},
		{"wrong password", "alice", "nope", false},
		{"wrong password for verifier", "verif", "nope", false},
		{"unknown user", "mallory", "anything", false},
		{"user without credentials", "nopass", "", false},
		{"empty password", "alice", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := ts.dialRawTLS(t)
			if _, ok := startupAuth(t, rc, tc.user).(*pgproto3.AuthenticationCleartextPassword); !ok {
				t.Fatal("TLS client was not asked for a cleartext password")
			}
			rc.send(&pgproto3.PasswordMessage{Password: tc.password})
			got, _ := rc.recv(t)
			if tc.ok && got != "R:ok" {
				t.Fatalf("got %s, want AuthenticationOk", got)
			}
			if !tc.ok && got != "E:28P01" {
				t.Fatalf("got %s, want FATAL 28P01", got)
			}
			if tc.ok {
				rc.until(t, 'Z')
			}
		})
	}

	t.Run("no TLS gets SCRAM", func(t *testing.T) {
		rc := ts.dialRaw(t)
		m := startupAuth(t, rc, "alice")
		sasl, ok := m.(*pgproto3.AuthenticationSASL)
		if !ok || len(sasl.AuthMechanisms) != 1 || sasl.AuthMechanisms[0] != scramMechanism {
			t.Fatalf("plain client got %T %+v, want AuthenticationSASL SCRAM-SHA-256", m, m)
		}
	})

	t.Run("pgx over TLS", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, "postgres://verif:secret@"+ts.addr+"/db?sslmode=require")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, isTLS := conn.PgConn().Conn().(*tls.Conn); !isTLS {
			t.Fatal("pgx did not use TLS")
		}
		if got := queryFakeRows(t, conn, "rows 2"); len(got) != 2 {
			t.Errorf("%d rows", len(got))
		}
	})

	t.Run("SCRAM over TLS without the option", func(t *testing.T) {
		plain := startServer(t, Config{TLS: cfg})
		rc := plain.dialRawTLS(t)
		if _, ok := startupAuth(t, rc, "alice").(*pgproto3.AuthenticationSASL); !ok {
			t.Fatal("TLS client without CleartextOverTLS was not offered SCRAM")
		}
	})
}
