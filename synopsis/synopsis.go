package synopsis

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Synopsis is a released, post-processed range-count synopsis: the
// monotone cumulative counts F(j) = #[lo, lo+j] of the column. Answering
// from it is post-processing and costs nothing.
type Synopsis struct {
	Mechanism   string
	Lo          int64
	Theta       int64
	Fanout      int
	RowsPerUnit int
	// Epsilon is what the release cost; EpsilonS/EpsilonH its split and
	// ScaleS/ScaleH the discrete Laplace scales used (for explain).
	Epsilon, EpsilonS, EpsilonH float64
	ScaleS, ScaleH              float64
	cum                         []int64
}

// Size is the number of values of the domain.
func (s *Synopsis) Size() int { return len(s.cum) }

// Hi is the largest value of the domain.
func (s *Synopsis) Hi() int64 { return s.Lo + int64(len(s.cum)) - 1 }

// Total is the number of rows (exact: distance secrets never change it).
func (s *Synopsis) Total() int64 { return s.cum[len(s.cum)-1] }

// Layout rebuilds the node structure the synopsis was released with.
func (s *Synopsis) Layout() (*Layout, error) {
	return NewLayout(s.config())
}

func (s *Synopsis) config() Config {
	return Config{Mechanism: s.Mechanism, Lo: s.Lo, Hi: s.Hi(), Theta: s.Theta, Fanout: s.Fanout, RowsPerUnit: s.RowsPerUnit}
}

// prefix is F(j) for any integer index j (0 below the domain, the total
// above it).
func (s *Synopsis) prefix(j int64) int64 {
	switch {
	case j < 0:
		return 0
	case j >= int64(len(s.cum)):
		return s.cum[len(s.cum)-1]
	}
	return s.cum[j]
}

// Count answers COUNT(*) WHERE a ≤ c ≤ b in column values (a > b: 0).
// Values beyond the domain behave as they did at release time: rows were
// clamped into [Lo, Hi], so [a, b] is clipped to it.
func (s *Synopsis) Count(a, b int64) int64 {
	a = max(a, s.Lo)
	b = min(b, s.Hi())
	if a > b {
		return 0
	}
	return s.prefix(b-s.Lo) - s.prefix(a-s.Lo-1)
}

// Encoding: magic, version, then the header fields, then the cumulative
// counts as run-length-coded deltas (deltas are ≥ 0 because F is
// monotone): uvarint(d<<1) for a delta d > 0, uvarint(r<<1|1) for a run of
// r ≥ 1 zero deltas. A sparse column (most values never occur) encodes in
// a few bytes per distinct value.
const (
	magic   = "DDPSYN"
	version = 1
)

// MarshalBinary encodes the synopsis compactly.
func (s *Synopsis) MarshalBinary() ([]byte, error) {
	b := []byte(magic)
	b = append(b, version)
	b = binary.AppendUvarint(b, uint64(len(s.Mechanism)))
	b = append(b, s.Mechanism...)
	b = binary.AppendVarint(b, s.Lo)
	b = binary.AppendUvarint(b, uint64(len(s.cum)))
	b = binary.AppendVarint(b, s.Theta)
	b = binary.AppendUvarint(b, uint64(s.Fanout))
	b = binary.AppendUvarint(b, uint64(s.RowsPerUnit))
	for _, f := range []float64{s.Epsilon, s.EpsilonS, s.EpsilonH, s.ScaleS, s.ScaleH} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	prev, zeros := int64(0), uint64(0)
	for _, c := range s.cum {
		d := c - prev
		prev = c
		if d < 0 {
			return nil, errors.New("synopsis: cumulative counts are not monotone")
		}
		if d == 0 {
			zeros++
			continue
		}
		if zeros > 0 {
			b = binary.AppendUvarint(b, zeros<<1|1)
			zeros = 0
		}
		b = binary.AppendUvarint(b, uint64(d)<<1)
	}
	if zeros > 0 {
		b = binary.AppendUvarint(b, zeros<<1|1)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary wrote, checking every field.
func (s *Synopsis) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	if string(d.bytes(len(magic))) != magic || d.byte() != version {
		return errors.New("synopsis: not an encoded synopsis (bad magic or version)")
	}
	var out Synopsis
	out.Mechanism = string(d.bytes(int(min(d.uvarint(), 64))))
	out.Lo = d.varint()
	n := d.uvarint()
	out.Theta = d.varint()
	out.Fanout = int(min(d.uvarint(), math.MaxInt32))
	out.RowsPerUnit = int(min(d.uvarint(), math.MaxInt32))
	for _, f := range []*float64{&out.Epsilon, &out.EpsilonS, &out.EpsilonH, &out.ScaleS, &out.ScaleH} {
		*f = math.Float64frombits(binary.LittleEndian.Uint64(d.bytes(8)))
	}
	if d.err != nil {
		return d.err
	}
	if n == 0 || n > MaxDomain || out.Lo > math.MaxInt64-int64(n) {
		return fmt.Errorf("synopsis: bad domain size %d", n)
	}
	out.cum = make([]int64, 0, n)
	var acc int64
	for len(d.b) > 0 && d.err == nil {
		v := d.uvarint()
		if v&1 == 1 {
			r := v >> 1
			if r == 0 || r > n-uint64(len(out.cum)) {
				return errors.New("synopsis: bad run length")
			}
			for range r {
				out.cum = append(out.cum, acc)
			}
			continue
		}
		if v>>1 > math.MaxInt64-uint64(acc) || uint64(len(out.cum)) >= n {
			return errors.New("synopsis: bad delta")
		}
		acc += int64(v >> 1)
		out.cum = append(out.cum, acc)
	}
	if d.err != nil {
		return d.err
	}
	if uint64(len(out.cum)) != n {
		return fmt.Errorf("synopsis: %d cumulative counts, want %d", len(out.cum), n)
	}
	if _, err := out.Layout(); err != nil {
		return fmt.Errorf("synopsis: bad parameters: %w", err)
	}
	*s = out
	return nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("synopsis: truncated encoding")
	}
	d.b = nil
}

func (d *decoder) bytes(n int) []byte {
	if n > len(d.b) {
		d.fail()
		return make([]byte, n)
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) byte() byte { return d.bytes(1)[0] }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}
