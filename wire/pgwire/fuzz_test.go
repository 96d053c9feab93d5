package pgwire

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// FuzzConn feeds arbitrary bytes to a whole connection (startup, TLS
// negotiation, authentication, then the message loop) over net.Pipe. The
// connection must end by itself once the input ends, and never panic.
// Seeds: testdata/fuzz/FuzzConn (regenerate with PGWIRE_WRITE_CORPUS=1).
func FuzzConn(f *testing.F) {
	h := newFakeHandler()
	h.fuzzing = true
	s := NewServer(Config{Handler: h})
	panics := make(chan any, 1)
	s.onPanic = func(r any) {
		select {
		case panics <- r:
		default:
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		c := s.newConn(server)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.serve()
		}()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_ = client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, _ = client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("connection did not end after its input did")
		}
		select {
		case r := <-panics:
			t.Fatalf("panic: %v", r)
		default:
		}
	})
}

// FuzzStartupPacket checks the startup packet decoder alone: no panic,
// and a decoded StartupMessage has only non-empty parameter names.
func FuzzStartupPacket(f *testing.F) {
	f.Add(append(be32(3<<16), "user\x00bob\x00\x00"...))
	f.Add(append(be32(codeCancelRequest), 0, 0, 0, 1, 1, 2, 3, 4))
	f.Add(be32(codeSSLRequest))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parseStartupPacket(body)
		if err != nil || p.kind != startupMessage {
			return
		}
		for k := range p.params {
			if k == "" {
				t.Fatal("empty parameter name accepted")
			}
		}
	})
}

// fuzzSeeds are the committed FuzzConn seeds: well-formed conversations
// the fuzzer mutates into broken ones.
func fuzzSeeds(t *testing.T) map[string][]byte {
	enc := func(msgs ...pgproto3.FrontendMessage) []byte {
		var b []byte
		for _, m := range msgs {
			var err error
			if b, err = m.Encode(b); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	startup := func(user string) *pgproto3.StartupMessage {
		return &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": user, "database": "db"}}
	}
	return map[string][]byte{
		"simple": enc(startup("trusty"), &pgproto3.Query{String: "rows 2; notice; fail 42601"}, &pgproto3.Terminate{}),
		"extended": enc(startup("trusty"),
			&pgproto3.Parse{Name: "s", Query: "echo int8 text", ParameterOIDs: []uint32{20, 0}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s"},
			&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1, 0},
				Parameters: [][]byte{i8(7), []byte("x")}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{},
			&pgproto3.Parse{Query: "rows 3"}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 2},
			&pgproto3.Execute{}, &pgproto3.Close{ObjectType: 'P'}, &pgproto3.Flush{}, &pgproto3.Sync{}),
		"ssl-then-startup": enc(&pgproto3.SSLRequest{}, &pgproto3.GSSEncRequest{}, startup("trusty"),
			&pgproto3.Query{String: "begin"}, &pgproto3.Query{String: "commit"}),
		"scram": enc(startup("alice"), &pgproto3.SASLInitialResponse{AuthMechanism: scramMechanism,
			Data: []byte("n,,n=,r=rOprNGfwEbeRWgbNEkqO")}, &pgproto3.SASLResponse{Data: []byte("c=biws,r=x,p=AAAA")}),
		"odd-messages": enc(startup("trusty"), &pgproto3.FunctionCall{Function: 1},
			&pgproto3.CopyData{Data: []byte("x")}, &pgproto3.CopyDone{}, &pgproto3.Sync{}),
		"cancel": enc(&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}),
		"protocol32": enc(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
			Parameters: map[string]string{"user": "trusty", "_pq_.x": "y"}}, &pgproto3.Query{String: ""}),
	}
}

// TestWriteFuzzCorpus regenerates testdata/fuzz/FuzzConn when
// PGWIRE_WRITE_CORPUS=1, and otherwise checks the committed seeds exist.
func TestWriteFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzConn")
	seeds := fuzzSeeds(t)
	if os.Getenv("PGWIRE_WRITE_CORPUS") != "1" {
		for name := range seeds {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("seed %s missing (run with PGWIRE_WRITE_CORPUS=1): %v", name, err)
			}
		}
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
