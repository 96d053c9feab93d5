package pgledger

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// TestUnreachableFailsClosed: when the ledger database goes away, Reserve
// charges nothing and fails with LedgerUnavailable (08006); so does
// Lookup, and so does Open.
func TestUnreachableFailsClosed(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	relay, relayed := startRelay(t, dsn)
	l, err := Open(ctx, relayed, Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Reserve(ctx, "u", "d", eps(0.1), eps(1)); err != nil {
		t.Fatal(err)
	}
	relay.stop()
	start := time.Now()
	_, err = l.Reserve(ctx, "u", "d", eps(0.1), eps(1))
	if !sqlerr.HasCode(err, sqlerr.LedgerUnavailable) || sqlerr.As(err).Code.SQLState != "08006" {
		t.Fatalf("Reserve on an unreachable ledger: %v, want LedgerUnavailable 08006", err)
	}
	if d := time.Since(start); d > 2*defaultConnectTimeout {
		t.Errorf("the refusal took %v", d)
	}
	if _, _, err := l.Lookup("k"); !sqlerr.HasCode(err, sqlerr.LedgerUnavailable) {
		t.Errorf("Lookup: %v", err)
	}
	if _, err := l.Flight(ctx, "k"); !sqlerr.HasCode(err, sqlerr.LedgerUnavailable) {
		t.Errorf("Flight: %v", err)
	}
	if _, err := Open(ctx, relayed, Options{Schema: schema}); err == nil {
		t.Error("Open on an unreachable database succeeded")
	}
	// Through the direct address, the ledger holds exactly the first charge.
	d := openTest(t, dsn, schema, "check")
	if s, _ := d.Spent("u", "d"); s.Epsilon != 0.1 {
		t.Errorf("Spent = %v, want 0.1", s)
	}
}

// TestSilentLedgerFailsClosed: a ledger database that stops answering
// (packets dropped: no error, no reset) fails Reserve and Lookup with
// LedgerUnavailable after the statement timeout.
func TestSilentLedgerFailsClosed(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	fw := blackhole.Start(t, target)
	relayed := strings.Replace(dsn, target, fw.Addr, 1)
	if relayed == dsn {
		t.Skip("cannot rewrite the host:port of DDP_TEST_POSTGRES_DSN")
	}
	l, err := Open(ctx, relayed, Options{Schema: schema, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { fw.Thaw(); l.Close() }()
	fw.Freeze()
	start := time.Now()
	_, err = l.Reserve(ctx, "u", "d", eps(0.1), eps(1))
	if !sqlerr.HasCode(err, sqlerr.LedgerUnavailable) {
		t.Fatalf("Reserve on a silent ledger: %v", err)
	}
	if _, _, err := l.Lookup("k"); !sqlerr.HasCode(err, sqlerr.LedgerUnavailable) {
		t.Errorf("Lookup on a silent ledger: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v with a 1 s statement timeout", d)
	}
	// (Nothing to assert about the charge: a statement the database
	// received before it went silent may still commit, and then stays
	// charged; the invariants are checked when the test ends.)
	_ = openTest(t, dsn, schema, "check")
}
