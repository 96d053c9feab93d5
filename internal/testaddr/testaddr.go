// Package testaddr gives tests loopback addresses: one nothing listens
// on, for a server that is down or a listener a test starts itself.
package testaddr

import (
	"net"
	"testing"
)

// Free returns a loopback TCP address no one listens on (now): its port
// was just given by the kernel and released.
func Free(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
