package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// benchTable is a small private table on the PostgreSQL at
// DDP_TEST_POSTGRES_DSN, served by the proxy to user bencher (password
// bench-pw) as dataset bench, for the benchmarks and the pgbench test.
type benchTable struct {
	p     *proxy
	stop  func() error
	name  string // the table
	dir   string // the test's directory (policy, ledger)
	pgURL string // bencher's connection URL to the proxy
}

// serveBenchTable creates person_id, age, sex over rows rows (a primary
// key on person_id when primaryKey, which lets the backend skip the
// per-unit window), dropped when the test ends, and serves it with a
// budget of epsilon; backendExtra is added to the policy's backend map.
// It skips without the DSN and fails when the server is unreachable.
func serveBenchTable(tb testing.TB, rows int, primaryKey bool, epsilon, backendExtra string) *benchTable {
	tb.Helper()
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		tb.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping a test that serves a PostgreSQL table")
	}
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("DDP_TEST_POSTGRES_DSN is set but unreachable: %v", err)
	}
	defer db.Close(ctx)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	table := "bench_" + hex.EncodeToString(suffix)
	create := fmt.Sprintf(`CREATE TABLE %[1]s AS
		SELECT i AS person_id, (18 + (i * 7919) %% 73)::int AS age, CASE WHEN i %% 3 = 0 THEN 'F' ELSE 'M' END AS sex
		FROM generate_series(1, %[2]d) AS i`, table, rows)
	if primaryKey {
		create += fmt.Sprintf("; ALTER TABLE %s ADD PRIMARY KEY (person_id)", table)
	}
	if _, err := db.Exec(ctx, create); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), dsn); err == nil {
			_, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
			c.Close(context.Background())
		}
	})
	dir := tb.TempDir()
	tb.Setenv("DDP_BENCH_TABLE_PASSWORD", "bench-pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: postgres, dsn: %q%s}
listen: {postgres: "127.0.0.1:0", mysql: "off"}
ledger: {path: ledger.db}
users:
  - name: bencher
    password_env: DDP_BENCH_TABLE_PASSWORD
    budgets: {bench: {epsilon: %s}}
datasets:
  bench:
    tables:
      %s:
        unit: person_id
        columns:
          age: {type: integer, bounds: [0, 120]}
          sex: {type: text, domain: {values: [F, M]}}
`, dsn, backendExtra, epsilon, table)))
	if err != nil {
		tb.Fatal(err)
	}
	// Logging as serve does by default (info: one line per private query,
	// with its fingerprint), formatted and thrown away, so benchmarks
	// include that cost.
	p, stop := servePolicyLog(tb, pol, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &benchTable{p: p, stop: stop, name: table, dir: dir,
		pgURL: fmt.Sprintf("postgres://bencher:bench-pw@%s/bench?sslmode=disable", p.pgAddr)}
}
