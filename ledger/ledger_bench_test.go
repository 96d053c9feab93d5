package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// BenchmarkCheckpoint is what a checkpoint costs per fresh answer (a
// reservation and the commit that stores its release) in a ledger that
// already holds 200,000 releases: log records as Charge and
// CommitDeferred make them (random 64-byte cache keys, 300-byte
// releases) applied to the bbolt file in checkpoints of 8,192 answers,
// each one durable bbolt transaction. One op is one answer.
var benchCk = checkpointRecords / 2

func BenchmarkCheckpoint(b *testing.B) {
	const existing = 200_000
	perCk := benchCk // answers per checkpoint (two records each)
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"), Options{checkpointEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	// One real charge and commit, whose records are the templates.
	l.ckMu.Lock()
	r, err := l.Charge(context.Background(), budget.Charge{User: "bench", Dataset: "bench", Cost: eps(0.01),
		Query: "SELECT sex, COUNT(*) FROM ft WHERE age <> -123456 GROUP BY sex"}, eps(1e12))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.CommitDeferred("template", make([]byte, 300)); err != nil {
		b.Fatal(err)
	}
	if err := l.wal.sync(); err != nil {
		b.Fatal(err)
	}
	tmpl := l.wal.through(l.wal.written)
	l.ckMu.Unlock()
	if len(tmpl) != 2 {
		b.Fatalf("%d template records, want 2", len(tmpl))
	}
	// Ids and LSNs far above the template's (Close applies it).
	lsn, id := uint64(1_000_000), uint64(1_000_000)
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, 64)
		for i := range k {
			k[i] = "0123456789abcdef"[rng.IntN(16)]
		}
		return k
	}
	batch := make([]*logRecord, 0, 2*perCk)
	add := func() {
		id++
		res, com := *tmpl[0], *tmpl[1]
		res.id, com.id = id, id
		res.lsn, com.lsn = lsn+1, lsn+2
		lsn += 2
		com.key = key()
		// Charged and stored in order, a tenth of a millisecond apart
		// (about the proxy's rate at 64 clients).
		res.time = tmpl[0].time.Add(time.Duration(id) * 100 * time.Microsecond)
		com.time = res.time
		batch = append(batch, &res, &com)
	}
	flush := func() {
		if err := l.applyLogged(batch, lsn); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range existing {
		add()
		if (i+1)%perCk == 0 {
			flush()
		}
	}
	flush()
	b.ReportAllocs()
	cpu0, st0 := cpuTime(b), l.db.Stats().TxStats
	n := 0
	for b.Loop() {
		add()
		if n++; n%perCk == 0 {
			flush()
		}
	}
	flush()
	// The process's CPU time: what the machine's other work and the
	// disk's latency disturb less than the wall clock.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(n), "cpu-µs/op")
	st := l.db.Stats().TxStats
	b.ReportMetric(float64(st.GetWrite()-st0.GetWrite())/float64(n), "pwrites/op")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
