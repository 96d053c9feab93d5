package pgwire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func TestAppendTextMatchesValueText(t *testing.T) {
	values := []ir.Value{
		ir.Int(0), ir.Int(math.MinInt64), ir.Int(math.MaxInt64), ir.Float(0.1), ir.Float(-0.0),
		ir.Float(1e21), ir.Float(1.5e-7), ir.Float(math.Inf(1)), ir.Float(math.Inf(-1)), ir.Float(math.NaN()),
		ir.String(""), ir.String("héllo\x00"), ir.Bool(true), ir.Bool(false),
	}
	for _, v := range values {
		if got := string(appendText(nil, v)); got != v.Text() {
			t.Errorf("%#v: appendText %q, Value.Text %q", v, got, v.Text())
		}
	}
}

// TestBinaryEncodingMatchesPgtype compares our binary encodings with
// pgx's pgtype, an independent implementation of the same formats.
func TestBinaryEncodingMatchesPgtype(t *testing.T) {
	m := pgtype.NewMap()
	tests := []struct {
		name    string
		typ     ir.ColType
		v       ir.Value
		ref     any // Go value pgtype encodes as the reference
		wantErr bool
	}{
		{"int8", ir.TypeInt8, ir.Int(-5), int64(-5), false},
		{"int8 max", ir.TypeInt8, ir.Int(math.MaxInt64), int64(math.MaxInt64), false},
		{"int8 from integral float", ir.TypeInt8, ir.Float(42), int64(42), false},
		{"int8 from numeric text", ir.TypeInt8, ir.String("17"), int64(17), false},
		{"int8 from fraction", ir.TypeInt8, ir.Float(0.5), nil, true},
		{"int8 from 2^63", ir.TypeInt8, ir.Float(math.Exp2(63)), nil, true},
		{"int8 from bool", ir.TypeInt8, ir.Bool(true), nil, true},
		{"int4", ir.TypeInt4, ir.Int(-70000), int32(-70000), false},
		{"int4 overflow", ir.TypeInt4, ir.Int(1 << 40), nil, true},
		{"float8", ir.TypeFloat8, ir.Float(0.1), 0.1, false},
		{"float8 from int", ir.TypeFloat8, ir.Int(3), float64(3), false},
		{"float8 -inf", ir.TypeFloat8, ir.Float(math.Inf(-1)), math.Inf(-1), false},
		{"bool", ir.TypeBool, ir.Bool(true), true, false},
		{"bool false", ir.TypeBool, ir.Bool(false), false, false},
		{"bool from int", ir.TypeBool, ir.Int(1), nil, true},
		{"text", ir.TypeText, ir.String("héllo"), "héllo", false},
		{"text from int", ir.TypeText, ir.Int(12), "12", false},
		{"name", ir.TypeName, ir.String("pg_class"), "pg_class", false},
		{"oid", ir.TypeOID, ir.Int(4000000000), uint32(4000000000), false},
		{"oid negative", ir.TypeOID, ir.Int(-1), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendBinary(nil, tc.typ, tc.v)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			want, err := m.Encode(oidOf(tc.typ), pgtype.BinaryFormatCode, tc.ref, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got % x, pgtype % x", got, want)
			}
		})
	}
}

func TestAppendDataRow(t *testing.T) {
	cols := []ir.Column{{Name: "a", Type: ir.TypeInt8}, {Name: "b", Type: ir.TypeText}, {Name: "c", Type: ir.TypeFloat8}}
	buf, err := appendDataRow([]byte("prefix"), cols, []int16{1, 0, 0},
		[]ir.Value{ir.Int(258), ir.Null(), ir.Float(2.5)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf, []byte("prefix")) {
		t.Fatal("existing buffer content overwritten")
	}
	msg := buf[len("prefix"):]
	if msg[0] != 'D' || int(be32get(msg[1:])) != len(msg)-1 {
		t.Fatalf("bad header % x", msg[:5])
	}
	var dr pgproto3.DataRow
	if err := dr.Decode(msg[5:]); err != nil {
		t.Fatal(err)
	}
	if len(dr.Values) != 3 || !bytes.Equal(dr.Values[0], []byte{0, 0, 0, 0, 0, 0, 1, 2}) ||
		dr.Values[1] != nil || string(dr.Values[2]) != "2.5" {
		t.Errorf("values %q", dr.Values)
	}
	if _, err := appendDataRow(nil, cols, nil, []ir.Value{ir.Int(1)}); !sqlerr.HasCode(err, sqlerr.Internal) {
		t.Errorf("short row: err = %v, want internal", err)
	}
}

// TestAppendedMessagesMatchPgproto3: the messages written without
// pgproto3 are byte for byte its encodings, after what the buffer held.
func TestAppendedMessagesMatchPgproto3(t *testing.T) {
	cols := []ir.Column{{Name: "sex", Type: ir.TypeText}, {Name: "count", Type: ir.TypeInt8},
		{Name: "", Type: ir.TypeName}, {Name: "é", Type: ir.TypeTimestampTZ}, {Name: "b", Type: ir.TypeBool}}
	pgproto3RD := func(formats []int16) pgproto3.BackendMessage {
		fields := make([]pgproto3.FieldDescription, len(cols))
		for i, c := range cols {
			f := formatText
			if formats != nil {
				f = formats[i]
			}
			fields[i] = pgproto3.FieldDescription{Name: []byte(c.Name), DataTypeOID: oidOf(c.Type),
				DataTypeSize: sizeOf(c.Type), TypeModifier: -1, Format: f}
		}
		return &pgproto3.RowDescription{Fields: fields}
	}
	tests := []struct {
		name string
		got  func([]byte) []byte
		want pgproto3.BackendMessage
	}{
		{"RowDescription text", func(b []byte) []byte { return appendRowDescription(b, cols, nil) }, pgproto3RD(nil)},
		{"RowDescription formats", func(b []byte) []byte { return appendRowDescription(b, cols, []int16{1, 0, 1, 1, 0}) }, pgproto3RD([]int16{1, 0, 1, 1, 0})},
		{"RowDescription empty", func(b []byte) []byte { return appendRowDescription(b, nil, nil) }, &pgproto3.RowDescription{}},
		{"CommandComplete", func(b []byte) []byte { return appendCommandComplete(b, "SELECT 2") }, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 2")}},
		{"CommandComplete empty", func(b []byte) []byte { return appendCommandComplete(b, "") }, &pgproto3.CommandComplete{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := tt.want.Encode([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got([]byte("prefix")); !bytes.Equal(got, want) {
				t.Errorf("got  % x\nwant % x", got, want)
			}
		})
	}
	c := &conn{}
	c.readyForQuery()
	want, _ := (&pgproto3.ReadyForQuery{TxStatus: TxIdle}).Encode(nil)
	if !bytes.Equal(c.wbuf, want) {
		t.Errorf("ReadyForQuery % x, want % x", c.wbuf, want)
	}
}

func be32get(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// TestNumericBinary decodes pgtype's binary encoding of decimal strings
// and compares the value exactly (as rationals) with the input.
func TestNumericBinary(t *testing.T) {
	m := pgtype.NewMap()
	inputs := []string{"0", "1", "-1", "9999", "10000", "12345678.9", "0.0001", "-0.00012",
		"123456789012345678901234567890", "0.000000000000000000001", "-98765.4321", "100000000"}
	for _, in := range inputs {
		var n pgtype.Numeric
		if err := n.Scan(in); err != nil {
			t.Fatal(err)
		}
		b, err := m.Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := numericBinaryText(b)
		if !ok {
			t.Errorf("%s: not decoded", in)
			continue
		}
		want, _ := new(big.Rat).SetString(in)
		have, ok := new(big.Rat).SetString(got)
		if !ok || want.Cmp(have) != 0 {
			t.Errorf("%s: decoded as %s", in, got)
		}
	}
	special := map[string][]byte{
		"NaN":       {0, 0, 0, 0, 0xC0, 0, 0, 0},
		"Infinity":  {0, 0, 0, 0, 0xD0, 0, 0, 0},
		"-Infinity": {0, 0, 0, 0, 0xF0, 0, 0, 0},
	}
	for want, b := range special {
		if got, ok := numericBinaryText(b); !ok || got != want {
			t.Errorf("%s: got %q %v", want, got, ok)
		}
	}
	bad := [][]byte{
		{0, 1},                               // short header
		{0, 1, 0, 0, 0, 0, 0, 0},             // one digit announced, none sent
		{0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10}, // digit 10000
		{0, 0, 0, 0, 0x12, 0x34, 0, 0},       // bad sign
		{0xff, 0xff, 0, 0, 0, 0, 0, 0},       // negative ndigits
	}
	for _, b := range bad {
		if s, ok := numericBinaryText(b); ok {
			t.Errorf("% x decoded as %q, want rejection", b, s)
		}
	}
}

func TestParseBool(t *testing.T) {
	// PostgreSQL's boolin: these spellings and unique prefixes.
	tests := []struct {
		in       string
		want, ok bool
	}{
		{"t", true, true}, {"TRUE", true, true}, {" yes ", true, true}, {"on", true, true}, {"1", true, true},
		{"y", true, true}, {"tr", true, true},
		{"f", false, true}, {"False", false, true}, {"no", false, true}, {"off", false, true}, {"of", false, true},
		{"0", false, true}, {"n", false, true},
		{"o", false, false}, {"", false, false}, {"2", false, false}, {"truex", false, false}, {"yess", false, false},
	}
	for _, tc := range tests {
		got, ok := parseBool(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseBool(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDecodeParam(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		format   int16
		declared uint32
		want     ir.ColType
		wantVal  ir.Value
		wantCode string // "" = success
	}{
		{"null", nil, 1, oidInt8, ir.TypeInt8, ir.Null(), ""},
		{"text as session int", []byte("-12"), 0, 0, ir.TypeInt8, ir.Int(-12), ""},
		{"session type wins for text", []byte("5"), 0, oidText, ir.TypeInt4, ir.Int(5), ""},
		{"declared int2 range", []byte("40000"), 0, oidInt2, ir.TypeText, ir.Value{}, "22023"},
		{"int4 range", []byte("2147483648"), 0, 0, ir.TypeInt4, ir.Value{}, "22023"},
		{"int8 overflow", []byte("9223372036854775808"), 0, 0, ir.TypeInt8, ir.Value{}, "22023"},
		{"not an int", []byte("1.5"), 0, 0, ir.TypeInt8, ir.Value{}, "22P02"},
		{"float", []byte("-2.5e3"), 0, 0, ir.TypeFloat8, ir.Float(-2500), ""},
		{"float overflow", []byte("1e400"), 0, 0, ir.TypeFloat8, ir.Value{}, "22023"},
		{"float junk", []byte("abc"), 0, 0, ir.TypeFloat8, ir.Value{}, "22P02"},
		{"bool text", []byte("off"), 0, 0, ir.TypeBool, ir.Bool(false), ""},
		{"bool junk", []byte("maybe"), 0, 0, ir.TypeBool, ir.Value{}, "22P02"},
		{"untyped text stays string", []byte("42"), 0, 0, ir.TypeText, ir.String("42"), ""},
		{"unknown declared type as text", []byte("1 day"), 0, 1186, ir.TypeText, ir.String("1 day"), ""},
		// 2024-01-01 is day 19723 after 1970-01-01 (54 years, 13 leap days).
		{"text date", []byte("2024-01-01"), 0, oidDate, ir.TypeText, ir.Date(19723), ""},
		{"text date by session type", []byte("2024-01-01"), 0, 0, ir.TypeDate, ir.Date(19723), ""},
		{"text timestamp", []byte("2024-01-01 00:00:01.5"), 0, oidTS, ir.TypeText, ir.Timestamp(19723*ir.MicrosPerDay + 1_500_000), ""},
		{"text timestamptz with zone", []byte("2024-01-01 02:00:00+02"), 0, oidTSTZ, ir.TypeText, ir.TimestampTZ(19723 * ir.MicrosPerDay), ""},
		{"text date out of range", []byte("2024-13-45"), 0, oidDate, ir.TypeText, ir.Value{}, "22008"},
		{"text date junk", []byte("soon"), 0, oidDate, ir.TypeText, ir.Value{}, "22007"},
		{"binary date", []byte{0, 0, 0, 1}, 1, oidDate, ir.TypeText, ir.Date(10958), ""}, // 2000-01-02
		{"binary timestamp", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1, oidTS, ir.TypeText, ir.Timestamp(10957*ir.MicrosPerDay - 1), ""},
		{"binary timestamptz infinity", []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1, oidTSTZ, ir.TypeText, ir.Value{}, "22008"},
		{"binary date short", []byte{0, 1}, 1, oidDate, ir.TypeText, ir.Value{}, "22P03"},
		{"invalid utf8", []byte{0xff, 0xfe}, 0, 0, ir.TypeText, ir.Value{}, "22P02"},
		{"binary int4", []byte{0xff, 0xff, 0xff, 0xfe}, 1, 0, ir.TypeInt4, ir.Int(-2), ""},
		{"binary by declared oid", []byte{0, 7}, 1, oidInt2, ir.TypeInt8, ir.Int(7), ""},
		{"binary oid unsigned", []byte{0xff, 0xff, 0xff, 0xff}, 1, 0, ir.TypeOID, ir.Int(math.MaxUint32), ""},
		{"binary bool 2", []byte{2}, 1, 0, ir.TypeBool, ir.Value{}, "22P03"},
		{"binary unsupported type", make([]byte, 16), 1, 2950, ir.TypeText, ir.Value{}, "0A000"},
		{"format code 2", []byte("1"), 2, 0, ir.TypeInt8, ir.Value{}, "08P01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeParam(3, tc.data, tc.format, tc.declared, tc.want)
			if tc.wantCode != "" {
				if e := sqlerr.As(err); err == nil || e.Code.SQLState != tc.wantCode {
					t.Fatalf("err = %v, want SQLSTATE %s", err, tc.wantCode)
				}
				if !strings.Contains(err.Error(), "3") {
					t.Errorf("message %q does not name the parameter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.wantVal) {
				t.Errorf("got %#v, want %#v", got, tc.wantVal)
			}
		})
	}
}

// TestErrorResponseMapping: every code keeps its SQLSTATE; anything that
// is not an *sqlerr.Error becomes XX000 without its text.
func TestErrorResponseMapping(t *testing.T) {
	codes := append(append([]sqlerr.Code(nil), sqlerr.All...), sqlerr.DuplicatePreparedStatement,
		sqlerr.InvalidStatementName, sqlerr.DuplicateCursor, sqlerr.InvalidCursorName,
		sqlerr.InvalidTextRepresentation, sqlerr.InvalidBinaryRepresentation, sqlerr.AdminShutdown)
	for _, c := range codes {
		if len(c.SQLState) != 5 {
			t.Errorf("%s: SQLSTATE %q is not 5 characters", c.Name, c.SQLState)
		}
		err := fmt.Errorf("context: %w", sqlerr.Wrap(c, errors.New("cause with secret 123"), "msg").WithHint("hint"))
		r := errorResponse(sevError, err)
		if r.Code != c.SQLState || r.Message != "msg" || r.Hint != "hint" || r.Severity != "ERROR" {
			t.Errorf("%s: got %+v", c.Name, r)
		}
	}
	r := errorResponse(sevFatal, errors.New("pq: password for bob is hunter2"))
	if r.Code != "XX000" || r.Message != "internal error" || r.Severity != "FATAL" || r.Hint != "" {
		t.Errorf("plain error: %+v", r)
	}
}

func TestParseStartupPacket(t *testing.T) {
	body := func(code uint32, rest string) []byte { return append(be32(code), rest...) }
	p, err := parseStartupPacket(body(3<<16, "user\x00bob\x00database\x00d\x00_pq_.x\x001\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if p.kind != startupMessage || p.major != 3 || p.minor != 0 || p.params["user"] != "bob" ||
		p.params["database"] != "d" || len(p.params) != 2 || len(p.options) != 1 || p.options[0] != "_pq_.x" {
		t.Errorf("got %+v", p)
	}
	p, err = parseStartupPacket(append(body(codeCancelRequest, ""), 0, 0, 0, 9, 1, 2, 3, 4))
	if err != nil || p.kind != cancelRequest || p.pid != 9 || !bytes.Equal(p.secret, []byte{1, 2, 3, 4}) {
		t.Errorf("cancel: %+v %v", p, err)
	}
	bad := [][]byte{
		{0, 3},
		body(3<<16, ""),
		body(3<<16, "user\x00bob"),
		body(3<<16, "user\x00"),
		body(codeGSSENCRequest, "x"),
		body(codeCancelRequest, "1234"),
	}
	for _, b := range bad {
		if _, err := parseStartupPacket(b); !sqlerr.HasCode(err, sqlerr.ProtocolViolation) {
			t.Errorf("% x: err = %v, want 08P01", b, err)
		}
	}
}

// TestTimeEncodeRoundTrip: a date or timestamp written in the binary
// format reads back as itself, and the text format is ir's text.
func TestTimeEncodeRoundTrip(t *testing.T) {
	for _, c := range []struct {
		typ ir.ColType
		oid uint32
		v   ir.Value
	}{
		{ir.TypeDate, oidDate, ir.Date(ir.MinDate)},
		{ir.TypeDate, oidDate, ir.Date(14761)},
		{ir.TypeTimestamp, oidTS, ir.Timestamp(ir.MaxTimestamp)},
		{ir.TypeTimestamp, oidTS, ir.Timestamp(-1)},
		{ir.TypeTimestampTZ, oidTSTZ, ir.TimestampTZ(14761*ir.MicrosPerDay + 5)},
	} {
		b, err := appendBinary(nil, c.typ, c.v)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeBinary(1, b, c.oid)
		if err != nil || back != c.v {
			t.Errorf("%v: binary %x reads back as %v, %v", c.v, b, back, err)
		}
		if got := string(appendText(nil, c.v)); got != c.v.Text() {
			t.Errorf("%v: text %q, want %q", c.v, got, c.v.Text())
		}
	}
	if _, err := appendBinary(nil, ir.TypeDate, ir.Int(3)); err == nil {
		t.Error("an integer encoded as a date")
	}
}
