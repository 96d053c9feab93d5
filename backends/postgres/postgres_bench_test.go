package postgres

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// BenchmarkStatement measures the engine's price of one backend statement
// with a bound argument, as a fresh private answer runs it: checkout, the
// statement, its rows. With no ping at checkout and lib/pq's
// parse/bind/execute sent together it is one round trip (was three).
func BenchmarkStatement(b *testing.B) {
	dsn := testDSNB(b)
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	table := "perf_bench_stmt_" + suffix()
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, `CREATE TABLE `+table+` AS
		SELECT i AS person_id, (18 + (i * 7919) % 73)::int AS age, CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END AS sex
		FROM generate_series(1, 100) AS i`); err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = raw.ExecContext(ctx, "DROP TABLE IF EXISTS "+table) }()
	be, err := Open(ctx, dsn, backends.Options{MaxOpenConns: 8})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	q := "SELECT sex, COUNT(*) FROM " + table + " WHERE age <> $1 GROUP BY sex"
	run := func(b *testing.B, i int64) {
		n := 0
		err := be.Rows(ctx, q, []ir.Value{ir.Int(-i)}, func([]string, []ir.Value) error {
			n++
			return nil
		})
		if err != nil || n != 2 {
			b.Fatalf("%d groups, %v; want 2", n, err)
		}
	}
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		var i int64
		for b.Loop() {
			i++
			run(b, i)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var i int64
			for pb.Next() {
				i++
				run(b, i)
			}
		})
	})
}

func testDSNB(b *testing.B) string {
	b.Helper()
	dsn := envDSN()
	if dsn == "" {
		b.Skipf("%s is not set", dsnEnv)
	}
	return dsn
}
