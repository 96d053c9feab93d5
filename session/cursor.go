package session

import (
	"context"
	"strconv"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// maxCursors bounds the cursors one session may hold open: each holds its
// whole answer.
const maxCursors = 64

// cursor is an open SQL-level cursor: the answer of its query, computed
// (and, for a private query, released and charged) once at DECLARE, and
// the position FETCH reads from. Position 0 is before the first row,
// len(rows)+1 after the last, as in PostgreSQL.
//
// A nil entry in Session.cursors is a DECLARE that failed in the current
// transaction (see declareCursor).
type cursor struct {
	columns []Column
	rows    [][]ir.Value
	pos     int64
	hold    bool // WITH HOLD: survives the end of the transaction
}

// cursorStatement runs DECLARE, FETCH, MOVE and CLOSE. psycopg's named
// (server-side) cursors send them; so do analysts paging a large answer.
// The query runs once, when the cursor is declared, exactly as the same
// SELECT would: a private aggregate is planned, charged and released then,
// a catalog query answered then; FETCH only pages through that answer.
func (s *Session) cursorStatement(ctx context.Context, c *ir.Cursor, args []ir.Value, tr *trace) (Result, error) {
	switch c.Verb {
	case ir.CursorDeclare:
		return s.declareCursor(ctx, c, args, tr)
	case ir.CursorClose:
		if c.Name == "" {
			s.cursors = nil
			return Result{Tag: "CLOSE CURSOR ALL"}, nil
		}
		if _, ok := s.cursors[c.Name]; !ok {
			return Result{}, sqlerr.New(sqlerr.InvalidCursorName, "cursor %q does not exist", c.Name)
		}
		delete(s.cursors, c.Name)
		return Result{Tag: "CLOSE CURSOR"}, nil
	}
	cur := s.cursors[c.Name]
	if cur == nil {
		return Result{}, sqlerr.New(sqlerr.InvalidCursorName, "cursor %q does not exist", c.Name)
	}
	rows := cur.fetch(c.Direction, c.Count)
	if c.Verb == ir.CursorMove {
		return Result{Tag: "MOVE " + strconv.Itoa(len(rows))}, nil
	}
	return Result{Columns: cur.columns, Rows: rows, Tag: "FETCH " + strconv.Itoa(len(rows))}, nil
}

func (s *Session) declareCursor(ctx context.Context, c *ir.Cursor, args []ir.Value, tr *trace) (Result, error) {
	if !c.Hold && !s.inTx {
		return Result{}, sqlerr.New(sqlerr.NoActiveTransaction, "DECLARE CURSOR can only be used in transaction blocks").
			WithHint("BEGIN first, or DECLARE ... CURSOR WITH HOLD")
	}
	if s.cursors[c.Name] != nil {
		return Result{}, sqlerr.New(sqlerr.DuplicateCursor, "cursor %q already exists", c.Name)
	}
	if len(s.cursors) >= maxCursors {
		return Result{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "a session may hold at most %d open cursors", maxCursors).
			WithHint("CLOSE the cursors you are done with")
	}
	// The query is checked and run exactly as the same SELECT sent alone.
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	var res Collector
	cost, err := s.exec(ctx, c.Query, args, &res, tr)
	if err == nil && (len(res.Results) != 1 || res.Results[0].Columns == nil) {
		err = sqlerr.New(sqlerr.FeatureNotSupported, "DECLARE CURSOR of a statement that returns no rows")
	}
	if err != nil {
		// PostgreSQL would abort the transaction, and a client's cleanup
		// (psycopg2 closing its named cursor) would not send CLOSE; the
		// proxy never enters the failed state, so the name stays known
		// until the transaction ends: CLOSE succeeds, FETCH does not.
		if !c.Hold {
			s.cursors[c.Name] = nil
		}
		return Result{}, err
	}
	r := res.Results[0]
	s.cursors[c.Name] = &cursor{columns: r.Columns, rows: r.Rows, hold: c.Hold}
	return Result{Tag: "DECLARE CURSOR", Notices: cost.Notices}, nil
}

// endTransaction closes the cursors declared without WITH HOLD and
// restores what SET LOCAL replaced, as COMMIT and ROLLBACK do.
func (s *Session) endTransaction() {
	s.endLocalSettings()
	for name, c := range s.cursors {
		if c == nil || !c.hold {
			delete(s.cursors, name)
		}
	}
}

// fetch moves the cursor as FETCH does and returns the rows it passes
// over (PostgreSQL's PerformPortalFetch on a materialised portal).
func (c *cursor) fetch(dir ir.FetchDirection, count int64) [][]ir.Value {
	n := int64(len(c.rows))
	// at returns the row at position p (1-based) and parks the cursor
	// there, or before the first / after the last row.
	at := func(p int64) [][]ir.Value {
		switch {
		case p <= 0:
			c.pos = 0
			return nil
		case p > n:
			c.pos = n + 1
			return nil
		}
		c.pos = p
		return c.rows[p-1 : p]
	}
	switch dir {
	case ir.FetchAbsolute:
		if count < 0 {
			return at(n + 1 + count)
		}
		return at(count)
	case ir.FetchRelative:
		return at(c.pos + min(max(count, -n-1), n+1))
	case ir.FetchBackward:
		var out [][]ir.Value
		for ; count > 0 && c.pos > 1; count-- {
			c.pos--
			out = append(out, c.rows[c.pos-1])
		}
		if count > 0 {
			c.pos = 0
		}
		return out
	}
	if count < 0 {
		return c.fetch(ir.FetchBackward, -count)
	}
	start := min(c.pos, n)
	end := start + min(count, n-start)
	out := c.rows[start:end]
	c.pos = end
	if count > int64(len(out)) {
		c.pos = n + 1
	}
	return out
}

// cursorColumns describes what FETCH from c returns (nil for the other
// cursor statements), for the extended protocol's Describe.
func (s *Session) cursorColumns(c *ir.Cursor) ([]Column, error) {
	if c.Verb != ir.CursorFetch {
		return nil, nil
	}
	cur := s.cursors[c.Name]
	if cur == nil {
		return nil, sqlerr.New(sqlerr.InvalidCursorName, "cursor %q does not exist", c.Name)
	}
	return cur.columns, nil
}
