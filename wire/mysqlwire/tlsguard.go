package mysqlwire

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"reflect"

	"github.com/dolthub/vitess/go/mysql"
)

// installGuard puts a guard above the TLS connection of c, so that the
// limits apply to the decrypted packets; the guard under TLS, which only
// sees ciphertext, lifts its pre-authentication budget. Plain connections
// keep the guard the listener gave them.
//
// Vitess reads a connection through a buffered reader it keeps private and
// re-points at the TLS connection during its handshake; nothing exported
// lets a caller put a reader in between. The reader is reached here with
// reflect (Value.UnsafePointer), on the pinned Vitess version; any mismatch
// (field gone, other type) fails closed: the connection is refused, and
// TestOversizedCommandTLS fails. Bytes the client sent ahead and Vitess
// already buffered are replayed through the new guard, so nothing escapes
// it.
func (s *Server) installGuard(c *mysql.Conn) error {
	tc, ok := c.Conn.(*tls.Conn)
	if !ok {
		return nil
	}
	br, err := vitessReader(c)
	if err != nil {
		return err
	}
	var src io.Reader = tc
	if n := br.Buffered(); n > 0 {
		early, err := br.Peek(n)
		if err != nil {
			return err
		}
		src = io.MultiReader(bytes.NewReader(bytes.Clone(early)), tc)
	}
	g := newGuard(tc, src, s.cfg.MaxPacket, true, s.log)
	br.Reset(g)
	c.Conn = g
	if lower, ok := tc.NetConn().(*guard); ok {
		lower.lift()
	}
	return nil
}

// vitessReader returns the buffered reader Vitess reads c through.
func vitessReader(c *mysql.Conn) (*bufio.Reader, error) {
	f := reflect.ValueOf(c).Elem().FieldByName("bufferedReader")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*bufio.Reader]() {
		return nil, errors.New("mysqlwire: mysql.Conn has no bufferedReader *bufio.Reader (Vitess changed): the packet guard cannot be installed over TLS")
	}
	br := (*bufio.Reader)(f.UnsafePointer())
	if br == nil {
		return nil, errors.New("mysqlwire: mysql.Conn.bufferedReader is nil")
	}
	return br, nil
}
