//go:build unix

package parser

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds a cpu-µs/op metric: the process's user+system CPU time
// over the benchmark's loop (GC included) per iteration. On a shared
// machine wall-clock ns/op mostly measures waiting for a core; CPU time
// is what a query costs. Call it before the loop and defer the result.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
