package pgwire

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// simpleQuery runs a Query message: every statement's result in text
// format, the error (if any) after the results that succeeded, then
// ReadyForQuery. The connection stays usable after an error.
func (c *conn) simpleQuery(sql string) {
	// A simple query ends the unnamed statement and portal (PostgreSQL
	// uses them for the query itself).
	c.dropStatement("")
	delete(c.portals, "")

	w := &queryWriter{c: c}
	ctx := c.beginQuery()
	err := c.sess.Query(ctx, sql, w)
	userCanceled := c.endQuery()

	switch {
	case w.encodeErr != nil:
		// One error per query: the encoding failure stands.
		c.logErr("encoding result", w.encodeErr)
		c.sendError(w.encodeErr)
	case err != nil:
		c.sendError(c.queryErr(err, userCanceled))
	case w.completed == 0:
		// No statement and no error: an empty query string.
		c.send(&pgproto3.EmptyQueryResponse{})
	}
	c.endTransactionPortals()
	c.readyForQuery()
}

// queryWriter encodes a simple query's answers in text format as the
// session writes them (ir.RowWriter).
type queryWriter struct {
	c         *conn
	cols      []ir.Column
	completed int
	encodeErr error
}

func (w *queryWriter) Columns(cols []ir.Column) error {
	w.cols = cols
	w.c.wbuf = appendRowDescription(w.c.wbuf, cols, nil)
	return nil
}

func (w *queryWriter) Row(row []ir.Value) error {
	err := w.c.sendRow(w.cols, nil, row)
	if err != nil && !errors.Is(err, errClientGone) {
		w.encodeErr = err
	}
	return err
}

func (w *queryWriter) Complete(done ir.Completion) error {
	w.completed++
	w.cols = nil
	if done.Empty {
		w.c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	w.c.sendNotices(done.Cost.Notices)
	w.c.wbuf = appendCommandComplete(w.c.wbuf, done.Tag)
	return nil
}

// sendRows sends rows a portal kept, flushing as output piles up. A
// client that is gone is noticed by the next read.
func (c *conn) sendRows(cols []ir.Column, formats []int16, rows [][]ir.Value) error {
	for _, row := range rows {
		if err := c.sendRow(cols, formats, row); err != nil && !errors.Is(err, errClientGone) {
			return err
		}
	}
	return nil
}

// errClientGone stops a streamed answer whose client can no longer be
// written to: the session stops reading the backend's rows too.
var errClientGone = sqlerr.New(sqlerr.QueryCanceled, "canceling statement: the client connection is gone")

// sendRow sends one DataRow, flushing when the output buffer is full: a
// streamed answer is never held whole in the buffer either.
func (c *conn) sendRow(cols []ir.Column, formats []int16, row []ir.Value) error {
	var err error
	if c.wbuf, err = appendDataRow(c.wbuf, cols, formats, row); err != nil {
		return err
	}
	if len(c.wbuf) >= flushThreshold {
		if err := c.flush(); err != nil {
			return errClientGone
		}
	}
	return nil
}

func (c *conn) sendNotices(ns []string) {
	for _, n := range ns {
		c.send(&pgproto3.NoticeResponse{
			Severity:            "NOTICE",
			SeverityUnlocalized: "NOTICE",
			Code:                "00000",
			Message:             n,
		})
	}
}

// endTransactionPortals drops the portals when no transaction block is
// open: PostgreSQL's portals live until the end of their transaction, and
// outside a block every statement (or Sync) ends one.
func (c *conn) endTransactionPortals() {
	if c.sess.TxStatus() != TxIdle {
		return
	}
	clear(c.portals)
}
