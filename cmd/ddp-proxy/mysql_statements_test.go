package main

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMySQLHandshakeAndKill: with a real client (go-sql-driver) on the
// demo, a connector's multi-statement handshake string with a version
// comment sets what the following SELECT reads, and KILL (read by the
// session's parser, run by the front end) ends another connection of the
// same user and refuses unknown ids.
func TestMySQLHandshakeAndKill(t *testing.T) {
	addr, _ := startMySQLDemo(t)
	ctx := context.Background()
	db, conn := mysqlConn(t, "analyst:anything@tcp("+addr+")/demo?multiStatements=true")

	rows, err := conn.QueryContext(ctx, "SET NAMES utf8mb4; /*!40101 SET @ddp_epsilon:=0.05 */; SET SESSION autocommit = 1; SELECT @@version_comment, @ddp_epsilon, @@autocommit")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		set, err := scanText(rows, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range set {
			got = append(got, row...)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	want := []string{"ddp-proxy privacy proxy (aggregate queries answered with differential privacy)", "0.05", "1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("handshake string: %q, want %q", got, want)
	}

	_, err = conn.ExecContext(ctx, "KILL /* ctrl-c */ QUERY 999999")
	wantMySQLError(t, err, 1094, "HY000") // ER_NO_SUCH_THREAD
	_, err = conn.ExecContext(ctx, "kill 99999999999")
	wantMySQLError(t, err, 1094, "HY000") // ER_NO_SUCH_THREAD

	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil || id == 0 {
		t.Fatalf("CONNECTION_ID(): %d, %v", id, err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
		t.Fatalf("KILL CONNECTION: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
			break // the connection was closed
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed connection still answers")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the killing connection after KILL: %d, %v", n, err)
	}
}
