package session

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/catalog"
	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
	"github.com/ddp-proxy/ddp-proxy/wire/mysqlwire"
)

// MySQL adapts a Proxy to the MySQL front end. The statements MySQL
// connectors and BI tools send that have no PostgreSQL counterpart (SHOW
// TABLES/COLUMNS/VARIABLES/WARNINGS, DESCRIBE, SELECT @@var, SET @var,
// USE) are answered here; everything else goes through the shared
// Session (Exec, Prepare, Execute), so privacy decisions, EXPLAIN and the
// budget view are the PostgreSQL front end's.
type MySQL struct{ p *Proxy }

var (
	_ mysqlwire.Handler = MySQL{}
	_ mysqlwire.Session = (*mySession)(nil)
)

// MySQLHandler returns the mysqlwire.Handler of the proxy.
func (p *Proxy) MySQLHandler() MySQL { return MySQL{p} }

// LookupUser returns the user's credentials for the MySQL front end. A
// user with only a SCRAM verifier cannot log in over MySQL.
func (h MySQL) LookupUser(name string) (mysqlwire.UserAuth, bool) {
	u := h.p.Policy().User(name)
	if u == nil {
		return mysqlwire.UserAuth{}, false
	}
	if h.p.Policy().Listen.Auth == policies.AuthTrust {
		return mysqlwire.UserAuth{Trust: true}, true
	}
	switch {
	case u.Password != "":
		return mysqlwire.UserAuth{Password: u.Password}, true
	case u.MySQLNativePassword != "":
		hash, err := hex.DecodeString(strings.TrimPrefix(u.MySQLNativePassword, "*"))
		if err != nil || len(hash) != 20 {
			return mysqlwire.UserAuth{}, false // policies validation rejects this already
		}
		return mysqlwire.UserAuth{NativeHash: hash}, true
	}
	return mysqlwire.UserAuth{}, false
}

// NewSession starts a MySQL session.
func (h MySQL) NewSession(_ context.Context, connID uint32, user, database string) (mysqlwire.Session, error) {
	u := h.p.Policy().User(user)
	if u == nil {
		return nil, sqlerr.New(sqlerr.InvalidAuthorization, "Access denied for user '%s'", user)
	}
	p := h.p
	ms := &mySession{
		user: u, connID: connID,
		env:  mysqlEnv{maxPacket: p.maxPacket, exactTables: p.exactTableNames(), info: p.info, port: listenPort(p.Policy().Listen.MySQL)},
		open: func(db string) mysqlCore { return p.Open(u, parser.MySQL, map[string]string{"database": db}) },
	}
	ms.reset(database)
	return ms, nil
}

// mysqlCore is all the MySQL adapter uses of the session core (*Session):
// the statement path (Parse, Exec, Prepare, Execute) and the few pieces
// of connection state both dialects share (ε, current database, how
// table names resolve). MySQL's own state — variables, user variables,
// warnings — is the adapter's (mySession), so the walk of a query goes
// wire → adapter → core → backend and never back into the adapter.
type mysqlCore interface {
	Parse(sql string) ([]ir.Statement, error)
	Exec(ctx context.Context, st *ir.Statement, args []ir.Value, w ir.RowWriter) (ir.Cost, error)
	Prepare(ctx context.Context, sql string, declared []ColType) (*Prepared, error)
	Execute(ctx context.Context, p *Prepared, args []ir.Value, w ir.RowWriter) (ir.Cost, error)
	SetDatabase(name string)
	Epsilon() float64
	SetEpsilon(value string, toDefault bool) error
	SetStatementTimeout(d time.Duration)
	SetTimeZone(z string)
	Names() policies.Names
	Policy() *policies.Policy
	Exposed(ctx context.Context) ([]emulated.Exposed, error)
	Describe(ctx context.Context, tables []*policies.Table) ([]emulated.Exposed, error)
}

var _ mysqlCore = (*Session)(nil)

// mysqlEnv is what a MySQL session reads of the process, fixed when it
// connects.
type mysqlEnv struct {
	maxPacket   int            // max_allowed_packet (Config.MaxAllowedPacket)
	exactTables bool           // lower_case_table_names = 0 (Proxy.exactTableNames)
	info        InfoSchemaFunc // nil: information_schema is not emulated
	port        string         // @@port: the MySQL listen address's port
}

// listenPort is the port of a listen address as @@port reports it;
// MySQL's own 3306 where the address names none (or port 0, a test's
// "any free port").
func listenPort(addr string) string {
	if n := policies.Port(addr); n > 0 {
		return strconv.Itoa(n)
	}
	return "3306"
}

// mySession is one MySQL connection: the adapter's state and the core
// session it drives.
type mySession struct {
	user     *policies.User
	connID   uint32
	env      mysqlEnv
	open     func(database string) mysqlCore
	core     mysqlCore
	database string
	vars     map[string]string   // system variables, lower-case names
	userVars map[string]ir.Value // @name, lower-case
	warnings []warning           // of the last statement, for SHOW WARNINGS
}

// warning is one row of SHOW WARNINGS.
type warning struct {
	level string // Note, Warning, Error
	code  uint16
	msg   string
}

// codeDDPNote is the code of the proxy's cost notes (ER_UNKNOWN_ERROR's
// number: MySQL has no code for "informational note from a proxy").
const codeDDPNote = 1105

func (ms *mySession) reset(database string) {
	ms.core = ms.open(database)
	ms.database = database
	ms.vars = defaultMySQLVars(ms.env)
	ms.userVars = map[string]ir.Value{}
	ms.warnings = nil
}

func (ms *mySession) Reset()           { ms.reset(ms.database) }
func (ms *mySession) Close()           {}
func (ms *mySession) Warnings() uint16 { return uint16(min(len(ms.warnings), 65535)) }

// UseDatabase accepts any name: the proxy serves one database whatever
// it is called. DATABASE() echoes the name, the catalog lists the tables
// declared without a schema under it, and name.table resolves to them
// (policies.Policy.Resolve).
func (ms *mySession) UseDatabase(name string) error {
	ms.database = name
	ms.core.SetDatabase(name)
	return nil
}

// Query runs one statement (mysqlwire splits multi-statements).
func (ms *mySession) Query(ctx context.Context, sql string, w ir.RowWriter) error {
	stmts, err := ms.core.Parse(sql)
	if err != nil {
		return ms.fail(err)
	}
	if len(stmts) != 1 {
		return ms.fail(sqlerr.New(sqlerr.SyntaxError, "multiple statements in one query need the client's CLIENT_MULTI_STATEMENTS option"))
	}
	return ms.exec(ctx, &stmts[0], nil, nil, w)
}

// exec runs one parsed statement; prep is set for a prepared one. The
// statements MySQL has and PostgreSQL has not are answered here; the
// rest goes to the session core through myWriter, which blanks MySQL's
// statistics columns row by row and keeps the cost notes for SHOW
// WARNINGS.
func (ms *mySession) exec(ctx context.Context, st *ir.Statement, prep *Prepared, args []ir.Value, w ir.RowWriter) error {
	if keepsWarnings(st) {
		r, err := ms.local(ctx, st)
		if err != nil {
			return err
		}
		_, err = r.write(w)
		return err
	}
	ms.warnings = nil
	if r, ok, err := ms.tryLocal(ctx, st); ok {
		if err != nil {
			return ms.fail(err)
		}
		_, err = r.write(w)
		return err
	}
	if err := ms.checkCatalog(st); err != nil {
		return ms.fail(err)
	}
	mw := &myWriter{ms: ms, w: w}
	var err error
	switch {
	case ms.infoSchemaLocal(st):
		var r Result
		if r, err = ms.runInfoSchema(ctx, st, args); err == nil {
			_, err = r.write(mw)
		}
	case prep != nil:
		_, err = ms.core.Execute(ctx, prep, args, mw)
	default:
		_, err = ms.core.Exec(ctx, st, nil, mw)
	}
	if err != nil {
		return ms.fail(err)
	}
	return nil
}

// myWriter is the MySQL adapter's RowWriter around the front end's.
type myWriter struct {
	ms *mySession
	w  ir.RowWriter
	// Decided once per answer from its columns (catalog): the statistics
	// columns to blank, and the test that drops a column the policy does
	// not list from a column listing (nil: none).
	stats    []int
	declared func(row []ir.Value) bool
}

func (mw *myWriter) Columns(cols []Column) error {
	names := columnNames(cols)
	mw.stats = catalog.StatisticsIndexes(names)
	mw.declared = catalog.DeclaredColumnRows(mw.ms.core.Policy(), names)
	return mw.w.Columns(cols)
}

func (mw *myWriter) Row(row []ir.Value) error {
	catalog.BlankRow(mw.stats, row)
	if mw.declared != nil && !mw.declared(row) {
		return nil // a column the policy hides
	}
	return mw.w.Row(row)
}

func (mw *myWriter) Complete(done ir.Completion) error {
	for _, n := range done.Cost.Notices {
		for _, part := range strings.Split(n, "; ") {
			mw.ms.warnings = append(mw.ms.warnings, warning{"Note", codeDDPNote, part})
		}
	}
	return mw.w.Complete(done)
}

// fail records err for SHOW WARNINGS / SHOW ERRORS, as MySQL does.
func (ms *mySession) fail(err error) error {
	e := sqlerr.As(err)
	if m := mysqlSpelling(e); m != e {
		e, err = m, m
	}
	msg := e.Message
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	ms.warnings = []warning{{"Error", e.Code.MySQLErrno, msg}}
	return err
}

// mysqlSpelling rewrites the setting's PostgreSQL spelling in e's message
// and hint (the ledger's "lower SET ddp.epsilon") the way a MySQL client
// writes it.
func mysqlSpelling(e *sqlerr.Error) *sqlerr.Error {
	const pgSet, mySet = "SET ddp.epsilon", "SET @ddp_epsilon"
	if !strings.Contains(e.Message, pgSet) && !strings.Contains(e.Hint, pgSet) {
		return e
	}
	c := *e
	c.Message = strings.ReplaceAll(c.Message, pgSet, mySet)
	c.Hint = strings.ReplaceAll(c.Hint, pgSet, mySet)
	return &c
}

// Prepare parses one statement for COM_STMT_PREPARE. Statements the
// MySQL layer answers itself are described by running them now (they
// read no data and change nothing but SET, which yields no columns).
func (ms *mySession) Prepare(ctx context.Context, sql string) (*mysqlwire.Prepared, error) {
	stmts, err := ms.core.Parse(sql)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot prepare multiple statements")
	}
	st := &stmts[0]
	if st.Kind == ir.StmtRefused {
		return nil, st.Refused
	}
	if ms.handledLocally(st) {
		out := &mysqlwire.Prepared{NumParams: st.NumParams, State: st}
		if st.Kind == ir.StmtSession && st.Session.Verb != ir.SessionShow {
			return out, nil
		}
		saved := ms.warnings
		r, err := ms.local(ctx, st)
		ms.warnings = saved
		if err != nil {
			return nil, err
		}
		out.Columns = r.Columns
		return out, nil
	}
	if err := ms.checkCatalog(st); err != nil {
		return nil, err
	}
	if ms.infoSchemaLocal(st) {
		r, err := ms.runInfoSchema(ctx, st, make([]ir.Value, st.NumParams))
		if err != nil {
			return nil, err
		}
		return &mysqlwire.Prepared{NumParams: st.NumParams, Columns: r.Columns, State: &Prepared{Stmt: st}}, nil
	}
	p, err := ms.core.Prepare(ctx, sql, nil)
	if err != nil {
		return nil, err
	}
	n := len(p.ParamTypes)
	if st.Kind == ir.StmtExplain && st.Explain != nil {
		n = max(n, st.Explain.NumParams) // the ? of EXPLAIN's statement
	}
	return &mysqlwire.Prepared{NumParams: n, State: p, Columns: p.Columns}, nil
}

// Execute runs a prepared statement.
func (ms *mySession) Execute(ctx context.Context, p *mysqlwire.Prepared, args []ir.Value, w ir.RowWriter) error {
	switch st := p.State.(type) {
	case *ir.Statement:
		return ms.exec(ctx, st, nil, nil, w)
	case *Prepared:
		return ms.exec(ctx, st.Stmt, st, args, w)
	}
	return sqlerr.New(sqlerr.Internal, "internal error: statement prepared elsewhere")
}
