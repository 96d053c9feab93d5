package mysqlwire

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	vtlog "github.com/dolthub/vitess/go/vt/log"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/wire"
)

// ServerVersion is what clients are told they talk to: a MySQL 8.0
// version (connectors pick features by it) marked as the proxy.
const ServerVersion = "8.0.33-ddp-proxy"

// Config configures a Server.
type Config struct {
	Handler Handler
	// TLS, when set, is offered to clients (CLIENT_SSL).
	TLS *tls.Config
	// MaxConnections caps concurrent connections (0: no cap); further
	// clients wait up to a few seconds, then are closed.
	MaxConnections int
	// CachingSHA2First announces caching_sha2_password in the handshake
	// (MySQL 8's default) instead of mysql_native_password. Both are
	// accepted either way; clients switch on request.
	CachingSHA2First bool
	// MaxPacket caps one client command: a statement's text, or one
	// execute's parameters with their long data (0: DefaultMaxPacket). A
	// larger command is answered ER_NET_PACKET_TOO_LARGE and the
	// connection closes, as in MySQL. The session should report the same
	// number as max_allowed_packet, which connectors read to split their
	// long parameters.
	MaxPacket int
	// MaxPreparedStatements and MaxPreparedBytes cap the statements one
	// connection keeps prepared and the total size of their text (0:
	// DefaultMaxPreparedStatements, DefaultMaxPreparedBytes). Over them a
	// COM_STMT_PREPARE fails; the connection stays usable.
	MaxPreparedStatements int
	MaxPreparedBytes      int
	Logger                *slog.Logger
	// PeerID (1 to MaxPeerID), when set, numbers this replica among
	// others behind one load balancer: every connection id carries it
	// (bits 23 to 30, as the PostgreSQL front end's process ids do), so
	// ids are unique across the replicas and a KILL sent to another
	// replica than the one holding the connection meets no connection
	// there (Unknown thread id), instead of one of the same number. 0:
	// off.
	PeerID int
	// PeerSecret and ForwardKill, when both set (and PeerID), carry such
	// a KILL to the replica that holds the connection: ForwardKill(owner,
	// id, key) delivers key, an HMAC of the id, the killer's user name
	// and the kind of KILL under the secret the replicas share, to
	// replica owner, whose server acts on it through KillWithKey. The
	// killer is told OK once it is sent: like a PostgreSQL cancel, it
	// learns nothing of the outcome.
	PeerSecret  []byte
	ForwardKill func(owner int, id uint32, key []byte) error
}

// MaxPeerID is the largest Config.PeerID (the layout is wire's, shared
// with the PostgreSQL front end's process ids).
const MaxPeerID = wire.MaxPeerID

// peerShift is where the peer id sits in a connection id
// (wire.PeerShift); the bits under it are Vitess's counter, wrapping.
const peerShift = wire.PeerShift

// Defaults of the Config limits (the policy's listen section has the
// same defaults).
const (
	DefaultMaxPacket             = 4 << 20
	DefaultMaxPreparedStatements = 1000
	DefaultMaxPreparedBytes      = 16 << 20
)

// Server serves the MySQL protocol.
type Server struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	ln       *mysql.Listener
	conns    map[*mysql.Conn]*connState
	shutdown bool
}

// NewServer returns a Server.
func NewServer(cfg Config) *Server {
	lg := cfg.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	quietVitess()
	// A limit not set (or not positive) takes its default.
	cfg.MaxPacket = cmp.Or(max(cfg.MaxPacket, 0), DefaultMaxPacket)
	cfg.MaxPreparedStatements = cmp.Or(max(cfg.MaxPreparedStatements, 0), DefaultMaxPreparedStatements)
	cfg.MaxPreparedBytes = cmp.Or(max(cfg.MaxPreparedBytes, 0), DefaultMaxPreparedBytes)
	return &Server{cfg: cfg, log: lg, conns: map[*mysql.Conn]*connState{}}
}

var quietOnce sync.Once

// quietVitess routes Vitess's logging (package-level functions over the
// standard library logger, whose messages can quote client SQL and
// passwords' users) to nowhere. It is process-wide by Vitess's design;
// the proxy logs connection events itself through slog.
func quietVitess() {
	quietOnce.Do(func() {
		discard := log.New(io.Discard, "", 0)
		vtlog.Info, vtlog.Warning, vtlog.Error = discard.Print, discard.Print, discard.Print
		vtlog.Infof, vtlog.Warningf, vtlog.Errorf = discard.Printf, discard.Printf, discard.Printf
	})
}

// Serve accepts connections on ln until Shutdown. ctx is the parent of
// every connection's query contexts.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	h := &handler{s: s, ctx: ctx}
	maxConns := uint64(0)
	if s.cfg.MaxConnections > 0 {
		maxConns = uint64(s.cfg.MaxConnections)
	}
	l, err := mysql.NewListenerWithConfig(mysql.ListenerConfig{
		// Every connection is read through a guard that enforces
		// MaxPacket before Vitess buffers anything (guard.go).
		Listener:            guardListener{Listener: ln, limit: s.cfg.MaxPacket, log: s.log},
		AuthServer:          &authServer{h: s.cfg.Handler, sha2First: s.cfg.CachingSHA2First, s: s},
		Handler:             h,
		MaxConns:            maxConns,
		MaxWaitConns:        uint32(max(maxConns, 16)),
		MaxWaitConnsTimeout: 5e9,
		// A buffered reader is also what Vitess's TLS upgrade resets:
		// without one the upgrade dereferences nil.
		ConnReadBufferSize: mysql.DefaultConnBufferSize,
	})
	if err != nil {
		return err
	}
	l.ServerVersion = ServerVersion
	if s.cfg.TLS != nil {
		l.TLSConfig = s.cfg.TLS
	}
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln = l
	s.mu.Unlock()
	l.Accept()
	return nil
}

// Shutdown stops accepting and closes idle connections; connections
// running a statement are closed when it ends (its budget charge is
// committed either way), or when ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	if s.ln != nil {
		s.ln.Close()
	}
	s.mu.Unlock()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		for c, st := range s.conns {
			if !st.busy {
				c.Close()
			}
		}
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			s.mu.Lock()
			for c := range s.conns {
				c.Close()
			}
			s.mu.Unlock()
			return errors.New("mysqlwire: connections still busy at the end of the shutdown grace period were closed")
		case <-tick.C:
		}
	}
}

// connState is what the Server tracks per connection.
type connState struct {
	busy   bool
	cancel context.CancelFunc // of the running statement, for KILL QUERY
}

// begin marks c busy with a statement and returns its context; end must
// follow.
func (s *Server) begin(ctx context.Context, c *mysql.Conn) (context.Context, func()) {
	qctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if st := s.conns[c]; st != nil {
		st.busy, st.cancel = true, cancel
	}
	s.mu.Unlock()
	// KILL is read by the session's parser and run here (Kill).
	qctx = context.WithValue(qctx, killerKey{}, killer(func(id uint32, queryOnly bool) error { return s.kill(c, id, queryOnly) }))
	return qctx, func() {
		s.mu.Lock()
		if st := s.conns[c]; st != nil {
			st.busy, st.cancel = false, nil
		}
		s.mu.Unlock()
		cancel()
	}
}

// kill handles KILL [QUERY|CONNECTION] id from conn by: a user may kill
// only their own connections (the mysql CLI sends KILL QUERY on a second
// connection when the user presses Ctrl-C).
func (s *Server) kill(by *mysql.Conn, id uint32, queryOnly bool) error {
	if p, owner := wire.Peer(s.cfg.PeerID), wire.PeerOf(id); p > 0 && owner != p {
		if s.cfg.ForwardKill != nil && len(s.cfg.PeerSecret) > 0 {
			if err := s.cfg.ForwardKill(owner, id, s.killKey(id, by.User, queryOnly)); err != nil {
				s.log.Warn("cannot forward a KILL to its replica", "peer_id", owner, "err", err)
				return sqlerr.New(sqlerr.PeerUnavailable, "thread %d is a connection of replica %d, which cannot be reached: %v", id, owner, err)
			}
			return nil
		}
		return sqlerr.New(sqlerr.NoSuchThread, "Unknown thread id: %d (a connection of replica %d: this is replica %d)", id, owner, p).
			WithHint("run KILL on the replica that holds the connection; replicas that share listen.peer_secret_env forward it")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, st := s.connByID(id)
	switch {
	case c == nil:
		return sqlerr.New(sqlerr.NoSuchThread, "Unknown thread id: %d", id)
	case c.User != by.User:
		return sqlerr.New(sqlerr.InsufficientPrivilege, "You are not owner of thread %d", id)
	}
	stop(c, st, !queryOnly && c != by)
	return nil
}

// connByID is the open connection with that id, or nil (s.mu held).
func (s *Server) connByID(id uint32) (*mysql.Conn, *connState) {
	for c, st := range s.conns {
		if c.ConnectionID == id {
			return c, st
		}
	}
	return nil, nil
}

// stop is what a KILL does to connection c: cancel its running statement
// and, for KILL CONNECTION (closeConn), close it (s.mu held).
func stop(c *mysql.Conn, st *connState, closeConn bool) {
	if st.cancel != nil {
		st.cancel()
	}
	if closeConn {
		c.Close()
	}
}

// killKey is the key of a KILL of connection id by user, forwarded
// between replicas: HMAC-SHA256 under the shared secret, so only a
// replica that knows it can ask, and only for the connection's own user.
func (s *Server) killKey(id uint32, user string, queryOnly bool) []byte {
	m := hmac.New(sha256.New, s.cfg.PeerSecret)
	m.Write([]byte("ddp-proxy mysql kill v1\x00"))
	m.Write(binary.BigEndian.AppendUint32(nil, id))
	if queryOnly {
		m.Write([]byte{1})
	} else {
		m.Write([]byte{0})
	}
	m.Write([]byte(user))
	return m.Sum(nil)
}

// KillWithKey acts on a KILL forwarded by another replica (Config
// ForwardKill): it cancels the running statement of connection id — and
// closes the connection for KILL CONNECTION — when key is that KILL's
// key for the connection's user, and reports whether it did. Without a
// peer secret nothing is accepted.
func (s *Server) KillWithKey(id uint32, key []byte) bool {
	if len(s.cfg.PeerSecret) == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, st := s.connByID(id)
	if c == nil {
		return false
	}
	for _, queryOnly := range []bool{true, false} {
		if hmac.Equal(key, s.killKey(id, c.User, queryOnly)) {
			stop(c, st, !queryOnly)
			return true
		}
	}
	return false
}

// Conns returns the number of open client connections (metrics).
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
