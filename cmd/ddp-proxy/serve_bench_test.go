package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/internal/cpubench"
)

// BenchmarkPrivateAnswer measures a private aggregate over 100 rows through
// the proxy's PostgreSQL front end, with a real PostgreSQL backend and a
// ledger on the test's temporary directory (its disk). fresh: a new WHERE
// literal each time, so a charged release (reservation fsync, backend
// statement, noise, deferred commit); cached: the same query, answered
// from the ledger. bench/pgbench.sh compares the same with direct access
// and PgBouncer; this measures the proxy alone, with allocations.
func BenchmarkPrivateAnswer(b *testing.B) {
	bt := serveBenchTable(b, 100, true, "1000000000", ", max_open_conns: 8")
	ctx, table, url := context.Background(), bt.name, bt.pgURL
	connect := func() (*pgx.Conn, error) {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			return nil, err
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		return pgx.ConnectConfig(ctx, cfg)
	}
	var next atomic.Int64
	// query returns an error instead of failing: RunParallel's goroutines
	// must not call b.Fatal.
	query := func(c *pgx.Conn, fresh bool) error {
		lit := int64(-1)
		if fresh {
			lit = -2 - next.Add(1)
		}
		rows, err := c.Query(ctx, fmt.Sprintf("SELECT sex, COUNT(*) FROM %s WHERE age <> %d GROUP BY sex", table, lit))
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil || n != 2 {
			return fmt.Errorf("%d groups, %v; want 2", n, err)
		}
		return nil
	}
	for _, fresh := range []bool{true, false} {
		name := map[bool]string{true: "fresh", false: "cached"}[fresh]
		b.Run(name+"/sequential", func(b *testing.B) {
			c, err := connect()
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			b.ReportAllocs()
			defer cpubench.Report(b)()
			for b.Loop() {
				if err := query(c, fresh); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			defer cpubench.Report(b)()
			b.SetParallelism(4) // 8 clients on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				c, err := connect()
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close(ctx)
				for pb.Next() {
					if err := query(c, fresh); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
