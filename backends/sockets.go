package backends

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultConnectTimeout bounds a new backend connection (dial, TLS,
// authentication, session setup) when Options.ConnectTimeout is 0.
const DefaultConnectTimeout = 10 * time.Second

// Sockets dials the network connections of one backend pool and remembers
// which socket lies under which driver connection, so that the Engine can
// cut a connection whose call ran out of time.
//
// Why the drivers' own context handling is not enough: lib/pq cancels a
// statement by sending a CancelRequest over a second connection and keeps
// reading the first one until the server answers; when the network (or the
// server) has gone silent — packets dropped, a frozen middlebox — neither
// connection ever answers, and the caller waits forever although its
// context ended long ago. lib/pq's connection handshake does not look at
// the context at all. Closing the socket is the one thing that always
// unblocks a read, so the Engine does that at the call's deadline, and a
// connection that was cut is never returned to the pool.
//
// Every socket also starts under a deadline of the connect timeout, lifted
// once a connection attempt succeeds: that bounds the handshake and the
// sockets the drivers open on their own (lib/pq's CancelRequest
// connections, which it reads until EOF). TCP keepalives are on, so a peer
// that vanished is noticed on idle pooled connections too.
type Sockets struct {
	dialer  net.Dialer
	connect time.Duration

	mu     sync.Mutex
	byConn map[driver.Conn]*socket
}

// NewSockets returns a dialer whose attempts give up after connect (0:
// DefaultConnectTimeout).
func NewSockets(connect time.Duration) *Sockets {
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	return &Sockets{
		dialer: net.Dialer{
			Timeout: connect,
			// A silent peer on an idle pooled connection is found in about
			// Idle + Count·Interval = 45 s.
			KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 10 * time.Second, Count: 3},
		},
		connect: connect,
		byConn:  map[driver.Conn]*socket{},
	}
}

// ConnectTimeout is the bound of one connection attempt.
func (s *Sockets) ConnectTimeout() time.Duration { return s.connect }

// slotKey marks the context of a connection attempt made through Connect;
// its value collects the sockets the driver dials during the attempt.
type slotKey struct{}

// DialContext dials addr. It is the DialerContext of lib/pq and the
// DialFunc of go-sql-driver/mysql.
func (s *Sockets) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := s.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(time.Now().Add(s.connect)); err != nil {
		c.Close()
		return nil, err
	}
	sk := &socket{Conn: c, owner: s}
	if sl, ok := ctx.Value(slotKey{}).(*slot); ok {
		sl.add(sk)
	}
	return sk, nil
}

// Dial and DialTimeout complete lib/pq's Dialer interface; lib/pq calls
// DialContext when it is there.
func (s *Sockets) Dial(network, addr string) (net.Conn, error) {
	return s.DialContext(context.Background(), network, addr)
}

func (s *Sockets) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.DialContext(ctx, network, addr)
}

// Connect runs open — a driver's connect followed by the session setup —
// under the connect timeout, and registers the socket it dialed under the
// connection it returns. When the attempt runs out of time its sockets are
// closed, which ends whatever the driver was waiting for.
func (s *Sockets) Connect(ctx context.Context, open func(context.Context) (driver.Conn, error)) (driver.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.connect)
	defer cancel()
	sl := &slot{}
	ctx = context.WithValue(ctx, slotKey{}, sl)
	stop := context.AfterFunc(ctx, sl.abort)
	dc, err := open(ctx)
	if !stop() {
		// The sockets were closed under the driver: whatever it returned,
		// the attempt failed.
		if err == nil {
			dc.Close()
		}
		return nil, fmt.Errorf("backend connection attempt abandoned: %w", errors.Join(context.Cause(ctx), err))
	}
	if err != nil {
		sl.abort()
		return nil, err
	}
	sk := sl.last()
	if sk == nil {
		dc.Close()
		return nil, errors.New("backends: the driver connected without the pool's dialer")
	}
	sk.cancel, sk.dedicated = sl.session()
	if err := sk.SetDeadline(time.Time{}); err != nil {
		dc.Close()
		return nil, err
	}
	s.mu.Lock()
	sk.key = dc
	s.byConn[dc] = sk
	s.mu.Unlock()
	return dc, nil
}

// MarkDedicated records, from inside the open function of Connect, that
// the connection being opened talks to one server session for its whole
// life (no transaction pooler in between), so that statements it prepares
// are found by its later calls (Engine.CacheStatements).
func MarkDedicated(ctx context.Context) {
	if sl, ok := ctx.Value(slotKey{}).(*slot); ok {
		sl.mu.Lock()
		sl.dedicated = true
		sl.mu.Unlock()
	}
}

// SetCanceler is for the open function given to Sockets.Connect: cancel
// asks the server, out of band, to stop whatever statement runs on the
// connection being opened (PostgreSQL's CancelRequest). The Engine then
// gives the driver contexts that are never cancelled, so that the driver
// watches nothing per statement (lib/pq starts a goroutine per call that
// watches a cancellable context), and calls cancel itself when a caller's
// context ends or a call outlives its deadline; such a connection is not
// pooled again (the request may arrive after the statement ended and
// stop the next one). Without it the driver gets the caller's context
// and cancels by itself.
func SetCanceler(ctx context.Context, cancel func(context.Context) error) {
	if sl, ok := ctx.Value(slotKey{}).(*slot); ok {
		sl.mu.Lock()
		sl.cancel = cancel
		sl.mu.Unlock()
	}
}

// lookup returns the socket under a driver connection (nil if unknown).
func (s *Sockets) lookup(dc any) *socket {
	c, ok := dc.(driver.Conn)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byConn[c]
}

func (s *Sockets) forget(sk *socket) {
	s.mu.Lock()
	if sk.key != nil && s.byConn[sk.key] == sk {
		delete(s.byConn, sk.key)
	}
	s.mu.Unlock()
}

// tracked reports how many sockets are registered (tests: cut or closed
// connections must not stay behind).
func (s *Sockets) tracked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byConn)
}

// socket is one network connection of the pool.
type socket struct {
	net.Conn
	owner *Sockets
	key   driver.Conn // under owner.mu
	cut   atomic.Bool
	shut  atomic.Bool
	// sent counts the bytes the driver handed to the network. A call
	// during which it did not move sent nothing of its statement, so its
	// failure cannot depend on the data (Engine.execFailure).
	sent atomic.Int64
	// stmts are the connection's prepared statements (Engine.queryCached),
	// used only while the connection is checked out.
	stmts *stmtCache
	// dedicated: statements may be cached on it (MarkDedicated). Set
	// before the connection is pooled, never changed.
	dedicated bool
	// cancel asks the server to stop the running statement (SetCanceler);
	// nil when the driver cancels by itself. Set before the connection is
	// pooled, never changed.
	cancel func(context.Context) error
	// expiry cuts the socket at the deadline of the call it carries (arm).
	// One timer serves every call of the connection: a context with a
	// deadline per call costs an allocation, a timer and a registration
	// with its parent. Used only while the connection is checked out.
	expiry *time.Timer
	// raw, peek and bad serve stale, which only the connection's holder
	// calls.
	raw  syscall.RawConn
	peek func(fd uintptr) bool
	bad  bool
	// w watches the call the connection carries (Engine.watch).
	w watcher
}

// arm starts the deadline of one call: after d the socket is cut (every
// blocked read returns) and the server is asked to cancel the statement,
// unless disarm comes first.
func (k *socket) arm(d time.Duration) {
	if k.expiry == nil {
		k.expiry = time.AfterFunc(d, k.expire)
		return
	}
	k.expiry.Reset(d)
}

// disarm ends the deadline that arm started and reports whether it
// passed; then the socket is cut when disarm returns.
func (k *socket) disarm() bool {
	if k.expiry.Stop() {
		return false
	}
	// expire ran or is running: the connection is lost either way, and
	// its caller must not see it whole before expire has cut it.
	k.abort()
	return true
}

func (k *socket) expire() {
	k.abort()
	if k.cancel != nil {
		// The server may still be running the statement: a silent
		// network, or a server that missed its own statement timeout.
		_ = k.cancel(context.Background())
	}
}

// Write counts what reaches the network.
func (k *socket) Write(b []byte) (int, error) {
	n, err := k.Conn.Write(b)
	k.sent.Add(int64(n))
	return n, err
}

// Close closes the socket once; the driver's own Close after a cut is a
// no-op, not an error it would log.
func (k *socket) Close() error {
	if k.shut.Swap(true) {
		return nil
	}
	k.owner.forget(k)
	return k.Conn.Close()
}

// abort closes the socket under its driver: every blocked read or write
// returns at once.
func (k *socket) abort() {
	k.cut.Store(true)
	k.Close()
}

// slot collects the sockets of one connection attempt (lib/pq dials one per
// host it tries; the last one is the connection's).
type slot struct {
	mu      sync.Mutex
	socks   []*socket
	aborted bool
	// What the open function said of the session (SetCanceler,
	// MarkDedicated), for Connect to put on the connection's socket.
	cancel    func(context.Context) error
	dedicated bool
}

func (sl *slot) add(sk *socket) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.aborted {
		sk.abort()
		return
	}
	sl.socks = append(sl.socks, sk)
}

func (sl *slot) abort() {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.aborted = true
	for _, sk := range sl.socks {
		sk.abort()
	}
}

func (sl *slot) last() *socket {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if len(sl.socks) == 0 {
		return nil
	}
	return sl.socks[len(sl.socks)-1]
}

func (sl *slot) session() (func(context.Context) error, bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.cancel, sl.dedicated
}
