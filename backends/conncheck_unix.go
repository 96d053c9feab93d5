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
	if k.raw == nil {
		sc, ok := k.Conn.(syscall.Conn)
		if !ok {
			return false
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return true
		}
		k.raw = raw
		k.peek = k.peekFD
	}
	k.bad = false
	err := k.raw.Read(k.peek)
	return k.bad || err != nil
}

// peekFD is stale's look at the socket; it sets k.bad. A method value
// kept on the socket, with the socket's RawConn: a check allocates
// nothing.
func (k *socket) peekFD(fd uintptr) bool {
	var buf [1]byte
	n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	for errors.Is(err, syscall.EINTR) {
		n, _, err = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	}
	switch {
	case n > 0: // unasked data: an error report before a close
		k.bad = true
	case err == nil: // n == 0: the peer closed
		k.bad = true
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK):
		// Nothing to read: the connection is idle and open.
	default:
		k.bad = true
	}
	return true
}
