package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/internal/pgtest"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// setShow runs SET statement_timeout = v and SHOW statement_timeout on s:
// SHOW's value, or the SET error as "message (hint)".
func setShow(s *Session, v string) string {
	if _, err := query(s, context.Background(), "SET statement_timeout = "+v); err != nil {
		e := sqlerr.As(err)
		if e.Code != sqlerr.InvalidParameterValue {
			return "unexpected code " + e.Code.SQLState + ": " + e.Message
		}
		if e.Hint != "" {
			return e.Message + " (" + e.Hint + ")"
		}
		return e.Message
	}
	rs, err := query(s, context.Background(), "SHOW statement_timeout")
	if err != nil {
		return "SHOW: " + err.Error()
	}
	return rs[0].Rows[0][0].Str
}

// TestStatementTimeoutValues: SET statement_timeout reads what PostgreSQL
// reads and SHOW spells it as PostgreSQL does. The expected values are
// PostgreSQL 15's own answers (psql: SET statement_timeout = v; SHOW
// statement_timeout), recorded by hand; the live comparison is
// TestStatementTimeoutMatchesPostgres.
func TestStatementTimeoutValues(t *testing.T) {
	f := sqliteFixture(t)
	if got := mustQuery(t, f.s, "SHOW statement_timeout")[0].Rows[0][0].Str; got != "0" {
		t.Errorf("default SHOW statement_timeout = %q, want 0", got)
	}
	units := `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`
	for _, c := range []struct{ in, want string }{
		{"'1us'", "0"}, {"'400us'", "0"}, {"'600us'", "1ms"}, {"'1500us'", "2ms"}, {"'2500us'", "2ms"},
		{"1", "1ms"}, {"'1.5s'", "1500ms"}, {"'1.5'", "2ms"}, {"'1500'", "1500ms"}, {"'60s'", "1min"},
		{"'90s'", "90s"}, {"'1h'", "1h"}, {"'24h'", "1d"}, {"'2d'", "2d"}, {"'1 min'", "1min"}, {"' 5s'", "5s"},
		{"'5s '", "5s"}, {"'  7  ms  '", "7ms"}, {"'0x10'", "16ms"}, {"'010'", "8ms"}, {"'+5'", "5ms"},
		{"'.5s'", "500ms"}, {"'5.'", "5ms"}, {"'1e-3s'", "1ms"}, {"'1e3'", "1s"}, {"'3600000ms'", "1h"},
		{"'7200s'", "2h"}, {"'0.5min'", "30s"}, {"'1000000us'", "1s"}, {"'2147483647'", "2147483647ms"},
		{"'2147483647.4'", "2147483647ms"}, {"0", "0"}, {"'0.4'", "0"}, {"'-0'", "0"},
		{"'5S'", `invalid value for parameter "statement_timeout": "5S" (` + units + ")"},
		{"'5x'", `invalid value for parameter "statement_timeout": "5x" (` + units + ")"},
		{"'7 ms x'", `invalid value for parameter "statement_timeout": "7 ms x" (` + units + ")"},
		{"'1_000'", `invalid value for parameter "statement_timeout": "1_000" (` + units + ")"},
		{"'-1'", `-1 ms is outside the valid range for parameter "statement_timeout" (0 .. 2147483647)`},
		{"'-5s'", `-5000 ms is outside the valid range for parameter "statement_timeout" (0 .. 2147483647)`},
		{"'2147483648'", `invalid value for parameter "statement_timeout": "2147483648" (Value exceeds integer range.)`},
		{"'2147483647.6'", `invalid value for parameter "statement_timeout": "2147483647.6" (Value exceeds integer range.)`},
		{"'3000000s'", `invalid value for parameter "statement_timeout": "3000000s" (Value exceeds integer range.)`},
		{"'1e10'", `invalid value for parameter "statement_timeout": "1e10" (Value exceeds integer range.)`},
		{"'100000000d'", `invalid value for parameter "statement_timeout": "100000000d" (Value exceeds integer range.)`},
		{"''", `invalid value for parameter "statement_timeout": ""`},
		{"'inf'", `invalid value for parameter "statement_timeout": "inf"`},
		{"'nan'", `invalid value for parameter "statement_timeout": "nan"`},
	} {
		// Start from a value each input changes or keeps visibly.
		mustQuery(t, f.s, "SET statement_timeout = 123")
		got := setShow(f.s, c.in)
		if got != c.want {
			t.Errorf("SET statement_timeout = %s: got %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(c.want, " ") {
			// A refused value leaves the setting as it was.
			if v := mustQuery(t, f.s, "SHOW statement_timeout")[0].Rows[0][0].Str; v != "123ms" {
				t.Errorf("after the refused %s SHOW says %q, want the earlier 123ms", c.in, v)
			}
		}
	}
	for _, reset := range []string{"RESET statement_timeout", "SET statement_timeout TO DEFAULT", "RESET ALL"} {
		mustQuery(t, f.s, "SET statement_timeout = '5s'")
		mustQuery(t, f.s, reset)
		if v := mustQuery(t, f.s, "SHOW statement_timeout")[0].Rows[0][0].Str; v != "0" || f.s.stmtTimeout != 0 {
			t.Errorf("%s: SHOW says %q (timeout %v), want 0", reset, v, f.s.stmtTimeout)
		}
	}
}

// TestStatementTimeoutMatchesPostgres compares SET/SHOW statement_timeout
// with a live PostgreSQL's on the recorded inputs and on generated ones:
// integers, fractions and exponents in every unit, hex and octal, blanks
// and signs.
func TestStatementTimeoutMatchesPostgres(t *testing.T) {
	dsn := pgtest.DSN(t, "the statement_timeout comparison with PostgreSQL")
	conn := pgtest.Connect(t, dsn)
	ctx := context.Background()
	pgSetShow := func(v string) string {
		if _, err := conn.Exec(ctx, "SET statement_timeout = "+v); err != nil {
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				t.Fatalf("SET statement_timeout = %s: %v", v, err)
			}
			if pe.Code != "22023" {
				return "unexpected code " + pe.Code + ": " + pe.Message
			}
			if pe.Hint != "" {
				return pe.Message + " (" + pe.Hint + ")"
			}
			return pe.Message
		}
		var s string
		if err := conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	f := sqliteFixture(t)
	rng := rand.New(rand.NewPCG(7, 11))
	units := []string{"", "us", "ms", "s", "min", "h", "d", "S", "m", "sec"}
	inputs := []string{"'1us'", "'600us'", "'1.5'", "'0x10'", "'010'", "'08'", "'0x'", "'-0x10'", "'  +3s'", "'1e'", "'1e+'", "'1.'", "'.'", "'-.5'", "' .5'"}
	for range 400 {
		var num string
		switch rng.IntN(5) {
		case 0:
			num = fmt.Sprint(rng.Int64N(3_000_000_000))
		case 1:
			num = fmt.Sprintf("%.*f", rng.IntN(4), rng.Float64()*float64(rng.Int64N(100_000)))
		case 2:
			num = fmt.Sprintf("%de%d", rng.IntN(100), rng.IntN(12)-4)
		case 3:
			num = fmt.Sprintf("0x%x", rng.IntN(1<<20))
		default:
			num = fmt.Sprintf("%.3f", rng.Float64()*3)
		}
		if rng.IntN(8) == 0 {
			num = "-" + num
		}
		sp := strings.Repeat(" ", rng.IntN(2))
		inputs = append(inputs, "'"+sp+num+sp+units[rng.IntN(len(units))]+sp+"'")
	}
	for _, in := range inputs {
		if _, err := conn.Exec(ctx, "SET statement_timeout = 123"); err != nil {
			t.Fatal(err)
		}
		mustQuery(t, f.s, "SET statement_timeout = 123")
		want, got := pgSetShow(in), setShow(f.s, in)
		if got != want {
			t.Errorf("SET statement_timeout = %s: proxy %q, PostgreSQL %q", in, got, want)
		}
	}
}

// TestStatementTimeoutFires: a statement that outlives the client's
// statement_timeout ends with 57014 "canceling statement due to
// statement timeout", like a cancel at that moment: while the answer is
// held back by listen.min_response_ms it is the error, not the answer,
// and it comes no earlier than the padding. A timeout longer than the
// statement changes nothing, and RESET lifts it.
func TestStatementTimeoutFires(t *testing.T) {
	const pad = 300 * time.Millisecond
	f := sqliteFixture(t)
	f.p.current().pol.Listen.MinResponseMS = int(pad / time.Millisecond)
	timed := func(sql string) (time.Duration, error) {
		t.Helper()
		start := time.Now()
		_, err := query(f.s, context.Background(), sql)
		return time.Since(start), err
	}

	mustQuery(t, f.s, "SET statement_timeout = 50")
	d, err := timed("SELECT COUNT(*) FROM people WHERE age > 21")
	e := sqlerr.As(err)
	if e.Code != sqlerr.StatementTimeout || e.Message != "canceling statement due to statement timeout" {
		t.Fatalf("want the statement timeout, got %v", err)
	}
	if e.Code.SQLState != "57014" || e.Code.MySQLErrno != 3024 {
		t.Errorf("statement timeout codes %s / %d, want 57014 / 3024", e.Code.SQLState, e.Code.MySQLErrno)
	}
	if d < pad {
		t.Errorf("the timeout came after %v, before the %v padding", d, pad)
	}
	// Session statements are not bounded by it in any visible way, and
	// the session goes on.
	mustQuery(t, f.s, "SHOW ddp.epsilon")

	mustQuery(t, f.s, "SET statement_timeout = '10s'")
	if d, err := timed("SELECT COUNT(*) FROM people WHERE age > 22"); err != nil || d < pad {
		t.Fatalf("under a 10 s timeout: %v after %v", err, d)
	}
	mustQuery(t, f.s, "SET statement_timeout = 50; RESET statement_timeout")
	if _, err := timed("SELECT COUNT(*) FROM people WHERE age > 23"); err != nil {
		t.Fatalf("after RESET: %v", err)
	}

	// Set at connect time: the startup packet's options (PGOPTIONS,
	// pgjdbc's options) or a startup parameter of its own (pgx's DSN).
	for _, params := range []map[string]string{{"options": "-c statement_timeout=50"}, {"statement_timeout": "50"}} {
		pg, err := f.p.PGHandler().NewSession(context.Background(), "alice", params)
		if err != nil {
			t.Fatal(err)
		}
		err = pg.Query(context.Background(), "SELECT COUNT(*) FROM people WHERE age > 24", &Collector{})
		if !sqlerr.HasCode(err, sqlerr.StatementTimeout) {
			t.Errorf("a session opened with %v: %v, want the statement timeout", params, err)
		}
	}
	if _, err := f.p.PGHandler().NewSession(context.Background(), "alice", map[string]string{"statement_timeout": "soon"}); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
		t.Errorf("startup statement_timeout=soon: %v, want the connection refused with 22023", err)
	}
}

// TestStatementTimeoutCancelStaysCancel: a client's cancel under a
// statement timeout stays a cancel ("due to user request"), not a
// timeout.
func TestStatementTimeoutCancelStaysCancel(t *testing.T) {
	f := sqliteFixture(t)
	f.p.current().pol.Listen.MinResponseMS = 300
	mustQuery(t, f.s, "SET statement_timeout = '10s'")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := query(f.s, ctx, "SELECT COUNT(*) FROM people WHERE age > 25")
	e := sqlerr.As(err)
	if e.Code != sqlerr.QueryCanceled || !strings.Contains(e.Message, "user request") {
		t.Fatalf("a client cancel under a statement timeout: %v, want the cancel error", err)
	}
}

// TestMySQLMaxExecutionTime: MySQL's max_execution_time (milliseconds) and
// MariaDB's max_statement_time (seconds) are the MySQL client's statement
// timeout, with MySQL's error 3024.
func TestMySQLMaxExecutionTime(t *testing.T) {
	const pad = 300 * time.Millisecond
	f := sqliteFixture(t)
	f.p.current().pol.Listen.MinResponseMS = int(pad / time.Millisecond)
	ctx := context.Background()
	my, err := f.p.MySQLHandler().NewSession(ctx, 1, "alice", "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := myQuery(t, my, "SELECT @@max_execution_time").Rows[0][0].Int; got != 0 {
		t.Errorf("default @@max_execution_time = %d, want 0", got)
	}
	myQuery(t, my, "SET max_execution_time = 50")
	if got := myQuery(t, my, "SELECT @@session.max_execution_time").Rows[0][0].Int; got != 50 {
		t.Errorf("@@max_execution_time = %d after SET 50", got)
	}
	err = my.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 26", &recorder{t: t})
	if e := sqlerr.As(err); e.Code != sqlerr.StatementTimeout || e.Code.MySQLErrno != 3024 {
		t.Fatalf("want MySQL's 3024, got %v", err)
	}
	for _, bad := range []string{"'abc'", "-1", "1.5", "4294967296"} {
		if err := my.Query(ctx, "SET max_execution_time = "+bad, &recorder{t: t}); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
			t.Errorf("SET max_execution_time = %s: %v, want an invalid-value error", bad, err)
		}
	}
	if got := myQuery(t, my, "SELECT @@max_execution_time").Rows[0][0].Int; got != 50 {
		t.Errorf("a refused value changed @@max_execution_time to %d", got)
	}
	myQuery(t, my, "SET max_execution_time = DEFAULT")
	if err := my.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 27", &recorder{t: t}); err != nil {
		t.Fatalf("after SET max_execution_time = DEFAULT: %v", err)
	}

	// MariaDB's max_statement_time, in seconds; with both set, the
	// shorter applies.
	if got := myQuery(t, my, "SELECT @@max_statement_time").Rows[0][0].Float; got != 0 {
		t.Errorf("default @@max_statement_time = %v, want 0", got)
	}
	myQuery(t, my, "SET max_execution_time = 60000")
	myQuery(t, my, "SET SESSION max_statement_time = 0.05")
	if got := myQuery(t, my, "SELECT @@max_statement_time").Rows[0][0].Float; got != 0.05 {
		t.Errorf("@@max_statement_time = %v after SET 0.05", got)
	}
	err = my.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 28", &recorder{t: t})
	if e := sqlerr.As(err); e.Code != sqlerr.StatementTimeout {
		t.Fatalf("max_statement_time 0.05 under a 60 s max_execution_time: %v, want the statement timeout", err)
	}
	for _, bad := range []string{"'x'", "-1", "40000000"} {
		if err := my.Query(ctx, "SET max_statement_time = "+bad, &recorder{t: t}); !sqlerr.HasCode(err, sqlerr.InvalidParameterValue) {
			t.Errorf("SET max_statement_time = %s: %v, want an invalid-value error", bad, err)
		}
	}
	myQuery(t, my, "SET max_statement_time = DEFAULT")
	if err := my.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 29", &recorder{t: t}); err != nil {
		t.Fatalf("after SET max_statement_time = DEFAULT (60 s max_execution_time left): %v", err)
	}
}

// TestSetLocalMatchesPostgres: SET LOCAL lasts until the transaction ends
// and does nothing outside one; a plain SET after it in the transaction
// is what COMMIT returns to; RESET inside a transaction is a session
// change. Each sequence runs on a live PostgreSQL and on a proxy session,
// and SHOW statement_timeout must agree after every statement. (A plain
// SET that ROLLBACK would undo in PostgreSQL is left out: the proxy keeps
// it, as it says.)
func TestSetLocalMatchesPostgres(t *testing.T) {
	dsn := pgtest.DSN(t, "the SET LOCAL comparison with PostgreSQL")
	conn := pgtest.Connect(t, dsn)
	ctx := context.Background()
	f := sqliteFixture(t)
	for _, seq := range [][]string{
		{"SET LOCAL statement_timeout = 50"},
		{"BEGIN", "SET LOCAL statement_timeout = 50", "COMMIT"},
		{"BEGIN", "SET LOCAL statement_timeout = 50", "ROLLBACK"},
		{"SET statement_timeout = 100", "BEGIN", "SET LOCAL statement_timeout = 50", "SET LOCAL statement_timeout = 70", "COMMIT"},
		{"BEGIN", "SET statement_timeout = 100", "SET LOCAL statement_timeout = 50", "COMMIT"},
		{"BEGIN", "SET LOCAL statement_timeout = 50", "SET statement_timeout = 200", "COMMIT"},
		{"SET statement_timeout = 100", "BEGIN", "SET LOCAL statement_timeout = 50", "RESET statement_timeout", "COMMIT"},
		{"SET statement_timeout = 100", "BEGIN", "SET LOCAL statement_timeout TO DEFAULT", "COMMIT"},
		{"BEGIN", "SET LOCAL statement_timeout = 50", "RESET ALL", "COMMIT"},
		// One query string: an implicit transaction block.
		{"SET LOCAL statement_timeout = 5000; SELECT 1"},
		{"SET statement_timeout = 10000; SET LOCAL statement_timeout = 5000; SELECT 1"},
		{"SET LOCAL statement_timeout = 5000; SET statement_timeout = 7000"},
		{"BEGIN; SET LOCAL statement_timeout = 5000", "SELECT 1", "COMMIT"},
	} {
		for _, reset := range []string{"ROLLBACK", "RESET statement_timeout"} {
			if _, err := conn.Exec(ctx, reset); err != nil {
				t.Fatal(err)
			}
			mustQuery(t, f.s, reset)
		}
		for i, stmt := range seq {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				t.Fatalf("PostgreSQL: %s: %v", stmt, err)
			}
			mustQuery(t, f.s, stmt)
			var want string
			if err := conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&want); err != nil {
				t.Fatal(err)
			}
			got := mustQuery(t, f.s, "SHOW statement_timeout")[0].Rows[0][0].Str
			if got != want {
				t.Errorf("%v, after statement %d: proxy %q, PostgreSQL %q", seq, i+1, got, want)
			}
		}
	}
}

// TestSetLocalInOneQueryString: inside a multi-statement query string the
// SET LOCAL is in force for the statements after it, as in PostgreSQL.
func TestSetLocalInOneQueryString(t *testing.T) {
	dsn := pgtest.DSN(t, "the SET LOCAL comparison with PostgreSQL")
	conn := pgtest.Connect(t, dsn)
	const q = "SET LOCAL statement_timeout = 50; SHOW statement_timeout"
	res, err := conn.PgConn().Exec(context.Background(), q).ReadAll()
	if err != nil || len(res) != 2 || len(res[1].Rows) != 1 {
		t.Fatalf("PostgreSQL: %v, %+v", err, res)
	}
	want := string(res[1].Rows[0][0])
	f := sqliteFixture(t)
	rs := mustQuery(t, f.s, q)
	if got := rs[1].Rows[0][0].Str; got != want || want != "50ms" {
		t.Errorf("SHOW inside %q: proxy %q, PostgreSQL %q", q, got, want)
	}
}

// TestSetLocalEpsilonAndTimeout: what SET LOCAL changes goes back at the
// transaction's end for the proxy's own settings too — ε, and the
// statement timeout that is in force, not only what SHOW says.
func TestSetLocalEpsilonAndTimeout(t *testing.T) {
	f := sqliteFixture(t)
	mustQuery(t, f.s, "SET ddp.epsilon = 0.25")
	mustQuery(t, f.s, "BEGIN; SET LOCAL ddp.epsilon = 0.5; SET LOCAL statement_timeout = 1")
	if got := mustQuery(t, f.s, "SHOW ddp.epsilon")[0].Rows[0][0].Str; got != "0.5" {
		t.Errorf("ε inside the transaction: %s, want 0.5", got)
	}
	if f.s.stmtTimeout != time.Millisecond {
		t.Errorf("timeout inside the transaction: %v, want 1ms", f.s.stmtTimeout)
	}
	mustQuery(t, f.s, "ROLLBACK")
	if got := mustQuery(t, f.s, "SHOW ddp.epsilon")[0].Rows[0][0].Str; got != "0.25" {
		t.Errorf("ε after ROLLBACK: %s, want the session's 0.25", got)
	}
	if f.s.stmtTimeout != 0 {
		t.Errorf("timeout after ROLLBACK: %v, want none", f.s.stmtTimeout)
	}
	// The answer is charged at the session's ε again.
	before, _ := f.led.Spent("alice", "census")
	mustQuery(t, f.s, "SELECT COUNT(*) FROM people WHERE age > 44")
	after, _ := f.led.Spent("alice", "census")
	if d := after.Epsilon - before.Epsilon; d < 0.2499 || d > 0.2501 {
		t.Errorf("charged %v after the transaction, want 0.25", d)
	}
}
