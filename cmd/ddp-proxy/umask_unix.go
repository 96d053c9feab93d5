//go:build unix

package main

import "syscall"

// umask sets the process's file mode mask and returns the previous one
// (the ledger socket is created 0600 from the start, not chmod-ed later).
func umask(m int) int { return syscall.Umask(m) }
