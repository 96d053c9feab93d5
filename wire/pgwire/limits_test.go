package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// execSQL runs sql and discards its result.
func execSQL(conn *pgx.Conn, ctx context.Context, sql string) error {
	_, err := conn.Exec(ctx, sql)
	return err
}

func wantPgCode(t *testing.T, err error, code string) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("err = %v, want SQLSTATE %s", err, code)
	}
	return pe
}

// TestOversizedMessage: a query over MaxMessageBytes gets FATAL 54000
// with a message that names the limit, and the connection ends (as
// PostgreSQL ends it); one of exactly the limit is served, and so are
// other connections.
func TestOversizedMessage(t *testing.T) {
	const limit = 64 << 10
	ts := startServer(t, Config{MaxMessageBytes: limit})
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	// A Query message's body is the text and its terminating NUL.
	atLimit := "one" + strings.Repeat(" ", limit-1-len("one"))
	if err := execSQL(conn, ctx, atLimit); err != nil {
		t.Fatalf("query of exactly the limit: %v", err)
	}
	_, err := conn.Exec(ctx, atLimit+"  ")
	pe := wantPgCode(t, err, "54000")
	if pe.Severity != "FATAL" || !strings.Contains(pe.Message, "65536") || !strings.Contains(pe.Hint, "listen.max_query_bytes") {
		t.Errorf("error %q (%s), hint %q: want FATAL naming the limit and the policy key", pe.Message, pe.Severity, pe.Hint)
	}
	if err := execSQL(conn, ctx, "one"); err == nil {
		t.Error("the connection survived an oversized message; PostgreSQL closes it")
	}
	other := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	if err := execSQL(other, ctx, "one"); err != nil {
		t.Fatalf("another connection: %v", err)
	}
}

// TestOversizedMessagesMemory: eight clients at once each send a 60 MB
// query (under the 64 MiB cap the front end used to have). None of it is
// held by the server: the process allocates a small fraction of the
// 480 MB sent (the clients stream their bytes from one
// small buffer), each client reads FATAL 54000 after its last byte
// (not a reset), and another client is served meanwhile.
func TestOversizedMessagesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 480 MB over loopback")
	}
	const size, clients = 60 << 20, 8
	ts := startServer(t, Config{MaxMessageBytes: 4 << 20})
	raws := make([]*rawConn, clients)
	for i := range raws {
		raws[i] = ts.rawStartup(t)
		_ = raws[i].nc.SetDeadline(time.Now().Add(60 * time.Second))
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	chunk := []byte(strings.Repeat("x", 64<<10))
	var wg sync.WaitGroup
	errs := make([]error, clients)
	codes := make([]string, clients)
	for i, rc := range raws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hdr := binary.BigEndian.AppendUint32([]byte{'Q'}, uint32(size+4))
			if _, err := rc.nc.Write(hdr); err != nil {
				errs[i] = err
				return
			}
			for sent := 0; sent < size; sent += len(chunk) {
				if _, err := rc.nc.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
					errs[i] = err
					return
				}
			}
			m, err := rc.fe.Receive()
			if err != nil {
				errs[i] = err
				return
			}
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				codes[i] = e.Code
			}
			if _, err := rc.fe.Receive(); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				errs[i] = errors.New("connection still open after the FATAL error")
			}
		}()
	}
	// Served meanwhile.
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	if err := execSQL(conn, context.Background(), "one"); err != nil {
		t.Errorf("another client during the oversized queries: %v", err)
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	for i := range clients {
		if errs[i] != nil || codes[i] != "54000" {
			t.Errorf("client %d: code %q, err %v; want FATAL 54000 after sending", i, codes[i], errs[i])
		}
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("sent %d MB, allocated %d MB, heap in use %d MB", clients*size>>20, alloc>>20, after.HeapInuse>>20)
	if alloc > 64<<20 {
		t.Errorf("the process allocated %d MB while clients sent %d MB it must not hold", alloc>>20, clients*size>>20)
	}
}

// TestPreparedStatementCaps: Parse over the count or text caps fails with
// 54000, the connection stays usable, and closing a statement makes room.
func TestPreparedStatementCaps(t *testing.T) {
	ts := startServer(t, Config{MaxPreparedStatements: 3, MaxPreparedBytes: 200})
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, name := range []string{"s1", "s2", "s3"} {
		if _, err := conn.Prepare(ctx, name, "one"); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
	}
	_, err := conn.Prepare(ctx, "s4", "one")
	pe := wantPgCode(t, err, "54000")
	if !strings.Contains(pe.Hint, "listen.max_prepared_statements") {
		t.Errorf("hint %q does not name the policy key", pe.Hint)
	}
	if err := execSQL(conn, ctx, "one"); err != nil {
		t.Fatalf("connection after a refused Parse: %v", err)
	}
	if err := conn.Deallocate(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prepare(ctx, "s4", "one"); err != nil {
		t.Fatalf("prepare after closing one: %v", err)
	}

	conn = ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := conn.Prepare(ctx, "big", "one"+strings.Repeat(" ", 150)); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Prepare(ctx, "bigger", "one"+strings.Repeat(" ", 100))
	pe = wantPgCode(t, err, "54000")
	if !strings.Contains(pe.Hint, "listen.max_prepared_bytes") {
		t.Errorf("hint %q does not name the policy key", pe.Hint)
	}
	if err := execSQL(conn, ctx, "one"); err != nil {
		t.Fatalf("connection after a refused Parse: %v", err)
	}
}

// TestPortalCap: portals, which hold their parameters until their
// transaction ends, are capped like prepared statements.
func TestPortalCap(t *testing.T) {
	ts := startServer(t, Config{MaxPreparedStatements: 2})
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Parse{Name: "s", Query: "one"},
		&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s"},
		&pgproto3.Bind{DestinationPortal: "p2", PreparedStatement: "s"},
		&pgproto3.Bind{DestinationPortal: "p3", PreparedStatement: "s"},
		&pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "1", "2", "2", "E:54000", "Z:I")
	// Sync ended them: room again.
	rc.send(&pgproto3.Bind{DestinationPortal: "p3", PreparedStatement: "s"}, &pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "2", "Z:I")
}
