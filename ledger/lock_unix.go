//go:build !windows && !plan9 && !solaris && !aix && !android

package ledger

import (
	"errors"
	"os"
	"syscall"
	"time"

	berrors "go.etcd.io/bbolt/errors"
)

// lockFile takes the exclusive advisory lock bbolt takes, on the same open
// file, so that the file is verified while no other process writes it.
// bbolt then locks the same file description again, which succeeds at once.
// It polls like bbolt (every 50ms, giving up one poll early) and reports a
// timeout with bbolt's error, so Open words it the same way.
func lockFile(f *os.File, timeout time.Duration) error {
	const retry = 50 * time.Millisecond
	start := time.Now()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Since(start) > timeout-retry {
			return berrors.ErrTimeout
		}
		time.Sleep(retry)
	}
}
