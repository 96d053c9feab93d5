package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// simpleQuery runs a Query message: every statement's result in text
// format, the error (if any) after the results that succeeded, then
// ReadyForQuery. The connection stays usable after an error.
func (c *conn) simpleQuery(sql string) {
	// A simple query ends the unnamed statement and portal (PostgreSQL
	// uses them for the query itself).
	c.dropStatement("")
	delete(c.portals, "")

	ctx, end := c.beginQuery()
	results, err := c.sess.Query(ctx, sql)
	userCanceled := end()

	sent := 0
	for _, r := range results {
		if serr := c.sendResult(r); serr != nil {
			c.logErr("encoding result", serr)
			c.sendError(serr)
			err = nil // one error per query: the encoding failure stands
			sent = -1
			break
		}
		sent++
	}
	if err != nil {
		c.sendError(c.queryErr(err, userCanceled))
	} else if sent == 0 {
		// No statement and no error: an empty query string.
		c.send(&pgproto3.EmptyQueryResponse{})
	}
	c.endTransactionPortals()
	c.readyForQuery()
}

// sendResult sends one statement's result in text format.
func (c *conn) sendResult(r Result) error {
	if r.Empty {
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if r.Columns != nil {
		c.send(rowDescription(r.Columns, nil))
		if err := c.sendRows(r.Columns, nil, r.Rows); err != nil {
			return err
		}
	}
	c.sendNotices(r.Notices)
	c.send(&pgproto3.CommandComplete{CommandTag: []byte(r.Tag)})
	return nil
}

// sendRows sends DataRows, flushing as output piles up.
func (c *conn) sendRows(cols []Column, formats []int16, rows [][]ir.Value) error {
	for _, row := range rows {
		var err error
		if c.wbuf, err = appendDataRow(c.wbuf, cols, formats, row); err != nil {
			return err
		}
		if len(c.wbuf) >= flushThreshold {
			if err := c.flush(); err != nil {
				// The client is gone; the next read says so.
				return nil
			}
		}
	}
	return nil
}

func (c *conn) sendNotices(ns []Notice) {
	for _, n := range ns {
		c.send(&pgproto3.NoticeResponse{
			Severity:            "NOTICE",
			SeverityUnlocalized: "NOTICE",
			Code:                "00000",
			Message:             n.Message,
			Detail:              n.Detail,
			Hint:                n.Hint,
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
