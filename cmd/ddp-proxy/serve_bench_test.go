package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// BenchmarkPrivateAnswer measures a private aggregate over 100 rows through
// the proxy's PostgreSQL front end, with a real PostgreSQL backend and a
// ledger on the test's temporary directory (its disk). fresh: a new WHERE
// literal each time, so a charged release (reservation fsync, backend
// statement, noise, deferred commit); cached: the same query, answered
// from the ledger. bench/pgbench.sh compares the same with direct access
// and PgBouncer; this measures the proxy alone, with allocations.
func BenchmarkPrivateAnswer(b *testing.B) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("DDP_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatalf("DDP_TEST_POSTGRES_DSN is set but unreachable: %v", err)
	}
	defer db.Close(ctx)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	table := "perf_bench_" + hex.EncodeToString(suffix)
	if _, err := db.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s AS
		SELECT i AS person_id, (18 + (i * 7919) %% 73)::int AS age, CASE WHEN i %% 3 = 0 THEN 'F' ELSE 'M' END AS sex
		FROM generate_series(1, 100) AS i; ALTER TABLE %[1]s ADD PRIMARY KEY (person_id)`, table)); err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = db.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) }()
	dir := b.TempDir()
	b.Setenv("DDP_PERF_BENCH_PASSWORD", "bench-pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: postgres, dsn: %q, max_open_conns: 8}
listen: {postgres: "127.0.0.1:0", mysql: "off"}
ledger: {path: ledger.db}
users:
  - name: bencher
    password_env: DDP_PERF_BENCH_PASSWORD
    budgets: {bench: {epsilon: 1000000000}}
datasets:
  bench:
    tables:
      %s:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
`, dsn, table)))
	if err != nil {
		b.Fatal(err)
	}
	p, _ := servePolicy(b, pol)
	url := fmt.Sprintf("postgres://bencher:bench-pw@%s/bench?sslmode=disable", p.pgAddr)
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
			for b.Loop() {
				if err := query(c, fresh); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
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
