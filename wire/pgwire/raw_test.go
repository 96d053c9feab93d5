package pgwire

import (
	"encoding/binary"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

func i8(v int64) []byte   { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func i2(v int16) []byte   { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func f4(v float32) []byte { return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)) }

func expectSeq(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("messages:\n got %v\nwant %v", got, want)
	}
}

// TestRowLimitedPortal executes a 5-row portal 2 rows at a time: the
// session runs once and each Execute continues where the last stopped.
func TestRowLimitedPortal(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	rc.send(
		&pgproto3.Parse{Query: "rows 5"},
		&pgproto3.Bind{ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Sync{},
	)
	var got []string
	var firstCol []int64
	for {
		d, m := rc.recv(t)
		got = append(got, d)
		if dr, ok := m.(*pgproto3.DataRow); ok {
			firstCol = append(firstCol, int64(binary.BigEndian.Uint64(dr.Values[0])))
		}
		if d[0] == 'Z' {
			break
		}
	}
	expectSeq(t, got, "1", "2", "T:7", "D:7", "D:7", "s", "D:7", "D:7", "s", "D:7", "C:SELECT 5", "Z:I")
	if !slices.Equal(firstCol, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("binary first column %v, want 1..5", firstCol)
	}

	// A limit equal to the row count completes the portal at once.
	rc.send(&pgproto3.Parse{Query: "rows 3"}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "1", "2", "D:7", "D:7", "D:7", "C:SELECT 3", "Z:I")
}

// TestPortalLifetime: a named portal survives Sync inside a transaction
// block and is gone after Sync outside one.
func TestPortalLifetime(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Query{String: "begin"})
	expectSeq(t, rc.until(t, 'Z'), "C:BEGIN", "Z:T")
	rc.send(&pgproto3.Parse{Name: "s", Query: "rows 3"}, &pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Execute{Portal: "p", MaxRows: 1}, &pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "1", "2", "D:7", "s", "Z:T")
	rc.send(&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "D:7", "D:7", "C:SELECT 3", "Z:T")
	rc.send(&pgproto3.Query{String: "commit"})
	expectSeq(t, rc.until(t, 'Z'), "C:COMMIT", "Z:I")
	rc.send(&pgproto3.Bind{DestinationPortal: "q", PreparedStatement: "s"}, &pgproto3.Sync{},
		&pgproto3.Execute{Portal: "q"}, &pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "2", "Z:I")
	expectSeq(t, rc.until(t, 'Z'), "E:34000", "Z:I")
}

func TestDescribeStatement(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Parse{Name: "s1", Query: "echo int8 text", ParameterOIDs: []uint32{0, 1043}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Parse{Name: "s2", Query: "set"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s2"},
		&pgproto3.Sync{})
	var params []uint32
	var cols []uint32
	var got []string
	for {
		d, m := rc.recv(t)
		got = append(got, d)
		switch m := m.(type) {
		case *pgproto3.ParameterDescription:
			params = append(params, m.ParameterOIDs...)
		case *pgproto3.RowDescription:
			for _, f := range m.Fields {
				cols = append(cols, f.DataTypeOID)
			}
		}
		if d[0] == 'Z' {
			break
		}
	}
	expectSeq(t, got, "1", "t:2", "T:2", "1", "t:0", "n", "Z:I")
	// The undeclared parameter gets the session's type (int8 = 20), the
	// declared one keeps the client's (varchar = 1043).
	if !slices.Equal(params, []uint32{20, 1043}) || !slices.Equal(cols, []uint32{20, 25}) {
		t.Errorf("param OIDs %v, column OIDs %v", params, cols)
	}
}

// TestExtendedErrors: each error is reported once, then everything up
// to Sync is skipped, and the connection stays usable.
func TestExtendedErrors(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	tests := []struct {
		name string
		msgs []pgproto3.FrontendMessage
		want []string
	}{
		{"named statement re-parsed", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "dup", Query: "rows 1"}, &pgproto3.Parse{Name: "dup", Query: "rows 2"},
			&pgproto3.Bind{PreparedStatement: "dup"}, &pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "E:42P05", "Z:I"}},
		{"unnamed statement re-parsed", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "rows 1"}, &pgproto3.Parse{Query: "rows 2"},
			&pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "1", "2", "D:7", "D:7", "C:SELECT 2", "Z:I"}},
		{"unknown statement", []pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"E:26000", "Z:I"}},
		{"closed statement", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "c", Query: "rows 1"}, &pgproto3.Close{ObjectType: 'S', Name: "c"},
			&pgproto3.Describe{ObjectType: 'S', Name: "c"}, &pgproto3.Sync{}},
			[]string{"1", "3", "E:26000", "Z:I"}},
		{"unknown portal", []pgproto3.FrontendMessage{&pgproto3.Execute{Portal: "nope"}, &pgproto3.Sync{}},
			[]string{"E:34000", "Z:I"}},
		{"too few parameters", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "echo int8 int8"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("1")}},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "E:08P01", "Z:I"}},
		{"bad integer text", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "echo int8"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("12x")}},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "E:22P02", "Z:I"}},
		{"bad binary length", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "echo int8"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2, 3}}},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "E:22P03", "Z:I"}},
		{"result formats count", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "rows 1"}, &pgproto3.Bind{ResultFormatCodes: []int16{0, 1}},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "E:08P01", "Z:I"}},
		{"session error at execute", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "fail 53400"}, &pgproto3.Bind{}, &pgproto3.Execute{},
			&pgproto3.Parse{Query: "rows 1"}, &pgproto3.Sync{}},
			[]string{"1", "2", "E:53400", "Z:I"}},
		{"result shape differs from description", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "mismatch"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "2", "E:XX000", "Z:I"}},
		{"function call", []pgproto3.FrontendMessage{&pgproto3.FunctionCall{Function: 1}},
			[]string{"E:0A000", "Z:I"}},
		{"copy messages outside COPY are ignored", []pgproto3.FrontendMessage{
			&pgproto3.CopyData{Data: []byte("1\t2\n")}, &pgproto3.CopyDone{}, &pgproto3.CopyFail{Message: "x"},
			&pgproto3.Query{String: "rows 1"}},
			[]string{"T:7", "D:7", "C:SELECT 1", "Z:I"}},
		{"empty statement", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: ""}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
			[]string{"1", "2", "n", "I", "Z:I"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc.t = t
			rc.send(tc.msgs...)
			expectSeq(t, rc.until(t, 'Z'), tc.want...)
			// Still usable.
			rc.send(&pgproto3.Query{String: "set"})
			expectSeq(t, rc.until(t, 'Z'), "C:SET", "Z:I")
		})
	}
}

func TestFlushWithoutSync(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Parse{Query: "rows 1"}, &pgproto3.Flush{})
	if d, _ := rc.recv(t); d != "1" {
		t.Errorf("after Flush got %s, want ParseComplete", d)
	}
	rc.send(&pgproto3.Sync{})
	expectSeq(t, rc.until(t, 'Z'), "Z:I")
}

// TestParamDecoding binds every supported parameter type, in text and
// binary, with the client's declared OIDs, and reads back what the
// session received (kind:text, rendered by the fake session).
func TestParamDecoding(t *testing.T) {
	ts := startServer(t, Config{})
	rc := ts.rawStartup(t)
	var num pgtype.Numeric
	if err := num.Scan("-123.0456"); err != nil {
		t.Fatal(err)
	}
	numBin, err := pgtype.NewMap().Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, num, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := []struct {
		oid    uint32
		format int16
		data   []byte
		want   string
	}{
		{21, 1, i2(-2), "integer:-2"},
		{23, 0, []byte(" 42 "), "integer:42"},
		{20, 1, i8(math.MinInt64), "integer:-9223372036854775808"},
		{700, 1, f4(1.5), "real:1.5"},
		{701, 0, []byte("2.25"), "real:2.25"},
		{16, 0, []byte("yes"), "boolean:t"},
		{16, 1, []byte{0}, "boolean:f"},
		{1043, 1, []byte("v"), "text:v"},
		{1700, 0, []byte("12.5"), "real:12.5"},
		{1700, 0, []byte("12"), "integer:12"},
		{1700, 1, numBin, "real:-123.0456"},
		{0, 0, []byte("untyped"), "text:untyped"},
		{0, 0, []byte("7"), "text:7"},
		{23, 0, nil, "null:"},
	}
	var oids []uint32
	var formats []int16
	var values [][]byte
	for _, p := range params {
		oids = append(oids, p.oid)
		formats = append(formats, p.format)
		values = append(values, p.data)
	}
	rc.send(&pgproto3.Parse{Query: "echoany " + strconv.Itoa(len(params)), ParameterOIDs: oids},
		&pgproto3.Bind{ParameterFormatCodes: formats, Parameters: values},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	var row []string
	for {
		d, m := rc.recv(t)
		if dr, ok := m.(*pgproto3.DataRow); ok {
			for _, v := range dr.Values {
				row = append(row, string(v))
			}
		}
		if strings.HasPrefix(d, "E") {
			t.Fatalf("error: %+v", m)
		}
		if d[0] == 'Z' {
			break
		}
	}
	if len(row) != len(params) {
		t.Fatalf("got %d values, want %d", len(row), len(params))
	}
	for i, p := range params {
		if row[i] != p.want {
			t.Errorf("param %d (oid %d, format %d): session got %q, want %q", i+1, p.oid, p.format, row[i], p.want)
		}
	}
}

func TestStartupVariants(t *testing.T) {
	ts := startServer(t, Config{})
	t.Run("ssl and gss declined then plain startup", func(t *testing.T) {
		rc := ts.dialRaw(t)
		for _, code := range []uint32{codeGSSENCRequest, codeSSLRequest} {
			pkt := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code)
			if _, err := rc.nc.Write(pkt); err != nil {
				t.Fatal(err)
			}
			var b [1]byte
			if _, err := io.ReadFull(rc.nc, b[:]); err != nil || b[0] != 'N' {
				t.Fatalf("answer %q %v, want N", b[0], err)
			}
		}
		rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": "trusty"}})
		got := rc.until(t, 'Z')
		if got[0] != "R:ok" || got[len(got)-2] != "K" {
			t.Errorf("startup sequence %v", got)
		}
		// One ParameterStatus per session setting (the fake has 10).
		if n := strings.Count(strings.Join(got, ","), "S"); n != 10 {
			t.Errorf("%d ParameterStatus messages, want 10", n)
		}
	})
	t.Run("newer minor version is negotiated down", func(t *testing.T) {
		rc := ts.dialRaw(t)
		rc.send(&pgproto3.StartupMessage{ProtocolVersion: 3<<16 | 5,
			Parameters: map[string]string{"user": "trusty", "_pq_.fancy": "1"}})
		d, m := rc.recv(t)
		npv, ok := m.(*pgproto3.NegotiateProtocolVersion)
		if !ok || npv.NewestMinorProtocol != 0 || !slices.Equal(npv.UnrecognizedOptions, []string{"_pq_.fancy"}) {
			t.Fatalf("got %s %+v, want NegotiateProtocolVersion(0, [_pq_.fancy])", d, m)
		}
		rc.until(t, 'Z')
	})
	fatal := []struct {
		name   string
		params map[string]string
		proto  uint32
		code   string
	}{
		{"protocol 2.0", map[string]string{"user": "trusty"}, 2 << 16, "08P01"},
		{"protocol 4.0", map[string]string{"user": "trusty"}, 4 << 16, "08P01"},
		{"no user", map[string]string{"database": "db"}, pgproto3.ProtocolVersion30, "28000"},
	}
	for _, tc := range fatal {
		t.Run(tc.name, func(t *testing.T) {
			rc := ts.dialRaw(t)
			pkt := &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: tc.params}
			buf, err := pkt.Encode(nil)
			if err != nil {
				t.Fatal(err)
			}
			binary.BigEndian.PutUint32(buf[4:], tc.proto)
			if _, err := rc.nc.Write(buf); err != nil {
				t.Fatal(err)
			}
			d, m := rc.recv(t)
			if e, ok := m.(*pgproto3.ErrorResponse); !ok || e.Code != tc.code || e.Severity != "FATAL" {
				t.Fatalf("got %s %+v, want FATAL %s", d, m, tc.code)
			}
			expectClosed(t, rc)
		})
	}
	t.Run("terminate closes", func(t *testing.T) {
		rc := ts.rawStartup(t)
		rc.send(&pgproto3.Terminate{})
		expectClosed(t, rc)
	})
}

// expectClosed checks that the server closed the connection.
func expectClosed(t *testing.T, rc *rawConn) {
	t.Helper()
	var b [1]byte
	if _, err := rc.nc.Read(b[:]); err == nil {
		t.Error("connection still open")
	}
}
