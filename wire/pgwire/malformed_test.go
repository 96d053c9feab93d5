package pgwire

import (
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestMalformedInput sends broken bytes at each stage. The server must
// answer FATAL 08P01 (when wantCode is set) or just close, never panic
// (startServer fails the test on a panic), and keep serving others.
func TestMalformedInput(t *testing.T) {
	ts := startServer(t, Config{})
	startup := func(user string) []byte {
		b, err := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": user}}).Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name      string
		afterAuth bool   // run the trust startup first
		bytes     []byte // then send these and half-close
		wantCode  string // "" = the server may just close
	}{
		{"startup length below minimum", false, be32(4), "08P01"},
		{"startup length huge", false, cat(be32(0x7fffffff), be32(196608)), "08P01"},
		{"HTTP request", false, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "08P01"},
		{"truncated startup", false, cat(be32(100), be32(196608), []byte("user")), ""},
		{"startup without terminator", false, cat(be32(15), be32(196608), []byte("user\x00ab")), "08P01"},
		{"startup with empty name", false, cat(be32(12), be32(196608), []byte{0, 'x', 0, 0}), "08P01"},
		{"SSLRequest with a body", false, cat(be32(12), be32(codeSSLRequest), be32(0)), "08P01"},
		{"cancel request too short", false, cat(be32(12), be32(codeCancelRequest), be32(1)), "08P01"},
		{"query instead of SASL", false, cat(startup("alice"), []byte{'Q', 0, 0, 0, 6, 'x', 0}), "08P01"},
		{"garbage SASL", false, cat(startup("alice"), []byte{'p', 0, 0, 0, 4}), "08P01"},
		{"wrong SASL mechanism", false, cat(startup("alice"),
			[]byte{'p', 0, 0, 0, 14}, []byte("PLAIN\x00"), be32(0)), "08P01"},
		{"unknown message type", true, []byte{'Y', 0, 0, 0, 4}, "08P01"},
		{"message length below 4", true, []byte{'Q', 0, 0, 0, 2}, "08P01"},
		{"message over the size cap", true, cat([]byte{'Q'}, be32(200<<20)), "54000"},
		{"query without terminator", true, []byte{'Q', 0, 0, 0, 6, 'a', 'b'}, "08P01"},
		{"bind with garbage body", true, []byte{'B', 0, 0, 0, 6, 0xff, 0xff}, "08P01"},
		{"truncated message", true, []byte{'Q', 0, 0, 0, 100, 'r'}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rc *rawConn
			if tc.afterAuth {
				rc = ts.rawStartup(t)
			} else {
				rc = ts.dialRaw(t)
			}
			if _, err := rc.nc.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.wantCode == "" {
				// Half-close: the server sees EOF mid-packet.
				_ = rc.nc.(interface{ CloseWrite() error }).CloseWrite()
			}
			var gotErr *pgproto3.ErrorResponse
			for {
				m, err := rc.fe.Receive()
				if err != nil {
					if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
						t.Logf("read ended with %v", err)
					}
					break
				}
				if e, ok := m.(*pgproto3.ErrorResponse); ok {
					gotErr = e
				}
			}
			switch {
			case tc.wantCode == "" && gotErr != nil:
				t.Errorf("got error %s, want a silent close", gotErr.Code)
			case tc.wantCode != "" && (gotErr == nil || gotErr.Code != tc.wantCode || gotErr.Severity != "FATAL"):
				t.Errorf("got %+v, want FATAL %s then close", gotErr, tc.wantCode)
			}
		})
	}
	// The server still serves.
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	if got := queryFakeRows(t, conn, "rows 1"); len(got) != 1 {
		t.Errorf("%d rows after the malformed connections", len(got))
	}
}
