package mysqlwire

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/ddp-proxy/ddp-proxy/internal/testlog"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// fakeHandler serves a few canned statements, so the protocol layer is
// tested without the session, planner or a backend.
type fakeHandler struct {
	users map[string]UserAuth
	mu    sync.Mutex
	args  [][]ir.Value // what Execute received
	dbs   []string     // databases sessions were opened with
	ids   []uint32     // connection ids of the sessions
	srv   *Server      // the server startFake started
}

func (h *fakeHandler) LookupUser(name string) (UserAuth, bool) {
	u, ok := h.users[name]
	return u, ok
}

func (h *fakeHandler) NewSession(_ context.Context, id uint32, user, db string) (Session, error) {
	h.mu.Lock()
	h.dbs = append(h.dbs, db)
	h.ids = append(h.ids, id)
	h.mu.Unlock()
	return &fakeSession{h: h}, nil
}

type fakeSession struct {
	h        *fakeHandler
	warnings uint16
	db       string
}

// Result is one fake answer, held whole and written by write.
type Result struct {
	Columns []ir.Column
	Rows    [][]ir.Value
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
	return w.Complete(ir.Completion{})
}

var kindsResult = Result{
	Columns: []ir.Column{{Name: "i", Type: ir.TypeInt8}, {Name: "f", Type: ir.TypeFloat8}, {Name: "s", Type: ir.TypeText}, {Name: "b", Type: ir.TypeBool}, {Name: "n", Type: ir.TypeInt8}},
	Rows:    [][]ir.Value{{ir.Int(-42), ir.Float(2.5), ir.String("héllo"), ir.Bool(true), ir.Null()}},
}

func (s *fakeSession) Query(ctx context.Context, q string, w ir.RowWriter) error {
	if n, ok := strings.CutPrefix(q, "SELECT many "); ok {
		return s.many(n, w)
	}
	r, err := s.query(ctx, q)
	if err != nil {
		return err
	}
	return r.write(w)
}

func (s *fakeSession) query(ctx context.Context, q string) (Result, error) {
	s.warnings = 0
	// The real session reads KILL with its parser and calls Kill.
	var id uint32
	if _, err := fmt.Sscanf(q, "KILL QUERY %d", &id); err == nil {
		return Result{}, Kill(ctx, id, true)
	}
	if _, err := fmt.Sscanf(q, "KILL %d", &id); err == nil {
		return Result{}, Kill(ctx, id, false)
	}
	switch strings.TrimSpace(strings.TrimSuffix(q, ";")) {
	case "SELECT sleep":
		select {
		case <-ctx.Done():
			return Result{}, sqlerr.New(sqlerr.QueryCanceled, "the query was cancelled")
		case <-time.After(10 * time.Second):
			return Result{}, nil
		}
	case "SELECT 1":
		return Result{Columns: []ir.Column{{Name: "1", Type: ir.TypeInt8}}, Rows: [][]ir.Value{{ir.Int(1)}}}, nil
	case "SELECT 2":
		return Result{Columns: []ir.Column{{Name: "2", Type: ir.TypeInt8}}, Rows: [][]ir.Value{{ir.Int(2)}}}, nil
	case "SELECT kinds":
		s.warnings = 2
		return kindsResult, nil
	case "SELECT budget":
		return Result{}, sqlerr.New(sqlerr.BudgetExhausted, "budget exhausted").WithHint("ask the DBA")
	case "SELECT internal":
		return Result{}, errors.New("driver said: secret value 1234")
	case "SELECT db":
		return Result{Columns: []ir.Column{{Name: "db", Type: ir.TypeText}}, Rows: [][]ir.Value{{ir.String(s.db)}}}, nil
	}
	return Result{}, nil
}

func (s *fakeSession) Prepare(_ context.Context, q string) (*Prepared, error) {
	n := strings.Count(q, "?")
	if strings.HasPrefix(q, "SELECT kinds") {
		return &Prepared{NumParams: n, Columns: kindsResult.Columns, State: "kinds"}, nil
	}
	if strings.HasPrefix(q, "SELECT budget") {
		return nil, sqlerr.New(sqlerr.BudgetExhausted, "budget exhausted")
	}
	if strings.HasPrefix(q, "SELECT wide") {
		cols := make([]ir.Column, 10)
		for i := range cols {
			cols[i] = ir.Column{Name: fmt.Sprintf("c%d", i), Type: ir.TypeInt8}
		}
		return &Prepared{NumParams: n, Columns: cols, State: "wide"}, nil
	}
	return &Prepared{NumParams: n, Columns: []ir.Column{{Name: "n", Type: ir.TypeInt8}}, State: "count"}, nil
}

func (s *fakeSession) Execute(ctx context.Context, p *Prepared, args []ir.Value, w ir.RowWriter) error {
	r, err := s.execute(ctx, p, args)
	if err != nil {
		return err
	}
	return r.write(w)
}

func (s *fakeSession) execute(_ context.Context, p *Prepared, args []ir.Value) (Result, error) {
	s.h.mu.Lock()
	s.h.args = append(s.h.args, args)
	s.h.mu.Unlock()
	if p.State == "kinds" {
		return kindsResult, nil
	}
	if p.State == "wide" {
		row := make([]ir.Value, len(p.Columns))
		for i := range row {
			row[i] = ir.Int(int64(i))
		}
		return Result{Columns: p.Columns, Rows: [][]ir.Value{row}}, nil
	}
	return Result{Columns: p.Columns, Rows: [][]ir.Value{{ir.Int(int64(len(args)))}}}, nil
}

func (s *fakeSession) UseDatabase(name string) error { s.db = name; return nil }
func (s *fakeSession) FieldList(context.Context, string) ([]ir.Column, error) {
	return []ir.Column{{Name: "a", Type: ir.TypeInt8}}, nil
}
func (s *fakeSession) Reset()           {}
func (s *fakeSession) Warnings() uint16 { return s.warnings }
func (s *fakeSession) Close()           {}

func nativeHash(pw string) []byte {
	h1 := sha1.Sum([]byte(pw))
	h2 := sha1.Sum(h1[:])
	return h2[:]
}

func startFake(t *testing.T, cfg Config) (string, *fakeHandler) {
	t.Helper()
	h := &fakeHandler{users: map[string]UserAuth{
		"trusted": {Trust: true},
		"clear":   {Password: "pw-clear"},
		"hashed":  {NativeHash: nativeHash("pw-hashed")},
	}}
	cfg.Handler = h
	srv := NewServer(cfg)
	h.srv = srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return ln.Addr().String(), h
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func wantErrno(t *testing.T, err error, errno uint16, state string) {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v (%T), want MySQL error %d", err, err, errno)
	}
	if me.Number != errno || string(me.SQLState[:]) != state {
		t.Fatalf("error %d (%s) %q; want %d (%s)", me.Number, me.SQLState, me.Message, errno, state)
	}
}

func TestAuthentication(t *testing.T) {
	for _, sha2 := range []bool{false, true} {
		var logs testlog.Sink
		addr, _ := startFake(t, Config{CachingSHA2First: sha2, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		tests := []struct {
			user, pw string
			ok       bool
			reason   string // the operator's log line for a refusal ("": Vitess refuses first)
		}{
			{"trusted", "anything", true, ""},
			{"trusted", "", true, ""},
			{"clear", "pw-clear", true, ""},
			{"clear", "wrong", false, "wrong password"},
			{"clear", "", false, "wrong password"},
			{"hashed", "pw-hashed", !sha2, ""}, // caching_sha2 full auth needs TLS
			{"nobody", "pw-clear", false, "no such user in the policy"},
		}
		if !sha2 {
			tests = append(tests, struct {
				user, pw string
				ok       bool
				reason   string
			}{"hashed", "wrong", false, "wrong password"})
		}
		for _, tc := range tests {
			t.Run(fmt.Sprintf("sha2=%v/%s/%s", sha2, tc.user, tc.pw), func(t *testing.T) {
				db := open(t, fmt.Sprintf("%s:%s@tcp(%s)/", tc.user, tc.pw, addr))
				var n int
				err := db.QueryRow("SELECT 1").Scan(&n)
				if tc.ok {
					if err != nil || n != 1 {
						t.Fatalf("login failed: %v", err)
					}
					return
				}
				wantErrno(t, err, 1045, "28000")
				if tc.reason == "" {
					return
				}
				want := []string{"authentication failed", "user=" + tc.user, `reason="` + tc.reason + `"`}
				if !logs.HasLine(want...) {
					t.Errorf("no log line with %q:\n%s", want, logs.String())
				}
			})
		}
	}
}

func TestTextAndBinaryResults(t *testing.T) {
	addr, h := startFake(t, Config{})
	for _, interpolate := range []bool{true, false} {
		t.Run(fmt.Sprintf("interpolate=%v", interpolate), func(t *testing.T) {
			db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/?interpolateParams=%v", addr, interpolate))
			var (
				i int64
				f float64
				s string
				b bool
				n sql.NullInt64
			)
			q := "SELECT kinds"
			args := []any{}
			if !interpolate {
				q += " FROM t WHERE a = ? AND b = ? AND c = ? AND d = ?" // COM_STMT_PREPARE / EXECUTE
				args = []any{int64(7), 1.25, "txt", nil}
			}
			if err := db.QueryRow(q, args...).Scan(&i, &f, &s, &b, &n); err != nil {
				t.Fatal(err)
			}
			if i != -42 || f != 2.5 || s != "héllo" || !b || n.Valid {
				t.Errorf("row = %d %g %q %v %v", i, f, s, b, n)
			}
		})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.args) != 1 || len(h.args[0]) != 4 {
		t.Fatalf("Execute args = %v", h.args)
	}
	got := h.args[0]
	if got[0] != ir.Int(7) || got[1] != ir.Float(1.25) || got[2] != ir.String("txt") || !got[3].IsNull() {
		t.Errorf("bound args = %#v", got)
	}
}

func TestErrorsKeepTheConnection(t *testing.T) {
	addr, _ := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	_, err = conn.QueryContext(ctx, "SELECT budget")
	wantErrno(t, err, 1226, "42000")
	var me *gomysql.MySQLError
	errors.As(err, &me)
	if !strings.Contains(me.Message, "hint: ask the DBA") {
		t.Errorf("message %q lacks the hint", me.Message)
	}
	_, err = conn.QueryContext(ctx, "SELECT internal")
	wantErrno(t, err, 1105, "HY000")
	errors.As(err, &me)
	if strings.Contains(me.Message, "1234") {
		t.Errorf("internal error text leaked: %q", me.Message)
	}
	_, err = conn.QueryContext(ctx, "SELECT budget FROM t WHERE a = ?", 1) // fails at prepare
	wantErrno(t, err, 1226, "42000")
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("connection unusable after errors: %v", err)
	}
}

func TestMultiStatementsAndInitDB(t *testing.T) {
	addr, h := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/mydb?multiStatements=true", addr))
	rows, err := db.Query("SELECT 1; SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for {
		for rows.Next() {
			var n int
			rows.Scan(&n)
			got = append(got, n)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	rows.Close()
	if fmt.Sprint(got) != "[1 2]" {
		t.Errorf("multi-statement results = %v", got)
	}
	_, err = db.Exec("SELECT budget; SELECT 1")
	wantErrno(t, err, 1226, "42000")
	var name string
	if err := db.QueryRow("SELECT db").Scan(&name); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.dbs) == 0 || h.dbs[0] != "mydb" {
		t.Errorf("sessions opened with databases %v, want mydb", h.dbs)
	}
}

func TestShutdownClosesIdleConnections(t *testing.T) {
	h := &fakeHandler{users: map[string]UserAuth{"trusted": {Trust: true}}}
	srv := NewServer(Config{Handler: h})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", ln.Addr()))
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an idle connection: %v", err)
	}
	<-done
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), 200*time.Millisecond); err == nil {
		t.Error("still accepting after Shutdown")
	}
}

// TestKillQuery: KILL QUERY from a second connection of the same user
// cancels the running statement (1317, 70100) and leaves its connection
// usable; another user may not kill it.
func TestKillQuery(t *testing.T) {
	addr, h := startFake(t, Config{})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	ctx := context.Background()
	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	if err := victim.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	victim.QueryRowContext(ctx, "SELECT 1").Scan(&n) // starts the session
	h.mu.Lock()
	id := h.ids[len(h.ids)-1]
	h.mu.Unlock()

	other := open(t, fmt.Sprintf("clear:pw-clear@tcp(%s)/", addr))
	done := make(chan error, 1)
	go func() {
		_, err := victim.QueryContext(ctx, "SELECT sleep")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	_, err = other.Exec(fmt.Sprintf("KILL QUERY %d", id))
	wantErrno(t, err, 1142, "42000")
	_, err = db.Exec("KILL QUERY 999999")
	wantErrno(t, err, 1094, "HY000") // ER_NO_SUCH_THREAD
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantErrno(t, err, 1317, "70100")
	case <-time.After(5 * time.Second):
		t.Fatal("KILL QUERY did not cancel the statement")
	}
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("victim connection after KILL QUERY: %v", err)
	}
}
