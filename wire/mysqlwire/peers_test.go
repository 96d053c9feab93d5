package mysqlwire

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// With peer ids, connection ids carry the replica's number, so they
// differ across replicas, and a KILL sent to the wrong replica is refused
// instead of cancelling that replica's connection of the same number (the
// same user's: BI tools pool one user's connections). Two fake servers,
// the first connection of each: without peer ids both are id 1.
func TestKillOnAnotherPeer(t *testing.T) {
	addrA, hA := startFake(t, Config{PeerID: 1})
	addrB, hB := startFake(t, Config{PeerID: 2})
	ctx := context.Background()
	first := func(addr string, h *fakeHandler) (*sql.Conn, uint32) {
		db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addr))
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var n int
		if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return c, h.ids[len(h.ids)-1]
	}
	victim, idA := first(addrA, hA)
	bystander, idB := first(addrB, hB)
	if idA>>peerShift != 1 || idB>>peerShift != 2 || idA&(1<<peerShift-1) != idB&(1<<peerShift-1) {
		t.Fatalf("connection ids %#x and %#x: want peers 1 and 2 over the same counter", idA, idB)
	}
	sleep := func(c *sql.Conn) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.QueryContext(ctx, "SELECT sleep")
			done <- err
		}()
		return done
	}
	doneA, doneB := sleep(victim), sleep(bystander)
	time.Sleep(200 * time.Millisecond)
	killerB := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addrB))
	_, err := killerB.Exec(fmt.Sprintf("KILL QUERY %d", idA))
	if err == nil || !strings.Contains(err.Error(), "Unknown thread id") || !strings.Contains(err.Error(), "replica 1") {
		t.Fatalf("KILL of replica 1's connection sent to replica 2: %v, want unknown thread id naming replica 1", err)
	}
	select {
	case err := <-doneB:
		t.Fatalf("replica 2's connection was cancelled by a KILL meant for replica 1's: %v", err)
	case err := <-doneA:
		t.Fatalf("the victim ended: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	// Each KILL sent where its connection lives works.
	for _, k := range []struct {
		addr string
		id   uint32
		done <-chan error
	}{{addrA, idA, doneA}, {addrB, idB, doneB}} {
		if _, err := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", k.addr)).Exec(fmt.Sprintf("KILL QUERY %d", k.id)); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-k.done:
			wantErrno(t, err, 1317, "70100")
		case <-time.After(5 * time.Second):
			t.Fatalf("KILL QUERY %d did not cancel its statement", k.id)
		}
	}
}
