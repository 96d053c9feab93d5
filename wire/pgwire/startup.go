package pgwire

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// Startup packet codes: the first 4 bytes after the length. A real
// protocol version is major<<16 | minor; the special requests use major
// 1234, which no protocol will ever have.
const (
	codeCancelRequest = 1234<<16 | 5678
	codeSSLRequest    = 1234<<16 | 5679
	codeGSSENCRequest = 1234<<16 | 5680
	// maxStartupPacket is PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
	maxStartupPacket = 10000
	// protocolOptionPrefix marks protocol extension options ("_pq_.x")
	// in the startup parameters; unknown ones are declined with
	// NegotiateProtocolVersion.
	protocolOptionPrefix = "_pq_."
)

type startupKind uint8

const (
	startupMessage startupKind = iota + 1
	sslRequest
	gssEncRequest
	cancelRequest
)

// startupPacket is one decoded packet of the untyped startup phase.
type startupPacket struct {
	kind startupKind
	// StartupMessage:
	major, minor uint16
	params       map[string]string
	options      []string // _pq_.* names the client asked for
	// CancelRequest:
	pid    uint32
	secret []byte
}

// readStartupPacket reads one length-prefixed startup packet from r. It
// reads exactly the packet's bytes, so nothing a client sends after an
// SSLRequest can be buffered here and later mistaken for data that came
// through TLS.
func readStartupPacket(r io.Reader) (startupPacket, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return startupPacket{}, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[:]))
	if n < 8 || n > maxStartupPacket {
		return startupPacket{}, protocolErr("invalid length of startup packet")
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return startupPacket{}, err
	}
	return parseStartupPacket(body)
}

// parseStartupPacket decodes a startup packet body (after the length).
// Any malformation is a protocol violation (08P01).
func parseStartupPacket(body []byte) (startupPacket, error) {
	if len(body) < 4 {
		return startupPacket{}, protocolErr("invalid length of startup packet")
	}
	code := binary.BigEndian.Uint32(body)
	rest := body[4:]
	switch code {
	case codeSSLRequest, codeGSSENCRequest:
		if len(rest) != 0 {
			return startupPacket{}, protocolErr("invalid length of encryption request packet")
		}
		if code == codeSSLRequest {
			return startupPacket{kind: sslRequest}, nil
		}
		return startupPacket{kind: gssEncRequest}, nil
	case codeCancelRequest:
		// Protocol 3.0 keys are 4 bytes; 3.2 allows up to 256.
		if len(rest) < 8 || len(rest) > 4+256 {
			return startupPacket{}, protocolErr("invalid length of cancel request packet")
		}
		return startupPacket{
			kind:   cancelRequest,
			pid:    binary.BigEndian.Uint32(rest),
			secret: bytes.Clone(rest[4:]),
		}, nil
	}
	p := startupPacket{kind: startupMessage, major: uint16(code >> 16), minor: uint16(code)}
	if p.major != 3 {
		// The caller rejects it; the parameters of another protocol are
		// not ours to decode.
		return p, nil
	}
	if len(rest) == 0 || rest[len(rest)-1] != 0 {
		return startupPacket{}, protocolErr("invalid startup packet layout: expected terminator as last byte")
	}
	p.params = make(map[string]string)
	rest = rest[:len(rest)-1]
	for len(rest) > 0 {
		name, after, ok := bytes.Cut(rest, []byte{0})
		if !ok || len(name) == 0 {
			return startupPacket{}, protocolErr("invalid startup packet layout: expected name, value pairs")
		}
		value, after2, ok := bytes.Cut(after, []byte{0})
		if !ok {
			return startupPacket{}, protocolErr("invalid startup packet layout: missing value terminator")
		}
		k := string(name)
		if strings.HasPrefix(k, protocolOptionPrefix) {
			p.options = append(p.options, k)
		} else {
			p.params[k] = string(value)
		}
		rest = after2
	}
	return p, nil
}

// negotiate runs the startup phase: it answers SSLRequest (upgrading to
// TLS when configured) and GSSENCRequest (always 'N'), each at most once,
// and returns the StartupMessage or CancelRequest that follows.
func (c *conn) negotiate() (startupPacket, error) {
	sslDone, gssDone := false, false
	for {
		p, err := readStartupPacket(c.nc)
		if err != nil {
			return p, err
		}
		switch p.kind {
		case sslRequest:
			if sslDone {
				return p, protocolErr("duplicate SSLRequest")
			}
			sslDone = true
			if c.srv.cfg.TLS == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return p, err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return p, err
			}
			tc := tls.Server(c.nc, c.srv.cfg.TLS)
			if err := tc.HandshakeContext(c.ctx); err != nil {
				// Not an *sqlerr.Error: nothing can be said to a client
				// whose handshake failed, the connection just closes.
				return p, fmt.Errorf("tls handshake: %w", err)
			}
			c.nc = tc
			c.tls = true
		case gssEncRequest:
			if gssDone {
				return p, protocolErr("duplicate GSSENCRequest")
			}
			gssDone = true
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return p, err
			}
		default:
			return p, nil
		}
	}
}
