package release_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/blackhole"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/ledger/pgledger"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/release"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// countingBackend counts the backend calls that could read private data.
type countingBackend struct {
	planner.Backend
	n *atomic.Int64
}

func (b countingBackend) Aggregate(ctx context.Context, q *ir.BackendQuery, fn func(ir.BackendRow) error) error {
	b.n.Add(1)
	return b.Backend.Aggregate(ctx, q, fn)
}

// pgLedgerSchema opens a fresh schema of the PostgreSQL ledger (skips
// without DDP_TEST_POSTGRES_DSN) and returns the DSN, relayed through a
// forwarder the test can cut, and the schema.
func pgLedgerSchema(t *testing.T) (dsn, relayed, schema string, fw *blackhole.Forwarder) {
	t.Helper()
	dsn = os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping the shared-ledger engine tests")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema = "pgledger_r_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			conn.Close(context.Background())
		}
	})
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	fw = blackhole.Start(t, target)
	relayed = strings.Replace(dsn, target, fw.Addr, 1)
	if relayed == dsn {
		t.Skip("cannot rewrite the host:port of DDP_TEST_POSTGRES_DSN")
	}
	return dsn, relayed, schema, fw
}

// TestSharedLedgerEngines: two engines (two replicas) on one PostgreSQL
// ledger answer an identical query sent to both at once with one charge
// and one value; when the ledger becomes unreachable, a fresh query is
// refused with 08006 before any backend call.
func TestSharedLedgerEngines(t *testing.T) {
	dsn, relayed, schema, fw := pgLedgerSchema(t)
	f := newFixture(t, t.TempDir())
	ctx := context.Background()
	var calls atomic.Int64
	be := countingBackend{f.be, &calls}
	var engines []*release.Engine
	var ledgers []*pgledger.Ledger
	for i := range 2 {
		l, err := pgledger.Open(ctx, relayed, pgledger.Options{Schema: schema, Replica: fmt.Sprint("r", i)})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ledgers = append(ledgers, l)
		engines = append(engines, release.New(be, l, release.Options{}))
	}
	const q = "SELECT COUNT(*) FROM people WHERE age > 40"
	var wg sync.WaitGroup
	results := make([]*release.Result, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, pl := f.plan(t, "alice", q, 0.5)
			res, err := engines[i%2].Run(ctx, u, pl)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	fresh := 0
	for _, r := range results {
		if r == nil {
			t.FailNow()
		}
		if !r.Cached {
			fresh++
		}
		if fmt.Sprint(r.Rows) != fmt.Sprint(results[0].Rows) {
			t.Errorf("answers differ: %v and %v", r.Rows, results[0].Rows)
		}
	}
	if fresh != 1 {
		t.Errorf("%d fresh answers, want 1", fresh)
	}
	if s, _ := ledgers[0].Spent("alice", f.pol.DatasetNames[0]); s.Epsilon != 0.5 {
		t.Errorf("spent %v, want 0.5 (one charge)", s.Epsilon)
	}

	fw.Close()
	before := calls.Load()
	u, pl := f.plan(t, "alice", "SELECT COUNT(*) FROM people WHERE age > 41", 0.5)
	_, err := engines[1].Run(ctx, u, pl)
	if !sqlerr.HasCode(err, sqlerr.LedgerUnavailable) || sqlerr.As(err).Code.SQLState != "08006" {
		t.Fatalf("with the ledger unreachable: %v, want 08006", err)
	}
	if n := calls.Load() - before; n != 0 {
		t.Errorf("%d backend calls with the ledger unreachable, want none", n)
	}
	check, err := pgledger.Open(ctx, dsn, pgledger.Options{Schema: schema, Replica: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if err := check.Check(ctx); err != nil {
		t.Error(err)
	}
}
