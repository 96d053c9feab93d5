package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
)

// The engine cancels a statement with the connection's CancelRequest
// itself (backends.SetCanceler), so that lib/pq need not watch a context
// per statement: lib/pq starts a goroutine per call for that, whose
// start and wake-up cost about a third of the proxy's CPU per backend
// statement. The request needs the connection's process id and secret
// key, which PostgreSQL sends in its BackendKeyData during the startup
// handshake and lib/pq does not expose; keyConn reads them as they pass.
// Only a plaintext handshake can be read: over TLS (or GSS encryption)
// no key is found and lib/pq cancels by itself, as before.

// Startup packet codes of the protocol (the int32 after the length).
const (
	sslRequestCode    = 80877103
	gssencRequestCode = 80877104
	cancelRequestCode = 80877102
)

// handshakeMax bounds the startup bytes keyConn keeps while it looks for
// the key (authentication and parameter messages are a few hundred).
const handshakeMax = 64 << 10

// keyDialer dials through the pool's sockets and, for a connection
// attempt of sessionConnector.open (a keySlot in ctx), wraps the
// connection in a keyConn.
type keyDialer struct{ socks *backends.Sockets }

type keySlotKey struct{}

// keySlot receives the connections dialed during one attempt; the last
// one is the connection's (lib/pq dials one per host it tries).
type keySlot struct{ last *keyConn }

func (d keyDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.socks.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	ks, ok := ctx.Value(keySlotKey{}).(*keySlot)
	if !ok {
		// lib/pq's own CancelRequest connections.
		return c, nil
	}
	kc := &keyConn{Conn: c, network: network, addr: addr, hs: &handshake{}}
	ks.last = kc
	return kc, nil
}

func (d keyDialer) Dial(network, addr string) (net.Conn, error) {
	return d.socks.Dial(network, addr)
}

func (d keyDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	return d.socks.DialTimeout(network, addr, timeout)
}

// keyConn is a backend connection whose startup handshake is read for
// its cancel key. Only the driver's goroutine uses hs, during the
// connection attempt; open ends it before the connection is pooled.
type keyConn struct {
	net.Conn
	network, addr string
	hs            *handshake
}

func (c *keyConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.hs != nil && n > 0 {
		c.hs.read(p[:n])
	}
	return n, err
}

func (c *keyConn) Write(p []byte) (int, error) {
	if c.hs != nil {
		c.hs.wrote(p)
	}
	return c.Conn.Write(p)
}

// canceler returns the function that sends the connection's
// CancelRequest, or nil when the handshake showed no key; it ends the
// reading of the handshake.
func (c *keyConn) canceler(socks *backends.Sockets) func(context.Context) error {
	hs := c.hs
	c.hs = nil
	if hs == nil || hs.state != hsDone || hs.secret == nil {
		return nil
	}
	req := make([]byte, 0, 12+len(hs.secret))
	req = binary.BigEndian.AppendUint32(req, uint32(12+len(hs.secret)))
	req = binary.BigEndian.AppendUint32(req, cancelRequestCode)
	req = binary.BigEndian.AppendUint32(req, hs.pid)
	req = append(req, hs.secret...)
	network, addr := c.network, c.addr
	return func(ctx context.Context) error {
		return sendCancel(ctx, socks, network, addr, req)
	}
}

// sendCancel delivers a CancelRequest as lib/pq does: on a new
// connection to the same server, read until the server closes it, so
// that the request has arrived when it returns. The pool's dialer bounds
// the connection by the connect timeout.
func sendCancel(ctx context.Context, socks *backends.Sockets, network, addr string, req []byte) error {
	ctx, cancel := context.WithTimeout(ctx, socks.ConnectTimeout())
	defer cancel()
	c, err := socks.DialContext(ctx, network, addr)
	if err != nil {
		return fmt.Errorf("postgres: cancel request: %w", err)
	}
	defer c.Close()
	if _, err := c.Write(req); err != nil {
		return fmt.Errorf("postgres: cancel request: %w", err)
	}
	if _, err := io.Copy(io.Discard, c); err != nil {
		return fmt.Errorf("postgres: cancel request: %w", err)
	}
	return nil
}

// handshake follows the start of a connection, client bytes (wrote) and
// server bytes (read), to the first ReadyForQuery, and keeps the
// BackendKeyData it saw.
type handshake struct {
	state  hsState
	buf    []byte // server bytes of the message being read
	pid    uint32
	secret []byte
}

type hsState int

const (
	hsStartup  hsState = iota // waiting for the client's first packet
	hsAnswer                  // waiting for the one-byte answer to SSLRequest or GSSENCRequest
	hsMessages                // reading the server's messages
	hsDone                    // ReadyForQuery seen
	hsLost                    // encrypted, malformed or too long: no key
)

// wrote sees a packet the client sent. Once the server's messages are
// being read, the client's (authentication answers) carry nothing to
// look for.
func (h *handshake) wrote(p []byte) {
	switch h.state {
	case hsStartup:
	case hsAnswer:
		h.state = hsLost
		return
	default:
		return
	}
	if len(p) < 8 {
		h.state = hsLost
		return
	}
	switch code := binary.BigEndian.Uint32(p[4:8]); {
	case code == sslRequestCode, code == gssencRequestCode:
		h.state = hsAnswer
	case code>>16 == 3: // StartupMessage, protocol 3.x
		h.state = hsMessages
	default:
		h.state = hsLost // a direct TLS handshake, or unknown
	}
}

// read sees bytes the server sent.
func (h *handshake) read(p []byte) {
	switch h.state {
	case hsAnswer:
		if len(p) == 1 && p[0] == 'N' {
			// Refused: the client may go on in plaintext.
			h.state = hsStartup
			return
		}
		h.state = hsLost // 'S' or 'G': encrypted from here on
		return
	case hsMessages:
	case hsStartup:
		h.state = hsLost // the server spoke first
		return
	default:
		return
	}
	h.buf = append(h.buf, p...)
	for h.state == hsMessages && len(h.buf) >= 5 {
		n := binary.BigEndian.Uint32(h.buf[1:5])
		if n < 4 || n > handshakeMax {
			h.state = hsLost
			return
		}
		if len(h.buf) < 1+int(n) {
			break
		}
		body := h.buf[5 : 1+n]
		switch h.buf[0] {
		case 'K': // BackendKeyData: process id, secret key (4 to 256 bytes)
			if len(body) < 8 || len(body) > 4+256 {
				h.state = hsLost
				return
			}
			h.pid = binary.BigEndian.Uint32(body)
			h.secret = append([]byte(nil), body[4:]...)
		case 'Z':
			h.state = hsDone
		case 'E':
			h.state = hsLost
		}
		h.buf = h.buf[1+n:]
	}
	if len(h.buf) > handshakeMax {
		h.state = hsLost
	}
}
