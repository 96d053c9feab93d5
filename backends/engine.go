package backends

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends/sqlrender"
	"github.com/ddp-proxy/ddp-proxy/internal/ctxend"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Classifier inspects a driver error raised after a statement may have
// reached the server. It reports whether the error is the server's own
// statement timeout, and a short driver code (a SQLSTATE, an SQLite result
// code) that is safe to log: driver messages can quote values.
type Classifier func(err error) (timeout bool, driverCode string)

// Engine runs statements of one dialect on a database/sql pool. It
// implements every method of Backend; the driver packages wrap it.
//
// Each call checks out a connection and, for a network database, checks
// without a round trip that the server has not closed it (socket.stale);
// a local database is pinged. A failure up to that point certainly
// precedes the statement, so it is BackendUnavailable (refundable). So is
// a failure of the statement's call while not one byte of it reached the
// network (the socket's count of sent bytes did not move), and a failed
// preparation of a cached statement (BackendRefused when the server
// refused it): the server was never asked to run it. Once any byte of a
// run was sent every failure is QueryCanceled (the caller's ctx ended),
// StatementTimeout, or BackendFailed — even a connection loss, because the
// server may have started executing.
//
// Every call is bounded on the client side too, by ClientTimeout of the
// statement timeout: the wait for a free connection, the ping of a local
// database, and then the statement with its row reads (opening a network
// connection is bounded by the connect timeout, Sockets). A network
// connection the deadline catches is cut (see Sockets) and discarded, so
// a backend that went silent costs the caller that deadline, never a
// hang, and leaves no stuck connection in the pool.
type Engine struct {
	db       *sql.DB
	dialect  *sqlrender.Dialect
	deadline time.Duration // client-side bound of one call (0: none)
	log      *slog.Logger
	classify Classifier
	sockets  *Sockets        // nil for a local database, which ctx alone interrupts
	direct   bool            // Aggregate reads through the driver's interfaces (ReadAggregatesDirectly)
	stmts    *statementCache // nil: Aggregate's statements are not prepared (CacheStatements)
	// slots holds one token per checked-out connection (nil: the pool
	// is not capped). A call takes one before it asks the pool, so the
	// pool never makes it wait (it hands out an idle connection or
	// opens one, under the connect timeout), and the deadline of the
	// wait costs a timer only when every connection is busy: a context
	// with a deadline around every checkout cost an allocation, a timer
	// and a registration with the caller's context.
	slots chan struct{}
}

// cancelGrace is how long a driver may take to end a cancelled call by
// itself (lib/pq's CancelRequest, which also stops the server's work)
// before its socket is cut.
const cancelGrace = 2 * time.Second

// ClientTimeout is the client-side bound of a call under a statement
// timeout: the timeout plus a margin (10%, at least 2 s) for the server's
// own timeout error to arrive first. 0 means no bound.
func ClientTimeout(statement time.Duration) time.Duration {
	if statement <= 0 {
		return 0
	}
	return statement + max(2*time.Second, statement/10)
}

// NewEngine wraps db. The pool limits of opts are applied to db. sockets
// is the dialer db's connector dials through (nil for a local database).
func NewEngine(db *sql.DB, d *sqlrender.Dialect, opts Options, classify Classifier, sockets *Sockets) *Engine {
	e := &Engine{db: db, dialect: d, deadline: ClientTimeout(opts.StatementTimeout), log: opts.logger(),
		classify: classify, sockets: sockets}
	if opts.MaxOpenConns > 0 {
		db.SetMaxOpenConns(opts.MaxOpenConns)
		db.SetMaxIdleConns(opts.MaxOpenConns)
		e.slots = make(chan struct{}, opts.MaxOpenConns)
	}
	return e
}

// Dialect names the SQL dialect.
func (e *Engine) Dialect() string { return e.dialect.Name }

// SQLDialect returns the renderer's dialect.
func (e *Engine) SQLDialect() *sqlrender.Dialect { return e.dialect }

// Close releases the pool.
func (e *Engine) Close() error { return e.db.Close() }

// Ping checks that a connection can be had and answers: unlike a
// statement's checkout, it makes a round trip on it.
func (e *Engine) Ping(ctx context.Context) error {
	conn, sk, err := e.checkout(ctx)
	if err != nil {
		return err
	}
	defer e.freeSlot()
	if err := e.ping(ctx, conn, sk); err != nil {
		if cerr := ctxend.Err(ctx); cerr != nil {
			return e.fail(Canceled(cerr), "")
		}
		return e.fail(Unavailable(err), "")
	}
	return conn.Close()
}

// Aggregate renders q, runs it and calls fn per group.
func (e *Engine) Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error {
	st, err := e.dialect.Render(q)
	if err != nil {
		return err
	}
	d := aggDecoder{nk: len(q.GroupBy), na: len(q.Aggs), fn: fn}
	if e.direct {
		err = e.queryDirect(ctx, st.SQL, st.Args, d.start, func(vals []driver.Value, fail func(error) error) error {
			return aggRow(&d, vals, fail)
		})
	} else {
		err = e.query(ctx, st.SQL, st.Args, func(rows *sql.Rows, fail func(error) error) error {
			types, err := rows.ColumnTypes()
			if err != nil {
				return fail(err)
			}
			names := make([]string, len(types))
			for i, t := range types {
				names[i] = t.DatabaseTypeName()
			}
			if err := d.start(names, fail); err != nil {
				return err
			}
			dest := make([]any, len(types))
			ptrs := make([]any, len(types))
			for i := range dest {
				ptrs[i] = &dest[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					return fail(err)
				}
				if err := aggRow(&d, dest, fail); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil && d.nk == 0 && d.n != 1 {
		return e.fail(Failed(errors.New("backends: aggregate without GROUP BY did not return exactly one row")), "")
	}
	return err
}

// aggDecoder turns an aggregate's result rows into ir.BackendRows: nk
// group keys, then na exact integer aggregates.
type aggDecoder struct {
	nk, na int
	fn     func(ir.BackendRow) error
	types  []string // the columns' database type names
	n      int      // rows passed to fn
}

func (d *aggDecoder) start(types []string, fail func(error) error) error {
	if len(types) != d.nk+d.na {
		return fail(errors.New("backends: aggregate result has the wrong number of columns"))
	}
	d.types = types
	return nil
}

// aggRow decodes one row (scanned by database/sql, or the driver's own
// values: the same values, which DecodeValue reads alike) and passes it
// to fn, whose error is returned as it is.
func aggRow[V any](d *aggDecoder, vals []V, fail func(error) error) error {
	row := ir.BackendRow{Keys: make([]ir.Value, d.nk), Aggs: make([]int64, d.na)}
	var err error
	for i := range d.nk {
		if row.Keys[i], err = DecodeValue(vals[i], d.types[i]); err != nil {
			return fail(err)
		}
	}
	for i := range d.na {
		// An overflowing sum is a failure, never a wrapped number.
		if row.Aggs[i], err = DecodeInt(vals[d.nk+i]); err != nil {
			return fail(err)
		}
	}
	d.n++
	return d.fn(row)
}

// Rows runs a public or catalog query with args bound to its placeholders.
func (e *Engine) Rows(ctx context.Context, text string, args []ir.Value, fn func(cols []string, row []ir.Value) error) error {
	return e.scan(ctx, text, args, func(cols []ColumnInfo) func([]ir.Value) error {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		return func(row []ir.Value) error { return fn(names, row) }
	})
}

// scan runs text and decodes its rows: start receives the columns (also
// for an empty result) and returns the per-row callback.
func (e *Engine) scan(ctx context.Context, text string, args []ir.Value, start func([]ColumnInfo) func([]ir.Value) error) error {
	bound := make([]any, len(args))
	for i, a := range args {
		bound[i] = e.dialect.Arg(a)
	}
	return e.query(ctx, text, bound, func(rows *sql.Rows, fail func(error) error) error {
		return DecodeRows(rows, start, fail)
	})
}

// DecodeRows reads database/sql rows as ir rows (DecodeValue): start
// receives the columns (also for an empty result) and returns the
// per-row callback, whose errors are returned as they are; the driver's
// and decoding errors go through fail. rows.Err is the caller's.
func DecodeRows(rows *sql.Rows, start func([]ColumnInfo) func([]ir.Value) error, fail func(error) error) error {
	types, err := rows.ColumnTypes()
	if err != nil {
		return fail(err)
	}
	cols := make([]ColumnInfo, len(types))
	for i, t := range types {
		cols[i] = ColumnInfo{Name: t.Name(), Type: t.DatabaseTypeName()}
	}
	each := start(cols)
	dest := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fail(err)
		}
		row := make([]ir.Value, len(cols))
		for i := range row {
			if row[i], err = DecodeValue(dest[i], cols[i].Type); err != nil {
				return fail(err)
			}
		}
		if err := each(row); err != nil {
			return err
		}
	}
	return nil
}

// query runs text on a checked-out connection and hands the rows to each,
// which returns the callback's errors as they are and driver errors
// through fail.
func (e *Engine) query(ctx context.Context, text string, args []any, each func(*sql.Rows, func(error) error) error) error {
	return e.onConn(ctx, func(conn *sql.Conn, _ *socket, w *watcher) error {
		sent := w.sent()
		fail := func(err error) error { return e.execFailure(ctx, w, sent, err) }
		rows, err := conn.QueryContext(w.ctx, text, args...)
		if err != nil {
			return fail(err)
		}
		defer rows.Close()
		if err := each(rows, fail); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return fail(err)
		}
		if err := rows.Close(); err != nil {
			return fail(err)
		}
		return nil
	})
}

// onConn runs fn on a checked-out connection (sk its socket, nil for a
// local one) under the watcher w, whose ctx is the one to give the
// driver, then hands the connection back to the pool or discards it:
// what every backend statement does around its own call.
func (e *Engine) onConn(ctx context.Context, fn func(conn *sql.Conn, sk *socket, w *watcher) error) error {
	conn, sk, err := e.checkout(ctx)
	if err != nil {
		return err
	}
	w := e.watch(ctx, sk)
	defer e.release(conn, w)
	return fn(conn, sk, w)
}

// checkout gets a pooled connection, retrying past stale idle ones
// (after a server restart every idle one is dead). A network connection
// is checked by a peek at its socket (returned too), a local one by a
// ping.
func (e *Engine) checkout(ctx context.Context) (*sql.Conn, *socket, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, e.fail(Canceled(err), "")
	}
	if err := e.takeSlot(ctx); err != nil {
		return nil, nil, err
	}
	conn, sk, err := e.checkoutSlotted(ctx)
	if err != nil {
		e.freeSlot()
	}
	return conn, sk, err
}

// takeSlot waits for a free connection slot, at most the deadline.
func (e *Engine) takeSlot(ctx context.Context) error {
	if e.slots == nil {
		return nil
	}
	select {
	case e.slots <- struct{}{}:
		return nil
	default:
	}
	var expired <-chan time.Time
	if e.deadline > 0 {
		t := time.NewTimer(e.deadline)
		defer t.Stop()
		expired = t.C
	}
	select {
	case e.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return e.fail(Canceled(ctx.Err()), "")
	case <-expired:
		// Nothing was sent: refundable.
		return e.fail(Unavailable(errors.New("backends: every pooled connection stayed busy until the deadline")), "")
	}
}

// freeSlot gives back the slot of a connection handed back to the pool.
func (e *Engine) freeSlot() {
	if e.slots != nil {
		<-e.slots
	}
}

// checkoutSlotted is checkout once a slot is held: the pool has an idle
// connection or room for a new one.
func (e *Engine) checkoutSlotted(ctx context.Context) (*sql.Conn, *socket, error) {
	var last error
	for i, attempts := 0, 1; i < attempts; i++ {
		conn, err := e.db.Conn(ctx)
		if err != nil {
			// No connection could be opened (database/sql already
			// retried past bad pooled ones): the server is unreachable,
			// and trying again at once only makes the caller wait.
			last = err
			break
		}
		sk, err := e.usable(ctx, conn)
		if err == nil {
			return conn, sk, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		if i == 0 {
			// A stale one: after a server restart every idle one is, so
			// try past them all (the pool's statistics take its lock:
			// only read them now).
			attempts = min(e.db.Stats().Idle+3, 16)
		}
	}
	if err := ctxend.Err(ctx); err != nil {
		return nil, nil, e.fail(Canceled(err), "")
	}
	// Nothing was sent: refundable.
	return nil, nil, e.fail(Unavailable(last), "")
}

// usable checks a checked-out conn; one that fails is given up. A
// network connection costs a non-blocking peek (no round trip); a local
// database, or a connection without a known socket, a ping. It returns
// the connection's socket (nil for a local database).
func (e *Engine) usable(ctx context.Context, conn *sql.Conn) (*socket, error) {
	if e.sockets == nil {
		return nil, e.ping(ctx, conn, nil)
	}
	var sk *socket
	_ = conn.Raw(func(dc any) error {
		sk = e.sockets.lookup(dc)
		return nil
	})
	if sk == nil {
		// Connections come only from the connector that dials through
		// e.sockets; this is a bug, and the call runs unbounded.
		e.log.Error("backend connection without a known socket; the call cannot be cut off at its deadline", "dialect", e.dialect.Name)
		return nil, e.ping(ctx, conn, nil)
	}
	if sk.stale() {
		e.discard(conn)
		return nil, errors.New("backends: pooled connection closed by the server")
	}
	return sk, nil
}

// ping checks conn, whose socket is sk (nil: unknown, and ctx bounds
// the call); a connection that fails it is given up.
func (e *Engine) ping(ctx context.Context, conn *sql.Conn, sk *socket) error {
	w := e.watch(ctx, sk)
	err := conn.PingContext(w.ctx)
	if w.stop() {
		e.discard(conn)
		if err == nil {
			err = errors.New("backends: ping abandoned at the deadline")
		}
		return err
	}
	if err != nil {
		conn.Close()
	}
	return err
}

// release returns conn to the pool, or discards it when its socket was
// cut (a connection abandoned mid-protocol can never be reused) or a
// CancelRequest was sent for it (it may stop the next statement).
func (e *Engine) release(conn *sql.Conn, w *watcher) {
	if w.stop() {
		e.discard(conn)
	} else {
		conn.Close()
	}
	e.freeSlot()
}

// discard closes conn's driver connection instead of pooling it.
func (e *Engine) discard(conn *sql.Conn) {
	// database/sql closes a connection whose Raw callback reports
	// ErrBadConn.
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}

// watcher bounds one call on a connection: its deadline cuts the socket,
// and the caller's cancellation asks the server to stop the statement and
// cuts the socket if the driver has not ended the call cancelGrace later.
type watcher struct {
	sk *socket
	// ctx is what the driver is given for the call: for a network
	// connection never the deadline, which the socket's own timer
	// enforces (cheaper than a context per call, and a driver that saw
	// it would wait for its CancelRequest before returning, in a silent
	// network for that request's connect timeout), and no cancellation
	// either when the engine sends the connection's CancelRequest itself
	// (socket.cancel).
	ctx      context.Context
	end      context.CancelFunc // releases ctx's deadline (a local database)
	armed    bool               // sk's deadline runs
	after    func() bool        // stops the hook on the caller's cancellation
	onCancel func()             // w.cancel, made once per socket

	mu      sync.Mutex
	stopped bool
	grace   *time.Timer
	retry   *time.Timer // the next CancelRequest (resend)
	wait    time.Duration
}

// watch starts watching one call of the connection whose socket is sk
// (nil: a local database, bounded by ctx alone). At the deadline the
// socket is cut at once: the server's own timeout should have answered
// by then, so the backend or the network is gone. After a cancellation of
// ctx it is cut cancelGrace later (the CancelRequest normally ends the
// call well before).
//
// A network connection's watcher lives on its socket and serves each of
// its calls in turn: a call's cancel hook never runs after the call
// (stop gives the connection up when it could).
func (e *Engine) watch(ctx context.Context, sk *socket) *watcher {
	if sk == nil {
		// Only a context can interrupt a local database's call.
		w := &watcher{}
		w.ctx, w.end = e.withDeadline(ctx)
		return w
	}
	w := &sk.w
	if w.onCancel == nil {
		w.sk, w.onCancel = sk, w.cancel
	}
	w.ctx, w.stopped, w.grace, w.retry = ctx, false, nil, nil
	if sk.cancel != nil {
		w.ctx = context.WithoutCancel(ctx)
	}
	if e.deadline > 0 {
		sk.arm(e.deadline)
		w.armed = true
	}
	w.after = context.AfterFunc(ctx, w.onCancel)
	return w
}

// cancel runs when the caller's ctx ends during the call.
func (w *watcher) cancel() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.grace = time.AfterFunc(cancelGrace, w.sk.abort)
	w.wait = cancelRetry
	w.mu.Unlock()
	w.resend()
}

// cancelRetry is how long after a CancelRequest the engine sends another
// while the call goes on, doubling each time until cancelGrace cuts the
// socket. PostgreSQL ignores a CancelRequest that reaches a session
// between reading its messages, which happens in a statement's first
// milliseconds (measured with lib/pq: a cancel 5 ms in was lost and the
// statement ran to its end; 30 ms in it stopped the statement).
const cancelRetry = 50 * time.Millisecond

// resend sends the connection's CancelRequest (when the engine sends it,
// socket.cancel) and arms the next one. A request that comes after the
// call ended is harmless: a connection a CancelRequest was sent for is
// never pooled again (stop).
func (w *watcher) resend() {
	if w.sk.cancel == nil {
		return
	}
	_ = w.sk.cancel(context.Background())
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.retry = time.AfterFunc(w.wait, w.resend)
		w.wait *= 2
	}
}

// sent returns the bytes sent so far on the watched socket (-1 when it
// is unknown, as for a local database).
func (w *watcher) sent() int64 {
	if w.sk == nil {
		return -1
	}
	return w.sk.sent.Load()
}

// fired reports whether the socket was cut.
func (w *watcher) fired() bool { return w.sk != nil && w.sk.cut.Load() }

// stop disarms the watcher and reports whether the connection is lost:
// its socket was cut, a CancelRequest was sent for it, or the caller's
// cancellation came as the call ended (its hook may still be running; a
// connection is given up rather than watched by a stale hook).
func (w *watcher) stop() bool {
	if w.sk == nil {
		w.end()
		return false
	}
	if w.armed {
		w.armed = false
		w.sk.disarm()
	}
	hooked := !w.after()
	w.ctx, w.after = nil, nil // not kept past the call
	w.mu.Lock()
	w.stopped = true
	if w.grace != nil {
		w.grace.Stop()
	}
	if w.retry != nil {
		w.retry.Stop()
	}
	w.mu.Unlock()
	return hooked || w.fired()
}

// execFailure classifies an error raised once the statement was handed
// to the driver; sent is the watched socket's count of sent bytes before
// that (-1: unknown). The caller's ctx wins over everything: a client
// cancel makes lib/pq report 57014 too. A failure with no byte sent is
// BackendUnavailable: the server never saw the statement, so the failure
// cannot depend on private data and the release step may refund it. So
// is a failed preparation of a cached statement (prepareFailed):
// BackendRefused when the server refused it, else BackendUnavailable.
func (e *Engine) execFailure(ctx context.Context, w *watcher, sent int64, err error) error {
	if cerr := ctxend.Err(ctx); cerr != nil {
		return e.fail(Canceled(errors.Join(cerr, err)), "")
	}
	timeout, code := e.classify(err)
	if sent >= 0 && w.sent() == sent && !w.fired() {
		return e.fail(Unavailable(err), code)
	}
	var pf *prepareFailed
	if errors.As(err, &pf) {
		// Only the statement's preparation reached the server: nothing
		// ran (statementCache). A refusal by the server is the operator's
		// to fix, so its message is logged, which is safe here unlike a
		// run's: the statement's text carries no literal (they are bound
		// at the run) and no row was read. A lost connection is as if
		// the statement had never been sent.
		if code != "" {
			e.log.Warn("the backend refused to prepare a statement; the policy may not match the database", "dialect", e.dialect.Name, "driver_code", code, "err", pf.err)
			return e.fail(Refused(err), code)
		}
		return e.fail(Unavailable(err), code)
	}
	switch {
	case timeout:
		return e.fail(TimedOut(err), code)
	case w.fired() || errors.Is(w.ctx.Err(), context.DeadlineExceeded):
		return e.fail(Unresponsive(err), code)
	}
	return e.fail(Failed(err), code)
}

func (e *Engine) fail(err *sqlerr.Error, driverCode string) error {
	e.log.Warn("backend statement failed", "dialect", e.dialect.Name, "code", err.Code.Name, "driver_code", driverCode)
	return err
}

// withDeadline bounds one call on the client side.
func (e *Engine) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if e.deadline <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, e.deadline)
}

// Stream runs a public or catalog query: start is called once with its
// columns (with the backend's type names; also for an empty result, which
// clients need to describe), and the function it returns once per row, as
// the rows arrive. A pass-through answer goes to the client this way
// without being held; an error from the row function stops the query.
func (e *Engine) Stream(ctx context.Context, text string, args []ir.Value, start func([]ColumnInfo) func([]ir.Value) error) error {
	return e.scan(ctx, text, args, start)
}

// Result runs a public or catalog query and returns its columns and all
// its rows (Stream, held whole).
func (e *Engine) Result(ctx context.Context, text string, args []ir.Value) ([]ColumnInfo, [][]ir.Value, error) {
	var cols []ColumnInfo
	var out [][]ir.Value
	err := e.scan(ctx, text, args, func(c []ColumnInfo) func([]ir.Value) error {
		cols = c
		return func(row []ir.Value) error {
			out = append(out, row)
			return nil
		}
	})
	return cols, out, err
}
