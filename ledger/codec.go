package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Records are written in a compact binary form that starts with a tag byte
// (recordBinary); files written before it hold JSON records, which start
// with '{' and are still read (records_json.go). Both forms may sit in one
// file: a record is rewritten in binary the next time it changes. The
// binary form exists for CPU, not space: encoding and decoding the JSON
// form and reparsing its decimal rationals was half of the ledger's own
// work per charge. `ddp-proxy ledger export` prints every record readably.
//
// Layout after the tag (uvarint: encoding/binary's; bytes: uvarint length
// then the bytes; rat: below; time: bytes of time.MarshalBinary):
//
//	account   rat spent ε, rat spent δ, rat committed ε, rat committed δ,
//	          uvarint queries, time last charge
//	pending   bytes account key, rat ε, rat δ, time, bytes replica
//	audit     time, bytes account key, rat ε, rat δ, bytes fingerprint,
//	          bytes query, bytes release, bytes replica, time refunded
//
// A rat is a sign byte (0 or 1 for negative), then the numerator's and the
// denominator's magnitudes as big-endian bytes; the denominator must not
// be zero. Decoding refuses trailing bytes, so a record cut short or
// grown is an error, not a silently different value.
const recordBinary = 0x01

// enc appends a record's fields.
type enc struct{ b []byte }

func newEnc(size int) *enc { return &enc{b: append(make([]byte, 0, size), recordBinary)} }

func (e *enc) uvarint(n uint64) { e.b = binary.AppendUvarint(e.b, n) }

func (e *enc) bytes(p []byte) { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }

func (e *enc) string(s string) { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

func (e *enc) rat(r *big.Rat) {
	sign := byte(0)
	if r.Sign() < 0 {
		sign = 1
	}
	e.b = append(e.b, sign)
	e.nat(r.Num())
	e.nat(r.Denom())
}

// nat appends |x| as length-prefixed big-endian bytes without allocating
// (big.Int.FillBytes into the buffer).
func (e *enc) nat(x *big.Int) {
	n := (x.BitLen() + 7) / 8
	e.uvarint(uint64(n))
	start := len(e.b)
	e.b = append(e.b, make([]byte, n)...)
	x.FillBytes(e.b[start:])
}

func (e *enc) time(t time.Time) error {
	var err error
	start := len(e.b)
	e.b = append(e.b, 0) // length placeholder: MarshalBinary is 15 or 16 bytes
	if e.b, err = t.AppendBinary(e.b); err != nil {
		return err
	}
	if n := len(e.b) - start - 1; n < 0x80 {
		e.b[start] = byte(n)
		return nil
	}
	return errors.New("encoded time too long")
}

// dec reads a record's fields; the first error sticks.
type dec struct {
	b   []byte
	err error
}

// newDec checks the tag and returns a decoder for the fields after it.
func newDec(v []byte) *dec {
	if len(v) == 0 || v[0] != recordBinary {
		return &dec{err: errors.New("unknown record tag")}
	}
	return &dec{b: v[1:]}
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("malformed %s", what)
	}
	d.b = nil
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	n, w := binary.Uvarint(d.b)
	if w <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[w:]
	return n
}

// bytes returns the next field, aliasing the record (copy what outlives
// the transaction).
func (d *dec) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) string() string { return string(d.bytes()) }

func (d *dec) rat() *big.Rat {
	if d.err != nil {
		return nil
	}
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail("rational sign")
		return nil
	}
	neg := d.b[0] == 1
	d.b = d.b[1:]
	num := new(big.Int).SetBytes(d.bytes())
	den := new(big.Int).SetBytes(d.bytes())
	if d.err != nil {
		return nil
	}
	if den.Sign() == 0 {
		d.fail("rational (zero denominator)")
		return nil
	}
	if neg {
		num.Neg(num)
	}
	return new(big.Rat).SetFrac(num, den)
}

func (d *dec) time() time.Time {
	p := d.bytes()
	if d.err != nil {
		return time.Time{}
	}
	var t time.Time
	if err := t.UnmarshalBinary(p); err != nil {
		d.fail("time")
	}
	return t
}

// end reports the first error, or trailing bytes.
func (d *dec) end() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	return d.err
}
