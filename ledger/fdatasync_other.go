//go:build !linux

package ledger

import "os"

func fdatasyncFile(f *os.File) error { return f.Sync() }
