package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
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
