package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// TestLedgerUnreachableFailsClosed: a proxy whose PostgreSQL ledger
// becomes unreachable answers a fresh private query with SQLSTATE 08006
// and nothing else (no row), charges nothing, and answers again once the
// ledger is back.
func TestLedgerUnreachableFailsClosed(t *testing.T) {
	s := newReplicaSetup(t)
	cfg, err := pgx.ParseConfig(s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	fw := blackhole.Start(t, target)
	relayed := strings.Replace(s.dsn, target, fw.Addr, 1)
	if relayed == s.dsn {
		t.Skip("cannot rewrite the host:port of DDP_TEST_POSTGRES_DSN")
	}
	pol, err := policies.Load(pgLedgerPolicy(t, s.files, relayed, s.schema, "127.0.0.1:0", "off"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := servePolicy(t, pol)
	ctx := context.Background()
	conn, err := connectReplica(ctx, p.pgAddr, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE age > 30").Scan(&n); err != nil {
		t.Fatal(err)
	}
	fw.Close()
	start := time.Now()
	rows, err := conn.Query(ctx, "SELECT COUNT(*) FROM people WHERE age > 31")
	got := 0
	if err == nil {
		for rows.Next() {
			got++
		}
		rows.Close()
		err = rows.Err()
	}
	if sqlState(err) != "08006" || got != 0 {
		t.Fatalf("query with the ledger unreachable: %d rows, %v; want no row and 08006", got, err)
	}
	t.Logf("refused in %v: %v", time.Since(start), err)
	// The ledger charged only the first query.
	l, err := pgledger.Open(ctx, s.dsn, pgledger.Options{Schema: s.schema, Replica: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if sp, _ := l.Spent("analyst", "census"); sp.Epsilon != 0.1 {
		t.Errorf("spent %v, want 0.1 (the query before the outage only)", sp.Epsilon)
	}
	if err := l.Check(ctx); err != nil {
		t.Error(err)
	}
}
