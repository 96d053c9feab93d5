package pgwire

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/wire"
)

// Config configures a Server.
type Config struct {
	// Handler authenticates users and opens sessions. Required.
	Handler Handler
	// TLS, when set, lets clients upgrade with SSLRequest; nil answers
	// SSLRequest with 'N' and the client continues in plain text (or
	// gives up, with sslmode=require).
	TLS *tls.Config
	// CleartextOverTLS asks clients on TLS connections for their password
	// in cleartext (AuthenticationCleartextPassword), for clients that
	// cannot do SCRAM; it is checked against the user's password or SCRAM
	// verifier. Connections without TLS always get SCRAM, so a password
	// never crosses the network in the clear.
	CleartextOverTLS bool
	// MaxConnections caps the established connections (0 = unlimited).
	// Over the cap a client gets FATAL 53300 after its startup message.
	// Cancel requests are never refused by the cap.
	MaxConnections int
	// MaxMessageBytes caps one message after authentication: a query's
	// text, a Parse, a Bind with its parameters (0: DefaultMaxMessageBytes).
	// A larger message is never read into memory: the client gets FATAL
	// 54000 and the connection closes, as PostgreSQL closes on a message
	// over its own limit.
	MaxMessageBytes int
	// MaxPreparedStatements caps the prepared statements one connection
	// keeps, and the open portals; MaxPreparedBytes caps the total text of
	// the statements (0: the defaults). Over them a Parse or Bind fails
	// with 54000 and the connection stays usable.
	MaxPreparedStatements int
	MaxPreparedBytes      int
	// Logger receives connection events with conn_id and user attached;
	// nil discards. Query text and parameters are never logged.
	Logger *slog.Logger
	// PeerID and Peers let replicas behind a load balancer honour one
	// another's cancel requests, as PgBouncer's peering does: a client
	// sends its CancelRequest on a new connection, which the balancer
	// may give to any replica. With PeerID set (1 to MaxPeerID), every
	// connection's process id carries it (bits 23 to 30), and a
	// CancelRequest whose process id names another peer is forwarded,
	// as the client sent it, to that peer's address in Peers (the
	// address of its PostgreSQL listener; an entry for PeerID itself is
	// ignored, so every replica can list the same peers). 0: off.
	PeerID int
	Peers  map[int]string
	// ForeignCancel, when set, receives the cancel requests for this peer
	// whose key is not one this server issues (those are 4 bytes): the
	// MySQL front end's KILLs forwarded by other replicas (SendCancel),
	// keyed with the replicas' shared secret. Nil: they are ignored.
	ForeignCancel func(pid uint32, key []byte)
}

// MaxPeerID is the largest Config.PeerID (the layout is wire's, shared
// with the MySQL front end's connection ids).
const MaxPeerID = wire.MaxPeerID

// peerShift is where the peer id sits in a process id (wire.PeerShift).
const peerShift = wire.PeerShift

// peerCancelTimeout bounds forwarding one cancel request to a peer.
const peerCancelTimeout = 2 * time.Second

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pgwire: server closed")

// Limits. PostgreSQL allows 1 GiB messages; the proxy only takes aggregate
// SQL, so a far smaller cap bounds what one client can make us allocate
// (the policy's listen section has the same defaults).
const (
	DefaultMaxMessageBytes       = 4 << 20
	DefaultMaxPreparedStatements = 1000
	DefaultMaxPreparedBytes      = 16 << 20
	// authMaxBody bounds messages before authentication (SASL exchange).
	authMaxBody = 16 << 10
	// startupTimeout bounds startup, TLS handshake and authentication,
	// like PostgreSQL's authentication_timeout.
	startupTimeout = 60 * time.Second
	// scramIterations is the PBKDF2 count for credentials derived from
	// cleartext passwords (PostgreSQL's scram_iterations default).
	scramIterations = 4096
)

// Server accepts PostgreSQL clients and serves them through a Handler.
type Server struct {
	cfg Config
	log *slog.Logger

	// secret is a random per-server key: it salts the SCRAM credentials
	// derived from cleartext passwords and makes the fake credentials of
	// unknown users stable per name, as a real user's would be.
	secret [32]byte
	creds  credCache

	connSeq atomic.Uint64
	active  atomic.Int64 // established connections, for MaxConnections

	// base is the parent of every connection context; forced shutdown
	// cancels it, which cancels every running query.
	base      context.Context
	cancelAll context.CancelFunc

	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	byPID     map[uint32]*conn
	wg        sync.WaitGroup // one per connection goroutine

	// forwarding holds the cancel requests being forwarded to peers, by
	// key: a request that arrives while the same one is being forwarded
	// is not forwarded again. That ends the loop a peers list naming the
	// wrong replica would make (the request comes back before its first
	// forward is done), and bounds how many connections to peers a flood
	// of (unauthenticated) cancel requests can hold open.
	fwdMu      sync.Mutex
	forwarding map[string]struct{}

	// onPanic, when set (tests), sees every recovered panic.
	onPanic func(any)
}

// NewServer returns a server for cfg. It panics if cfg.Handler is nil or
// the system random source fails, both programming or platform errors.
func NewServer(cfg Config) *Server {
	if cfg.Handler == nil {
		panic("pgwire: Config.Handler is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A limit not set (or not positive) takes its default.
	cfg.MaxMessageBytes = cmp.Or(max(cfg.MaxMessageBytes, 0), DefaultMaxMessageBytes)
	cfg.MaxPreparedStatements = cmp.Or(max(cfg.MaxPreparedStatements, 0), DefaultMaxPreparedStatements)
	cfg.MaxPreparedBytes = cmp.Or(max(cfg.MaxPreparedBytes, 0), DefaultMaxPreparedBytes)
	s := &Server{
		cfg:        cfg,
		log:        log,
		listeners:  make(map[net.Listener]struct{}),
		conns:      make(map[*conn]struct{}),
		byPID:      make(map[uint32]*conn),
		forwarding: make(map[string]struct{}),
	}
	if _, err := rand.Read(s.secret[:]); err != nil {
		panic("pgwire: crypto/rand: " + err.Error())
	}
	s.creds.entries = make(map[string]credEntry)
	s.base, s.cancelAll = context.WithCancel(context.Background())
	return s
}

// Serve accepts connections on ln until ctx is done, ln fails or Shutdown
// is called, and returns nil in the first case, ErrServerClosed after
// Shutdown, or the accept error. ln is closed on return. A cancelled ctx
// only stops accepting: established connections go on until Shutdown.
// Serve may run on several listeners at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()

	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			ln.Close()
		case <-stop:
		}
	}()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and similar: wait, as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "delay", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.startConn(nc)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// startConn registers nc and serves it on its own goroutine.
func (s *Server) startConn(nc net.Conn) {
	c := s.newConn(nc)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer s.forget(c)
		c.serve()
	}()
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if c.pid != 0 && s.byPID[c.pid] == c {
		delete(s.byPID, c.pid)
	}
	s.mu.Unlock()
}

// Shutdown stops accepting, closes idle connections, and lets running
// queries finish and their answers reach the client; each connection is
// closed once it is idle. When ctx ends first, the running queries' contexts
// are cancelled and every connection is closed; Shutdown then waits for the
// connection goroutines (sessions must honour ctx) and returns ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.beginClose()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancelAll()
		return nil
	case <-ctx.Done():
	}
	s.cancelAll()
	s.mu.Lock()
	for c := range s.conns {
		c.raw.Close() // raw: nc belongs to the connection goroutine
	}
	s.mu.Unlock()
	<-done
	return ctx.Err()
}

// admit counts an established connection against MaxConnections.
func (s *Server) admit() bool {
	n := s.active.Add(1)
	if s.cfg.MaxConnections > 0 && n > int64(s.cfg.MaxConnections) {
		s.active.Add(-1)
		return false
	}
	return true
}

// registerCancelKey gives c a process id unique among live connections and
// a random secret, the pair a CancelRequest must present.
func (s *Server) registerCancelKey(c *conn) error {
	var b [8]byte
	for {
		if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
			return err
		}
		// Positive int32: some clients keep the pid in a signed int.
		pid := binary.BigEndian.Uint32(b[:4]) & 0x7fffffff
		if p := wire.Peer(s.cfg.PeerID); p > 0 {
			pid = wire.WithPeer(p, pid)
		}
		if pid == 0 {
			continue
		}
		s.mu.Lock()
		if _, taken := s.byPID[pid]; !taken {
			c.pid = pid
			copy(c.secret[:], b[4:])
			s.byPID[pid] = c
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
	}
}

// cancel handles a CancelRequest: cancel the running query of the
// connection with that pid if the secret matches. Like PostgreSQL it
// answers nothing either way, so a prober learns nothing.
func (s *Server) cancel(pid uint32, secret []byte) {
	if p := wire.Peer(s.cfg.PeerID); p > 0 {
		if owner := wire.PeerOf(pid); owner != p {
			s.forwardCancel(owner, pid, secret)
			return
		}
	}
	if len(secret) != issuedKeyLen {
		if s.cfg.ForeignCancel != nil {
			s.cfg.ForeignCancel(pid, secret)
		}
		return
	}
	s.mu.Lock()
	c := s.byPID[pid]
	s.mu.Unlock()
	if c == nil {
		return
	}
	if subtle.ConstantTimeCompare(secret, c.secret[:]) != 1 {
		s.log.Info("cancel request with a wrong key", "conn_id", c.id)
		return
	}
	c.cancelQuery()
}

// maxForwarding bounds Server.forwarding: at most this many cancel
// requests are being forwarded at once.
const maxForwarding = 1024

// startForward records a cancel request about to be forwarded to peer
// owner and reports whether it should be: not while the same request is
// being forwarded (a loop between misconfigured peers), nor while
// maxForwarding others are.
func (s *Server) startForward(key string, owner int) bool {
	s.fwdMu.Lock()
	defer s.fwdMu.Unlock()
	if _, busy := s.forwarding[key]; busy {
		s.log.Warn("a cancel request came back while it was being forwarded: not forwarded again (do listen.peers name the right replicas?)", "peer_id", owner)
		return false
	}
	if len(s.forwarding) >= maxForwarding {
		s.log.Warn("too many cancel requests being forwarded: dropped", "peer_id", owner)
		return false
	}
	s.forwarding[key] = struct{}{}
	return true
}

func (s *Server) endForward(key string) {
	s.fwdMu.Lock()
	delete(s.forwarding, key)
	s.fwdMu.Unlock()
}

// forwardCancel sends a CancelRequest for a connection of peer owner to
// that peer, unchanged; the peer checks the secret. Like a client's, the
// request gets no answer, and a peer that cannot be reached only costs
// the cancel (logged: a peers list that names the wrong address would
// otherwise go unnoticed until a cancel is needed).
func (s *Server) forwardCancel(owner int, pid uint32, secret []byte) {
	addr, ok := s.cfg.Peers[owner]
	if !ok {
		s.log.Info("cancel request for a connection of an unknown peer", "peer_id", owner)
		return
	}
	key := string(binary.BigEndian.AppendUint32(nil, pid)) + string(secret)
	if !s.startForward(key, owner) {
		return
	}
	defer s.endForward(key)
	if err := SendCancel(addr, pid, secret); err != nil {
		s.log.Warn("cannot forward a cancel request to its peer", "peer_id", owner, "addr", addr, "err", err)
		return
	}
	s.log.Debug("cancel request forwarded to its peer", "peer_id", owner)
}

// issuedKeyLen is the length of the secret keys this server issues
// (conn.secret: protocol 3.0's 4 bytes).
const issuedKeyLen = len(conn{}.secret)

// SendCancel sends a CancelRequest for process id pid with key secret to
// the PostgreSQL front end at addr, as a client's driver does on a new
// connection, and waits (within peerCancelTimeout) for the server to
// close it: the server has then acted on it. Like a client, it learns
// nothing of the outcome.
func SendCancel(addr string, pid uint32, secret []byte) error {
	nc, err := net.DialTimeout("tcp", addr, peerCancelTimeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(peerCancelTimeout))
	pkt, err := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret}).Encode(nil)
	if err != nil {
		return err
	}
	if _, err := nc.Write(pkt); err != nil {
		return err
	}
	// The server closes once it has handled the request, as PostgreSQL
	// does: waiting for that before returning keeps a direct cancel's
	// order (the query is cancelled by the time the cancel call returns).
	var one [1]byte
	_, _ = nc.Read(one[:])
	return nil
}

// Conns returns the number of open client connections (metrics).
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
