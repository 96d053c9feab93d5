package pgwire

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// benchQuery runs one query per iteration over pgx against a fake
// session, one connection per parallel goroutine. It measures the wire
// layer plus pgx: the session's work is a constant result.
func benchQuery(b *testing.B, mode pgx.QueryExecMode, sql string, args ...any) {
	ts := startServer(b, Config{})
	cfg, err := pgx.ParseConfig(ts.url("trusty", "", ""))
	if err != nil {
		b.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close(ctx)
		var i int64
		var label string
		for pb.Next() {
			rows, err := conn.Query(ctx, sql, args...)
			if err != nil {
				b.Error(err)
				return
			}
			for rows.Next() {
				if err := rows.Scan(&i, &label); err != nil {
					b.Error(err)
					return
				}
			}
			if err := rows.Err(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkSimpleQuery(b *testing.B) {
	benchQuery(b, pgx.QueryExecModeSimpleProtocol, "one")
}

func BenchmarkExtendedQuery(b *testing.B) {
	benchQuery(b, pgx.QueryExecModeCacheStatement, "echo int8 text", int64(7), "seven")
}
