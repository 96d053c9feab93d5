//go:build unix

package cpubench

import (
	"syscall"
	"testing"
	"time"
)

func processCPU(b *testing.B) (time.Duration, bool) {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
