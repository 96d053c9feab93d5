package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

var modes = []struct {
	name string
	mode pgx.QueryExecMode
}{
	{"simple", pgx.QueryExecModeSimpleProtocol},
	{"extended", pgx.QueryExecModeCacheStatement},
}

type fakeRowGo struct {
	i     int64
	label string
	half  float64
	even  bool
	small int32
	nm    string
	o     uint32
}

// wantRows is fakeRow(1..n) written out as Go values.
func wantRows(n int) []fakeRowGo {
	var out []fakeRowGo
	for i := 1; i <= n; i++ {
		out = append(out, fakeRowGo{int64(i), fmt.Sprintf("row %d", i), float64(i) / 2, i%2 == 0,
			int32(10 * i), fmt.Sprintf("n%d", i), uint32(1000 + i)})
	}
	return out
}

func queryFakeRows(t *testing.T, conn *pgx.Conn, sql string) []fakeRowGo {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var got []fakeRowGo
	for rows.Next() {
		var r fakeRowGo
		if err := rows.Scan(&r.i, &r.label, &r.half, &r.even, &r.small, &r.nm, &r.o); err != nil {
			t.Fatalf("scan: %v", err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return got
}

// run executes sql through conn.Query, which (unlike Exec without
// arguments, which pgx always sends as a simple query) honours the
// connection's query mode, drains the rows and returns the command tag.
func run(conn *pgx.Conn, sql string, args ...any) (pgconn.CommandTag, error) {
	rows, err := conn.Query(context.Background(), sql, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.CommandTag(), rows.Err()
}

func pgErrCode(t *testing.T, err error) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a PostgreSQL error", err, err)
	}
	return pe
}

func TestPgxRowsAllTypes(t *testing.T) {
	ts := startServer(t, Config{})
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			before := ts.h.prepareCount()
			got := queryFakeRows(t, conn, "rows 3")
			want := wantRows(3)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rows:\n got %v\nwant %v", got, want)
			}
			if prepared := ts.h.prepareCount() > before; prepared != (m.mode != pgx.QueryExecModeSimpleProtocol) {
				t.Errorf("statement prepared = %v in %s mode", prepared, m.name)
			}
			// Zero rows still gives a result, not an error.
			if got := queryFakeRows(t, conn, "rows 0"); len(got) != 0 {
				t.Errorf("rows 0 gave %d rows", len(got))
			}
		})
	}
}

func TestPgxErrorThenSuccess(t *testing.T) {
	ts := startServer(t, Config{})
	tests := []struct {
		name, sql, wantCode, wantMsg, wantHint string
	}{
		{"syntax", "fail 42601", "42601", "fake failure", "fake hint"},
		{"budget", "fail 53400", "53400", "fake failure", "fake hint"},
		{"internal text never leaks", "internal", "XX000", "internal error", ""},
	}
	for _, m := range modes {
		for _, tc := range tests {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				conn := ts.connect(t, m.mode)
				_, err := run(conn, tc.sql)
				pe := pgErrCode(t, err)
				if pe.Code != tc.wantCode || pe.Message != tc.wantMsg || pe.Hint != tc.wantHint || pe.Severity != "ERROR" {
					t.Errorf("got %s %s %q hint %q, want ERROR %s %q hint %q",
						pe.Severity, pe.Code, pe.Message, pe.Hint, tc.wantCode, tc.wantMsg, tc.wantHint)
				}
				if strings.Contains(err.Error(), "salary") {
					t.Errorf("internal error text reached the client: %v", err)
				}
				if got := queryFakeRows(t, conn, "rows 1"); len(got) != 1 {
					t.Errorf("after the error: %d rows, want 1", len(got))
				}
			})
		}
	}
}

func TestPgxPrepareError(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	_, err := run(conn, "failprepare 42P01")
	if pe := pgErrCode(t, err); pe.Code != "42P01" {
		t.Errorf("code %s, want 42P01", pe.Code)
	}
	if got := queryFakeRows(t, conn, "rows 2"); len(got) != 2 {
		t.Errorf("after the error: %d rows, want 2", len(got))
	}
}

func TestPgxParams(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()

	var (
		i8 int64
		i4 int32
		f8 float64
		b  bool
		s  string
		nm string
		o  uint32
	)
	err := conn.QueryRow(ctx, "echo int8 int4 float8 bool text name oid",
		int64(-9007199254740993), int32(-7), 0.1, true, "héllo, wörld", "nm", uint32(4000000000)).
		Scan(&i8, &i4, &f8, &b, &s, &nm, &o)
	if err != nil {
		t.Fatal(err)
	}
	if i8 != -9007199254740993 || i4 != -7 || f8 != 0.1 || !b || s != "héllo, wörld" || nm != "nm" || o != 4000000000 {
		t.Errorf("echo: got %v %v %v %v %q %q %v", i8, i4, f8, b, s, nm, o)
	}

	// NULLs in every position come back as NULLs.
	var (
		ni8 *int64
		nb  *bool
		ns  *string
	)
	if err := conn.QueryRow(ctx, "echo int8 bool text", nil, nil, nil).Scan(&ni8, &nb, &ns); err != nil {
		t.Fatal(err)
	}
	if ni8 != nil || nb != nil || ns != nil {
		t.Errorf("NULLs came back as %v %v %v", ni8, nb, ns)
	}

	// An empty string is not NULL.
	var es *string
	if err := conn.QueryRow(ctx, "echo text", "").Scan(&es); err != nil {
		t.Fatal(err)
	}
	if es == nil || *es != "" {
		t.Errorf("empty string came back as %v", es)
	}
}

func TestPgxNotices(t *testing.T) {
	ts := startServer(t, Config{})
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cfg, err := pgx.ParseConfig(ts.url("alice", alicePassword, ""))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = m.mode
			var mu sync.Mutex
			var notices []*pgconn.Notice
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
				mu.Lock()
				notices = append(notices, n)
				mu.Unlock()
			}
			conn, err := pgx.ConnectConfig(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			var n int64
			if err := conn.QueryRow(context.Background(), "notice").Scan(&n); err != nil || n != 1 {
				t.Fatalf("notice query: %v %v", n, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(notices) != 1 {
				t.Fatalf("got %d notices, want 1", len(notices))
			}
			nt := notices[0]
			if nt.Severity != "NOTICE" || nt.Message != "epsilon spent 0.5" {
				t.Errorf("notice = %+v", nt)
			}
		})
	}
}

// TestMultiStatement checks statement-by-statement results of one simple
// query and that an error stops it after the results that succeeded.
func TestMultiStatement(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	results, err := conn.PgConn().Exec(context.Background(), "rows 2; set; rows 1").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	var nrows []int
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
		nrows = append(nrows, len(r.Rows))
	}
	if fmt.Sprint(tags) != "[SELECT 2 SET SELECT 1]" || fmt.Sprint(nrows) != "[2 0 1]" {
		t.Errorf("tags %v rows %v", tags, nrows)
	}

	results, err = conn.PgConn().Exec(context.Background(), "rows 1; fail 42501; rows 3").ReadAll()
	if pe := pgErrCode(t, err); pe.Code != "42501" {
		t.Errorf("code %s", pe.Code)
	}
	if len(results) != 1 || len(results[0].Rows) != 1 || results[0].CommandTag.String() != "SELECT 1" {
		t.Errorf("results before the error: %+v", results)
	}
	if got := queryFakeRows(t, conn, "rows 1"); len(got) != 1 {
		t.Errorf("after the error: %d rows", len(got))
	}
}

func TestEmptyQuery(t *testing.T) {
	ts := startServer(t, Config{})
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			for _, q := range []string{"", "  ", ";"} {
				tag, err := run(conn, q)
				if err != nil {
					t.Errorf("%q: %v", q, err)
				}
				if tag.String() != "" {
					t.Errorf("%q: tag %q, want empty", q, tag)
				}
			}
		})
	}
}

func TestTxStatus(t *testing.T) {
	ts := startServer(t, Config{})
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			steps := []struct {
				sql  string
				want byte
			}{{"begin", 'T'}, {"rows 1", 'T'}, {"commit", 'I'}}
			for _, s := range steps {
				if _, err := run(conn, s.sql); err != nil {
					t.Fatal(err)
				}
				if got := conn.PgConn().TxStatus(); got != s.want {
					t.Errorf("after %q: status %c, want %c", s.sql, got, s.want)
				}
			}
		})
	}
}

func TestCancelRequest(t *testing.T) {
	ts := startServer(t, Config{})
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			errc := sleepOn(t, ts, conn)
			if err := conn.PgConn().CancelRequest(context.Background()); err != nil {
				t.Fatal(err)
			}
			wantCanceled(t, errc, "cancel")
			if got := queryFakeRows(t, conn, "rows 2"); len(got) != 2 {
				t.Errorf("after cancel: %d rows", len(got))
			}
		})
	}
}

// TestCancelWrongKey checks that a cancel request with the right process
// id but a wrong key does nothing.
func TestCancelWrongKey(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := conn.PgConn().Exec(ctx, "wait 400").ReadAll()
		errc <- err
	}()
	<-ts.h.started
	rc := ts.dialRaw(t)
	key := conn.PgConn().SecretKey()
	bad := append([]byte(nil), key...)
	bad[0] ^= 0xff
	rc.send(&pgproto3.CancelRequest{ProcessID: conn.PgConn().PID(), SecretKey: bad})
	if err := <-errc; err != nil {
		t.Errorf("query was affected by a wrong cancel key: %v", err)
	}
}

func TestPanicEndsOnlyThatConnection(t *testing.T) {
	ts := startServer(t, Config{})
	other := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	_, err := conn.Exec(context.Background(), "panic")
	if pe := pgErrCode(t, err); pe.Code != "XX000" || pe.Severity != "FATAL" || pe.Message != "internal error" {
		t.Errorf("got %s %s %q", pe.Severity, pe.Code, pe.Message)
	}
	select {
	case <-ts.panics:
	case <-time.After(5 * time.Second):
		t.Error("panic was not reported")
	}
	if got := queryFakeRows(t, other, "rows 1"); len(got) != 1 {
		t.Errorf("other connection: %d rows", len(got))
	}
}

func TestNegotiateNewerMinorVersion(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := pgx.Connect(context.Background(), ts.url("alice", alicePassword, "max_protocol_version=3.2"))
	if err != nil {
		t.Fatalf("pgx asking for 3.2 could not connect: %v", err)
	}
	defer conn.Close(context.Background())
	if got := queryFakeRows(t, conn, "rows 1"); len(got) != 1 {
		t.Errorf("%d rows", len(got))
	}
}

func TestSessionRefused(t *testing.T) {
	ts := startServer(t, Config{})
	_, err := pgx.Connect(context.Background(), strings.Replace(ts.url("trusty", "x", ""), "/db?", "/refused?", 1))
	if pe := pgErrCode(t, err); pe.Code != "28000" || pe.Severity != "FATAL" {
		t.Errorf("got %s %s", pe.Severity, pe.Code)
	}
}
