//go:build !unix

package cpubench

import (
	"testing"
	"time"
)

// processCPU is not measured where getrusage is missing.
func processCPU(*testing.B) (time.Duration, bool) { return 0, false }
