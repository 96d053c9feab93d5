package mysqlwire

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/wire"
)

// handler implements Vitess's mysql.Handler over Handler/Session.
type handler struct {
	s   *Server
	ctx context.Context
}

var _ mysql.Handler = (*handler)(nil)

// conn is the per-connection state kept in mysql.Conn.ClientData.
type conn struct {
	sess     Session
	database string
	prepared map[uint32]*Prepared
}

func (h *handler) NewConnection(c *mysql.Conn) {
	if p := wire.Peer(h.s.cfg.PeerID); p > 0 {
		// Before Vitess writes the handshake, which tells the client
		// its id: the replica's number in the high bits.
		c.ConnectionID = wire.WithPeer(p, c.ConnectionID)
	}
	c.ClientData = &conn{prepared: map[uint32]*Prepared{}}
	h.s.mu.Lock()
	h.s.conns[c] = &connState{}
	h.s.mu.Unlock()
}

func (h *handler) ConnectionClosed(c *mysql.Conn) {
	if st, ok := c.ClientData.(*conn); ok && st.sess != nil {
		st.sess.Close()
		h.s.log.Debug("connection closed", "conn_id", c.ConnectionID, "user", c.User)
	}
	h.s.mu.Lock()
	delete(h.s.conns, c)
	h.s.mu.Unlock()
}

func (h *handler) ConnectionAborted(c *mysql.Conn, reason string) error {
	// reason is Vitess's text ("Error authenticating user x ..."): it
	// names the user, never a password.
	h.s.log.Info("connection refused", "conn_id", c.ConnectionID, "reason", reason)
	return nil
}

// session returns the connection's session, starting it on first use
// (Vitess calls ComInitDB, or the first command, after authentication).
func (h *handler) session(c *mysql.Conn) (*conn, error) {
	st, ok := c.ClientData.(*conn)
	if !ok {
		return nil, sqlerr.New(sqlerr.Internal, "internal error: connection state missing")
	}
	if st.sess == nil {
		if c.User == "" {
			return nil, sqlerr.New(sqlerr.InvalidAuthorization, "not authenticated")
		}
		sess, err := h.s.cfg.Handler.NewSession(h.ctx, c.ConnectionID, c.User, st.database)
		if err != nil {
			return nil, err
		}
		st.sess = sess
		h.s.log.Debug("session started", "conn_id", c.ConnectionID, "user", c.User, "tls", c.TLSEnabled())
	}
	return st, nil
}

func (h *handler) ComInitDB(c *mysql.Conn, name string) error {
	st, ok := c.ClientData.(*conn)
	if !ok {
		return sqlError(sqlerr.New(sqlerr.Internal, "internal error: connection state missing"))
	}
	if st.sess == nil {
		// The handshake's database: remembered for NewSession.
		st.database = name
		if _, err := h.session(c); err != nil {
			return sqlError(err)
		}
		return nil
	}
	if err := st.sess.UseDatabase(name); err != nil {
		return sqlError(err)
	}
	return nil
}

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	return h.query(ctx, c, query, func(r *sqltypes.Result) error { return callback(r, false) })
}

// ComMultiQuery runs the first statement of query and returns the rest;
// after an error the rest is dropped, as MySQL does.
func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	first, rest, err := sqlparser.SplitStatement(query)
	if err != nil {
		// Vitess's splitter could not find the boundary: let the
		// session's parser see the whole text (it refuses what it
		// cannot handle).
		first, rest = query, ""
	}
	rest = strings.TrimSpace(rest)
	if err := h.query(ctx, c, first, func(r *sqltypes.Result) error { return callback(r, rest != "") }); err != nil {
		return "", err
	}
	return rest, nil
}

func (h *handler) query(ctx context.Context, c *mysql.Conn, query string, send func(*sqltypes.Result) error) error {
	st, err := h.session(c)
	if err != nil {
		return sqlError(err)
	}
	ctx, end := h.s.begin(ctx, c)
	defer end()
	if m := fieldListQuery.FindStringSubmatch(query); m != nil {
		table := strings.ReplaceAll(m[1], "``", "`")
		cols, err := st.sess.FieldList(ctx, table)
		if err != nil {
			return sqlError(err)
		}
		return send(&sqltypes.Result{Fields: fields(cols, table)})
	}
	if err := st.sess.Query(ctx, query, &spool{send: send}); err != nil {
		return sqlError(err)
	}
	return nil
}

// fieldListQuery is the text Vitess builds for COM_FIELD_LIST (the mysql
// CLI's column completion). It is answered with the table's columns and
// no rows; a client typing the same text gets the same harmless answer.
var fieldListQuery = regexp.MustCompile("^SELECT \\* FROM `((?:[^`]|``)+)` LIMIT 0;$")

func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prep *mysql.PrepareData) ([]*querypb.Field, error) {
	st, err := h.session(c)
	if err == nil {
		err = h.s.checkPrepared(c)
	}
	var p *Prepared
	if err == nil {
		p, err = st.sess.Prepare(ctx, query)
	}
	if err != nil {
		// Vitess registered the statement before asking: a refused one
		// must not stay behind.
		delete(c.PrepareData, prep.StatementID)
		return nil, sqlError(err)
	}
	// The session's parser numbers the ? markers; Vitess's count (from
	// its own grammar) is replaced so both sides agree.
	prep.ParamsCount = uint16(p.NumParams)
	prep.ParamsType = make([]int32, p.NumParams)
	prep.BindVars = make(map[string]*querypb.BindVariable, p.NumParams)
	st.prepared[prep.StatementID] = p
	for id := range st.prepared {
		if _, ok := c.PrepareData[id]; !ok && id != prep.StatementID {
			delete(st.prepared, id) // closed by COM_STMT_CLOSE
		}
	}
	if p.Columns == nil {
		return nil, nil
	}
	return fields(p.Columns, ""), nil
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prep *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	st, err := h.session(c)
	if err != nil {
		return sqlError(err)
	}
	p := st.prepared[prep.StatementID]
	if p == nil {
		return sqlError(sqlerr.New(sqlerr.InvalidStatementName, "unknown prepared statement handler (%d) given to mysqld_stmt_execute", prep.StatementID))
	}
	if err := h.s.checkParams(c, prep); err != nil {
		return sqlError(err)
	}
	args := make([]ir.Value, p.NumParams)
	for i := range args {
		v, err := argValue(prep.BindVars["v"+strconv.Itoa(i+1)])
		if err != nil {
			return sqlError(sqlerr.New(sqlerr.InvalidParameterValue, "parameter %d cannot be decoded", i+1))
		}
		args[i] = v
	}
	ctx, end := h.s.begin(ctx, c)
	defer end()
	// The client decodes binary rows with the types it was told at
	// prepare time.
	if err := st.sess.Execute(ctx, p, args, &spool{send: callback, described: p.Columns}); err != nil {
		return sqlError(err)
	}
	return nil
}

func (h *handler) WarningCount(c *mysql.Conn) uint16 {
	if st, ok := c.ClientData.(*conn); ok && st.sess != nil {
		return st.sess.Warnings()
	}
	return 0
}

func (h *handler) ComResetConnection(c *mysql.Conn) error {
	if st, ok := c.ClientData.(*conn); ok && st.sess != nil {
		st.sess.Reset()
		st.prepared = map[uint32]*Prepared{}
	}
	return nil
}

func (h *handler) ParserOptionsForConnection(*mysql.Conn) (sqlparser.ParserOptions, error) {
	return sqlparser.ParserOptions{}, nil
}

// checkPrepared refuses a new prepared statement (already in
// c.PrepareData) over the connection's caps.
func (s *Server) checkPrepared(c *mysql.Conn) error {
	if n := len(c.PrepareData); n > s.cfg.MaxPreparedStatements {
		return sqlerr.New(sqlerr.TooManyPreparedStatements,
			"Can't create more than max_prepared_stmt_count statements (current value: %d)", s.cfg.MaxPreparedStatements).
			WithHint("close the prepared statements the client no longer uses, or raise listen.max_prepared_statements")
	}
	size := 0
	for _, pd := range c.PrepareData {
		size += len(pd.PrepareStmt)
	}
	if size > s.cfg.MaxPreparedBytes {
		return sqlerr.New(sqlerr.ProgramLimitExceeded,
			"the prepared statements of this connection would hold %d bytes of SQL text; the limit is %d", size, s.cfg.MaxPreparedBytes).
			WithHint("close the prepared statements the client no longer uses, or raise listen.max_prepared_bytes")
	}
	return nil
}

// checkParams refuses an execute whose parameters, long data included,
// exceed MaxPacket.
func (s *Server) checkParams(c *mysql.Conn, prep *mysql.PrepareData) error {
	if g, ok := c.Conn.(*guard); ok && g.takeLongDataOverflow(prep.StatementID) {
		// MySQL's own message (ER_UNKNOWN_ERROR) for the same case.
		return sqlerr.New(sqlerr.ProgramLimitExceeded,
			"Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes").
			WithHint("the proxy takes parameters of up to listen.max_query_bytes (%d bytes) per execute", s.cfg.MaxPacket)
	}
	size := 0
	for _, bv := range prep.BindVars {
		if bv != nil {
			size += len(bv.Value)
		}
	}
	if size > s.cfg.MaxPacket {
		return sqlerr.New(sqlerr.ProgramLimitExceeded,
			"the parameters of this execute hold %d bytes; the limit is %d", size, s.cfg.MaxPacket).
			WithHint("send smaller parameters, or raise listen.max_query_bytes")
	}
	return nil
}
