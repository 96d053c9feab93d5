package pgledger

import (
	"fmt"
	"os"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// BenchmarkFreshRelease measures what a fresh answer costs the PostgreSQL
// ledger: lookup, Flight, lookup, Charge, CommitDeferred, Remaining,
// unlock; all clients on one account (their charges queue on its row
// lock, one commit each), or each client on its own.
func BenchmarkFreshRelease(b *testing.B) {
	b.Run("one-account", func(b *testing.B) { benchFresh(b, false) })
	b.Run("account-per-client", func(b *testing.B) { benchFresh(b, true) })
}

func benchFresh(b *testing.B, ownAccount bool) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("DDP_TEST_POSTGRES_DSN is not set")
	}
	schema := fmt.Sprintf("pgledger_b_%d_%t", b.N, ownAccount)
	l, err := Open(ctx, dsn, Options{Schema: schema, Replica: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_, _ = l.pool.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		l.Close()
	}()
	limit := budget.Budget{Epsilon: 1e12}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		user := "u"
		if ownAccount {
			user = fmt.Sprintf("u-%p", pb)
		}
		for pb.Next() {
			i++
			key := fmt.Sprintf("k-%p-%d", pb, i)
			if _, ok, err := l.Release(ctx, key); err != nil || ok {
				b.Fatal(err)
			}
			unlock, err := l.Flight(ctx, key)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := l.Release(ctx, key); err != nil {
				b.Fatal(err)
			}
			r, err := l.Charge(ctx, budget.Charge{User: user, Dataset: "d", Cost: budget.Budget{Epsilon: 0.1}, Release: key}, limit)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.CommitDeferred(key, []byte("release")); err != nil {
				b.Fatal(err)
			}
			if _, err := l.Remaining(ctx, user, "d", limit); err != nil {
				b.Fatal(err)
			}
			unlock()
		}
	})
}
