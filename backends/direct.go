package backends

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// stmtCache holds the prepared statements of one network connection, by
// SQL text. A rendered aggregate's text is the same for every query of
// one shape (literals are bound as arguments, sqlrender), so once it is
// prepared a query is one Bind/Execute/Sync round trip and the server
// skips parsing and planning it again (after a few executions
// PostgreSQL settles on a generic plan).
//
// It lives on the connection's socket and is used only while the
// connection is checked out, so it needs no lock; it goes away with the
// connection, and with it the server's statements.
type stmtCache struct {
	byText map[string]*cachedStmt
	tick   uint64
	// closing are statements to close once the call's statement is over:
	// evicted ones and ones that failed (they may be invalid, e.g. after
	// a change of the table's column types). Closing is a round trip of
	// its own, so it never precedes the call's statement: the bytes a
	// failure is judged by (watcher.sent) are only the statement's.
	closing []driver.Stmt
}

type cachedStmt struct {
	st   driver.Stmt
	used uint64
}

// statementCache configures Engine.CacheStatements.
type statementCache struct {
	limit int
	// replan reports a failure of a cached statement that a fresh
	// prepare cures without the server having run it (PostgreSQL's
	// "cached plan must not change result type").
	replan func(error) bool
}

// CacheStatements makes Aggregate run its statements as prepared
// statements kept per network connection, at most limit each (the least
// recently used is closed first). replan recognises the failure of a
// cached statement whose plan the server refused to reuse before running
// it; such a statement is prepared again and run once more. Only
// connections the backend marked dedicated (MarkDedicated: one server
// session for the connection's life) cache statements: behind a
// transaction pooler a statement name prepared on one server session
// could run another session's statement of the same name. The
// pass-through path (Rows, Stream, Result: client text, unbounded in
// variety) is not cached. Call it before the engine is used.
//
// PostgreSQL can miss a CancelRequest that arrives in the first
// milliseconds of a statement with parameters, prepared or not (measured
// with lib/pq: 5 ms in, the statement ran to its end; 30 ms in, it was
// cancelled); with prepared statements a cancel lands there more often,
// as there is less to do before the run. Where the engine sends the
// CancelRequest itself (socket.cancel) it sends it again while the call
// goes on (cancelRetry); either way it cuts the connection cancelGrace
// after a cancel, and the postgres backend asks the server to check its
// client every second, so such a statement stops then at the latest.
func (e *Engine) CacheStatements(limit int, replan func(error) bool) {
	e.direct = true
	if limit <= 0 {
		e.stmts = nil
		return
	}
	e.stmts = &statementCache{limit: limit, replan: replan}
}

// ReadAggregatesDirectly makes Aggregate run its statement through the
// driver's own interfaces (driver.QueryerContext) instead of
// database/sql's: no sql.Rows, no goroutine per query watching the
// context on database/sql's side, no copying conversion of every value.
// The driver sees the same calls as under database/sql (the arguments
// converted alike, namedArgs), so its values, errors and cancellation
// are the same. Off, it also stops caching statements. Call it before
// the engine is used.
func (e *Engine) ReadAggregatesDirectly(on bool) {
	e.direct = on
	if !on {
		e.stmts = nil
	}
}

// queryDirect is query run through the driver's own interfaces, with
// text as a cached prepared statement of the connection when the engine
// caches statements: start receives the columns' database type names,
// each every row (driver values, valid until the next row). Their errors
// are returned as they are; the driver's go through fail.
func (e *Engine) queryDirect(ctx context.Context, text string, args []any,
	start func(types []string, fail func(error) error) error,
	each func(vals []driver.Value, fail func(error) error) error) error {
	return e.onConn(ctx, func(conn *sql.Conn, sk *socket, w *watcher) error {
		return e.queryOn(ctx, conn, sk, w, text, args, start, each)
	})
}

// queryOn is queryDirect's statement on a checked-out connection.
func (e *Engine) queryOn(ctx context.Context, conn *sql.Conn, sk *socket, w *watcher,
	text string, args []any,
	start func(types []string, fail func(error) error) error,
	each func(vals []driver.Value, fail func(error) error) error) error {
	if e.stmts == nil || sk == nil || !sk.dedicated {
		// No statement cache, or a connection whose later calls might
		// reach another server session (a transaction pooler): there a
		// cached statement's name could run another session's
		// statement, so every statement is the unnamed one.
		return conn.Raw(func(dc any) error {
			sent := w.sent()
			fail := func(err error) error { return e.execFailure(ctx, w, sent, err) }
			named, err := namedArgs(dc, args)
			if err != nil {
				return fail(err)
			}
			q, ok := dc.(driver.QueryerContext)
			if !ok {
				return fail(fmt.Errorf("backends: driver connection %T cannot query with a context", dc))
			}
			rows, err := q.QueryContext(w.ctx, text, named)
			if err != nil {
				return fail(err)
			}
			return readRows(rows, start, each, fail)
		})
	}
	// The driver never sees our deadline (watcher.ctx): lib/pq's
	// statement-level watcher sends its CancelRequest before it lets the
	// call return, so at a deadline in a silent network the call would
	// wait for that request's own timeout; the socket's timer cuts it at
	// once instead. A caller's cancel still sends the CancelRequest (see
	// CacheStatements for when PostgreSQL loses it); in a silent network
	// the call then ends at the cancel grace when the engine sends it
	// (socket.cancel), or once the driver's request times out
	// (ConnectTimeout) when the driver does.
	limit := e.stmts.limit
	return conn.Raw(func(dc any) error {
		if sk.stmts == nil {
			sk.stmts = &stmtCache{byText: map[string]*cachedStmt{}}
		}
		c := sk.stmts
		defer func() {
			c.evict(limit)
			c.flush()
		}()
		sent := w.sent()
		fail := func(err error) error { return e.execFailure(ctx, w, sent, err) }
		named, err := namedArgs(dc, args)
		if err != nil {
			// Nothing was sent: refundable, like any failure before the
			// statement reached the network.
			return fail(err)
		}
		rows, err := c.query(w.ctx, ctx, dc, text, named, e.stmts)
		if err != nil {
			return fail(err)
		}
		return readRows(rows, start, each, fail)
	})
}

// readRows reads a driver's rows and closes them.
func readRows(rows driver.Rows, start func(types []string, fail func(error) error) error,
	each func(vals []driver.Value, fail func(error) error) error, fail func(error) error) error {
	// lib/pq's Close must run exactly once: a second call waits
	// forever for its finished cancel watcher.
	open := true
	defer func() {
		if open {
			rows.Close()
		}
	}()
	cols := rows.Columns()
	types := make([]string, len(cols))
	if tn, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range types {
			types[i] = tn.ColumnTypeDatabaseTypeName(i)
		}
	}
	if err := start(types, fail); err != nil {
		return err
	}
	vals := make([]driver.Value, len(cols))
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		if err := each(vals, fail); err != nil {
			return err
		}
	}
	open = false
	if err := rows.Close(); err != nil {
		return fail(err)
	}
	return nil
}

// query runs text with args on dc, preparing it unless it is cached.
// ctx is the driver's; caller is the caller's, whose cancellation ctx
// may not carry (the engine sends the CancelRequest itself).
func (c *stmtCache) query(ctx, caller context.Context, dc any, text string, args []driver.NamedValue, cfg *statementCache) (driver.Rows, error) {
	if cs, ok := c.byText[text]; ok {
		// A cancel that came before the statement is sent stops it here
		// (the server, idle until then, would ignore a CancelRequest).
		if err := caller.Err(); err != nil {
			return nil, err
		}
		c.tick++
		cs.used = c.tick
		rows, err := run(ctx, cs.st, args)
		if err == nil {
			return rows, nil
		}
		c.drop(text)
		if cfg.replan == nil || !cfg.replan(err) {
			return nil, err
		}
		// The server refused to reuse the plan before running it: the
		// table changed under the statement. Prepare it afresh.
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("backends: driver connection %T cannot prepare statements", dc)
	}
	st, err := pc.PrepareContext(ctx, text)
	if err != nil {
		return nil, &prepareFailed{err}
	}
	c.tick++
	c.byText[text] = &cachedStmt{st: st, used: c.tick}
	// Between the prepare's round trip and the run's the server is idle,
	// and a CancelRequest arriving then is lost: the statement would run
	// on uncancelled. A cancel seen by now stops it here.
	if err := caller.Err(); err != nil {
		return nil, err
	}
	rows, err := run(ctx, st, args)
	if err != nil {
		c.drop(text)
		return nil, err
	}
	return rows, nil
}

// prepareFailed is the error of a statement whose preparation failed: the
// server was asked to parse and describe it (PostgreSQL's Parse and
// Describe), never to run it, so nothing read a row (parse analysis and
// rewriting read the catalog only; planning, which reads statistics, waits
// for the run). Engine.execFailure makes it refundable.
type prepareFailed struct{ err error }

func (p *prepareFailed) Error() string { return "prepare: " + p.err.Error() }
func (p *prepareFailed) Unwrap() error { return p.err }

func run(ctx context.Context, st driver.Stmt, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, fmt.Errorf("backends: driver statement %T cannot run with a context", st)
	}
	return q.QueryContext(ctx, args)
}

// drop forgets text's statement and closes it after the call.
func (c *stmtCache) drop(text string) {
	if cs, ok := c.byText[text]; ok {
		delete(c.byText, text)
		c.closing = append(c.closing, cs.st)
	}
}

// evict drops the least recently used statements beyond limit.
func (c *stmtCache) evict(limit int) {
	for len(c.byText) > limit {
		var oldest string
		var at uint64
		first := true
		for text, cs := range c.byText {
			if first || cs.used < at {
				oldest, at, first = text, cs.used, false
			}
		}
		c.drop(oldest)
	}
}

// flush closes the dropped statements. A failure leaves the connection
// marked bad by its driver, and database/sql discards it.
func (c *stmtCache) flush() {
	for _, st := range c.closing {
		_ = st.Close()
	}
	c.closing = c.closing[:0]
}

// namedArgs converts args as database/sql would for dc: the driver's
// own checker first, the default conversion where it declines.
func namedArgs(dc any, args []any) ([]driver.NamedValue, error) {
	named := make([]driver.NamedValue, len(args))
	checker, _ := dc.(driver.NamedValueChecker)
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		err := driver.ErrSkip
		if checker != nil {
			err = checker.CheckNamedValue(&nv)
		}
		if errors.Is(err, driver.ErrSkip) {
			nv.Value, err = driver.DefaultParameterConverter.ConvertValue(a)
		}
		if err != nil {
			return nil, fmt.Errorf("backends: argument %d: %w", i+1, err)
		}
		named[i] = nv
	}
	return named, nil
}
