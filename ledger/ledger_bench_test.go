package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// BenchmarkReserveCommit measures one charged answer: two fsynced
// transactions (reserve, then commit with a 1 KiB release). The fsyncs
// dominate; the numbers mostly measure the disk.
func BenchmarkReserveCommit(b *testing.B) {
	release := make([]byte, 1024)
	limit := eps(1e12)
	open := func(b *testing.B) *Ledger {
		b.Helper()
		l, err := Open(filepath.Join(b.TempDir(), "ledger.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := l.Check(); err != nil {
				b.Error(err)
			}
			_ = l.Close()
		})
		return l
	}

	b.Run("sequential", func(b *testing.B) {
		l := open(b)
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r, err := l.Reserve(ctx, "ann", "census", eps(0.01), limit)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Commit(fmt.Sprintf("q%d", i), release); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})

	// What the proxy does for a fresh answer: the commit record rides on
	// the next reservation, so one fsync per answer.
	b.Run("sequential-deferred", func(b *testing.B) {
		l := open(b)
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r, err := l.Reserve(ctx, "ann", "census", eps(0.01), limit)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.CommitDeferred(fmt.Sprintf("q%d", i), release); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})

	// The disk's price of one durable write, for comparison: a 4 KiB
	// page rewritten and fdatasync'ed (what one bbolt commit costs at
	// least).
	b.Run("fdatasync", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		page := make([]byte, 4096)
		for b.Loop() {
			if _, err := f.WriteAt(page, 0); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("parallel", func(b *testing.B) {
		l := open(b)
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				i := next.Add(1)
				// Several users, as on a real proxy; writers still
				// serialise on bbolt's single writer lock.
				user := fmt.Sprintf("user%d", i%8)
				r, err := l.Reserve(ctx, user, "census", eps(0.01), limit)
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := r.Commit(fmt.Sprintf("q%d", i), release); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkFreshAnswers64 is the ledger's part of a fresh answer (charge,
// deferred commit) from 64 concurrent clients, as at pgbench's 64: the
// log's group commit shares each fdatasync among the clients waiting.
// Reports the fdatasyncs per answer.
func BenchmarkFreshAnswers64(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	limit := eps(1e9)
	release := make([]byte, 200)
	var next atomic.Int64
	b.SetParallelism(32) // × GOMAXPROCS goroutines
	b.ReportAllocs()
	syncs := l.wal.syncs.Load()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := next.Add(1)
			r, err := l.Charge(ctx, budget.Charge{User: fmt.Sprintf("user%d", i%8), Dataset: "census", Cost: eps(0.01),
				Query: "SELECT sex, COUNT(*) FROM people WHERE age <> 42 GROUP BY sex", Overlap: true}, limit)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := r.CommitDeferred(fmt.Sprintf("q%d", i), release); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(l.wal.syncs.Load()-syncs)/float64(b.N), "fdatasyncs/answer")
}
