package pgwire

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// statement is a prepared statement of the extended protocol.
type statement struct {
	prep *Prepared
	// declared are the OIDs the client gave in Parse (0 = unspecified);
	// oids are what ParameterDescription reports: the declared OID, else
	// the session's type. Both have one entry per parameter.
	declared []uint32
	oids     []uint32
	// size is the length of the statement's text, counted against
	// Config.MaxPreparedBytes.
	size int
}

// portal is a bound statement. The session executes it once, on the first
// Execute. An Execute without a row limit streams the rows to the client
// as the session writes them; a row-limited one keeps them here (the
// session's own rows, not copies) so that the next Executes continue
// where the last one stopped.
type portal struct {
	stmt    *statement
	args    []ir.Value
	formats []int16 // one per result column; nil means all text

	executed bool
	empty    bool
	rows     [][]ir.Value
	next     int
	tag      string
}

// extended handles Parse, Bind, Describe, Execute and Close. An error
// makes the caller send ErrorResponse and skip to the next Sync.
func (c *conn) extended(msg pgproto3.FrontendMessage) error {
	switch m := msg.(type) {
	case *pgproto3.Parse:
		return c.parse(m)
	case *pgproto3.Bind:
		return c.bind(m)
	case *pgproto3.Describe:
		return c.describe(m)
	case *pgproto3.Execute:
		return c.execute(m)
	case *pgproto3.Close:
		return c.close(m)
	}
	return protocolErr("unexpected %s message", msgName(msg))
}

func (c *conn) parse(m *pgproto3.Parse) error {
	if m.Name != "" {
		if _, dup := c.stmts[m.Name]; dup {
			return sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement %q already exists", m.Name)
		}
	}
	size, err := c.checkPrepared(m)
	if err != nil {
		return err
	}
	ctx := c.beginQuery()
	declared := make([]ir.ColType, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		declared[i] = typeOfOID(oid)
	}
	prep, err := c.sess.Prepare(ctx, m.Query, declared)
	userCanceled := c.endQuery()
	if err != nil {
		return c.queryErr(err, userCanceled)
	}
	if prep == nil {
		return sqlerr.Wrap(sqlerr.Internal, fmt.Errorf("pgwire: session prepared a nil statement"), "internal error")
	}
	n := max(len(m.ParameterOIDs), len(prep.ParamTypes))
	st := &statement{prep: prep, declared: make([]uint32, n), oids: make([]uint32, n), size: len(m.Query)}
	copy(st.declared, m.ParameterOIDs)
	for i := range n {
		st.oids[i] = st.declared[i]
		if st.oids[i] == 0 {
			st.oids[i] = oidOf(paramType(prep, i))
		}
	}
	// The unnamed statement is simply replaced.
	c.stmts[m.Name] = st
	c.stmtBytes = size
	c.send(&pgproto3.ParseComplete{})
	return nil
}

// checkPrepared refuses a Parse that would take the connection over its
// caps, and returns the statements' total text size with it.
func (c *conn) checkPrepared(m *pgproto3.Parse) (int, error) {
	n, size := len(c.stmts), c.stmtBytes+len(m.Query)
	if old := c.stmts[m.Name]; old != nil {
		size -= old.size // the unnamed statement is replaced
	} else {
		n++
	}
	if limit := c.srv.cfg.MaxPreparedStatements; n > limit {
		return 0, sqlerr.New(sqlerr.TooManyPreparedStatements, "too many prepared statements on this connection (the limit is %d)", limit).
			WithHint("close the statements the client no longer uses (Close, DEALLOCATE), or raise listen.max_prepared_statements")
	}
	if limit := c.srv.cfg.MaxPreparedBytes; size > limit {
		return 0, sqlerr.New(sqlerr.ProgramLimitExceeded, "the prepared statements of this connection would hold %d bytes of SQL text; the limit is %d", size, limit).
			WithHint("close the statements the client no longer uses (Close, DEALLOCATE), or raise listen.max_prepared_bytes")
	}
	return size, nil
}

// dropStatement forgets a prepared statement.
func (c *conn) dropStatement(name string) {
	if st := c.stmts[name]; st != nil {
		c.stmtBytes -= st.size
		delete(c.stmts, name)
	}
}

// paramType is the session's type for parameter i (text when the
// session did not say).
func paramType(p *Prepared, i int) ir.ColType {
	if i < len(p.ParamTypes) {
		return p.ParamTypes[i]
	}
	return ir.TypeText
}

func (c *conn) lookupStatement(name string) (*statement, error) {
	return lookup(c.stmts, name, sqlerr.InvalidStatementName, "prepared statement")
}

func (c *conn) lookupPortal(name string) (*portal, error) {
	return lookup(c.portals, name, sqlerr.InvalidCursorName, "portal")
}

// lookup finds the named prepared statement or portal (what), or says in
// PostgreSQL's words that it does not exist.
func lookup[T any](m map[string]*T, name string, code sqlerr.Code, what string) (*T, error) {
	if v := m[name]; v != nil {
		return v, nil
	}
	if name == "" {
		return nil, sqlerr.New(code, "unnamed %s does not exist", what)
	}
	return nil, sqlerr.New(code, "%s %q does not exist", what, name)
}

func (c *conn) bind(m *pgproto3.Bind) error {
	st, err := c.lookupStatement(m.PreparedStatement)
	if err != nil {
		return err
	}
	if m.DestinationPortal != "" {
		if _, dup := c.portals[m.DestinationPortal]; dup {
			return sqlerr.New(sqlerr.DuplicateCursor, "portal %q already exists", m.DestinationPortal)
		}
	}
	if _, replaced := c.portals[m.DestinationPortal]; !replaced && len(c.portals) >= c.srv.cfg.MaxPreparedStatements {
		// Portals hold their parameters (and rows) until their
		// transaction ends: as many as prepared statements at most.
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "too many open portals on this connection (the limit is %d)", c.srv.cfg.MaxPreparedStatements).
			WithHint("close portals the client no longer uses, or end the transaction")
	}
	nf, np := len(m.ParameterFormatCodes), len(m.Parameters)
	if nf > 1 && nf != np {
		return protocolErr("bind message has %d parameter formats but %d parameters", nf, np)
	}
	if np != len(st.oids) {
		return protocolErr("bind message supplies %d parameters, but prepared statement %q requires %d",
			np, m.PreparedStatement, len(st.oids))
	}
	args := make([]ir.Value, np)
	for i, data := range m.Parameters {
		f := formatText
		switch nf {
		case 0:
		case 1:
			f = m.ParameterFormatCodes[0]
		default:
			f = m.ParameterFormatCodes[i]
		}
		if args[i], err = decodeParam(i+1, data, f, st.declared[i], paramType(st.prep, i)); err != nil {
			return err
		}
	}
	formats, err := resultFormats(m.ResultFormatCodes, len(st.prep.Columns))
	if err != nil {
		return err
	}
	c.portals[m.DestinationPortal] = &portal{stmt: st, args: args, formats: formats}
	c.send(&pgproto3.BindComplete{})
	return nil
}

// resultFormats expands Bind's result format codes (none: all text; one:
// all columns; else one per column) to one per column, nil for all text.
func resultFormats(codes []int16, ncols int) ([]int16, error) {
	for _, f := range codes {
		if f != formatText && f != formatBinary {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
	}
	switch {
	case len(codes) == 0 || ncols == 0:
		return nil, nil
	case len(codes) == 1:
		if codes[0] == formatText {
			return nil, nil
		}
		out := make([]int16, ncols)
		for i := range out {
			out[i] = codes[0]
		}
		return out, nil
	case len(codes) == ncols:
		return append([]int16(nil), codes...), nil
	}
	return nil, protocolErr("bind message has %d result formats but query has %d columns", len(codes), ncols)
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		st, err := c.lookupStatement(m.Name)
		if err != nil {
			return err
		}
		c.send(&pgproto3.ParameterDescription{ParameterOIDs: st.oids})
		c.describeRows(st.prep.Columns, nil)
	case 'P':
		p, err := c.lookupPortal(m.Name)
		if err != nil {
			return err
		}
		c.describeRows(p.stmt.prep.Columns, p.formats)
	default:
		return protocolErr("invalid DESCRIBE message subtype %d", m.ObjectType)
	}
	return nil
}

func (c *conn) describeRows(cols []ir.Column, formats []int16) {
	if cols == nil {
		c.send(&pgproto3.NoData{})
		return
	}
	c.wbuf = appendRowDescription(c.wbuf, cols, formats)
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p, err := c.lookupPortal(m.Portal)
	if err != nil {
		return err
	}
	if !p.executed {
		p.executed = true
		streamed, err := c.run(p, m.MaxRows == 0)
		if err != nil {
			delete(c.portals, m.Portal) // a failed portal cannot be resumed
			return err
		}
		if streamed {
			return nil
		}
	}
	if p.empty {
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	rows := p.rows[p.next:]
	if m.MaxRows > 0 && uint64(len(rows)) > uint64(m.MaxRows) {
		rows = rows[:m.MaxRows]
	}
	if err := c.sendRows(p.stmt.prep.Columns, p.formats, rows); err != nil {
		return err
	}
	p.next += len(rows)
	if p.next < len(p.rows) {
		c.send(&pgproto3.PortalSuspended{})
		return nil
	}
	p.rows, p.next = nil, 0 // done: let the rows go
	c.wbuf = appendCommandComplete(c.wbuf, p.tag)
	return nil
}

// run executes a portal's statement in the session. With stream set
// (an Execute without a row limit) the rows go to the client as they
// come and the command is complete when run returns (streamed). Else
// they are kept in the portal and the notices go out now, before the
// first row: a client that reads only part of the rows still learns what
// the answer cost.
func (c *conn) run(p *portal, stream bool) (streamed bool, err error) {
	w := &portalWriter{c: c, p: p, stream: stream}
	ctx := c.beginQuery()
	err = c.sess.Execute(ctx, p.stmt.prep, p.args, w)
	userCanceled := c.endQuery()
	switch {
	case w.encodeErr != nil:
		c.logErr("encoding result", w.encodeErr)
		return false, w.encodeErr
	case w.shapeErr != nil:
		c.log.Error("session result does not match its prepared statement", "err", w.shapeErr)
		return false, sqlerr.Wrap(sqlerr.Internal, w.shapeErr, "internal error")
	case err != nil:
		return false, c.queryErr(err, userCanceled)
	}
	return w.done && stream, nil
}

// portalWriter receives a portal's answer (ir.RowWriter).
type portalWriter struct {
	c      *conn
	p      *portal
	stream bool
	done   bool
	// encodeErr: a value could not be encoded; shapeErr: the session's
	// columns are not those the client was told in RowDescription.
	encodeErr, shapeErr error
}

func (w *portalWriter) Columns(cols []ir.Column) error {
	if want := w.p.stmt.prep.Columns; want != nil && len(cols) != len(want) {
		w.shapeErr = fmt.Errorf("pgwire: session result has %d columns, prepared statement described %d", len(cols), len(want))
		return w.shapeErr
	}
	return nil
}

func (w *portalWriter) Row(row []ir.Value) error {
	if w.p.stmt.prep.Columns == nil {
		// The client was told NoData: a row cannot be described.
		w.shapeErr = fmt.Errorf("pgwire: session result has rows, prepared statement described none")
	}
	if w.shapeErr != nil {
		return w.shapeErr
	}
	if !w.stream {
		w.p.rows = append(w.p.rows, row)
		return nil
	}
	err := w.c.sendRow(w.p.stmt.prep.Columns, w.p.formats, row)
	if err != nil && !errors.Is(err, errClientGone) {
		w.encodeErr = err
	}
	return err
}

func (w *portalWriter) Complete(done ir.Completion) error {
	if done.Empty {
		w.p.empty = true
		return nil
	}
	w.c.sendNotices(done.Cost.Notices)
	w.p.tag = done.Tag
	if w.stream {
		w.c.wbuf = appendCommandComplete(w.c.wbuf, done.Tag)
	}
	w.done = true
	return nil
}

func (c *conn) close(m *pgproto3.Close) error {
	// Closing something that does not exist is not an error.
	switch m.ObjectType {
	case 'S':
		c.dropStatement(m.Name)
	case 'P':
		delete(c.portals, m.Name)
	default:
		return protocolErr("invalid CLOSE message subtype %d", m.ObjectType)
	}
	c.send(&pgproto3.CloseComplete{})
	return nil
}

// sync ends an extended-protocol batch: errors are forgotten, portals end
// with their implicit transaction, and the client hears ReadyForQuery.
func (c *conn) sync() {
	c.ignoreTillSync = false
	c.inBatch = false
	c.endTransactionPortals()
	c.readyForQuery()
}
