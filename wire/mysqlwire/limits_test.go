package mysqlwire

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// loggedIn logs in as trusted through go-sql-driver and returns the
// socket under that connection, for a test to write raw packets on (the
// driver's connection is abandoned).
func loggedIn(t *testing.T, addr string) net.Conn {
	t.Helper()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "trusted", "tcp", addr
	var raw net.Conn
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		raw = c
		return c, err
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// sendCommand writes a command of n payload bytes (the command byte, then
// spaces) in packets of at most maxPayload, from one small buffer, and
// returns how many packets it wrote.
func sendCommand(w io.Writer, cmd byte, n int) (int, error) {
	spaces := []byte(strings.Repeat(" ", 64<<10))
	packets := 0
	for left := n; ; {
		size := min(left, maxPayload)
		if _, err := w.Write([]byte{byte(size), byte(size >> 8), byte(size >> 16), byte(packets)}); err != nil {
			return packets, err
		}
		body := size
		if packets == 0 {
			if _, err := w.Write([]byte{cmd}); err != nil {
				return packets, err
			}
			body--
		}
		for body > 0 {
			m, err := w.Write(spaces[:min(len(spaces), body)])
			if err != nil {
				return packets, err
			}
			body -= m
		}
		packets++
		left -= size
		if size < maxPayload {
			return packets, nil
		}
	}
}

// readPacket reads one server packet.
func readPacket(r io.Reader) (seq byte, payload []byte, err error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	payload = make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err = io.ReadFull(r, payload)
	return h[3], payload, err
}

// wantTooLarge reads ER_NET_PACKET_TOO_LARGE with sequence number seq,
// then EOF: MySQL closes the connection after this error.
func wantTooLarge(t *testing.T, c net.Conn, seq byte) {
	t.Helper()
	gotSeq, p, err := readPacket(c)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if len(p) < 9 || p[0] != 0xff || int(p[1])|int(p[2])<<8 != 1153 || string(p[4:9]) != "08S01" {
		t.Fatalf("answer %q, want ERR 1153 (08S01)", p)
	}
	if gotSeq != seq {
		t.Errorf("ERR sequence number %d, want %d (the one after the client's last packet)", gotSeq, seq)
	}
	if _, _, err := readPacket(c); !errors.Is(err, io.EOF) {
		t.Errorf("after the error: %v, want the connection closed", err)
	}
}

// TestOversizedCommand: go-sql-driver sends a query over MaxPacket (it
// believes the server takes 64 MiB) and gets ER_NET_PACKET_TOO_LARGE
// (1153, 08S01); the connection then ends, as in MySQL. A query of
// exactly MaxPacket is served, and so are other connections.
func TestOversizedCommand(t *testing.T) {
	const limit = 64 << 10
	addr, _ := startFake(t, Config{MaxPacket: limit})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// COM_QUERY's payload is the command byte and the text.
	atLimit := "SELECT 1" + strings.Repeat(" ", limit-1-len("SELECT 1"))
	var n int
	if err := conn.QueryRowContext(ctx, atLimit).Scan(&n); err != nil || n != 1 {
		t.Fatalf("query of exactly the limit: %v", err)
	}
	_, err = conn.ExecContext(ctx, atLimit+strings.Repeat(" ", 1<<20))
	wantErrno(t, err, 1153, "08S01")
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&n); err == nil {
		t.Error("the connection survived a packet over max_allowed_packet; MySQL closes it")
	}
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("a new connection: %v", err)
	}
}

// TestOversizedMultiPacketCommand: with a limit above 16 MiB a command
// spans packets. One under the limit is served; a 100 MB one is read and
// discarded to its end and answered with the sequence number after its
// last packet, which is what the client waits for.
func TestOversizedMultiPacketCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 120 MB over loopback")
	}
	addr, _ := startFake(t, Config{MaxPacket: 20 << 20})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	var n int
	if err := db.QueryRow("SELECT 1" + strings.Repeat(" ", 17<<20)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("a 17 MiB query under a 20 MiB limit: %v", err)
	}
	c := loggedIn(t, addr)
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	packets, err := sendCommand(c, 0x03, 100<<20)
	if err != nil {
		t.Fatal(err)
	}
	wantTooLarge(t, c, byte(packets))
}

// TestOversizedCommandsMemory: eight clients at once each send a 100 MB
// COM_QUERY (streamed from a small buffer). The server holds none of it:
// the process allocates a small fraction of the 800 MB sent (a 100 MB
// query used to take it to 1.1 GB), every client gets 1153, and another
// client is served meanwhile.
func TestOversizedCommandsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 800 MB over loopback")
	}
	const size, clients = 100 << 20, 8
	addr, _ := startFake(t, Config{MaxPacket: 4 << 20})
	conns := make([]net.Conn, clients)
	for i := range conns {
		conns[i] = loggedIn(t, addr)
		_ = conns[i].SetDeadline(time.Now().Add(60 * time.Second))
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			packets, err := sendCommand(c, 0x03, size)
			if err != nil {
				t.Error(err)
				return
			}
			wantTooLarge(t, c, byte(packets))
		}()
	}
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("another client during the oversized queries: %v", err)
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("sent %d MB, allocated %d MB, heap in use %d MB", clients*size>>20, alloc>>20, after.HeapInuse>>20)
	if alloc > 64<<20 {
		t.Errorf("the process allocated %d MB while clients sent %d MB it must not hold", alloc>>20, clients*size>>20)
	}
}

// TestOversizedCommandTLS: the limit holds over TLS, where the guard has
// to sit above the TLS connection.
func TestOversizedCommandTLS(t *testing.T) {
	cert := selfSigned(t)
	addr, _ := startFake(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}, MaxPacket: 64 << 10})
	if err := gomysql.RegisterTLSConfig("ddp-limits", &tls.Config{InsecureSkipVerify: true}); err != nil {
		t.Fatal(err)
	}
	db := open(t, fmt.Sprintf("clear:pw-clear@tcp(%s)/?tls=ddp-limits", addr))
	var n int
	if err := db.QueryRow("SELECT 1" + strings.Repeat(" ", 60<<10)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("query under the limit over TLS: %v", err)
	}
	_, err := db.Exec("SELECT 1" + strings.Repeat(" ", 1<<20))
	wantErrno(t, err, 1153, "08S01")
	// The server closes the connection after 1153, as MySQL does, but
	// go-sql-driver keeps it in its pool until a write fails, and then
	// answers "invalid connection" without retrying (the write may have
	// reached the server). A new pool gets a new TLS connection.
	fresh := open(t, fmt.Sprintf("clear:pw-clear@tcp(%s)/?tls=ddp-limits", addr))
	if err := fresh.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("a new TLS connection: %v", err)
	}
}

// TestLongDataCap: go-sql-driver sends parameters of a quarter of
// max_allowed_packet or more as COM_STMT_SEND_LONG_DATA, which Vitess
// accumulates with no reply. Long data over MaxPacket — or long data and
// inline parameters together over it — fails that execute with MySQL's
// error for it, the parameters under it arrive intact, and the connection
// stays usable.
func TestLongDataCap(t *testing.T) {
	const limit = 64 << 10
	addr, h := startFake(t, Config{MaxPacket: limit})
	// The driver splits by the max_allowed_packet it is told.
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/?maxAllowedPacket=%d", addr, limit))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stmt, err := conn.PrepareContext(ctx, "SELECT ?, ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	long := strings.Repeat("L", 40<<10) // over limit/3: long data
	var n int
	if err := stmt.QueryRowContext(ctx, long, "x").Scan(&n); err != nil {
		t.Fatalf("40 KiB of long data under a 64 KiB limit: %v", err)
	}
	h.mu.Lock()
	got := h.args[len(h.args)-1][0].Str
	h.mu.Unlock()
	if got != long {
		t.Fatalf("long data arrived as %d bytes, want %d intact", len(got), len(long))
	}
	for _, tc := range []struct {
		name string
		a, b string
	}{
		{"long data over the limit", strings.Repeat("L", 100<<10), "x"},
		{"long data and inline parameters over the limit", strings.Repeat("L", 50<<10), strings.Repeat("i", 20<<10)},
	} {
		err := stmt.QueryRowContext(ctx, tc.a, tc.b).Scan(&n)
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1105 || !strings.Contains(me.Message, "max_allowed_packet") && !strings.Contains(me.Message, "limit") {
			t.Fatalf("%s: %v, want error 1105 naming the limit", tc.name, err)
		}
		if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s: the connection did not survive: %v", tc.name, err)
		}
	}
	if err := stmt.QueryRowContext(ctx, long, "x").Scan(&n); err != nil {
		t.Fatalf("long data under the limit after refused executes: %v", err)
	}
}

// TestPreparedStatementCaps: a COM_STMT_PREPARE over the count or text
// caps fails (1461 as in MySQL, 1105 for the bytes), the refused statement
// is not kept (closing one makes room), and the connection stays usable.
func TestPreparedStatementCaps(t *testing.T) {
	addr, _ := startFake(t, Config{MaxPreparedStatements: 3, MaxPreparedBytes: 200})
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var stmts []*sql.Stmt
	for i := range 3 {
		s, err := conn.PrepareContext(ctx, fmt.Sprintf("SELECT ? /* %d */", i))
		if err != nil {
			t.Fatalf("prepare %d: %v", i, err)
		}
		stmts = append(stmts, s)
	}
	for range 2 { // the refused one must not count against the next try
		_, err = conn.PrepareContext(ctx, "SELECT ? /* 4 */")
		wantErrno(t, err, 1461, "42000")
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatalf("connection after a refused prepare: %v", err)
	}
	stmts[0].Close()
	s, err := conn.PrepareContext(ctx, "SELECT ? /* 4 */")
	if err != nil {
		t.Fatalf("prepare after closing one: %v", err)
	}
	s.Close()
	for _, s := range stmts[1:] {
		s.Close()
	}

	big, err := conn.PrepareContext(ctx, "SELECT ? /*"+strings.Repeat(" ", 150)+"*/")
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	_, err = conn.PrepareContext(ctx, "SELECT ? /*"+strings.Repeat(" ", 100)+"*/")
	wantErrno(t, err, 1105, "HY000")
}
