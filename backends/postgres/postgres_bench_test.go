package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ddp-proxy/ddp-proxy/backends"
	"github.com/ddp-proxy/ddp-proxy/ir"
)

// BenchmarkStatement measures the engine's price of one backend statement
// with a bound argument, as a fresh private answer runs it: checkout, the
// statement, its rows. With no ping at checkout and lib/pq's
// parse/bind/execute sent together it is one round trip (was three).
func BenchmarkStatement(b *testing.B) {
	dsn := testDSN(b)
	table, _ := people(b)
	ctx := context.Background()
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

// BenchmarkAggregate measures a fresh private answer's backend statement
// (a small GROUP BY with a new bound literal each time) as the release
// step runs it: read straight from lib/pq as New sets it up ("direct"),
// also with the statement prepared once per connection ("prepared", not
// on by default, see CacheStatements) and through database/sql as before
// ("database-sql"). Besides the wall time it reports the CPU spent per query by
// this process (proxy-µs/op) and by the PostgreSQL processes on this
// machine (server-µs/op; meaningful only when the server is local and
// otherwise idle), which share the cores in a typical deployment.
func BenchmarkAggregate(b *testing.B) {
	dsn := testDSN(b)
	table, raw := people(b)
	ctx := context.Background()
	for _, mode := range []struct {
		name             string
		direct, prepared bool
	}{{"prepared", true, true}, {"direct", true, false}, {"database-sql", false, false}} {
		app := "ddp_bench_" + mode.name + "_" + suffix()
		be, err := Open(ctx, withApp(dsn, app), backends.Options{MaxOpenConns: 8, StatementTimeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		be.ReadAggregatesDirectly(mode.direct)
		if mode.prepared {
			be.CacheStatements(StatementCacheSize, Replan)
		}
		run := func(b *testing.B, i int64) {
			q := &ir.BackendQuery{
				From:    ir.TableRef{Name: table, Alias: "t"},
				Where:   ir.Compare{Op: ir.OpNe, L: ir.ColumnRef{Qualifier: "t", Name: "age"}, R: ir.Literal{Value: ir.Int(-i)}},
				GroupBy: []ir.Expr{ir.ColumnRef{Qualifier: "t", Name: "sex"}},
				Aggs:    []ir.BackendAgg{{Kind: ir.CountRows}},
			}
			n := 0
			// A cancellable context per statement, as the front ends
			// give every query (a client's CancelRequest cancels it).
			qctx, cancel := context.WithCancel(ctx)
			defer cancel()
			err := be.Aggregate(qctx, q, func(ir.BackendRow) error {
				n++
				return nil
			})
			if err != nil || n != 2 {
				b.Fatalf("%d groups, %v; want 2", n, err)
			}
		}
		b.Run(mode.name+"/sequential", func(b *testing.B) {
			b.ReportAllocs()
			m := startCPU(b, raw, app)
			var i int64
			for b.Loop() {
				i++
				run(b, i)
			}
			m.report(b)
		})
		b.Run(mode.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			m := startCPU(b, raw, app)
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					run(b, next.Add(1))
				}
			})
			m.report(b)
		})
		be.Close()
	}
}

// cpuMeter reads the CPU time of this process and of the PostgreSQL
// backend processes serving the pool (found by application_name; the
// server must be local, with Linux's /proc).
type cpuMeter struct {
	raw    *sql.DB
	app    string
	self   time.Duration
	server time.Duration
}

func startCPU(b *testing.B, raw *sql.DB, app string) cpuMeter {
	b.Helper()
	m := cpuMeter{raw: raw, app: app, self: selfCPU(b)}
	m.server = m.serverCPU(b)
	return m
}

func (m cpuMeter) report(b *testing.B) {
	n := float64(b.N)
	b.ReportMetric(float64((selfCPU(b)-m.self).Microseconds())/n, "proxy-µs/op")
	b.ReportMetric(float64((m.serverCPU(b)-m.server).Microseconds())/n, "server-µs/op")
}

func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU sums the user and system time of the pool's backend
// processes, in clock ticks of 10 ms.
func (m cpuMeter) serverCPU(b *testing.B) time.Duration {
	rows, err := m.raw.Query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", m.app)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var ticks int64
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // a remote server: nothing to read
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		// After the command, state is field 3; utime and stime are 14, 15.
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + k
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// withApp sets the application_name of a postgres:// DSN.
func withApp(dsn, app string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn + " application_name=" + app
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}
