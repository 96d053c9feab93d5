package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// flushThreshold is how much output is buffered before it is written
// mid-result, so a large result never sits whole in the buffer.
const flushThreshold = 32 << 10

// After a FATAL error, how long and how much to drain before closing.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 1 << 20
	drainTime   = 10 * time.Second
)

// conn is one client connection. Everything but the fields under mu is
// owned by the connection's goroutine.
type conn struct {
	srv *Server
	id  uint64
	raw net.Conn // the accepted socket; other goroutines only close it or set deadlines
	nc  net.Conn // raw, or the TLS connection over it
	// tls is set once nc is the TLS connection.
	tls bool
	log *slog.Logger
	// authFailure is why authentication would fail (set by authenticate),
	// for the log line of a failed login.
	authFailure string

	ctx  context.Context // cancelled by forced shutdown or when serve returns
	stop context.CancelFunc

	be        *pgproto3.Backend
	wbuf      []byte
	sentFatal bool
	unread    int64 // the body of an oversized message, left in the socket
	sess      Session
	admitted  bool
	pid       uint32
	secret    [4]byte

	stmts   map[string]*statement
	portals map[string]*portal
	// stmtBytes is the total text size of stmts.
	stmtBytes int
	// ignoreTillSync: an extended-protocol message failed, skip to Sync.
	ignoreTillSync bool
	// inBatch: extended-protocol messages arrived since the last Sync;
	// shutdown waits for that Sync so the client gets its answers.
	inBatch bool

	mu          sync.Mutex
	idle        bool // blocked reading the client, no statement running
	closing     bool // Shutdown asked this connection to end
	queryCancel context.CancelFunc
	userCancel  bool // the running query was cancelled by CancelRequest
}

func (s *Server) newConn(nc net.Conn) *conn {
	id := s.connSeq.Add(1)
	ctx, stop := context.WithCancel(s.base)
	return &conn{
		srv:     s,
		id:      id,
		raw:     nc,
		nc:      nc,
		log:     s.log.With("conn_id", id),
		ctx:     ctx,
		stop:    stop,
		stmts:   make(map[string]*statement),
		portals: make(map[string]*portal),
		idle:    true,
	}
}

// serve runs the connection from startup to close. A panic ends only this
// connection: it is logged and the client gets a FATAL internal error.
func (c *conn) serve() {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic serving connection", "panic", r, "stack", string(debug.Stack()))
			if c.srv.onPanic != nil {
				c.srv.onPanic(r)
			}
			_ = c.raw.SetWriteDeadline(time.Now().Add(time.Second))
			c.wbuf = c.wbuf[:0]
			c.fatal(sqlerr.New(sqlerr.Internal, "internal error"))
		}
		if c.sess != nil {
			c.sess.Close()
		}
		if c.admitted {
			c.srv.active.Add(-1)
		}
		c.stop()
		if c.sentFatal {
			c.lingerClose()
		}
		c.nc.Close()
	}()
	if !c.start() {
		return
	}
	c.loop()
}

// start runs startup and authentication, and reports whether the
// connection is ready for queries.
func (c *conn) start() bool {
	_ = c.raw.SetDeadline(time.Now().Add(startupTimeout))
	p, err := c.negotiate()
	if err != nil {
		c.startupFailed(err)
		return false
	}
	if p.kind == cancelRequest {
		c.srv.cancel(p.pid, p.secret)
		return false
	}
	if p.major != 3 {
		c.fatal(protocolErr("unsupported frontend protocol %d.%d: server supports 3.0", p.major, p.minor))
		return false
	}
	user := p.params["user"]
	if user == "" {
		c.fatal(sqlerr.New(sqlerr.InvalidAuthorization, "no PostgreSQL user name specified in startup packet"))
		return false
	}
	if p.params["database"] == "" {
		p.params["database"] = user // PostgreSQL's default
	}
	c.log = c.log.With("user", user)
	if !c.srv.admit() {
		c.fatal(sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already"))
		return false
	}
	c.admitted = true

	c.be = pgproto3.NewBackend(c.nc, c.nc)
	c.be.SetMaxBodyLen(authMaxBody)
	if p.minor > 0 || len(p.options) > 0 {
		// Speak 3.0 and decline the extensions, as PostgreSQL does for
		// newer minor versions: the client carries on or gives up.
		c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: p.options})
	}
	if err := c.authenticate(user); err != nil {
		c.startupFailed(err)
		return false
	}
	sess, err := c.srv.cfg.Handler.NewSession(c.ctx, user, p.params)
	if err != nil {
		c.logErr("session refused", err)
		c.fatal(err)
		return false
	}
	c.sess = sess
	if err := c.srv.registerCancelKey(c); err != nil {
		c.log.Error("cancel key", "err", err)
		c.fatal(sqlerr.New(sqlerr.Internal, "internal error"))
		return false
	}
	_ = c.raw.SetDeadline(time.Time{})
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageBytes)

	status := sess.ParameterStatus()
	for _, k := range slices.Sorted(maps.Keys(status)) {
		c.send(&pgproto3.ParameterStatus{Name: k, Value: status[k]})
	}
	c.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret[:]})
	c.readyForQuery()
	if err := c.flush(); err != nil {
		c.readFailed(err)
		return false
	}
	c.log.Debug("connection ready")
	return true
}

// startupFailed answers a failed startup: a client-visible *sqlerr.Error
// becomes a FATAL ErrorResponse; I/O failures just close.
func (c *conn) startupFailed(err error) {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		if se.Code == sqlerr.InvalidPassword {
			c.log.Info("authentication failed", "reason", c.authFailure)
		} else {
			c.log.Info("startup failed", "sqlstate", se.Code.SQLState, "err", err)
		}
		c.fatal(se)
		return
	}
	c.readFailed(err)
}

// loop serves messages until the client leaves, a fatal error, or shutdown.
func (c *conn) loop() {
	for {
		if !c.markIdle() {
			c.goodbye()
			return
		}
		msg, err := c.be.Receive()
		c.markBusy()
		if err != nil {
			if c.isClosing() {
				c.goodbye()
				return
			}
			c.readFailed(err)
			return
		}
		if !c.dispatch(msg) {
			return
		}
	}
}

// dispatch handles one message and reports whether to keep going.
func (c *conn) dispatch(msg pgproto3.FrontendMessage) bool {
	switch msg.(type) {
	case *pgproto3.Terminate:
		return false
	case *pgproto3.Sync:
		c.sync()
		return c.flushOK()
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Outside COPY these are leftovers of a COPY the server refused;
		// PostgreSQL accepts and ignores them, and so do we.
		return true
	}
	if c.ignoreTillSync {
		return true
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		c.simpleQuery(m.String)
		return c.flushOK()
	case *pgproto3.FunctionCall:
		c.sendError(sqlerr.New(sqlerr.FeatureNotSupported, "function call protocol is not supported"))
		c.readyForQuery()
		return c.flushOK()
	case *pgproto3.Flush:
		c.inBatch = true
		return c.flushOK()
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute, *pgproto3.Close:
		c.inBatch = true
		if err := c.extended(m); err != nil {
			c.sendError(err)
			c.ignoreTillSync = true
			return c.flushOK()
		}
		return c.wbufOK()
	}
	c.fatal(protocolErr("unexpected %s message", msgName(msg)))
	return false
}

// markIdle records that the connection waits for the client. It reports
// false when Shutdown asked the connection to end and no extended batch
// is half done.
func (c *conn) markIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing && !c.inBatch {
		return false
	}
	c.idle = !c.inBatch
	return true
}

func (c *conn) markBusy() {
	c.mu.Lock()
	c.idle = false
	c.mu.Unlock()
}

func (c *conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// beginClose is Shutdown's request: an idle connection is woken from its
// read at once; a busy one ends after its current statement is answered.
func (c *conn) beginClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	if c.idle {
		_ = c.raw.SetReadDeadline(time.Now())
	}
}

// beginQuery returns the context of one session call; a CancelRequest
// cancels it. endQuery ends it.
func (c *conn) beginQuery() context.Context {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.queryCancel, c.userCancel = cancel, false
	c.mu.Unlock()
	return ctx
}

// endQuery ends the call beginQuery started and reports whether a
// CancelRequest cancelled it. (A method, not a closure beginQuery
// returns: that cost an allocation per statement.)
func (c *conn) endQuery() (userCanceled bool) {
	c.mu.Lock()
	u, cancel := c.userCancel, c.queryCancel
	c.queryCancel = nil
	c.mu.Unlock()
	cancel()
	return u
}

// cancelQuery cancels the running session call, if any.
func (c *conn) cancelQuery() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queryCancel != nil {
		c.userCancel = true
		c.queryCancel()
	}
}

// queryErr is the client error for a failed session call. A session that
// returns a bare context error after a cancel still yields 57014, not an
// internal error.
func (c *conn) queryErr(err error, userCanceled bool) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		switch {
		case userCanceled:
			return sqlerr.Canceled(err)
		case c.ctx.Err() != nil:
			return sqlerr.Wrap(sqlerr.AdminShutdown, err, "terminating connection due to administrator command")
		}
	}
	c.logErr("statement failed", err)
	return err
}

// logErr logs a failure with its SQLSTATE and internal cause: internal
// errors at warn level (someone should look), client mistakes at debug.
func (c *conn) logErr(msg string, err error) {
	e := sqlerr.As(err)
	lvl := slog.LevelDebug
	if e.Code.SQLState == sqlerr.Internal.SQLState || e.Cause != nil {
		lvl = slog.LevelWarn
	}
	if e.Code == sqlerr.QueryCanceled && errors.Is(e.Cause, context.Canceled) {
		// A client's cancel (CancelRequest, a peer's forward): routine,
		// not something for the operator to look at. Timeouts stay warnings.
		lvl = slog.LevelDebug
	}
	if e.Cause != nil {
		c.log.Log(c.ctx, lvl, msg, "sqlstate", e.Code.SQLState, "err", e.Message, "cause", e.Cause)
		return
	}
	c.log.Log(c.ctx, lvl, msg, "sqlstate", e.Code.SQLState, "err", e.Message)
}

// readyForQuery reports the session's transaction state.
func (c *conn) readyForQuery() {
	st := TxIdle
	if c.sess != nil {
		switch s := c.sess.TxStatus(); s {
		case TxIdle, TxInBlock, TxFailed:
			st = s
		}
	}
	c.wbuf = append(c.wbuf, 'Z', 0, 0, 0, 5, st) // ReadyForQuery, without an allocation
}

// sendError queues an ERROR. Callers flush right after it, so the client
// learns of it even if it waits without a Sync (PostgreSQL does the same).
func (c *conn) sendError(err error) {
	c.send(errorResponse(sevError, err))
}

// fatal sends a FATAL error; the caller then closes the connection.
func (c *conn) fatal(err error) {
	c.send(errorResponse(sevFatal, err))
	_ = c.flush()
	c.sentFatal = true
}

// goodbye tells a client that the server is shutting down. There is no
// unread client data to drain, so the socket closes at once.
func (c *conn) goodbye() {
	c.send(errorResponse(sevFatal, sqlerr.New(sqlerr.AdminShutdown, "terminating connection due to administrator command")))
	_ = c.flush()
}

// lingerClose makes a FATAL error reach the client. Closing a TCP socket
// that still holds unread client bytes (the rest of a bad packet) sends a
// reset, which can destroy the error before the client reads it; so
// half-close and drain first: lingerBytes, or the unread body of an
// oversized message (a client writes all of it before it reads), for as
// long as bytes keep coming — each read waits at most lingerTime, the whole
// drain at most drainTime. Nothing drained is kept.
func (c *conn) lingerClose() {
	if tc, ok := c.nc.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite() // a TLS close_notify, or a TCP FIN
	}
	if tc, ok := c.raw.(*net.TCPConn); ok && c.tls {
		_ = tc.CloseWrite()
	}
	limit := max(lingerBytes, c.unread+lingerBytes)
	end := time.Now().Add(drainTime)
	buf := make([]byte, 32<<10)
	for limit > 0 && time.Now().Before(end) {
		d := time.Now().Add(lingerTime)
		if d.After(end) {
			d = end
		}
		_ = c.raw.SetReadDeadline(d)
		n, err := c.raw.Read(buf[:min(int64(len(buf)), limit)])
		limit -= int64(n)
		if err != nil {
			return
		}
	}
}

// readFailed ends the connection after a read or write failure. A client
// that left (EOF, reset) is normal and not logged; a malformed message
// gets FATAL 08P01.
func (c *conn) readFailed(err error) {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	switch {
	case isDisconnect(err):
		c.log.Debug("client disconnected")
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.log.Info("client timed out during startup")
	case errors.As(err, &tooBig):
		c.log.Info("message too large", "len", tooBig.ActualBodyLen, "limit", tooBig.MaxExpectedBodyLen)
		if c.sess == nil {
			// Before authentication only the small SASL messages are
			// expected: a large one is not a client to help along.
			c.fatal(protocolErr("message too large during authentication (%d bytes; the limit is %d)", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen))
			return
		}
		// The body was never read; let the client finish sending it, so
		// it reads this error instead of a reset (lingerClose).
		c.unread = int64(tooBig.ActualBodyLen)
		c.fatal(sqlerr.New(sqlerr.PacketTooLarge, "message too large: %d bytes; the proxy takes messages (a query, a Parse, a Bind) of up to %d bytes",
			tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen).
			WithHint("aggregate queries are short: send a smaller statement, or raise listen.max_query_bytes in the policy"))
	default:
		var se *sqlerr.Error
		if errors.As(err, &se) {
			c.fatal(se)
			return
		}
		c.log.Info("invalid message", "err", err)
		c.fatal(protocolErr("invalid frontend message"))
	}
}

func isDisconnect(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// send queues msg in the output buffer.
func (c *conn) send(msg pgproto3.BackendMessage) {
	b, err := msg.Encode(c.wbuf)
	if err != nil {
		// Only oversized fields fail to encode; that is a session bug.
		c.log.Error("encode message", "err", err)
		return
	}
	c.wbuf = b
}

// flush writes the buffered output.
func (c *conn) flush() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	_, err := c.nc.Write(c.wbuf)
	if cap(c.wbuf) > 4*flushThreshold {
		c.wbuf = nil // do not keep a large result's buffer for an idle connection
	} else {
		c.wbuf = c.wbuf[:0]
	}
	return err
}

// flushOK flushes and reports whether the connection is still usable.
func (c *conn) flushOK() bool {
	if err := c.flush(); err != nil {
		c.readFailed(err)
		return false
	}
	return true
}

// wbufOK flushes only when enough output has piled up.
func (c *conn) wbufOK() bool {
	if len(c.wbuf) < flushThreshold {
		return true
	}
	return c.flushOK()
}

// msgName names a message type for errors and logs.
func msgName(m pgproto3.FrontendMessage) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
}
