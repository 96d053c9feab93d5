package pgwire

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// An answer streamed to a client that goes away stops: the writer fails
// once the output can no longer be flushed, so the session stops reading
// its rows (from the backend, for a pass-through answer). Ignoring the
// failed flush (as the server did) never ends the endless answer.
func TestStreamStopsWhenTheClientLeaves(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Query{String: "endless"})
	for range 10 {
		rc.recv(t)
	}
	rc.nc.Close()
	select {
	case n := <-ts.h.endless:
		if n < 10 {
			t.Fatalf("the session stopped after %d rows, before the client read 10", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session kept writing rows to a client that left")
	}
}
