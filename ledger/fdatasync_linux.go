package ledger

import (
	"os"
	"syscall"
)

// fdatasyncFile flushes f's data without its timestamps (what bbolt uses
// on Linux too).
func fdatasyncFile(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
