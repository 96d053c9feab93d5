// Package cpubench adds a CPU-time metric to benchmarks. On a shared
// machine wall-clock ns/op mostly measures waiting for a core; the
// process's CPU time over the loop is what an operation costs. Test code
// only (parser, planner and cmd/ddp-proxy benchmarks use it).
package cpubench

import "testing"

// Report starts measuring and returns the function that reports
// cpu-µs/op: the process's user+system CPU time (GC included) over the
// benchmark's loop per iteration. Call it before the loop and defer the
// result: defer cpubench.Report(b)(). Where the platform has no
// getrusage, nothing is reported.
func Report(b *testing.B) func() {
	b.Helper()
	start, ok := processCPU(b)
	return func() {
		if !ok || b.N == 0 {
			return
		}
		end, _ := processCPU(b)
		b.ReportMetric(float64((end-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
