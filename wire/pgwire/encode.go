package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// PostgreSQL type OIDs (pg_type.oid) the server speaks.
const (
	oidBool    uint32 = 16
	oidName    uint32 = 19
	oidInt8    uint32 = 20
	oidInt2    uint32 = 21
	oidInt4    uint32 = 23
	oidText    uint32 = 25
	oidOID     uint32 = 26
	oidFloat4  uint32 = 700
	oidFloat8  uint32 = 701
	oidUnknown uint32 = 705
	oidBPChar  uint32 = 1042
	oidVarchar uint32 = 1043
	oidNumeric uint32 = 1700
	oidDate    uint32 = 1082
	oidTS      uint32 = 1114
	oidTSTZ    uint32 = 1184
)

// pgEpochDays is 2000-01-01, PostgreSQL's binary date and timestamp
// origin, in days after 1970-01-01.
const pgEpochDays = 10957

// Wire format codes.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// oidOf is the PostgreSQL type OID of a result or parameter type: the
// one mapping of ir.ColType to PostgreSQL (typeOfOID is its inverse).
func oidOf(t ir.ColType) uint32 {
	if oid, ok := typeOIDs[t]; ok {
		return oid
	}
	return oidText
}

// typeOfOID is the type of a parameter the client declared by OID in
// Parse (ir.TypeUnknown for 0 or a type the proxy has no name for).
func typeOfOID(oid uint32) ir.ColType {
	if t, ok := oidTypes[oid]; ok {
		return t
	}
	return ir.TypeUnknown
}

var (
	typeOIDs = map[ir.ColType]uint32{
		ir.TypeInt8: oidInt8, ir.TypeFloat8: oidFloat8, ir.TypeBool: oidBool, ir.TypeInt4: oidInt4, ir.TypeName: oidName,
		ir.TypeOID: oidOID, ir.TypeDate: oidDate, ir.TypeTimestamp: oidTS, ir.TypeTimestampTZ: oidTSTZ,
	}
	// oidTypes also reads the declared types the proxy widens: int2 to
	// int8, float4 and numeric to float8, varchar and name to text.
	oidTypes = map[uint32]ir.ColType{
		oidInt8: ir.TypeInt8, oidInt2: ir.TypeInt8, oidInt4: ir.TypeInt4,
		oidFloat4: ir.TypeFloat8, oidFloat8: ir.TypeFloat8, oidNumeric: ir.TypeFloat8, oidBool: ir.TypeBool,
		oidText: ir.TypeText, oidVarchar: ir.TypeText, oidName: ir.TypeText,
		oidDate: ir.TypeDate, oidTS: ir.TypeTimestamp, oidTSTZ: ir.TypeTimestampTZ,
	}
)

// size is pg_type.typlen, reported in RowDescription (-1: variable).
func sizeOf(t ir.ColType) int16 {
	switch t {
	case ir.TypeInt8, ir.TypeFloat8:
		return 8
	case ir.TypeBool:
		return 1
	case ir.TypeInt4, ir.TypeOID, ir.TypeDate:
		return 4
	case ir.TypeTimestamp, ir.TypeTimestampTZ:
		return 8
	case ir.TypeName:
		return 64
	}
	return -1
}

// appendRowDescription appends a RowDescription of cols with one format
// per column (nil: text). Like appendDataRow it writes the bytes itself:
// a pgproto3.RowDescription costs a slice and a copy of every name per
// answer (the bytes are the same; a test compares them).
func appendRowDescription(buf []byte, cols []ir.Column, formats []int16) []byte {
	start := len(buf)
	buf = append(buf, 'T', 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(cols)))
	for i, c := range cols {
		f := formatText
		if formats != nil {
			f = formats[i]
		}
		buf = append(buf, c.Name...)
		buf = append(buf, 0)
		buf = binary.BigEndian.AppendUint32(buf, 0) // table OID
		buf = binary.BigEndian.AppendUint16(buf, 0) // column number
		buf = binary.BigEndian.AppendUint32(buf, oidOf(c.Type))
		buf = binary.BigEndian.AppendUint16(buf, uint16(sizeOf(c.Type)))
		buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // type modifier -1
		buf = binary.BigEndian.AppendUint16(buf, uint16(f))
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	return buf
}

// appendCommandComplete appends a CommandComplete with tag.
func appendCommandComplete(buf []byte, tag string) []byte {
	buf = append(buf, 'C')
	buf = binary.BigEndian.AppendUint32(buf, uint32(4+len(tag)+1))
	buf = append(buf, tag...)
	return append(buf, 0)
}

// appendDataRow appends one DataRow message. It writes the bytes itself
// rather than building a pgproto3.DataRow so that a row costs no
// allocation beyond the growth of the output buffer.
func appendDataRow(buf []byte, cols []ir.Column, formats []int16, row []ir.Value) ([]byte, error) {
	if len(row) != len(cols) {
		return buf, sqlerr.Wrap(sqlerr.Internal,
			fmt.Errorf("pgwire: row has %d values, result has %d columns", len(row), len(cols)), "internal error")
	}
	start := len(buf)
	buf = append(buf, 'D', 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
	for i, v := range row {
		if v.IsNull() {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1: NULL
			continue
		}
		lenAt := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if formats != nil && formats[i] == formatBinary {
			buf, err = appendBinary(buf, cols[i].Type, v)
			if err != nil {
				return buf[:start], sqlerr.Wrap(sqlerr.Internal,
					fmt.Errorf("pgwire: column %d: %w", i+1, err), "internal error")
			}
		} else {
			buf = appendText(buf, v)
		}
		binary.BigEndian.PutUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	return buf, nil
}

// appendText appends v in PostgreSQL text format. It must agree with
// ir.Value.Text (a test checks that); it exists to avoid a string
// allocation per cell.
func appendText(buf []byte, v ir.Value) []byte {
	switch v.Kind {
	case ir.KindInt:
		return strconv.AppendInt(buf, v.Int, 10)
	case ir.KindFloat:
		return ir.AppendFloatPG(buf, v.Float)
	case ir.KindString:
		return append(buf, v.Str...)
	case ir.KindBool:
		if v.Bool {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case ir.KindDate, ir.KindTimestamp, ir.KindTimestampTZ:
		return append(buf, ir.FormatTime(v.Kind, v.Int)...)
	}
	return buf
}

// appendBinary appends v in the binary format of type t. A value whose
// kind differs from the column type is converted when that is exact
// (an integral float in an int8 column, a numeric string), else refused.
func appendBinary(buf []byte, t ir.ColType, v ir.Value) ([]byte, error) {
	switch t {
	case ir.TypeInt8:
		n, err := asInt(v, math.MinInt64, math.MaxInt64)
		if err != nil {
			return buf, err
		}
		return binary.BigEndian.AppendUint64(buf, uint64(n)), nil
	case ir.TypeInt4:
		n, err := asInt(v, math.MinInt32, math.MaxInt32)
		if err != nil {
			return buf, err
		}
		return binary.BigEndian.AppendUint32(buf, uint32(int32(n))), nil
	case ir.TypeOID:
		n, err := asInt(v, 0, math.MaxUint32)
		if err != nil {
			return buf, err
		}
		return binary.BigEndian.AppendUint32(buf, uint32(n)), nil
	case ir.TypeFloat8:
		f, err := asFloat(v)
		if err != nil {
			return buf, err
		}
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(f)), nil
	case ir.TypeBool:
		b, err := asBool(v)
		if err != nil {
			return buf, err
		}
		if b {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case ir.TypeDate, ir.TypeTimestamp, ir.TypeTimestampTZ:
		k := map[ir.ColType]ir.Kind{ir.TypeDate: ir.KindDate, ir.TypeTimestamp: ir.KindTimestamp, ir.TypeTimestampTZ: ir.KindTimestampTZ}[t]
		tv := ir.AsTime(v, k)
		if tv.Kind != k {
			return buf, fmt.Errorf("cannot encode %v as %v", v.Kind, k)
		}
		if k == ir.KindDate {
			return binary.BigEndian.AppendUint32(buf, uint32(int32(tv.Int-pgEpochDays))), nil
		}
		return binary.BigEndian.AppendUint64(buf, uint64(tv.Int-pgEpochDays*ir.MicrosPerDay)), nil
	}
	// text, name and unknown types: the binary form is the text bytes.
	return appendText(buf, v), nil
}

func asInt(v ir.Value, lo, hi int64) (int64, error) {
	var n int64
	switch v.Kind {
	case ir.KindInt:
		n = v.Int
	case ir.KindFloat:
		// 2^63 itself is not an int64, hence the strict upper bound.
		if v.Float != math.Trunc(v.Float) || v.Float < -(1<<63) || v.Float >= 1<<63 {
			return 0, fmt.Errorf("%v is not an integer", v.Kind)
		}
		n = int64(v.Float)
	case ir.KindString:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(v.Str), 10, 64); err != nil {
			return 0, fmt.Errorf("text value is not an integer")
		}
	default:
		return 0, fmt.Errorf("cannot encode %v as an integer", v.Kind)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("integer out of range")
	}
	return n, nil
}

func asFloat(v ir.Value) (float64, error) {
	switch v.Kind {
	case ir.KindInt:
		return float64(v.Int), nil
	case ir.KindFloat:
		return v.Float, nil
	case ir.KindString:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		if err != nil {
			return 0, fmt.Errorf("text value is not a number")
		}
		return f, nil
	}
	return 0, fmt.Errorf("cannot encode %v as double precision", v.Kind)
}

func asBool(v ir.Value) (bool, error) {
	switch v.Kind {
	case ir.KindBool:
		return v.Bool, nil
	case ir.KindString:
		if b, ok := parseBool(v.Str); ok {
			return b, nil
		}
	}
	return false, fmt.Errorf("cannot encode %v as boolean", v.Kind)
}

// parseBool accepts PostgreSQL's boolean input spellings (boolin): t,
// true, y, yes, on, 1 and their negations, case-insensitively, surrounded
// by optional whitespace. PostgreSQL also takes unique prefixes ("tr");
// those are accepted too.
func parseBool(s string) (value, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return false, false
	}
	switch s {
	case "1":
		return true, true
	case "0":
		return false, true
	case "o": // ambiguous between on and off
		return false, false
	}
	for _, w := range []string{"true", "yes", "on"} {
		if strings.HasPrefix(w, s) {
			return true, true
		}
	}
	for _, w := range []string{"false", "no", "off"} {
		if strings.HasPrefix(w, s) {
			return false, true
		}
	}
	return false, false
}
