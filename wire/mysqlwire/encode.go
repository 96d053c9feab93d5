package mysqlwire

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// MySQL column flags (include/mysql_com.h).
const (
	flagNotNull  = 1
	flagBinary   = 128
	flagNum      = 32768
	flagUnsigned = 32
)

// fieldType is a result column's MySQL type.
type fieldType uint8

const (
	typeVarChar fieldType = iota
	typeLongLong
	typeDouble
	typeTiny // booleans, as MySQL reports them (TINYINT(1))
	typeDate
	typeDatetime // DATETIME(6): timestamps, and timestamptz in UTC
)

// mysqlType is the MySQL type of a result column type: the one mapping
// of ir.ColType to MySQL. Anything without a MySQL counterpart is text.
func mysqlType(t ir.ColType) fieldType {
	switch t {
	case ir.TypeInt8, ir.TypeInt4, ir.TypeOID:
		return typeLongLong
	case ir.TypeFloat8:
		return typeDouble
	case ir.TypeBool:
		return typeTiny
	case ir.TypeDate:
		return typeDate
	case ir.TypeTimestamp, ir.TypeTimestampTZ:
		return typeDatetime
	}
	return typeVarChar
}

// field describes column c of table ("" when the result has no origin
// table).
func field(c ir.Column, table string) *querypb.Field {
	f := &querypb.Field{Name: c.Name, OrgName: c.Name, Table: table, OrgTable: table}
	switch mysqlType(c.Type) {
	case typeLongLong:
		f.Type, f.Charset, f.ColumnLength, f.Flags = querypb.Type_INT64, mysql.CharacterSetBinary, 20, flagBinary|flagNum
	case typeDouble:
		f.Type, f.Charset, f.ColumnLength, f.Decimals, f.Flags = querypb.Type_FLOAT64, mysql.CharacterSetBinary, 22, 31, flagBinary|flagNum
	case typeTiny:
		f.Type, f.Charset, f.ColumnLength, f.Flags = querypb.Type_INT8, mysql.CharacterSetBinary, 1, flagBinary|flagNum
	case typeDate:
		f.Type, f.Charset, f.ColumnLength, f.Flags = querypb.Type_DATE, mysql.CharacterSetBinary, 10, flagBinary
	case typeDatetime:
		f.Type, f.Charset, f.ColumnLength, f.Decimals, f.Flags = querypb.Type_DATETIME, mysql.CharacterSetBinary, 26, 6, flagBinary
	default:
		f.Type, f.Charset, f.ColumnLength = querypb.Type_VARCHAR, mysql.CharacterSetUtf8mb4, 1024
	}
	return f
}

func fields(cs []ir.Column, table string) []*querypb.Field {
	out := make([]*querypb.Field, len(cs))
	for i, c := range cs {
		out[i] = field(c, table)
	}
	return out
}

// value encodes v for a column of type t. A value of another kind than
// the column's (a private count is always an int) is converted so that
// the binary protocol, which trusts the column type, stays well-formed.
func value(v ir.Value, t fieldType) sqltypes.Value {
	if v.Kind == ir.KindNull {
		return sqltypes.NULL
	}
	switch t {
	case typeLongLong:
		switch v.Kind {
		case ir.KindInt:
			return sqltypes.NewInt64(v.Int)
		case ir.KindBool:
			return sqltypes.NewInt64(b2i(v.Bool))
		case ir.KindFloat:
			if f := v.Float; f == float64(int64(f)) {
				return sqltypes.NewInt64(int64(f))
			}
		}
		if n, err := strconv.ParseInt(v.Text(), 10, 64); err == nil {
			return sqltypes.NewInt64(n)
		}
		return sqltypes.NULL
	case typeTiny:
		switch v.Kind {
		case ir.KindBool:
			return sqltypes.MakeTrusted(querypb.Type_INT8, strconv.AppendInt(nil, b2i(v.Bool), 10))
		case ir.KindInt:
			if v.Int >= -128 && v.Int <= 127 {
				return sqltypes.MakeTrusted(querypb.Type_INT8, strconv.AppendInt(nil, v.Int, 10))
			}
		}
		return sqltypes.NULL
	case typeDouble:
		if f, ok := v.AsFloat(); ok {
			return mysqlDouble(f)
		}
		if f, err := strconv.ParseFloat(v.Text(), 64); err == nil {
			return mysqlDouble(f)
		}
		return sqltypes.NULL
	case typeDate:
		if tv := ir.AsTime(v, ir.KindDate); tv.Kind == ir.KindDate {
			return sqltypes.MakeTrusted(querypb.Type_DATE, []byte(tv.Text()))
		}
		return sqltypes.NULL
	case typeDatetime:
		// MySQL spells DATETIME(6) with six fractional digits; a
		// timestamptz is shown in UTC, the session's time_zone.
		k := v.Kind
		if !v.IsTime() {
			k = ir.KindTimestamp
		}
		if tv := ir.AsTime(v, k); tv.IsTime() {
			text := tv.GoTime().Format("2006-01-02 15:04:05.000000")
			return sqltypes.MakeTrusted(querypb.Type_DATETIME, []byte(text))
		}
		return sqltypes.NULL
	}
	if v.Kind == ir.KindBool {
		// MySQL has no boolean: text columns show 1/0 like the server.
		return sqltypes.NewVarChar(strconv.FormatInt(b2i(v.Bool), 10))
	}
	return sqltypes.NewVarChar(v.Text())
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// spool is the ir.RowWriter of one statement: it hands Vitess the rows
// in batches of spoolBatch, encoded as they come, so that a large answer
// is never converted whole (Vitess writes each batch before the callback
// returns). The fields go with the first batch, not before: Vitess cannot
// report an error once it has written them (it can only cut the
// connection, which the client sees as error 2013 and the session is
// lost), so the first batch is held until the answer completes or holds
// holdBytes. An answer that fails before then — a backend error at row
// 300, a statement timeout while a public table streams — still reaches
// the client as an error packet, and the session goes on.
// A statement without columns is an OK packet.
type spool struct {
	send func(*sqltypes.Result) error
	// described, when set, are the types the client was told at prepare
	// time: binary rows are decoded with them.
	described []ir.Column
	types     []fieldType
	// fields go with every batch: Vitess lays binary rows out by them
	// (the NULL bitmap's size is the number of fields).
	fields []*querypb.Field
	batch  [][]sqltypes.Value
	sent   bool // a batch (and so the fields) went to Vitess
	held   int  // bytes the unsent first batch takes (heldSize), until sent
}

// spoolBatch is how many rows go to Vitess in one callback once the first
// batch has gone.
const spoolBatch = 256

// holdBytes bounds the first batch: what one statement may hold back so
// that a failure stays an error packet. Counted as heldSize counts, so it
// bounds the memory, not only the encoded bytes: 1 MiB is some 30,000
// single-integer rows, and whole answers of the size BI tools read
// from public tables (lists of values, lookup tables).
const holdBytes = 1 << 20

// heldSize is what a row of vals costs the spool while held: the encoded
// values and the slice headers around them.
func heldSize(vals []sqltypes.Value) int {
	n := 24 + 32*len(vals) // the row's slice header, a Value per column
	for _, v := range vals {
		n += len(v.Raw())
	}
	return n
}

func (s *spool) Columns(cols []ir.Column) error {
	if s.described != nil {
		cols = s.described
	}
	s.types = make([]fieldType, len(cols))
	for i, c := range cols {
		s.types[i] = mysqlType(c.Type)
	}
	s.fields = fields(cols, "")
	return nil
}

func (s *spool) Row(row []ir.Value) error {
	vals := make([]sqltypes.Value, len(s.types))
	for j, t := range s.types {
		if j < len(row) {
			vals[j] = value(row[j], t)
		} else {
			vals[j] = sqltypes.NULL
		}
	}
	if s.batch == nil {
		s.batch = make([][]sqltypes.Value, 0, spoolBatch)
	}
	s.batch = append(s.batch, vals)
	if !s.sent {
		if s.held += heldSize(vals); s.held < holdBytes {
			return nil
		}
	} else if len(s.batch) < spoolBatch {
		return nil
	}
	return s.flush()
}

// flush hands the batch to Vitess. A new batch is allocated after: with a
// server-side cursor Vitess reads the rows on another goroutine.
func (s *spool) flush() error {
	b := s.batch
	s.batch, s.sent, s.held = nil, true, 0
	return s.send(&sqltypes.Result{Fields: s.fields, Rows: b})
}

func (s *spool) Complete(ir.Completion) error {
	switch {
	case s.fields == nil:
		return s.send(&sqltypes.Result{}) // no columns: an OK packet
	case len(s.batch) > 0 || !s.sent:
		return s.flush()
	}
	return nil
}

// argValue decodes one bound parameter of COM_STMT_EXECUTE.
func argValue(bv *querypb.BindVariable) (ir.Value, error) {
	if bv == nil {
		return ir.Null(), nil
	}
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil {
		return ir.Value{}, err
	}
	if v.IsNull() {
		return ir.Null(), nil
	}
	raw := string(v.Raw())
	switch {
	case v.IsSigned():
		n, err := strconv.ParseInt(raw, 10, 64)
		return ir.Int(n), err
	case v.IsUnsigned():
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil || n > 1<<63-1 {
			f, ferr := strconv.ParseFloat(raw, 64)
			return ir.Float(f), ferr
		}
		return ir.Int(int64(n)), nil
	case v.IsFloat():
		f, err := strconv.ParseFloat(raw, 64)
		return ir.Float(f), err
	case v.Type() == querypb.Type_DATE, v.Type() == querypb.Type_DATETIME, v.Type() == querypb.Type_TIMESTAMP:
		// A typed date parameter; a zero date (0000-00-00) stays text,
		// which the analysis refuses with 22008 where it meets a date.
		k := ir.KindTimestamp
		if v.Type() == querypb.Type_DATE {
			k = ir.KindDate
		}
		if tv, err := ir.ParseTime(k, raw); err == nil {
			return tv, nil
		}
		return ir.String(raw), nil
	case v.Type() == querypb.Type_DECIMAL:
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return ir.Int(n), nil
		}
		f, err := strconv.ParseFloat(raw, 64)
		return ir.Float(f), err
	}
	return ir.String(raw), nil
}

// sqlError turns any error into the one ERR packet the client gets. An
// error without a sqlerr code is internal: its text (which may quote a
// driver or a value) is not sent.
func sqlError(err error) *mysql.SQLError {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se
	}
	e := sqlerr.As(err)
	msg := e.Message
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	return mysql.NewSQLError(int(e.Code.MySQLErrno), e.Code.MySQLState, "%s", msg)
}

// errText is what an ERR packet of err says, for logs.
func errText(err error) string {
	se := sqlError(err)
	return fmt.Sprintf("%d (%s)", se.Num, se.State)
}

// mysqlDouble is a DOUBLE cell spelled as MariaDB spells it (1e15, not
// vitess's Go spelling 1e+15; 218623720.5, not 2.186237205e+08).
func mysqlDouble(f float64) sqltypes.Value {
	return sqltypes.MakeTrusted(querypb.Type_FLOAT64, ir.AppendFloatMySQL(nil, f))
}
