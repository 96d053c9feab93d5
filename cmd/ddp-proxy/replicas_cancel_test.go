package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ddp-proxy/ddp-proxy/internal/testaddr"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/wire/mysqlwire"
	"github.com/ddp-proxy/ddp-proxy/wire/pgwire"
)

// TestReplicaForwardsCancel: two replicas that list each other as peers
// (listen.peer_id, listen.peers). A client's cancel request for a query
// on replica 1, sent to replica 2 as a load balancer may send it, is
// forwarded and cancels the query (57014); before peers, replica 2 ignored
// it and the query was answered. The answers are padded
// (listen.min_response_ms) so that the query is still running when the
// cancel arrives; the padding is kept after a cancel too, so the query
// ends when it would have, with the error instead of the rows.
func TestReplicaForwardsCancel(t *testing.T) {
	s := newReplicaSetup(t)
	addrs := []string{testaddr.Free(t), testaddr.Free(t)}
	rs := launchPeers(t, s, "peer", addrs, []string{"off", "off"}, "")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := connectReplica(ctx, addrs[0], 0.1)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ask := func(i int) <-chan error {
		errc := make(chan error, 1)
		go func() {
			var n int64
			errc <- conn.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", 20+i)).Scan(&n)
		}()
		time.Sleep(300 * time.Millisecond) // in the padding by now
		return errc
	}
	// Not cancelled: answered.
	if err := <-ask(0); err != nil {
		t.Fatalf("an uncancelled query: %v", err)
	}
	// Cancelled through the other replica.
	errc := ask(1)
	sendCancel(t, addrs[1], conn.PgConn().PID(), conn.PgConn().SecretKey())
	err = <-errc
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("a query cancelled through the peer: %v, want 57014\nreplica 1:\n%s\nreplica 2:\n%s", err, rs[0].stderr, rs[1].stderr)
	}
	// The session goes on.
	var n int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE age > 22").Scan(&n); err != nil {
		t.Fatalf("after the cancel: %v", err)
	}
}

// TestReplicaForwardsMySQLKill: with a peer secret, a MySQL KILL QUERY
// typed on replica 2 (where the mariadb CLI's Ctrl-C may land behind a
// load balancer) for a connection of replica 1 is forwarded and cancels
// its statement (1317); the connection goes on. Answers are padded as in
// TestReplicaForwardsCancel.
func TestReplicaForwardsMySQLKill(t *testing.T) {
	s := newReplicaSetup(t)
	t.Setenv("DDP_TEST_PEER_SECRET", "a-secret-the-replicas-share-0123")
	pgAddrs := []string{testaddr.Free(t), testaddr.Free(t)}
	myAddrs := []string{testaddr.Free(t), testaddr.Free(t)}
	rs := launchPeers(t, s, "mypeer", pgAddrs, myAddrs, "  peer_secret_env: DDP_TEST_PEER_SECRET\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db1, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddrs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	victim, err := db1.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id uint32
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id>>23 != 1 {
		t.Fatalf("replica 1's connection id %#x does not carry its number", id)
	}
	errc := make(chan error, 1)
	go func() {
		var n int64
		errc <- victim.QueryRowContext(ctx, "SELECT COUNT(*) FROM people WHERE age > 21").Scan(&n)
	}()
	time.Sleep(300 * time.Millisecond)
	db2, err := sql.Open("mysql", fmt.Sprintf("analyst:demo@tcp(%s)/demo", myAddrs[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, err := db2.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatalf("KILL QUERY through replica 2: %v", err)
	}
	err = <-errc
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1317 {
		t.Fatalf("a statement killed through replica 2: %v, want 1317\nreplica 1:\n%s\nreplica 2:\n%s", err, rs[0].stderr, rs[1].stderr)
	}
	var n int64
	if err := victim.QueryRowContext(ctx, "SELECT COUNT(*) FROM people WHERE age > 22").Scan(&n); err != nil {
		t.Fatalf("after the KILL: %v", err)
	}
}

// launchPeers starts one replica per PostgreSQL address in pgAddrs (and
// MySQL address in myAddrs, "off": none), numbered from 1 and listing
// each other as peers, with extra added to their listen sections and
// answers padded to 1.5 s (listen.min_response_ms), so that a query is
// still running when a test's cancel arrives; it waits until they listen.
func launchPeers(t *testing.T, s *replicaSetup, name string, pgAddrs, myAddrs []string, extra string) []*replica {
	t.Helper()
	dir := filepath.Dir(s.files.Policy)
	var rs []*replica
	ledgerDSN := smallPool(t, s.dsn, len(pgAddrs))
	for i := range pgAddrs {
		pol := pgLedgerPolicyNamed(t, s.files, ledgerDSN, s.schema, pgAddrs[i], myAddrs[i], fmt.Sprintf("%s%d.yaml", name, i+1))
		b, err := os.ReadFile(pol)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "  auth: trust\n") {
			t.Fatal("the demo policy's listen section has no auth: trust line to extend")
		}
		listen := fmt.Sprintf("  auth: trust\n  peer_id: %d\n  peers: {1: \"%s\", 2: \"%s\"}\n%s  min_response_ms: 1500\n", i+1, pgAddrs[0], pgAddrs[1], extra)
		if err := os.WriteFile(pol, []byte(strings.Replace(string(b), "  auth: trust\n", listen, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, launch(t, pol, pgAddrs[i], filepath.Join(dir, fmt.Sprintf("%s%d.pid", name, i+1))))
	}
	waitListening(t, rs)
	return rs
}

// sendCancel sends a PostgreSQL CancelRequest to addr, as a client's
// driver does on a new connection, and waits for the server to close it.
func sendCancel(t *testing.T, addr string, pid uint32, secret []byte) {
	t.Helper()
	if err := pgwire.SendCancel(addr, pid, secret); err != nil {
		t.Fatal(err)
	}
}

// The policy's bound on listen.peer_id is the front end's.
func TestPeerIDBoundsAgree(t *testing.T) {
	for name, v := range map[string]int{"pgwire": pgwire.MaxPeerID, "mysqlwire": mysqlwire.MaxPeerID} {
		if v != policies.MaxPeerID {
			t.Errorf("%s.MaxPeerID %d, policies.MaxPeerID %d", name, v, policies.MaxPeerID)
		}
	}
}
