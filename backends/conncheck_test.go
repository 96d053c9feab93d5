//go:build unix

package backends

import (
	"net"
	"testing"
	"time"
)

// TestStaleSocket: an idle open connection is fresh; one on which the
// peer sent something unasked, or which the peer closed, is stale. The
// peek consumes nothing, and Write counts the bytes sent.
func TestStaleSocket(t *testing.T) {
	tests := []struct {
		name  string
		peer  func(net.Conn)
		stale bool
	}{
		{"idle", func(net.Conn) {}, false},
		{"unasked data", func(c net.Conn) { _, _ = c.Write([]byte("E")) }, true},
		{"closed by the peer", func(c net.Conn) { c.Close() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err == nil {
					accepted <- c
				}
				close(accepted)
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			sk := &socket{Conn: c, owner: NewSockets(0)}
			defer sk.Close()
			peer := <-accepted
			if peer == nil {
				t.Fatal("no connection accepted")
			}
			defer peer.Close()
			if n, err := sk.Write([]byte("hello")); err != nil || n != 5 || sk.sent.Load() != 5 {
				t.Fatalf("Write: %d, %v; sent %d, want 5", n, err, sk.sent.Load())
			}
			tt.peer(peer)
			// The peer's byte or FIN travels over loopback: give it time.
			deadline := time.Now().Add(2 * time.Second)
			got := sk.stale()
			for got != tt.stale && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				got = sk.stale()
			}
			if got != tt.stale {
				t.Fatalf("stale = %v, want %v", got, tt.stale)
			}
			if tt.name == "unasked data" {
				// The peek left the byte for the driver.
				buf := make([]byte, 1)
				_ = sk.SetReadDeadline(time.Now().Add(time.Second))
				if n, err := sk.Read(buf); n != 1 || err != nil || buf[0] != 'E' {
					t.Fatalf("after the peek: read %d %q, %v; want the byte E", n, buf[:n], err)
				}
			}
		})
	}
}
