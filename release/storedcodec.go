package release

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// A release is stored in the ledger in a compact binary form (JSON took
// about 80 bytes per row of one integer key and two aggregates, and the
// ledger file grew by twice that per stored release):
//
//	header   1 byte: codecBinary, or codecDeflate followed by the uvarint
//	         length of the binary form and a raw DEFLATE stream of it
//	rows     uvarint count, then per row:
//	         uvarint set ‖ uvarint #keys ‖ keys ‖ uvarint #aggs ‖ varint aggs
//	key      1 byte kind ‖ payload: nothing (NULL), varint (integer, date,
//	         timestamps), 8 bytes IEEE 754 little endian (real), uvarint
//	         length ‖ bytes (text), 1 byte (boolean)
//
// Releases written before (JSON, starting with '{') still decode. Floats
// and text keep every bit (JSON turned invalid UTF-8 into U+FFFD).
const (
	codecBinary  = 0x01
	codecDeflate = 0x02
	// deflateFrom is the size from which the binary form is compressed:
	// small releases (the common fresh answer) skip the compressor's
	// setup cost.
	deflateFrom = 4 << 10
	// maxStoredBytes bounds what a compressed release may inflate to;
	// maxInflation bounds its ratio to the compressed size (DEFLATE
	// cannot exceed about 1032:1), so a damaged length cannot make a
	// small value cost a large allocation.
	maxStoredBytes = 1 << 30
	maxInflation   = 1100
)

// encodeStored returns the stored form of rel.
func encodeStored(rel *stored) ([]byte, error) {
	// Room for a typical row (a key or two, a few aggregates): one
	// allocation for most releases.
	b := make([]byte, 1, 16+24*len(rel.Rows))
	b[0] = codecBinary
	b = binary.AppendUvarint(b, uint64(len(rel.Rows)))
	for _, r := range rel.Rows {
		if r.Set < 0 {
			return nil, fmt.Errorf("encode release: negative set %d", r.Set)
		}
		b = binary.AppendUvarint(b, uint64(r.Set))
		b = binary.AppendUvarint(b, uint64(len(r.Keys)))
		for _, k := range r.Keys {
			var err error
			if b, err = appendValue(b, k); err != nil {
				return nil, err
			}
		}
		b = binary.AppendUvarint(b, uint64(len(r.Aggs)))
		for _, a := range r.Aggs {
			b = binary.AppendVarint(b, a)
		}
	}
	if len(b) < deflateFrom {
		return b, nil
	}
	var z bytes.Buffer
	z.WriteByte(codecDeflate)
	z.Write(binary.AppendUvarint(nil, uint64(len(b)-1)))
	w, err := flate.NewWriter(&z, flate.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("encode release: %w", err)
	}
	if _, err := w.Write(b[1:]); err != nil {
		return nil, fmt.Errorf("encode release: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode release: %w", err)
	}
	if z.Len() >= len(b) {
		return b, nil
	}
	return z.Bytes(), nil
}

func appendValue(b []byte, v ir.Value) ([]byte, error) {
	b = append(b, byte(v.Kind))
	switch v.Kind {
	case ir.KindNull:
	case ir.KindInt, ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
		b = binary.AppendVarint(b, v.Int)
	case ir.KindFloat:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float))
	case ir.KindString:
		b = binary.AppendUvarint(b, uint64(len(v.Str)))
		b = append(b, v.Str...)
	case ir.KindBool:
		if v.Bool {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	default:
		return nil, fmt.Errorf("encode release: value of kind %v", v.Kind)
	}
	return b, nil
}

var errStoredShort = errors.New("decode release: cut short")

// decodeStored reads a stored release: the binary form, compressed or
// not, or the JSON of earlier versions.
func decodeStored(data []byte) (*stored, error) {
	if len(data) == 0 {
		return nil, errStoredShort
	}
	switch data[0] {
	case '{':
		var rel stored
		if err := json.Unmarshal(data, &rel); err != nil {
			return nil, fmt.Errorf("decode release: %w", err)
		}
		return &rel, nil
	case codecBinary:
		return decodeBinary(data[1:])
	case codecDeflate:
		n, w := binary.Uvarint(data[1:])
		if w <= 0 {
			return nil, errStoredShort
		}
		z := data[1+w:]
		if n > maxStoredBytes || n > uint64(len(z))*maxInflation {
			return nil, fmt.Errorf("decode release: implausible length %d for %d compressed bytes", n, len(z))
		}
		raw := make([]byte, n)
		fr := flate.NewReader(bytes.NewReader(z))
		if _, err := io.ReadFull(fr, raw); err != nil {
			return nil, fmt.Errorf("decode release: %w", err)
		}
		if k, err := fr.Read(make([]byte, 1)); k != 0 || err != io.EOF {
			return nil, errors.New("decode release: longer than its length")
		}
		return decodeBinary(raw)
	}
	return nil, fmt.Errorf("decode release: unknown format %#x", data[0])
}

// storedReader reads the binary form; every count is checked against the
// bytes left before anything is allocated for it.
type storedReader struct {
	b   []byte
	err error
}

func (r *storedReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errStoredShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *storedReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errStoredShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items that take at least min bytes each.
func (r *storedReader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errStoredShort
		return 0
	}
	return int(n)
}

func (r *storedReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errStoredShort
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *storedReader) value() ir.Value {
	k := r.bytes(1)
	if r.err != nil {
		return ir.Value{}
	}
	v := ir.Value{Kind: ir.Kind(k[0])}
	switch v.Kind {
	case ir.KindNull:
	case ir.KindInt, ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
		v.Int = r.varint()
	case ir.KindFloat:
		if b := r.bytes(8); b != nil {
			v.Float = math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
	case ir.KindString:
		v.Str = string(r.bytes(r.count(1)))
	case ir.KindBool:
		if b := r.bytes(1); b != nil {
			if b[0] > 1 {
				r.err = fmt.Errorf("decode release: boolean byte %d", b[0])
			}
			v.Bool = b[0] == 1
		}
	default:
		r.err = fmt.Errorf("decode release: value of kind %d", k[0])
	}
	return v
}

func decodeBinary(b []byte) (*stored, error) {
	r := &storedReader{b: b}
	rel := &stored{Version: 1}
	// A row takes at least 3 bytes (set, #keys, #aggs).
	n := r.count(3)
	if n > 0 {
		rel.Rows = make([]storedRow, 0, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		var row storedRow
		set := r.uvarint()
		if set > math.MaxInt32 {
			r.err = fmt.Errorf("decode release: set %d", set)
		}
		row.Set = int(set)
		if nk := r.count(1); nk > 0 {
			row.Keys = make([]ir.Value, nk)
			for j := range row.Keys {
				row.Keys[j] = r.value()
			}
		}
		row.Aggs = make([]int64, r.count(1))
		for j := range row.Aggs {
			row.Aggs[j] = r.varint()
		}
		rel.Rows = append(rel.Rows, row)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("decode release: %d bytes left over", len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return rel, nil
}
