package mysqlwire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MySQL framing, client to server: a 3-byte little-endian payload length,
// a sequence number, the payload. A payload of maxPayload bytes continues
// in the next packet; a message (one command) ends with a shorter packet.
const (
	headerLen  = 4
	maxPayload = 1<<24 - 1

	// handshakeLimit caps one message of the connection phase (handshake
	// response, authentication data): clients send a few hundred bytes.
	handshakeLimit = 64 << 10
	// opaqueBudget caps what a client may send over TLS before it has
	// authenticated (TLS handshake, certificates, handshake response),
	// while the guard under TLS cannot see the packets.
	opaqueBudget = 256 << 10
	// drainTime bounds how long the rest of an oversized command is read
	// and thrown away before the error goes out.
	drainTime = 10 * time.Second

	capabilityClientSSL = 0x0800

	comStmtExecute      = 0x17
	comStmtSendLongData = 0x18
	comStmtClose        = 0x19
	comStmtReset        = 0x1a
)

// errPacketTooLarge ends a connection whose client sent a command over the
// limit, after the ERR packet went out.
var errPacketTooLarge = errors.New("mysqlwire: command larger than max_allowed_packet")

// guard is the net.Conn Vitess reads a client through. It follows the
// packet framing one step ahead of Vitess, which would otherwise allocate
// whatever a length header announces and join continuation packets
// without bound (a 100 MB COM_QUERY took 1.1 GB), and enforces the limits
// before anything is buffered:
//
//   - A command whose payload exceeds limit is never handed on: the rest
//     of it is read and discarded (for up to drainTime), the client gets
//     ER_NET_PACKET_TOO_LARGE (1153, 08S01) with the sequence number it
//     expects, and the connection closes — what MySQL does, except that
//     MySQL closes at once, so its clients often see a reset instead.
//   - COM_STMT_SEND_LONG_DATA chunks, which Vitess appends to the
//     statement's parameters with no response and no handler call, count
//     per statement against limit; once over, further chunks of that
//     statement are dropped and its next execute fails (MySQL's own
//     behaviour: the error is reported at execute, the connection lives).
//   - Messages of the connection phase are capped at handshakeLimit.
//
// Over TLS the guard first sits under the TLS connection, sees the
// SSLRequest, and then passes the encrypted bytes through with a small
// budget (opaque mode); once the client authenticates, a second guard is
// installed above the TLS connection (see installGuard) and the first one
// lifts its budget. Writes, deadlines and Close go to the connection
// below unchanged.
type guard struct {
	net.Conn
	br    *bufio.Reader
	limit int
	log   *slog.Logger

	pending []byte // header bytes to hand out before the packet's payload
	hdr     [headerLen]byte
	left    int  // payload bytes of the current packet still to hand out or drop
	drop    bool // the current message is dropped
	inMsg   bool // the last packet was maxPayload long: the message goes on
	msgLen  int
	msgMax  int
	sslNext bool // the current packet is an SSLRequest: opaque after it
	started bool // the client's first message was seen

	opaque bool
	budget int // opaque mode: bytes still allowed; < 0 once lifted

	curStmt  uint32
	longMsg  bool            // the current message is COM_STMT_SEND_LONG_DATA
	longData map[uint32]int  // long data bytes per statement since its last execute
	longOver map[uint32]bool // statements whose long data went over limit
	err      error
}

// newGuard reads from src (the socket, or the TLS connection over it) and
// writes to c. started is false for a guard that sees the connection from
// its first byte.
func newGuard(c net.Conn, src io.Reader, limit int, started bool, log *slog.Logger) *guard {
	return &guard{
		Conn: c, br: bufio.NewReaderSize(src, 16<<10), limit: limit, log: log, started: started, budget: -1,
		longData: map[uint32]int{}, longOver: map[uint32]bool{},
	}
}

// Read hands out the client's bytes, a packet at a time.
func (g *guard) Read(p []byte) (int, error) {
	for {
		if g.err != nil {
			return 0, g.err
		}
		if g.opaque {
			return g.readOpaque(p)
		}
		if len(g.pending) > 0 {
			n := copy(p, g.pending)
			g.pending = g.pending[n:]
			return n, nil
		}
		if g.left > 0 {
			if g.drop {
				n, err := g.br.Discard(g.left)
				g.left -= n
				if err != nil {
					g.err = err
				}
				continue
			}
			n, err := g.br.Read(p[:min(len(p), g.left)])
			g.left -= n
			if err != nil && n == 0 {
				g.err = err
			}
			return n, nil
		}
		if g.sslNext {
			// TLS starts after the SSLRequest: from here on the bytes
			// are encrypted.
			g.sslNext, g.opaque, g.budget = false, true, opaqueBudget
			continue
		}
		g.err = g.next()
	}
}

func (g *guard) readOpaque(p []byte) (int, error) {
	if g.budget >= 0 {
		if g.budget == 0 {
			g.err = errors.New("mysqlwire: too much data before authentication")
			return 0, g.err
		}
		p = p[:min(len(p), g.budget)]
	}
	n, err := g.br.Read(p)
	if g.budget >= 0 {
		g.budget -= n
	}
	return n, err
}

// lift ends the opaque budget: a guard above TLS has taken over.
func (g *guard) lift() { g.budget = -1 }

// next reads the next packet header and decides what becomes of the
// packet.
func (g *guard) next() error {
	if _, err := io.ReadFull(g.br, g.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return io.EOF
		}
		return err
	}
	length := int(g.hdr[0]) | int(g.hdr[1])<<8 | int(g.hdr[2])<<16
	seq := g.hdr[3]
	if !g.inMsg {
		g.msgLen, g.drop, g.longMsg = 0, false, false
		// Commands start at sequence 0; connection-phase messages
		// never do.
		g.msgMax = g.limit
		if seq != 0 {
			g.msgMax = handshakeLimit
		}
		if err := g.inspect(seq, length); err != nil {
			return err
		}
	} else if g.longMsg {
		// A long-data chunk over several packets (limits above 16 MiB).
		g.longData[g.curStmt] += length
		if !g.drop && g.longData[g.curStmt] > g.limit {
			// Part of it went to Vitess already: it cannot be dropped.
			return g.tooLarge(seq, length)
		}
	}
	g.msgLen += length
	if g.msgLen > g.msgMax && !g.drop {
		return g.tooLarge(seq, length)
	}
	g.inMsg = length == maxPayload
	g.left = length
	if !g.drop {
		g.pending = g.hdr[:]
	}
	return nil
}

// inspect looks at the first bytes of a message: an SSLRequest, or the
// prepared-statement commands whose long data the guard accounts for.
func (g *guard) inspect(seq byte, length int) error {
	first := !g.started
	g.started = true
	if first && seq == 1 && length == 32 {
		b, err := g.br.Peek(4)
		if err != nil {
			return err
		}
		g.sslNext = binary.LittleEndian.Uint32(b)&capabilityClientSSL != 0
		return nil
	}
	if seq != 0 || length < 5 {
		return nil
	}
	b, err := g.br.Peek(5)
	if err != nil {
		return err
	}
	stmt := binary.LittleEndian.Uint32(b[1:5])
	switch b[0] {
	case comStmtSendLongData:
		g.curStmt, g.longMsg = stmt, true
		// The chunk follows the command byte, statement and parameter ids.
		chunk := max(length-7, 0)
		if g.longOver[stmt] || g.longData[stmt]+chunk > g.limit {
			g.longOver[stmt] = true
			g.drop = true
		}
		g.longData[stmt] += chunk
	case comStmtExecute:
		// Vitess starts the statement's parameters afresh after an
		// execute; the overflow mark stays for the handler to report.
		delete(g.longData, stmt)
	case comStmtReset, comStmtClose:
		delete(g.longData, stmt)
		delete(g.longOver, stmt)
	}
	return nil
}

// takeLongDataOverflow reports, once, whether stmt's long data went over
// the limit since its last execute.
func (g *guard) takeLongDataOverflow(stmt uint32) bool {
	over := g.longOver[stmt]
	delete(g.longOver, stmt)
	return over
}

// tooLarge answers a command over the limit: the rest of it is discarded,
// the client gets ER_NET_PACKET_TOO_LARGE with the sequence number that
// follows its last packet, and the connection ends.
func (g *guard) tooLarge(seq byte, length int) error {
	g.log.Info("client command larger than max_allowed_packet; closing the connection", "remote", g.RemoteAddr().String(), "limit", g.limit)
	_ = g.SetReadDeadline(time.Now().Add(drainTime))
	last, err := g.discardMessage(seq, length)
	if err != nil {
		// The client stopped sending, or took too long: answer with the
		// sequence number of what arrived, as MySQL does.
		g.log.Debug("discarding the rest of an oversized command", "err", err)
	}
	_ = g.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = g.Conn.Write(errPacket(last+1, sqlerr.PacketTooLarge.MySQLErrno, sqlerr.PacketTooLarge.MySQLState,
		"Got a packet bigger than 'max_allowed_packet' bytes (the proxy's listen.max_query_bytes)"))
	return errPacketTooLarge
}

// discardMessage throws away the payload of the current packet and of the
// message's continuation packets, and returns the last sequence number.
func (g *guard) discardMessage(seq byte, length int) (byte, error) {
	for {
		if _, err := g.br.Discard(length); err != nil {
			return seq, err
		}
		if length < maxPayload {
			return seq, nil
		}
		if _, err := io.ReadFull(g.br, g.hdr[:]); err != nil {
			return seq, err
		}
		length = int(g.hdr[0]) | int(g.hdr[1])<<8 | int(g.hdr[2])<<16
		seq = g.hdr[3]
	}
}

// errPacket encodes an ERR packet (protocol 4.1).
func errPacket(seq byte, errno uint16, state, msg string) []byte {
	n := 1 + 2 + 1 + 5 + len(msg)
	b := make([]byte, 0, headerLen+n)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), seq, 0xff, byte(errno), byte(errno>>8), '#')
	b = append(b, state...)
	return append(b, msg...)
}

// guardListener wraps every accepted connection in a guard.
type guardListener struct {
	net.Listener
	limit int
	log   *slog.Logger
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newGuard(c, c, l.limit, false, l.log), nil
}
