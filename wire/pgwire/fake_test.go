package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// The fake session understands a tiny command language, one command per
// statement (';' separates statements in a simple query):
//
//	rows N           N rows of fakeColumns (row i defined by fakeRow)
//	one              one row (i int8 = 1, label text = "one"), for benchmarks
//	notice           one row (n int8 = 1) and a notice
//	fail SQLSTATE    fails with the sqlerr code of that SQLSTATE
//	failprepare S    like fail, but already in Prepare
//	internal         fails with a plain error holding secret text
//	sleep            blocks until its context is cancelled, then returns
//	                 a bare context error
//	wait MS          sleeps MS milliseconds, then one row (ms int8)
//	begin / commit   opens / closes a transaction block
//	set              tag SET, no rows
//	panic            panics
//	echo T1 T2 ...   (extended) one row: the arguments, columns typed
//	                 T1.. (int8 int4 float8 bool text name oid)
//	echoany N        (extended) N untyped parameters; one row of text
//	                 columns "kind:text" describing each decoded argument
//	mismatch         (extended) describes 1 column, returns 2
//	endless          (simple) rows of fakeColumns until the writer fails
const fakeSecret = "backend said: salary of bob is 123456"

// Test users. The verifier is PostgreSQL's for the password "secret".
const (
	alicePassword = "pw-alice"
	testVerifier  = "SCRAM-SHA-256$4096:MDEyMzQ1Njc4OWFiY2RlZg==$bpSY5Ze9NUH+I35LC3gVq+DpBfK46iXBxvhAKqVu9pE=:VpYlBuxyzeCI1KnctrefdljpB1mk3Gp7sBI/t11+NkQ="
)

// Result is one fake answer, held whole and written by write.
type Result struct {
	Columns []ir.Column
	Rows    [][]ir.Value
	Tag     string
	Empty   bool
	Notices []string
}

func (r Result) write(w ir.RowWriter) error {
	if r.Columns != nil {
		if err := w.Columns(r.Columns); err != nil {
			return err
		}
		for _, row := range r.Rows {
			if err := w.Row(row); err != nil {
				return err
			}
		}
	}
	return w.Complete(ir.Completion{Tag: r.Tag, Empty: r.Empty, Cost: ir.Cost{Notices: r.Notices}})
}

var fakeColumns = []ir.Column{
	{Name: "i", Type: ir.TypeInt8}, {Name: "label", Type: ir.TypeText}, {Name: "half", Type: ir.TypeFloat8}, {Name: "even", Type: ir.TypeBool},
	{Name: "small", Type: ir.TypeInt4}, {Name: "nm", Type: ir.TypeName}, {Name: "o", Type: ir.TypeOID},
}

var (
	oneColumns = []ir.Column{{Name: "i", Type: ir.TypeInt8}, {Name: "label", Type: ir.TypeText}}
	oneRows    = [][]ir.Value{{ir.Int(1), ir.String("one")}}
)

func fakeRow(i int) []ir.Value {
	return []ir.Value{
		ir.Int(int64(i)), ir.String(fmt.Sprintf("row %d", i)), ir.Float(float64(i) / 2),
		ir.Bool(i%2 == 0), ir.Int(int64(10 * i)), ir.String(fmt.Sprintf("n%d", i)), ir.Int(int64(1000 + i)),
	}
}

type fakeHandler struct {
	users map[string]UserAuth
	// started receives the command name when sleep or wait begins.
	started chan string
	// fuzzing makes sleep and wait return at once and panic fail
	// normally: a fuzzed connection must neither block nor report the
	// fake's own panics as server bugs.
	fuzzing bool

	// endless receives how many rows "endless" wrote before its writer
	// failed.
	endless chan int

	mu       sync.Mutex
	sessions int // open sessions
	prepares int // Prepare calls, to prove the extended protocol was used
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{
		users: map[string]UserAuth{
			"alice":  {Password: alicePassword},
			"verif":  {SCRAMVerifier: testVerifier},
			"trusty": {Trust: true},
			"nopass": {},
		},
		started: make(chan string, 16),
		endless: make(chan int, 1),
	}
}

func (h *fakeHandler) LookupUser(user string) (UserAuth, bool) {
	a, ok := h.users[user]
	return a, ok
}

func (h *fakeHandler) NewSession(_ context.Context, user string, params map[string]string) (Session, error) {
	if params["database"] == "refused" {
		return nil, sqlerr.New(sqlerr.InvalidAuthorization, "database %q is not served", "refused")
	}
	h.mu.Lock()
	h.sessions++
	h.mu.Unlock()
	return &fakeSession{h: h}, nil
}

func (h *fakeHandler) prepareCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.prepares
}

func (h *fakeHandler) openSessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions
}

type fakeSession struct {
	h      *fakeHandler
	tx     bool
	closed bool
}

func (s *fakeSession) ParameterStatus() map[string]string {
	return map[string]string{
		"server_version": "16.0", "server_encoding": "UTF8", "client_encoding": "UTF8",
		"DateStyle": "ISO, MDY", "integer_datetimes": "on", "standard_conforming_strings": "on",
		"TimeZone": "UTC", "application_name": "", "is_superuser": "off", "IntervalStyle": "postgres",
	}
}

func (s *fakeSession) TxStatus() byte {
	if s.tx {
		return TxInBlock
	}
	return TxIdle
}

func (s *fakeSession) Close() {
	if s.closed {
		panic("session closed twice")
	}
	s.closed = true
	s.h.mu.Lock()
	s.h.sessions--
	s.h.mu.Unlock()
}

func (s *fakeSession) Query(ctx context.Context, sql string, w ir.RowWriter) error {
	n := 0
	for stmt := range strings.SplitSeq(sql, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		n++
		if strings.TrimSpace(stmt) == "endless" {
			return s.endlessRows(ctx, w)
		}
		r, err := s.run(ctx, stmt, nil)
		if err != nil {
			return err
		}
		if err := r.write(w); err != nil {
			return err
		}
	}
	if n == 0 {
		return Result{Empty: true}.write(w)
	}
	return nil
}

func (s *fakeSession) Prepare(_ context.Context, sql string, _ []ir.ColType) (*Prepared, error) {
	s.h.mu.Lock()
	s.h.prepares++
	s.h.mu.Unlock()
	f := strings.Fields(strings.Trim(sql, "; "))
	p := &Prepared{SQL: sql}
	if len(f) == 0 {
		return p, nil
	}
	switch f[0] {
	case "echo":
		for i, name := range f[1:] {
			t, ok := fakeTypes[name]
			if !ok {
				return nil, sqlerr.New(sqlerr.SyntaxError, "unknown type")
			}
			p.ParamTypes = append(p.ParamTypes, t)
			p.Columns = append(p.Columns, ir.Column{Name: fmt.Sprintf("p%d", i+1), Type: t})
		}
	case "echoany":
		n, _ := strconv.Atoi(f[1])
		for i := range n {
			p.ParamTypes = append(p.ParamTypes, ir.TypeText)
			p.Columns = append(p.Columns, ir.Column{Name: fmt.Sprintf("k%d", i+1), Type: ir.TypeText})
		}
	case "failprepare":
		return nil, fakeErr(f[1])
	case "rows":
		p.Columns = fakeColumns
	case "notice":
		p.Columns = []ir.Column{{Name: "n", Type: ir.TypeInt8}}
	case "one":
		p.Columns = oneColumns
	case "wait":
		p.Columns = []ir.Column{{Name: "ms", Type: ir.TypeInt8}}
	case "mismatch":
		p.Columns = []ir.Column{{Name: "a", Type: ir.TypeInt8}}
	}
	return p, nil
}

var fakeTypes = map[string]ir.ColType{
	"int8": ir.TypeInt8, "int4": ir.TypeInt4, "float8": ir.TypeFloat8, "bool": ir.TypeBool,
	"text": ir.TypeText, "name": ir.TypeName, "oid": ir.TypeOID,
}

func (s *fakeSession) Execute(ctx context.Context, p *Prepared, args []ir.Value, w ir.RowWriter) error {
	r, err := s.execute(ctx, p, args)
	if err != nil {
		return err
	}
	return r.write(w)
}

func (s *fakeSession) execute(ctx context.Context, p *Prepared, args []ir.Value) (Result, error) {
	f := strings.Fields(strings.Trim(p.SQL, "; "))
	if len(f) > 0 {
		switch f[0] {
		case "echo":
			return Result{Columns: p.Columns, Rows: [][]ir.Value{args}, Tag: "SELECT 1"}, nil
		case "echoany":
			row := make([]ir.Value, len(args))
			for i, a := range args {
				row[i] = ir.String(a.Kind.String() + ":" + a.Text())
			}
			return Result{Columns: p.Columns, Rows: [][]ir.Value{row}, Tag: "SELECT 1"}, nil
		case "mismatch":
			return Result{Columns: []ir.Column{{Name: "a", Type: ir.TypeInt8}, {Name: "b", Type: ir.TypeInt8}},
				Rows: [][]ir.Value{{ir.Int(1), ir.Int(2)}}, Tag: "SELECT 1"}, nil
		}
	}
	if len(f) == 0 {
		return Result{Empty: true}, nil
	}
	return s.run(ctx, strings.Trim(p.SQL, "; "), args)
}

func fakeErr(state string) error {
	for _, c := range sqlerr.All {
		if c.SQLState == state {
			return sqlerr.New(c, "fake failure").WithHint("fake hint")
		}
	}
	return sqlerr.New(sqlerr.SyntaxError, "unknown fake code")
}

func (s *fakeSession) run(ctx context.Context, stmt string, _ []ir.Value) (Result, error) {
	f := strings.Fields(stmt)
	arg := func() int {
		if len(f) < 2 {
			return 0
		}
		n, _ := strconv.Atoi(f[1])
		return n
	}
	switch f[0] {
	case "rows":
		n := arg()
		r := Result{Columns: fakeColumns, Tag: fmt.Sprintf("SELECT %d", n)}
		for i := 1; i <= n; i++ {
			r.Rows = append(r.Rows, fakeRow(i))
		}
		return r, nil
	case "one":
		return Result{Columns: oneColumns, Rows: oneRows, Tag: "SELECT 1"}, nil
	case "notice":
		return Result{
			Columns: []ir.Column{{Name: "n", Type: ir.TypeInt8}}, Rows: [][]ir.Value{{ir.Int(1)}}, Tag: "SELECT 1",
			Notices: []string{"epsilon spent 0.5"},
		}, nil
	case "fail":
		return Result{}, fakeErr(f[1])
	case "internal":
		return Result{}, errors.New(fakeSecret)
	case "cancelled":
		// What the real session returns for a query its client cancelled.
		return Result{}, sqlerr.Wrap(sqlerr.QueryCanceled, context.Canceled, "canceling statement due to user request")
	case "sleep":
		if s.h.fuzzing {
			return Result{}, errors.New("no sleeping here")
		}
		s.h.started <- "sleep"
		<-ctx.Done()
		return Result{}, fmt.Errorf("sleep interrupted: %w", ctx.Err())
	case "wait":
		ms := arg()
		if !s.h.fuzzing {
			select {
			case s.h.started <- "wait":
			default:
			}
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
		}
		return Result{Columns: []ir.Column{{Name: "ms", Type: ir.TypeInt8}}, Rows: [][]ir.Value{{ir.Int(int64(ms))}}, Tag: "SELECT 1"}, nil
	case "begin":
		s.tx = true
		return Result{Tag: "BEGIN"}, nil
	case "commit":
		s.tx = false
		return Result{Tag: "COMMIT"}, nil
	case "set":
		return Result{Tag: "SET"}, nil
	case "panic":
		if !s.h.fuzzing {
			panic("fake session panic")
		}
	}
	return Result{}, sqlerr.New(sqlerr.SyntaxError, "fake session does not know this command")
}

// testServer is a server on a loopback port with the fake handler.
type testServer struct {
	*Server
	addr    string
	h       *fakeHandler
	served  chan error
	panics  chan any
	stopped bool
}

// startServer serves cfg (Handler defaults to a fake one) on 127.0.0.1
// and shuts it down when the test ends. Unexpected panics fail the test.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	h, _ := cfg.Handler.(*fakeHandler)
	if h == nil {
		h = newFakeHandler()
		cfg.Handler = h
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: NewServer(cfg), addr: ln.Addr().String(), h: h,
		served: make(chan error, 1), panics: make(chan any, 16)}
	ts.onPanic = func(r any) { ts.panics <- r }
	go func() { ts.served <- ts.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		if !ts.stopped {
			ts.stop(t)
		}
		select {
		case r := <-ts.panics:
			t.Errorf("unexpected panic in server: %v", r)
		default:
		}
	})
	return ts
}

// stop shuts the server down and checks Serve's result and that every
// session was closed.
func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	ts.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-ts.served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if n := ts.h.openSessions(); n != 0 {
		t.Errorf("%d sessions left open after shutdown", n)
	}
}

func (ts *testServer) url(user, password, extra string) string {
	u := fmt.Sprintf("postgres://%s:%s@%s/db?sslmode=disable", user, password, ts.addr)
	if extra != "" {
		u += "&" + extra
	}
	return u
}

// connect opens a pgx connection as alice (SCRAM) in the given mode.
func (ts *testServer) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.url("alice", alicePassword, ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rawConn is a protocol-level client for message-exact tests.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

// dialRaw connects without starting up.
func (ts *testServer) dialRaw(t *testing.T) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// rawStartup connects as the trust user and reads up to ReadyForQuery.
func (ts *testServer) rawStartup(t *testing.T) *rawConn {
	t.Helper()
	rc := ts.dialRaw(t)
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "trusty", "database": "db"}})
	rc.until(t, 'Z')
	return rc
}

func (rc *rawConn) send(msgs ...pgproto3.FrontendMessage) {
	rc.t.Helper()
	for _, m := range msgs {
		rc.fe.Send(m)
	}
	if err := rc.fe.Flush(); err != nil {
		rc.t.Fatalf("send: %v", err)
	}
}

// recv reads one message and describes it compactly: its type byte and,
// for some types, a detail ("E:42P05", "C:SELECT 5", "Z:I", "D:3").
func (rc *rawConn) recv(t *testing.T) (string, pgproto3.BackendMessage) {
	t.Helper()
	m, err := rc.fe.Receive()
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return describeMsg(m), m
}

func describeMsg(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.ErrorResponse:
		return "E:" + m.Code
	case *pgproto3.CommandComplete:
		return "C:" + string(m.CommandTag)
	case *pgproto3.ReadyForQuery:
		return "Z:" + string(m.TxStatus)
	case *pgproto3.DataRow:
		return "D:" + strconv.Itoa(len(m.Values))
	case *pgproto3.ParseComplete:
		return "1"
	case *pgproto3.BindComplete:
		return "2"
	case *pgproto3.CloseComplete:
		return "3"
	case *pgproto3.NoData:
		return "n"
	case *pgproto3.PortalSuspended:
		return "s"
	case *pgproto3.EmptyQueryResponse:
		return "I"
	case *pgproto3.RowDescription:
		return "T:" + strconv.Itoa(len(m.Fields))
	case *pgproto3.ParameterDescription:
		return "t:" + strconv.Itoa(len(m.ParameterOIDs))
	case *pgproto3.NoticeResponse:
		return "N"
	case *pgproto3.NegotiateProtocolVersion:
		return "v"
	case *pgproto3.AuthenticationOk:
		return "R:ok"
	case *pgproto3.ParameterStatus:
		return "S"
	case *pgproto3.BackendKeyData:
		return "K"
	}
	return fmt.Sprintf("%T", m)
}

// until reads messages up to and including the first of type typ and
// returns their descriptions.
func (rc *rawConn) until(t *testing.T, typ byte) []string {
	t.Helper()
	var got []string
	for {
		d, _ := rc.recv(t)
		got = append(got, d)
		if d[0] == typ {
			return got
		}
	}
}

// endlessRows writes rows until the writer fails (or the server shuts
// down), and reports how many.
func (s *fakeSession) endlessRows(ctx context.Context, w ir.RowWriter) error {
	if err := w.Columns(fakeColumns); err != nil {
		return err
	}
	for i := 1; ; i++ {
		err := w.Row(fakeRow(i))
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			select {
			case s.h.endless <- i - 1:
			default:
			}
			return err
		}
	}
}
