package pgwire

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// decodeParam turns the bytes of bind parameter n (1-based, for messages)
// into an ir.Value.
//
// Binary parameters are laid out by their wire type: the OID the client
// declared in Parse, or the session's type (both are what Describe
// reported). Text parameters are parsed as the session's type when it is
// not text; when the session left the type open (ir.TypeText), the client's
// declared OID decides, and an undeclared parameter stays an ir.String —
// the session knows best what a string literal means in its statement.
func decodeParam(n int, data []byte, format int16, declared uint32, want ir.ColType) (ir.Value, error) {
	if data == nil {
		return ir.Null(), nil
	}
	wireOID := declared
	if wireOID == 0 {
		wireOID = oidOf(want)
	}
	switch format {
	case formatBinary:
		return decodeBinary(n, data, wireOID)
	case formatText:
	default:
		return ir.Value{}, protocolErr("unsupported format code %d for parameter $%d", format, n)
	}
	if !utf8.Valid(data) {
		return ir.Value{}, sqlerr.New(sqlerr.InvalidTextRepresentation,
			"parameter $%d is not valid UTF-8", n)
	}
	s := string(data)
	textOID := declared
	if want != ir.TypeText {
		textOID = oidOf(want)
	}
	switch textOID {
	case oidInt2:
		return parseIntParam(n, s, math.MinInt16, math.MaxInt16, "smallint")
	case oidInt4:
		return parseIntParam(n, s, math.MinInt32, math.MaxInt32, "integer")
	case oidInt8:
		return parseIntParam(n, s, math.MinInt64, math.MaxInt64, "bigint")
	case oidOID:
		return parseIntParam(n, s, 0, math.MaxUint32, "oid")
	case oidFloat4, oidFloat8:
		return parseFloatParam(n, s, "double precision")
	case oidNumeric:
		return parseNumeric(n, s)
	case oidBool:
		b, ok := parseBool(s)
		if !ok {
			return ir.Value{}, badText(n, "boolean")
		}
		return ir.Bool(b), nil
	case oidDate, oidTS, oidTSTZ:
		return parseTimeParam(n, s, timeKindOf(textOID))
	}
	return ir.String(s), nil
}

func timeKindOf(oid uint32) ir.Kind {
	switch oid {
	case oidDate:
		return ir.KindDate
	case oidTS:
		return ir.KindTimestamp
	}
	return ir.KindTimestampTZ
}

// parseTimeParam reads an ISO date or timestamp (ir.ParseTime): 22007
// when it is not one, 22008 when a field is out of range. A timestamptz
// without a zone is UTC, the session's zone.
func parseTimeParam(n int, s string, k ir.Kind) (ir.Value, error) {
	v, err := ir.ParseTime(k, s)
	switch {
	case errors.Is(err, ir.ErrTimeRange):
		return ir.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range in parameter $%d", n)
	case err != nil:
		return ir.Value{}, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s in parameter $%d", k, n).
			WithHint("send dates as YYYY-MM-DD and timestamps as YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM]")
	}
	return v, nil
}

func badText(n int, typ string) error {
	// The value itself is left out: messages never carry data values.
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s in parameter $%d", typ, n)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func parseIntParam(n int, s string, lo, hi int64, typ string) (ir.Value, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil && !isRangeErr(err) {
		return ir.Value{}, badText(n, typ)
	}
	if err != nil || v < lo || v > hi {
		return ir.Value{}, sqlerr.New(sqlerr.InvalidParameterValue,
			"parameter $%d is out of range for type %s", n, typ)
	}
	return ir.Int(v), nil
}

// parseNumeric maps a numeric literal to the IR's numbers: an integer
// that fits int64 stays exact, anything else becomes a float (the IR has
// no decimal type).
func parseNumeric(n int, s string) (ir.Value, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ir.Int(v), nil
	}
	return parseFloatParam(n, s, "numeric")
}

func parseFloatParam(n int, s, typ string) (ir.Value, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case isRangeErr(err):
		return ir.Value{}, sqlerr.New(sqlerr.InvalidParameterValue,
			"parameter $%d is out of range for type %s", n, typ)
	case err != nil:
		return ir.Value{}, badText(n, typ)
	}
	return ir.Float(f), nil
}

func decodeBinary(n int, data []byte, oid uint32) (ir.Value, error) {
	bad := func() (ir.Value, error) {
		return ir.Value{}, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter %d", n)
	}
	switch oid {
	case oidInt2:
		if len(data) != 2 {
			return bad()
		}
		return ir.Int(int64(int16(binary.BigEndian.Uint16(data)))), nil
	case oidInt4:
		if len(data) != 4 {
			return bad()
		}
		return ir.Int(int64(int32(binary.BigEndian.Uint32(data)))), nil
	case oidOID:
		if len(data) != 4 {
			return bad()
		}
		return ir.Int(int64(binary.BigEndian.Uint32(data))), nil
	case oidInt8:
		if len(data) != 8 {
			return bad()
		}
		return ir.Int(int64(binary.BigEndian.Uint64(data))), nil
	case oidFloat4:
		if len(data) != 4 {
			return bad()
		}
		return ir.Float(float64(math.Float32frombits(binary.BigEndian.Uint32(data)))), nil
	case oidFloat8:
		if len(data) != 8 {
			return bad()
		}
		return ir.Float(math.Float64frombits(binary.BigEndian.Uint64(data))), nil
	case oidBool:
		if len(data) != 1 || data[0] > 1 {
			return bad()
		}
		return ir.Bool(data[0] == 1), nil
	case oidText, oidVarchar, oidBPChar, oidName, oidUnknown:
		if !utf8.Valid(data) {
			return bad()
		}
		return ir.String(string(data)), nil
	case oidDate:
		if len(data) != 4 {
			return bad()
		}
		d := int64(int32(binary.BigEndian.Uint32(data))) + pgEpochDays
		if d < ir.MinDate || d > ir.MaxDate { // ±infinity and years outside 1..9999
			return ir.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "parameter $%d is outside the years 1 to 9999", n)
		}
		return ir.Date(d), nil
	case oidTS, oidTSTZ:
		if len(data) != 8 {
			return bad()
		}
		us := int64(binary.BigEndian.Uint64(data))
		if us < ir.MinTimestamp-pgEpochDays*ir.MicrosPerDay || us > ir.MaxTimestamp-pgEpochDays*ir.MicrosPerDay {
			return ir.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "parameter $%d is outside the years 1 to 9999", n)
		}
		return ir.Value{Kind: timeKindOf(oid), Int: us + pgEpochDays*ir.MicrosPerDay}, nil
	case oidNumeric:
		s, ok := numericBinaryText(data)
		if !ok {
			return bad()
		}
		return parseNumeric(n, s)
	}
	return ir.Value{}, sqlerr.New(sqlerr.FeatureNotSupported,
		"binary format is not supported for parameter $%d of type %d", n, oid).
		WithHint("send the parameter in text format")
}

// Numeric binary sign words (src/backend/utils/adt/numeric.c).
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
	// maxNumericGroups bounds the base-10000 groups a parameter may carry,
	// so a hostile weight cannot make us build a huge string.
	maxNumericGroups = 1000
)

// numericBinaryText renders a binary numeric (ndigits, weight, sign,
// dscale, then ndigits base-10000 groups; the value is
// Σ digit[i]·10000^(weight−i)) as decimal text.
func numericBinaryText(b []byte) (string, bool) {
	if len(b) < 8 {
		return "", false
	}
	ndigits := int(int16(binary.BigEndian.Uint16(b[0:])))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	if ndigits < 0 || ndigits > maxNumericGroups || len(b) != 8+2*ndigits {
		return "", false
	}
	switch sign {
	case numericNaN:
		return "NaN", true
	case numericPInf:
		return "Infinity", true
	case numericNInf:
		return "-Infinity", true
	case numericPos, numericNeg:
	default:
		return "", false
	}
	if weight > maxNumericGroups || weight < -maxNumericGroups {
		return "", false
	}
	digit := func(i int) (int, bool) {
		if i < 0 || i >= ndigits {
			return 0, true
		}
		d := int(binary.BigEndian.Uint16(b[8+2*i:]))
		return d, d < 10000
	}
	var sb strings.Builder
	if sign == numericNeg {
		sb.WriteByte('-')
	}
	if weight < 0 {
		sb.WriteByte('0')
	}
	for i := 0; i <= weight; i++ {
		d, ok := digit(i)
		if !ok {
			return "", false
		}
		if i == 0 {
			sb.WriteString(strconv.Itoa(d))
		} else {
			writeGroup(&sb, d)
		}
	}
	// Fraction groups have exponents −1, −2, ... down to the last digit's.
	if last := weight - (ndigits - 1); last < 0 {
		sb.WriteByte('.')
		for e := -1; e >= last; e-- {
			d, ok := digit(weight - e)
			if !ok {
				return "", false
			}
			writeGroup(&sb, d)
		}
	}
	return sb.String(), true
}

func writeGroup(sb *strings.Builder, d int) {
	s := strconv.Itoa(d)
	for range 4 - len(s) {
		sb.WriteByte('0')
	}
	sb.WriteString(s)
}
