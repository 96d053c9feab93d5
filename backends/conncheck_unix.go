//go:build unix

package backends

import (
	"errors"
	"syscall"
)

// stale reports whether an idle pooled connection can no longer carry a
// statement: the server closed it (a restart, an administrator's
// pg_terminate_backend, an idle timeout) or sent something unasked, which
// a clean idle connection never has. It peeks at the socket without
// blocking or consuming anything: one system call instead of a round trip
// (what go-sql-driver/mysql's connCheck and pgconn's CheckConn do).
// Connections whose socket cannot be inspected count as fresh.
func (k *socket) stale() bool {
	sc, ok := k.Conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var bad bool
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		for errors.Is(rerr, syscall.EINTR) {
			n, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		}
		switch {
		case n > 0: // unasked data: an error report before a close
			bad = true
		case rerr == nil: // n == 0: the peer closed
			bad = true
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK):
			// Nothing to read: the connection is idle and open.
		default:
			bad = true
		}
		return true
	})
	return bad || err != nil
}
