package postgres

import (
	"context"
	"database/sql"
	"strconv"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
)

// TestServerClosedPooledConnections: the server ends every idle pooled
// connection (as a restart or pg_terminate_backend does). Checkout is not
// a round trip any more, but it still notices the closed sockets and
// opens new connections: the next statements succeed, none is charged for
// a connection the server had already dropped.
func TestServerClosedPooledConnections(t *testing.T) {
	b := open(t, backends.Options{MaxOpenConns: 3})
	ctx := context.Background()
	// Three busy connections at once, so the pool holds three.
	pids := map[int64]bool{}
	done := make(chan int64, 3)
	for range 3 {
		go func() {
			pid, err := intRows(b, ctx, "SELECT pg_backend_pid() FROM pg_sleep(0.2)")
			if err != nil {
				t.Error(err)
			}
			done <- pid
		}()
	}
	for range 3 {
		pids[<-done] = true
	}
	admin, err := sql.Open("postgres", testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for pid := range pids {
		var ok bool
		if err := admin.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
			t.Fatalf("terminate backend %d: %v, %v", pid, ok, err)
		}
	}
	// pg_terminate_backend signals; wait until the sessions are gone.
	for {
		var n int
		if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pidArray(pids)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	for i := range 5 {
		got, err := intRows(b, ctx, "SELECT pg_backend_pid()")
		if err != nil {
			t.Fatalf("statement %d after the server closed the pool's connections: %v", i, err)
		}
		if pids[got] {
			t.Fatalf("statement %d ran on terminated backend %d", i, got)
		}
	}
}

func pidArray(pids map[int64]bool) string {
	s := "{"
	for p := range pids {
		if len(s) > 1 {
			s += ","
		}
		s += strconv.FormatInt(p, 10)
	}
	return s + "}"
}
