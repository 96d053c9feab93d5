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

// With a shared secret, a KILL typed on replica 2 for a connection of
// replica 1 is forwarded (here straight to replica 1's KillWithKey, which
// the PostgreSQL front end's cancel channel calls in the proxy) and
// cancels the statement (1317); KILL CONNECTION closes the connection.
// The key binds the killer's user: another user's forwarded KILL, or one
// keyed with another secret, does nothing.
func TestForwardedKill(t *testing.T) {
	secret := []byte("0123456789abcdef-shared")
	addrA, hA := startFake(t, Config{PeerID: 1, PeerSecret: secret})
	var forwarded int
	forward := func(owner int, id uint32, key []byte) error {
		if owner != 1 {
			return fmt.Errorf("no replica %d", owner)
		}
		forwarded++
		hA.srv.KillWithKey(id, key)
		return nil
	}
	addrB, _ := startFake(t, Config{PeerID: 2, PeerSecret: secret, ForwardKill: forward})
	addrC, _ := startFake(t, Config{PeerID: 3, PeerSecret: []byte("another-secret-of-16+"), ForwardKill: forward})
	ctx := context.Background()
	db := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addrA))
	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var n int
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	hA.mu.Lock()
	id := hA.ids[len(hA.ids)-1]
	hA.mu.Unlock()
	sleep := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := victim.QueryContext(ctx, "SELECT sleep")
			done <- err
		}()
		time.Sleep(200 * time.Millisecond)
		return done
	}
	notCancelled := func(done <-chan error, what string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("%s cancelled the statement: %v", what, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	done := sleep()
	// Another user's KILL, and one keyed with another secret: sent
	// (the killer hears OK, as a cancel request learns nothing), no effect.
	for _, k := range []struct{ addr, user, what string }{
		{addrB, "clear:pw-clear", "another user's forwarded KILL"},
		{addrC, "trusted:x", "a KILL keyed with another secret"},
	} {
		if _, err := open(t, fmt.Sprintf("%s@tcp(%s)/", k.user, k.addr)).Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
			t.Fatalf("%s: %v", k.what, err)
		}
		notCancelled(done, k.what)
	}
	// The user's own KILL through replica 2.
	killer := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addrB))
	if _, err := killer.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantErrno(t, err, 1317, "70100")
	case <-time.After(5 * time.Second):
		t.Fatal("a KILL QUERY forwarded from replica 2 did not cancel the statement")
	}
	if forwarded != 3 {
		t.Errorf("%d KILLs forwarded, want 3", forwarded)
	}
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatalf("after KILL QUERY: %v", err)
	}
	// KILL CONNECTION: the connection goes.
	if _, err := killer.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for victim.QueryRowContext(ctx, "SELECT 1").Scan(&n) == nil {
		if time.Now().After(deadline) {
			t.Fatal("a KILL CONNECTION forwarded from replica 2 left the connection open")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A replica that cannot reach the owner says so.
	if _, err := open(t, fmt.Sprintf("trusted:x@tcp(%s)/", addrB)).Exec(fmt.Sprintf("KILL QUERY %d", 9<<peerShift|1)); err == nil || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("KILL of a replica that cannot be reached: %v", err)
	}
}
