package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// recorder is a RowWriter that checks the RowWriter protocol (columns at
// most once and before rows, one completion) and keeps what it saw.
type recorder struct {
	t        *testing.T
	cols     []Column
	rows     [][]ir.Value
	done     []ir.Completion
	colCalls int
	// failAt makes Row fail at that row (1-based; 0: never).
	failAt int
	// onRow, when set, is called before a row is kept.
	onRow func(i int, row []ir.Value)
}

var errClientGone = errors.New("client went away")

func (r *recorder) Columns(cols []Column) error {
	r.colCalls++
	if r.colCalls > 1 || len(r.rows) > 0 {
		r.t.Errorf("Columns called %d times, after %d rows", r.colCalls, len(r.rows))
	}
	r.cols = cols
	return nil
}

func (r *recorder) Row(row []ir.Value) error {
	if r.colCalls == 0 {
		r.t.Errorf("a row before the columns")
	}
	if r.failAt > 0 && len(r.rows)+1 == r.failAt {
		return errClientGone
	}
	if r.onRow != nil {
		r.onRow(len(r.rows), row)
	}
	r.rows = append(r.rows, row)
	return nil
}

func (r *recorder) Complete(c ir.Completion) error {
	r.done = append(r.done, c)
	return nil
}

const groupsPolicy = `
version: 1
backend: {driver: sqlite, dsn: %q}
ledger: {path: %q}
users:
  - name: alice
    password_env: DDP_TEST_SESSION_PASSWORD
    budgets: {census: {epsilon: 10}}
    max_epsilon: 1
datasets:
  census:
    tables:
      visits:
        unit: id
        columns:
          k: {type: integer, bounds: [0, 99999], domain: {range: [0, 99999]}}
`

// groupsFixture is a SQLite table whose GROUP BY k releases 100,000
// groups (every key of the declared domain, most of them empty).
func groupsFixture(t testing.TB) (*Proxy, *Session, *ledger.Ledger) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	stmts := []string{"CREATE TABLE visits (id INTEGER, k INTEGER)", "BEGIN"}
	for i := range 300 {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO visits VALUES (%d, %d)", i, (i*7919)%100000))
	}
	be := sqliteBackend(t, path, append(stmts, "COMMIT")...)
	p, pol, led := seededProxy(t, dir, fmt.Sprintf(groupsPolicy, path, filepath.Join(dir, "ledger.db")), be, Config{})
	return p, p.Open(pol.User("alice"), parser.Postgres, nil), led
}

// A 100k-group private answer is held once, by the release: the rows the
// wire's writer receives are the release's own rows (same backing
// arrays), not copies, and no intermediate result is built. Building a
// []Result (or converting rows) on the way fails the identity check.
func TestHundredThousandGroupsAreNotHeldTwice(t *testing.T) {
	_, s, led := groupsFixture(t)
	stmts, err := parser.Parse(parser.Postgres, "SELECT k, COUNT(*) AS n FROM visits GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	w := &recorder{t: t}
	tr := trace{start: time.Now()}
	cost, err := s.exec(context.Background(), &stmts[0], nil, w, &tr)
	if err != nil {
		t.Fatal(err)
	}
	if tr.res == nil || len(tr.res.Rows) != 100_000 {
		t.Fatalf("the release holds %d rows, want 100000", len(tr.res.Rows))
	}
	if len(w.rows) != 100_000 || len(w.cols) != 2 || w.cols[1].Type != TypeInt8 {
		t.Fatalf("the writer got %d rows, columns %+v", len(w.rows), w.cols)
	}
	for i, row := range w.rows {
		if &row[0] != &tr.res.Rows[i][0] {
			t.Fatalf("row %d was copied on its way to the writer", i)
		}
	}
	if len(w.done) != 1 || w.done[0].Tag != "SELECT 100000" || !w.done[0].Cost.Private {
		t.Fatalf("completion %+v", w.done)
	}
	spent, _ := led.Spent("alice", "census")
	if !cost.Private || cost.Cached || cost.Epsilon != spent.Epsilon || cost.Epsilon <= 0 || len(cost.Notices) != 1 ||
		!strings.Contains(cost.Notices[0], "spent ε =") {
		t.Fatalf("cost %+v, ledger says %+v", cost, spent)
	}
	// The repeat is served from the release, free, and says so.
	w2 := &recorder{t: t}
	cost, err = s.Exec(context.Background(), &stmts[0], nil, w2)
	if err != nil || !cost.Cached || cost.Epsilon != 0 || len(w2.rows) != 100_000 || !strings.Contains(cost.Notices[0], "repeated query") {
		t.Fatalf("repeat: %+v %v (%d rows)", cost, err, len(w2.rows))
	}
}

type discard struct{}

func (discard) Columns([]Column) error       { return nil }
func (discard) Row([]ir.Value) error         { return nil }
func (discard) Complete(ir.Completion) error { return nil }

// countingBackend counts the rows its backend has produced.
type countingBackend struct {
	Backend
	emitted int
}

func (c *countingBackend) Stream(ctx context.Context, text string, args []ir.Value, start func([]backends.ColumnInfo) func([]ir.Value) error) error {
	return c.Backend.Stream(ctx, text, args, func(cols []backends.ColumnInfo) func([]ir.Value) error {
		each := start(cols)
		return func(row []ir.Value) error {
			c.emitted++
			return each(row)
		}
	})
}

// Pass-through rows go to the writer as the backend produces them: when
// the writer receives row i, the backend has produced exactly i+1 rows.
// Collecting the rows first (what the session did) fails at the first row.
func TestPassthroughStreamsFromTheBackend(t *testing.T) {
	dsn, be := postgresBackend(t, "the PostgreSQL streaming test")
	cb := &countingBackend{Backend: be}
	f := setup(t, "postgres", dsn, "", cb)
	const n = 100_000
	w := &recorder{t: t}
	w.onRow = func(i int, row []ir.Value) {
		if cb.emitted != i+1 {
			t.Fatalf("row %d reached the writer after the backend produced %d rows", i, cb.emitted)
		}
		if row[0].Int != int64(i+1) {
			t.Fatalf("row %d holds %v", i, row[0])
		}
	}
	stmts, err := parser.Parse(parser.Postgres, fmt.Sprintf("SELECT g AS n FROM generate_series(1, %d) AS g", n))
	if err != nil {
		t.Fatal(err)
	}
	tr := trace{start: time.Now()}
	cost, err := f.s.exec(context.Background(), &stmts[0], nil, w, &tr)
	if err != nil {
		t.Fatal(err)
	}
	if tr.class != ClassPassthrough || cost.Private || len(cost.Notices) != 0 {
		t.Fatalf("class %s, cost %+v", tr.class, cost)
	}
	if len(w.rows) != n || len(w.done) != 1 || w.done[0].Tag != fmt.Sprintf("SELECT %d", n) || w.cols[0].Name != "n" {
		t.Fatalf("%d rows, completion %+v, columns %+v", len(w.rows), w.done, w.cols)
	}
	// A client that goes away stops the backend's rows too.
	cb.emitted = 0
	w = &recorder{t: t, failAt: 10}
	if _, err := f.s.Exec(context.Background(), &stmts[0], nil, w); !errors.Is(err, errClientGone) {
		t.Fatalf("a failing writer: %v", err)
	}
	if len(w.rows) != 9 || len(w.done) != 0 || cb.emitted != 10 {
		t.Fatalf("after the writer failed at row 10: %d rows kept, %d completions, %d produced", len(w.rows), len(w.done), cb.emitted)
	}
}

// A writer that fails in the middle of a private answer (the client went
// away) stops it there: no completion, the error returned; the answer
// stays charged, and its repeat is free.
func TestPrivateAnswerToAClientThatLeaves(t *testing.T) {
	_, s, led := groupsFixture(t)
	stmts, err := parser.Parse(parser.Postgres, "SELECT k, COUNT(*) FROM visits GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	w := &recorder{t: t, failAt: 5}
	if _, err := s.Exec(context.Background(), &stmts[0], nil, w); !errors.Is(err, errClientGone) {
		t.Fatalf("err = %v, want the writer's", err)
	}
	if len(w.rows) != 4 || len(w.done) != 0 {
		t.Fatalf("%d rows and %d completions after the writer failed at row 5", len(w.rows), len(w.done))
	}
	spent, _ := led.Spent("alice", "census")
	if spent.Epsilon <= 0 {
		t.Fatalf("the released answer was not charged: %+v", spent)
	}
	cost, err := s.Exec(context.Background(), &stmts[0], nil, &recorder{t: t})
	if err != nil || !cost.Cached {
		t.Fatalf("repeat: %+v %v", cost, err)
	}
}

// A reload builds a new generation and swaps one pointer: the shared
// parts (backend, ledger, engine, parse cache) are the same, what the
// policy decides is new, and an open session moves at its next statement.
func TestReloadSwapsOneGeneration(t *testing.T) {
	p, s, _ := groupsFixture(t)
	g0 := p.current()
	if s.p != g0 {
		t.Fatal("a new session should start on the current generation")
	}
	pol := *g0.pol
	p.SetPolicy(&pol)
	g1 := p.current()
	if g1 == g0 || g1.Proxy != p || g1.pol != &pol || g1.planner == g0.planner {
		t.Fatalf("generation after reload: %+v", g1)
	}
	if g1.backend != g0.backend || g1.cache != g0.cache || g1.engine != g0.engine || g1.ledger != g0.ledger {
		t.Fatal("a reload must keep the shared parts")
	}
	if p.Policy() != &pol {
		t.Fatal("Policy() should return the reloaded policy")
	}
	if err := s.Query(context.Background(), "SHOW ddp.epsilon", &recorder{t: t}); err != nil {
		t.Fatal(err)
	}
	if s.p != g1 {
		t.Fatal("the open session did not move to the new generation")
	}
}

// observed records the observer's events.
type observed struct{ events []Event }

func (o *observed) Statement(e Event) { o.events = append(o.events, e) }

// Every kind of statement the core answers itself completes the writer
// protocol once, with its tag, columns only when it has rows, and the
// class the observer is told.
func TestCoreAnswersEveryKind(t *testing.T) {
	p, _, _ := groupsFixture(t)
	obs := &observed{}
	p.observer = obs
	s := p.Open(p.Policy().User("alice"), parser.Postgres, nil)
	tests := []struct {
		sql   string
		tag   string
		cols  int
		class string
		empty bool
	}{
		{";", "", 0, ClassEmpty, true},
		{"SET ddp.epsilon = 0.5", "SET", 0, ClassSession, false},
		{"SHOW ddp.epsilon", "SHOW", 1, ClassSession, false},
		{"BEGIN", "BEGIN", 0, ClassSession, false},
		{"COMMIT", "COMMIT", 0, ClassSession, false},
		{"EXPLAIN SELECT COUNT(*) FROM visits", "EXPLAIN", 1, ClassExplain, false},
		{"SELECT * FROM ddp.budget", "SELECT 1", 7, ClassBudget, false},
		{"SELECT COUNT(*) FROM visits WHERE k < 10", "SELECT 1", 1, ClassPrivate, false},
	}
	for _, tc := range tests {
		obs.events = nil
		w := &recorder{t: t}
		if err := s.Query(context.Background(), tc.sql, w); err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if len(w.done) != 1 || w.done[0].Tag != tc.tag || w.done[0].Empty != tc.empty || len(w.cols) != tc.cols || w.colCalls > 1 {
			t.Errorf("%s: completion %+v, %d columns", tc.sql, w.done, len(w.cols))
		}
		if tc.cols == 0 && w.colCalls != 0 {
			t.Errorf("%s: a command wrote columns", tc.sql)
		}
		if len(obs.events) != 1 || obs.events[0].Class != tc.class {
			t.Errorf("%s: observed %+v, want class %s", tc.sql, obs.events, tc.class)
		}
	}
	// A refusal writes nothing and is observed as refused.
	obs.events = nil
	w := &recorder{t: t}
	err := s.Query(context.Background(), "SELECT id FROM visits", w)
	if err == nil || w.colCalls != 0 || len(w.done) != 0 {
		t.Fatalf("a refused statement: %v, %d columns calls, %d completions", err, w.colCalls, len(w.done))
	}
	if len(obs.events) != 1 || obs.events[0].Outcome != OutcomeRefused || obs.events[0].Class != ClassPrivate || obs.events[0].Code == "" {
		t.Fatalf("observed %+v", obs.events)
	}
	// Text the grammar rejects is one refused statement.
	obs.events = nil
	if err := s.Query(context.Background(), "SELEC 1", &recorder{t: t}); !sqlerr.HasCode(err, sqlerr.SyntaxError) {
		t.Fatalf("syntax error: %v", err)
	}
	if len(obs.events) != 1 || obs.events[0].Class != ClassRefused {
		t.Fatalf("observed %+v", obs.events)
	}
}

// Statements in one query string are answered in order, each completed
// before the next starts; the first error stops the rest.
func TestQueryAnswersStatementsInOrder(t *testing.T) {
	_, s, _ := groupsFixture(t)
	var c Collector
	err := s.Query(context.Background(), "SHOW ddp.epsilon; SET ddp.epsilon = 0.25; SHOW ddp.epsilon; SELECT nope FROM visits; SET ddp.epsilon = 0.5", &c)
	if err == nil {
		t.Fatal("the fourth statement should fail")
	}
	if len(c.Results) != 3 || c.Results[1].Tag != "SET" || c.Results[2].Rows[0][0].Str != "0.25" {
		t.Fatalf("results %+v", c.Results)
	}
	if s.currentEpsilon() != 0.25 {
		t.Fatalf("the statement after the error ran: ε = %g", s.currentEpsilon())
	}
}

// Prepared statements: the description comes from the plan, Execute
// writes the same columns, and a parameter of the wrong type is refused
// before anything is charged.
func TestPreparedPrivateStatementStreams(t *testing.T) {
	_, s, led := groupsFixture(t)
	p, err := s.Prepare(context.Background(), "SELECT k, COUNT(*) FROM visits WHERE k < $1 GROUP BY k", []ColType{TypeUnknown})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Columns) != 2 || p.ParamTypes[0] != TypeInt8 {
		t.Fatalf("described %+v, parameters %+v", p.Columns, p.ParamTypes)
	}
	if _, err := s.Execute(context.Background(), p, []ir.Value{ir.String("ten")}, &recorder{t: t}); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
		t.Fatalf("a text parameter for an integer: %v", err)
	}
	if spent, _ := led.Spent("alice", "census"); spent.Epsilon != 0 {
		t.Fatalf("a refused parameter was charged %+v", spent)
	}
	w := &recorder{t: t}
	cost, err := s.Execute(context.Background(), p, []ir.Value{ir.String("10")}, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.cols) != 2 || w.cols[0] != p.Columns[0] || len(w.rows) == 0 || !cost.Private || cost.Epsilon <= 0 {
		t.Fatalf("columns %+v, %d rows, cost %+v", w.cols, len(w.rows), cost)
	}
}

// The MySQL adapter writes through the same core: a private answer's
// cost notes become SHOW WARNINGS rows, a refusal becomes an Error row,
// USE changes what DATABASE() says, and a reset forgets it all.
func TestMySQLAdapterOverTheCore(t *testing.T) {
	p, _, _ := groupsFixture(t)
	h := p.MySQLHandler()
	if a, ok := h.LookupUser("alice"); !ok || a.Password != "pw" {
		t.Fatalf("LookupUser(alice) = %+v, %v", a, ok)
	}
	if _, ok := h.LookupUser("mallory"); ok {
		t.Fatal("an unknown user was found")
	}
	if _, err := h.NewSession(context.Background(), 7, "mallory", ""); !sqlerr.HasCode(err, sqlerr.InvalidAuthorization) {
		t.Fatalf("NewSession(mallory): %v", err)
	}
	ws, err := h.NewSession(context.Background(), 7, "alice", "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ctx := context.Background()
	w := &recorder{t: t}
	if err := ws.Query(ctx, "SELECT COUNT(*) FROM visits", w); err != nil {
		t.Fatal(err)
	}
	if len(w.rows) != 1 || len(w.done) != 1 || !w.done[0].Cost.Private {
		t.Fatalf("private answer: %d rows, %+v", len(w.rows), w.done)
	}
	if ws.Warnings() == 0 {
		t.Fatal("the cost notes should be warnings")
	}
	var c Collector
	if err := ws.Query(ctx, "SHOW WARNINGS", &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Results) != 1 || len(c.Results[0].Rows) != int(ws.Warnings()) || !strings.Contains(c.Results[0].Rows[0][2].Str, "spent ε") {
		t.Fatalf("SHOW WARNINGS after a private answer: %+v", c.Results)
	}
	if err := ws.Query(ctx, "SELECT id FROM visits", &recorder{t: t}); err == nil {
		t.Fatal("reading the unit column should be refused")
	}
	c = Collector{}
	if err := ws.Query(ctx, "SHOW WARNINGS", &c); err != nil {
		t.Fatal(err)
	}
	if ws.Warnings() != 1 || c.Results[0].Rows[0][0].Str != "Error" {
		t.Fatalf("SHOW WARNINGS after a refusal: %+v", c.Results)
	}
	if err := ws.UseDatabase("other"); err != nil {
		t.Fatal(err)
	}
	c = Collector{}
	if err := ws.Query(ctx, "SELECT DATABASE()", &c); err != nil || c.Results[0].Rows[0][0].Str != "other" {
		t.Fatalf("DATABASE() after USE: %+v %v", c.Results, err)
	}
	ws.Reset()
	if ws.Warnings() != 0 {
		t.Fatal("a reset keeps the warnings")
	}
	// Prepared: described at prepare time, written at execute.
	prep, err := ws.Prepare(ctx, "SELECT COUNT(*) FROM visits WHERE k < ?")
	if err != nil {
		t.Fatal(err)
	}
	if prep.NumParams != 1 || len(prep.Columns) != 1 {
		t.Fatalf("prepared %+v", prep)
	}
	w = &recorder{t: t}
	if err := ws.Execute(ctx, prep, []ir.Value{ir.Int(500)}, w); err != nil || len(w.rows) != 1 {
		t.Fatalf("execute: %v, %d rows", err, len(w.rows))
	}
	if err := ws.Query(ctx, "SELECT 1; SELECT 2", &recorder{t: t}); !sqlerr.HasCode(err, sqlerr.SyntaxError) {
		t.Fatalf("two statements without CLIENT_MULTI_STATEMENTS: %v", err)
	}
}

// The PostgreSQL adapter passes the front end's writer to the core and
// reports the session's startup parameters and transaction state.
func TestPostgresAdapterOverTheCore(t *testing.T) {
	p, _, _ := groupsFixture(t)
	h := p.PGHandler()
	if a, ok := h.LookupUser("alice"); !ok || a.Password != "pw" {
		t.Fatalf("LookupUser(alice) = %+v, %v", a, ok)
	}
	ps, err := h.NewSession(context.Background(), "alice", map[string]string{"application_name": "core-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	if st := ps.ParameterStatus(); st["application_name"] != "core-test" || st["server_version"] == "" {
		t.Fatalf("parameter status %v", st)
	}
	ctx := context.Background()
	if err := ps.Query(ctx, "BEGIN", &recorder{t: t}); err != nil || ps.TxStatus() != 'T' {
		t.Fatalf("BEGIN: %v, status %c", err, ps.TxStatus())
	}
	if err := ps.Query(ctx, "COMMIT", &recorder{t: t}); err != nil || ps.TxStatus() != 'I' {
		t.Fatalf("COMMIT: %v, status %c", err, ps.TxStatus())
	}
	prep, err := ps.Prepare(ctx, "SELECT COUNT(*) FROM visits WHERE k < $1", []ir.ColType{ir.TypeUnknown})
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.ParamTypes) != 1 || prep.ParamTypes[0] != ir.TypeInt8 || len(prep.Columns) != 1 {
		t.Fatalf("prepared %+v", prep)
	}
	w := &recorder{t: t}
	if err := ps.Execute(ctx, prep, []ir.Value{ir.String("500")}, w); err != nil || len(w.rows) != 1 || len(w.done[0].Cost.Notices) != 1 {
		t.Fatalf("execute: %v, %d rows, %+v", err, len(w.rows), w.done)
	}
}

// Session statements change only the session: each answer, and the
// state it leaves, checked statement by statement.
func TestSessionSettings(t *testing.T) {
	_, s, _ := groupsFixture(t)
	ctx := context.Background()
	steps := []struct {
		sql  string
		code sqlerr.Code // zero: success
		show string      // SHOW of this setting follows, when set
		want string
	}{
		{sql: "SET TIME ZONE 'Europe/Paris'", show: "timezone", want: "Europe/Paris"},
		{sql: "SET datestyle = DMY", show: "datestyle", want: "ISO, DMY"},
		{sql: "SET DateStyle TO 'ISO, YMD'", show: "datestyle", want: "ISO, YMD"},
		{sql: "SET datestyle = 'SQL, DMY'", code: sqlerr.FeatureNotSupported},
		{sql: "SET datestyle = 'German'", code: sqlerr.FeatureNotSupported},
		{sql: "SET datestyle = 'ISO, Sideways'", code: sqlerr.InvalidParameterValue},
		{sql: "RESET datestyle", show: "datestyle", want: "ISO, MDY"},
		{sql: "RESET timezone", show: "timezone", want: "UTC"},
		{sql: "SET application_name = 'x'", show: "application_name", want: "x"},
		{sql: "RESET ALL", show: "application_name", want: ""},
		{sql: "SET ddp.epsilon = 0.3", show: "ddp.epsilon", want: "0.3"},
		{sql: "RESET ddp.epsilon", show: "ddp.epsilon", want: "0.1"},
		{sql: "SET ddp.epsilon = 2", code: sqlerr.InvalidParameterValue},
		{sql: "SET ddp.epsilon = -1", code: sqlerr.InvalidParameterValue},
		{sql: "SET ddp.budget = 100", code: sqlerr.InsufficientPrivilege},
		{sql: "SET server_version = '1'", code: sqlerr.InsufficientPrivilege},
		{sql: "SET NAMES 'UTF8'", show: "client_encoding", want: "UTF8"},
		{sql: "SET client_encoding = 'LATIN1'", code: sqlerr.FeatureNotSupported},
		{sql: "SHOW no_such_setting", code: sqlerr.UndefinedObject},
	}
	for _, st := range steps {
		var c Collector
		err := s.Query(ctx, st.sql, &c)
		if st.code != (sqlerr.Code{}) {
			if !sqlerr.HasCode(err, st.code) {
				t.Errorf("%s: %v, want %s", st.sql, err, st.code.SQLState)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.sql, err)
		}
		c = Collector{}
		if err := s.Query(ctx, "SHOW "+st.show, &c); err != nil {
			t.Fatalf("SHOW %s: %v", st.show, err)
		}
		if got := c.Results[0].Rows[0][0].Str; got != st.want {
			t.Errorf("after %s: %s = %q, want %q", st.sql, st.show, got, st.want)
		}
	}
	var c Collector
	if err := s.Query(ctx, "SHOW ALL", &c); err != nil || len(c.Results[0].Columns) != 2 || c.Results[0].Rows[0][0].Str != "ddp.epsilon" {
		t.Fatalf("SHOW ALL: %+v %v", c.Results, err)
	}
	c = Collector{}
	if err := s.Query(ctx, "SHOW ddp.budget", &c); err != nil || len(c.Results[0].Rows) != 1 || c.Results[0].Rows[0][0].Str != "census" {
		t.Fatalf("SHOW ddp.budget: %+v %v", c.Results, err)
	}
	c = Collector{}
	if err := s.Query(ctx, "ROLLBACK; DISCARD ALL", &c); err != nil || c.Results[0].Tag != "ROLLBACK" || c.Results[1].Tag != "DISCARD ALL" {
		t.Fatalf("ROLLBACK; DISCARD ALL: %+v %v", c.Results, err)
	}
}

// Parameters of date and time types are read as the type, or refused
// with the SQLSTATE of the problem before anything runs.
func TestTimeParameters(t *testing.T) {
	tests := []struct {
		in   ir.Value
		t    ColType
		want ir.Value
		code sqlerr.Code
	}{
		{ir.String("2024-01-02"), TypeDate, ir.Date(19724), sqlerr.Code{}},
		{ir.String("2024-01-01 00:00:01"), TypeTimestamp, ir.Timestamp(19723*ir.MicrosPerDay + 1_000_000), sqlerr.Code{}},
		{ir.Date(19723), TypeTimestamp, ir.Timestamp(19723 * ir.MicrosPerDay), sqlerr.Code{}},
		{ir.String("soon"), TypeDate, ir.Value{}, sqlerr.InvalidDatetimeFormat},
		{ir.String("2024-13-45"), TypeDate, ir.Value{}, sqlerr.DatetimeFieldOverflow},
		{ir.String(" 42 "), TypeInt8, ir.Int(42), sqlerr.Code{}},
		{ir.String("2.5"), TypeFloat8, ir.Float(2.5), sqlerr.Code{}},
		{ir.String("yes"), TypeBool, ir.Bool(true), sqlerr.Code{}},
		{ir.String("off"), TypeBool, ir.Bool(false), sqlerr.Code{}},
		{ir.Int(3), TypeText, ir.Int(3), sqlerr.Code{}},
	}
	for _, tc := range tests {
		got, err := coerce(tc.in, tc.t)
		if tc.code != (sqlerr.Code{}) {
			if !sqlerr.HasCode(err, tc.code) {
				t.Errorf("coerce(%v, %d): %v, want %s", tc.in, tc.t, err, tc.code.SQLState)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("coerce(%v, %d) = %v, %v; want %v", tc.in, tc.t, got, err, tc.want)
		}
	}
	if _, err := coerce(ir.String("maybe"), TypeBool); err == nil {
		t.Error("a boolean parameter 'maybe' was accepted")
	}
}
