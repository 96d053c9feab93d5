package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// findPgbench returns the pgbench command, or skips (fails under CI, where
// .ci/run installs it). On Debian /usr/bin/pgbench is a wrapper that exists
// without the real binary, so it must also run.
func findPgbench(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("pgbench")
	if err == nil {
		err = exec.Command(path, "--version").Run()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgbench is not usable under CI (.ci/run installs it with the postgresql package): %v", err)
		}
		t.Skipf("pgbench is not installed (Debian: apt-get install postgresql): %v", err)
	}
	return path
}

// TestPgbenchCustomScript drives the proxy with pgbench and a custom
// aggregate script (-f) in the simple, extended and prepared protocols,
// two clients each, against a real PostgreSQL backend. Each client uses
// its own WHERE literal, so each mode releases exactly two distinct
// queries: every transaction must succeed, and the ledger must have
// charged exactly 6 × ε — repeats are answered from the ledger for free.
func TestPgbenchCustomScript(t *testing.T) {
	dsn := os.Getenv("DDP_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("DDP_TEST_POSTGRES_DSN is not set: skipping the pgbench test")
	}
	pgbench := findPgbench(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("DDP_TEST_POSTGRES_DSN is set but unreachable: %v", err)
	}
	defer db.Close(ctx)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	table := "pgserve_bench_" + hex.EncodeToString(suffix)
	if _, err := db.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s AS
		SELECT i AS person_id, (18 + (i * 7919) %% 73)::int AS age, CASE WHEN i %% 3 = 0 THEN 'F' ELSE 'M' END AS sex
		FROM generate_series(1, 500) AS i`, table)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })

	dir := t.TempDir()
	t.Setenv("DDP_PGSERVE_BENCH_PASSWORD", "bench-pw")
	pol, err := policies.LoadBytes(filepath.Join(dir, "policy.yaml"), []byte(fmt.Sprintf(`version: 1
backend: {driver: postgres, dsn: %q}
listen: {postgres: "127.0.0.1:0", mysql: "off"}
ledger: {path: ledger.db}
users:
  - name: bencher
    password_env: DDP_PGSERVE_BENCH_PASSWORD
    budgets: {bench: {epsilon: 100}}
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
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	p, err := startProxy(sctx, pol, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := p.wait(sctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	host, port, _ := strings.Cut(p.pgAddr, ":")

	for i, mode := range []string{"simple", "extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			script := filepath.Join(dir, mode+".sql")
			// :client_id is 0 or 1: two distinct literals per mode, and
			// the offset keeps the modes' queries apart.
			body := fmt.Sprintf("\\set a %d + :client_id\nSELECT sex, COUNT(*), AVG(age) FROM %s WHERE age <> :a GROUP BY sex;\n", 1000*(i+1), table)
			if err := os.WriteFile(script, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(pgbench, "-n", "-M", mode, "-f", script, "-c", "2", "-j", "2", "-t", "15",
				"-h", host, "-p", port, "-U", "bencher", "test")
			cmd.Env = append(os.Environ(), "PGPASSWORD=bench-pw", "PGSSLMODE=disable")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pgbench -M %s: %v\n%s", mode, err, out)
			}
			if !regexp.MustCompile(`number of transactions actually processed: 30/30`).Match(out) {
				t.Fatalf("pgbench -M %s did not complete 30 transactions:\n%s", mode, out)
			}
			if m := regexp.MustCompile(`number of failed transactions: (\d+)`).FindSubmatch(out); m != nil && string(m[1]) != "0" {
				t.Fatalf("pgbench -M %s: %s failed transactions:\n%s", mode, m[1], out)
			}
		})
	}
	acct, err := p.ledger.Account(context.Background(), "bencher", "bench")
	if err != nil {
		t.Fatal(err)
	}
	spent := acct.Spent
	// 3 modes × 2 distinct queries × the default ε 0.1.
	if spent.Epsilon < 0.6-1e-9 || spent.Epsilon > 0.6+1e-9 {
		t.Fatalf("spent ε = %v after 90 transactions of 6 distinct queries, want exactly 0.6", spent.Epsilon)
	}
}
